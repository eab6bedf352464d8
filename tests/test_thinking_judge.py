"""An LLM judge that reasons before its verdict (a local Qwen3 with thinking on, an o-series model):
its verdict is read from its final answer, its whole reply kept (issue 39). The real local server
plays the judge, on the CODIS example outputs perturbed to a mix of right and wrong answers."""

from __future__ import annotations

import json

import pytest
from test_judge_failures import perturbed, truth_verdict

from cogbench.cli import main
from cogbench.reference_eval.judges.codis import parse_verdict
from cogbench.reference_eval.judges.codis_equality import parse_changed
from cogbench.reference_eval.judges.cognition import parse_verdicts

from openai_server import Reply


@pytest.fixture(autouse=True)
def api_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "x")


def _thinking(request) -> str:
    """A reasoning that names both words, and the other one last, before the true verdict."""
    verdict = truth_verdict(request)
    other = "wrong" if verdict == "right" else "right"
    return f"<think>\nIs the output right or wrong? At first glance: {other}. Verdict: {other}.\n</think>\n\n{verdict}"


def _score(predictions, dataset, out, server, parsing):
    argv = ["score", "--task", "codis", "--predictions", str(predictions), "--dataset", str(dataset)]
    argv += ["--judge", "openai:judge", "--judge-base-url", server.base_url, "--judge-parsing", parsing]
    assert main([*argv, "--out", str(out), "--judge-cache", str(out.parent / f"{out.name}.sqlite")]) == 0
    scores = json.loads((out / "scores.json").read_text())
    details = [json.loads(line) for line in (out / "details.jsonl").read_text().splitlines()]
    return {name: m["overall"] for name, m in scores["metrics"].items()}, details


@pytest.mark.parametrize("parsing", ["official", "tolerant"])
def test_a_thinking_judge_scores_as_its_final_answers_say(
    parsing, built_release, real_raw_dir, tmp_path, openai_server
):
    predictions = perturbed(real_raw_dir / "codis" / "output_example.json", tmp_path)
    plain = openai_server(lambda request: Reply(text=truth_verdict(request)))
    thinking = openai_server(lambda request: Reply(text=_thinking(request)))
    reference, _ = _score(predictions, built_release, tmp_path / "plain", plain, parsing)
    result, details = _score(predictions, built_release, tmp_path / "thinking", thinking, parsing)
    assert result == reference
    replies = [q["judge_reply"] for line in details for q in line["queries"]]
    assert replies and all(reply.startswith("<think>\nIs the output right or wrong?") for reply in replies)


def test_verdicts_come_from_the_final_answer_in_both_modes():
    for mode in ("official", "tolerant"):
        assert parse_verdict("<think>right? It looks right.</think>\nwrong", mode) is False
        assert parse_verdict("◁think▷wrong, wrong◁/think▷right", mode) is True
        assert parse_verdicts("<think>1. [1] 2. [1]</think>1. [0] 2. [1]", 2, mode) == [0, 1]
        # A think block never closed: the judge ran out of tokens reasoning, no verdict (retried).
        assert parse_verdict("<think>it is right", mode) is None
        assert parse_verdicts("<think>1. [1] 2. [1]", 2, mode) is None
    assert parse_changed("<think>the same? no</think>different") is True
    assert parse_changed("<think>different") is None
    # Without a think block the reply is read as before: the authors' substring rule.
    assert parse_verdict("not right", "official") is True
