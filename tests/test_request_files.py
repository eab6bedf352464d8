"""`cogbench eval --write-requests` / `--read-responses`: OpenAI Batch API files, written and read back.

The engine here is the real local OpenAI-compatible server (tests/openai_server.py): the
online `openai:` run sends it the queries, and the batch side is answered by posting each
request line's body to the same server, so both sides get the same answers only if the
files carry exactly the body the online client sends. The run through real vLLM `run-batch`
is in tests/test_vllm_server.py.
"""

from __future__ import annotations

import hashlib
import json
import shlex
from pathlib import Path

from cogbench.cli import main
from cogbench.dataset_builders.output import OUTPUT_MARKER
from cogbench.reference_eval.formats.predictions import read_predictions

from openai_server import Reply, answer_as_engine, request_lines


def _argv(dataset, out, *extra):
    return [
        "eval",
        "--task",
        "codis",
        "--model",
        "openai:served-model",
        "--dataset",
        str(dataset),
        "--out",
        str(out),
        "--limit",
        "3",
        "--max-new-tokens",
        "64",
        "--no-score",
        *extra,
    ]


def _answer(request):
    """A deterministic reply naming the prompt's end, so each query gets its own answer."""
    return Reply(text=f"answer to: {request.prompt_text[-30:]}", completion_tokens=5)


def _outputs(run: Path) -> list[tuple]:
    return [(p.key, p.output) for p in read_predictions(run / "predictions.jsonl")]


def test_request_files_hold_the_online_bodies_and_read_back_to_the_online_answers(
    openai_server, built_release, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    server = openai_server(_answer)
    online = tmp_path / "online"
    assert main([*_argv(built_release, online), "--base-url", server.base_url]) == 0
    sent = {json.dumps(r.body, sort_keys=True) for r in server.chat_requests}

    requests = tmp_path / "requests"
    assert main([*_argv(built_release, tmp_path / "batch", "--write-requests", str(requests), "--shards", "4")]) == 0
    assert "6 of 6 queries written" in capsys.readouterr().out
    shards = sorted(requests.glob("requests-*.jsonl"))
    assert [sum(1 for _ in path.open()) for path in shards] == [2, 2, 1, 1]
    assert (requests / OUTPUT_MARKER).is_file()
    manifest = json.loads((requests / "manifest.json").read_text())
    assert [s["sha256"] for s in manifest["shards"]] == [hashlib.sha256(p.read_bytes()).hexdigest() for p in shards]
    assert manifest["run"]["prompt_sha256"] and manifest["run"]["dataset_revision"]
    lines = request_lines(requests)
    assert {json.dumps(line["body"], sort_keys=True) for line in lines} == sent  # the exact online bodies
    assert all(line["body"]["messages"][0]["content"][0]["image_url"]["url"].startswith("data:") for line in lines)
    assert len({line["custom_id"] for line in lines}) == 6

    # Two output files, each in reverse order, in one folder: a run-batch name and a Ray Data one (*.json).
    (tmp_path / "outputs").mkdir()
    answer_as_engine(server, lines[:3][::-1], tmp_path / "outputs" / "b.jsonl")
    answer_as_engine(server, lines[3:][::-1], tmp_path / "outputs" / "a_000000_000000.json")
    assert main(_argv(built_release, tmp_path / "batch", "--read-responses", str(tmp_path / "outputs"))) == 0
    assert "6 generated now" in capsys.readouterr().out
    assert _outputs(tmp_path / "batch") == _outputs(online)
    assert json.loads((tmp_path / "batch" / "run.json").read_text()) == json.loads((online / "run.json").read_text())


def test_missing_and_failed_responses_leave_the_run_partial_with_a_command_for_exactly_those(
    openai_server, built_release, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    server = openai_server(_answer)
    run = tmp_path / "run"
    assert main(_argv(built_release, run, "--write-requests", str(tmp_path / "requests"))) == 0
    lines = request_lines(tmp_path / "requests")
    outputs = answer_as_engine(server, lines, tmp_path / "out.jsonl").read_text().splitlines()
    failed = json.loads(outputs[1])
    failed.update(response=None, error={"code": "server_error", "message": "engine died"})
    kept = [outputs[0], json.dumps(failed), *outputs[3:]]  # lines[2] has no response at all
    (tmp_path / "out.jsonl").write_text("\n".join(kept) + "\n")

    assert main(_argv(built_release, run, "--read-responses", str(tmp_path / "out.jsonl"))) == 3
    error = capsys.readouterr().err
    assert "2 of 6 model queries failed" in error and "PARTIAL (4/6)" in error
    assert len(read_predictions(run / "shards" / "rank-0.jsonl")) == 4  # what was answered is kept
    command = shlex.split(error.split("write requests for exactly the missing ones with: ")[1].split(", or pass")[0])
    assert command[:2] == ["cogbench", "eval"]
    assert main(command[1:]) == 0
    missing = request_lines(Path(command[command.index("--write-requests") + 1]))
    assert [line["custom_id"] for line in missing] == [lines[1]["custom_id"], lines[2]["custom_id"]]

    rest = answer_as_engine(server, missing, tmp_path / "rest.jsonl")
    assert main(_argv(built_release, run, "--read-responses", str(rest))) == 0
    assert "4 already done, 2 generated now" in capsys.readouterr().out
    online = tmp_path / "online"
    assert main([*_argv(built_release, online), "--base-url", server.base_url]) == 0
    assert _outputs(run) == _outputs(online)


def test_foreign_other_settings_and_disagreeing_duplicates_are_refused_by_name(
    openai_server, built_release, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    server = openai_server(_answer)
    assert main(_argv(built_release, tmp_path / "r", "--write-requests", str(tmp_path / "requests"))) == 0
    good = answer_as_engine(server, request_lines(tmp_path / "requests"), tmp_path / "good.jsonl")
    other = tmp_path / "other-requests"
    argv = _argv(built_release, tmp_path / "r", "--write-requests", str(other))
    argv[argv.index("64")] = "32"  # other settings: another max_tokens in the body
    assert main(argv) == 0
    other_line = answer_as_engine(server, request_lines(other)[:1], tmp_path / "other.jsonl")
    capsys.readouterr()

    run = tmp_path / "run"
    assert main(_argv(built_release, run, "--read-responses", str(good), str(other_line))) == 1
    error = capsys.readouterr().err.strip()
    custom_id = request_lines(other)[0]["custom_id"]
    assert error == (
        f"error: {other_line} line 1: custom_id {custom_id!r} was written for other settings or another dataset "
        f"(this run asks {custom_id.rpartition('@')[0]} with another request body); refusing it"
    )
    assert not run.exists()  # refused before anything was written

    foreign = json.loads(good.read_text().splitlines()[0])
    foreign["custom_id"] = "no-such-item#1@0123456789abcdef"
    (tmp_path / "foreign.jsonl").write_text(json.dumps(foreign) + "\n")
    assert main(_argv(built_release, run, "--read-responses", str(good), str(tmp_path / "foreign.jsonl"))) == 1
    assert "custom_id 'no-such-item#1@0123456789abcdef' answers a request this run did not write" in (
        capsys.readouterr().err
    )

    again = tmp_path / "again.jsonl"
    again.write_text(good.read_text().splitlines()[0] + "\n")  # the same answer twice: kept once
    assert main(_argv(built_release, run, "--read-responses", str(good), str(again))) == 0
    assert "6 generated now" in capsys.readouterr().out
    changed = json.loads(again.read_text())
    changed["response"]["body"]["choices"][0]["message"]["content"] = "another answer"
    again.write_text(json.dumps(changed) + "\n")
    assert main(_argv(built_release, tmp_path / "run2", "--read-responses", str(good), str(again))) == 1
    assert capsys.readouterr().err.strip() == (
        f"error: {again} line 1: custom_id {changed['custom_id']!r} answered twice, differently "
        f"(also at {good} line 1); keep one of the two files"
    )
