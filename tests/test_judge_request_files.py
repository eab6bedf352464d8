"""`cogbench score --judge openai:M --write-requests / --read-responses`: the judge through request files.

The CODIS example outputs (706 queries) perturbed to a mix of right and wrong answers (637
distinct judge prompts); the real local server plays the judge online and, through request files, the batch engine.
The verdict cache filled from the responses must give the scores of the online judge.
"""

from __future__ import annotations

import json
import shlex

import pytest
from test_judge_failures import perturbed, truth_verdict

from cogbench.cli import main
from cogbench.dataset_builders.output import OUTPUT_MARKER
from cogbench.reference_eval.backends.batch_files import Response
from cogbench.reference_eval.backends.openai_api import ChatSettings
from cogbench.reference_eval.judges.llm import LLMJudge, judge_request
from cogbench.reference_eval.judges.verdicts import parse_right_wrong

from openai_server import Reply, answer_as_engine, request_lines


@pytest.fixture(autouse=True)
def api_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "x")


def _score(predictions, dataset, out, *extra, judge="openai:judge"):
    argv = ["score", "--task", "codis", "--predictions", str(predictions), "--dataset", str(dataset)]
    return main([*argv, "--judge", judge, "--out", str(out), *extra])


def _metrics(out):
    scores = json.loads((out / "scores.json").read_text())
    return {name: (m["overall"], m["per_category"]) for name, m in scores["metrics"].items()}, scores


def test_judge_requests_read_back_give_the_online_scores(built_release, real_raw_dir, tmp_path, openai_server, capsys):
    predictions = perturbed(real_raw_dir / "codis" / "output_example.json", tmp_path)
    server = openai_server(lambda request: Reply(text=truth_verdict(request)))
    online = tmp_path / "online"
    assert _score(predictions, built_release, online, "--judge-base-url", server.base_url) == 0
    reference, _ = _metrics(online)
    sent = {json.dumps(r.body, sort_keys=True) for r in server.chat_requests}

    run, requests = tmp_path / "run", tmp_path / "requests"
    assert _score(predictions, built_release, run, "--write-requests", str(requests), "--shards", "3") == 0
    assert f"judge requests: {len(sent)} written" in capsys.readouterr().out  # 637 distinct prompts here
    lines = request_lines(requests)
    assert len(lines) == len(sent) and (requests / OUTPUT_MARKER).is_file()
    assert {json.dumps(line["body"], sort_keys=True) for line in lines} == sent  # the online judge's bodies
    assert not (run / "scores.json").exists()

    outputs = answer_as_engine(server, lines, tmp_path / "out.jsonl").read_text().splitlines()
    (tmp_path / "out.jsonl").write_text("\n".join(outputs[5:]) + "\n")  # five prompts unanswered
    assert _score(predictions, built_release, run, "--read-responses", str(tmp_path / "out.jsonl")) == 3
    error = capsys.readouterr().err
    assert "judge queries failed (most common: no response in the files read" in error
    command = shlex.split(error.split("Write requests for exactly the missing ones with: ")[1].split(", or pass")[0])
    assert main(command[1:]) == 0
    missing = request_lines(tmp_path / "run-missing-judge-requests")
    assert [line["custom_id"] for line in missing] == [line["custom_id"] for line in lines[:5]]

    rest = answer_as_engine(server, missing, tmp_path / "rest.jsonl")
    assert _score(predictions, built_release, run, "--read-responses", str(rest)) == 0
    result, scores = _metrics(run)
    assert result == reference and scores["complete"]


def test_responses_for_another_judge_are_refused_by_name(built_release, real_raw_dir, tmp_path, openai_server, capsys):
    predictions = real_raw_dir / "codis" / "output_example.json"
    server = openai_server(lambda request: Reply(text="right"))
    other = tmp_path / "other"
    assert _score(predictions, built_release, tmp_path / "a", "--write-requests", str(other), judge="openai:other") == 0
    line = request_lines(other)[0]
    answered = answer_as_engine(server, [line], tmp_path / "other.jsonl")
    capsys.readouterr()
    assert _score(predictions, built_release, tmp_path / "run", "--read-responses", str(answered)) == 1
    assert capsys.readouterr().err.strip() == (
        f"error: {answered} line 1: custom_id {line['custom_id']!r} was written for other settings or another "
        f"dataset (this run asks {line['custom_id'].rpartition('@')[0]} with another request body); refusing it"
    )
    assert not (tmp_path / "run" / "scores.json").exists()


def test_an_unusable_reply_in_the_files_is_a_failure_never_a_verdict_or_a_cache_entry(tmp_path):
    """A reply read from files that does not parse (here: neither right nor wrong) is this prompt's failure,
    its text kept for reading the other way; a usable reply beside it is answered and cached."""
    settings = ChatSettings(model="judge", base_url="http://127.0.0.1:9/v1")
    prompts = ["Is 'a cat' right for 'a cat'?", "Is 'a dog' right for 'a cow'?"]
    ids = [judge_request(settings, prompt).custom_id for prompt in prompts]
    responses = {
        ids[0]: Response(ids[0], "Right.", None, "out.jsonl line 1"),
        ids[1]: Response(ids[1], "It depends.", None, "out.jsonl line 2"),
    }
    judge = LLMJudge(settings, tmp_path / "cache.sqlite", responses=responses)
    try:
        usable, unusable = judge.ask(prompts, lambda prompt, reply: parse_right_wrong(reply) is not None)
        assert (usable.text, usable.error) == ("Right.", None)
        assert (unusable.text, unusable.error, unusable.unusable_text) == (
            None,
            "unusable reply (out.jsonl line 2)",
            "It depends.",
        )
        assert judge.cache.get(judge.key, prompts[0]) == "Right." and judge.cache.get(judge.key, prompts[1]) is None
        assert (judge.stats.failures, judge.stats.failure_messages) == (1, ["unusable reply (out.jsonl line 2)"])
    finally:
        judge.close()
