"""Judges as they really behave, against the real local OpenAI-compatible server: styled verdicts give
the same scores as bare ones; a judge with no verdict, a 401 and a server that dies make `score` exit 3."""

from __future__ import annotations

import json
import re
import time

import pytest

from cogbench.cli import main

from openai_server import Reply

SECRET = "sk-judge-failure-test-1234567"
STYLES = {
    "bare": "{v}",
    "capitalised": "{V}",
    "full stop": "{V}.",
    "labelled": "Verdict: {V}",
    "markdown": "**{V}**",
    "sentence": "The output is {v}.",
    "sentence after": "{V}\n\nThe answer matches the groundtruth in meaning.",
}


@pytest.fixture(autouse=True)
def api_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)


def truth_verdict(request) -> str:
    text = request.prompt_text
    truth = re.search(r"Here is the groundtruth: (.*)\n", text).group(1)
    output = text.rsplit("Here is the output: ", 1)[1]
    return "right" if truth.strip() == output.strip() else "wrong"


def styled(style: str):
    return lambda request: Reply(
        text=STYLES[style].format(v=truth_verdict(request), V=truth_verdict(request).capitalize())
    )


def perturbed(example, tmp_path):
    """Every third pair swapped, every fifth pair's second output replaced: a mix of right and wrong."""
    pairs = json.loads(example.read_text())
    for index, pair in enumerate(pairs):
        if index % 3 == 0:
            pair["output"] = {"output_1": pair["output"]["output_2"], "output_2": pair["output"]["output_1"]}
        if index % 5 == 0:
            pair["output"]["output_2"] = "I cannot tell from the image."
    path = tmp_path / "perturbed.json"
    path.write_text(json.dumps(pairs))
    return path


def score(predictions, dataset, server, out, *extra):
    return main(
        [
            "score",
            "--task",
            "codis",
            "--predictions",
            str(predictions),
            "--dataset",
            str(dataset),
            "--judge",
            "openai:judge",
            "--judge-base-url",
            server.base_url,
            "--judge-max-attempts",
            "2",
            "--out",
            str(out),
            *extra,
        ]
    )


def metrics(out):
    scores = json.loads((out / "scores.json").read_text())
    return {name: (m["overall"], m["per_category"]) for name, m in scores["metrics"].items()}, scores


@pytest.mark.parametrize("which", ["example", "perturbed"])
def test_styled_verdicts_score_like_bare_ones(which, real_raw_dir, built_release, tmp_path, openai_server, capsys):
    example = real_raw_dir / "codis" / "output_example.json"
    predictions = example if which == "example" else perturbed(example, tmp_path)
    results = {}
    for style in STYLES:
        out = tmp_path / style
        assert score(predictions, built_release, openai_server(styled(style)), out) == 0, style
        results[style], scores = metrics(out)
        assert scores["complete"] and scores["judge"]["failures"] == 0
    assert all(result == results["bare"] for result in results.values())
    acc_q = results["bare"]["acc_q"][0]
    assert acc_q == 100.0 if which == "example" else 0 < acc_q < 100
    # The official (substring) rule reads "Right" as wrong: scores.json shows its numbers beside ours.
    scores = json.loads((tmp_path / "capitalised" / "scores.json").read_text())
    comparison = scores["judge"]["parsing_comparison"]
    assert comparison["mode"] == "official" and comparison["differing_verdicts"] > 0
    assert comparison["metrics"]["acc_q"] < acc_q or acc_q == 0


def test_judge_without_verdicts_exits_3(built_release, real_raw_dir, tmp_path, openai_server, capsys):
    server = openai_server(lambda request: Reply(text="I need more context to decide."))
    out = tmp_path / "run"
    assert score(real_raw_dir / "codis" / "output_example.json", built_release, server, out) == 3
    err = capsys.readouterr().err
    assert err.startswith("error: 706 of 706 judge queries failed (most common: unusable reply")
    assert len(err.strip().splitlines()) == 1
    _, scores = metrics(out)
    assert scores["metrics"]["acc_p"]["overall"] is None and scores["complete"] is False
    assert "PARTIAL" in (out / "report.md").read_text()


def test_401_exits_3_and_never_shows_the_key(built_release, real_raw_dir, tmp_path, openai_server, capsys):
    server = openai_server(lambda request: Reply(status=401))
    out = tmp_path / "run"
    assert score(real_raw_dir / "codis" / "output_example.json", built_release, server, out) == 3
    err = capsys.readouterr().err
    assert "HTTP 401" in err and SECRET not in err
    assert len(server.chat_requests) == len({r.prompt_text for r in server.chat_requests})  # 401 is not retried


def test_server_dying_half_way_then_rerun_gives_the_uninterrupted_scores(
    built_release, real_raw_dir, tmp_path, openai_server, capsys
):
    predictions = perturbed(real_raw_dir / "codis" / "output_example.json", tmp_path)
    reference = tmp_path / "reference"
    assert score(predictions, built_release, openai_server(styled("bare")), reference) == 0

    answered = []

    def dies_after_300(request):
        answered.append(1)
        if len(answered) > 300:
            return Reply(drop_connection=True)
        return Reply(text=truth_verdict(request))

    dying = openai_server(dies_after_300)
    out = tmp_path / "run"
    assert score(predictions, built_release, dying, out, "--judge-backoff", "0.01") == 3
    assert "judge queries failed" in capsys.readouterr().err
    assert json.loads((out / "scores.json").read_text())["complete"] is False
    # The server is back at the same address (the verdict cache answers only for the same endpoint):
    # the re-run sends only what failed and ends as if never interrupted.
    before = len(dying.chat_requests)
    dying.responder = styled("bare")
    assert score(predictions, built_release, dying, out) == 0
    assert 0 < len(dying.chat_requests) - before < 706 - 250
    assert metrics(out)[0] == metrics(reference)[0]


def test_a_dripping_judge_is_cut_off_at_judge_timeout(built_release, real_raw_dir, tmp_path, openai_server, capsys):
    """One byte every 0.5 s: per read the server is never silent for 1 s, yet each attempt ends at 1 s."""
    pairs = json.loads((real_raw_dir / "codis" / "output_example.json").read_text())[:2]
    predictions = tmp_path / "two.json"
    predictions.write_text(json.dumps(pairs))
    server = openai_server(lambda request: Reply(text="right", drip_seconds=0.5))
    out = tmp_path / "run"
    started = time.monotonic()
    extra = ("--judge-timeout", "1", "--judge-backoff", "0", "--allow-partial")
    assert score(predictions, built_release, server, out, *extra) == 3
    elapsed = time.monotonic() - started  # unbounded, each attempt would drip its ~300 bytes for 150 s
    err = capsys.readouterr().err
    assert "judge queries failed (most common: timed out after 2 attempts" in err and elapsed < 40, (elapsed, err)
    assert len(server.chat_requests) == 2 * 4  # two pairs, two questions each, two attempts each


def test_a_judge_reply_with_a_lone_surrogate_is_cached_as_u_fffd(
    built_release, real_raw_dir, tmp_path, openai_server, capsys
):
    import sqlite3

    server = openai_server(lambda request: Reply(text=f"{truth_verdict(request)}\n\ud800 (sure)"))
    out = tmp_path / "run"
    example = real_raw_dir / "codis" / "output_example.json"
    assert score(example, built_release, server, out) == 0
    scores = json.loads((out / "scores.json").read_text())
    assert scores["complete"] and scores["metrics"]["acc_q"]["overall"] == 100.0
    with sqlite3.connect(out / "judge_cache.sqlite") as db:
        replies = {row[0] for row in db.execute("SELECT reply FROM replies")}
    assert replies == {"right\n\ufffd (sure)"}
    sent = len(server.chat_requests)
    assert (
        score(example, built_release, server, tmp_path / "again", "--judge-cache", str(out / "judge_cache.sqlite")) == 0
    )
    assert len(server.chat_requests) == sent  # every answer was kept: the re-run asks nothing
