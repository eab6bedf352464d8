"""``cogbench sweep run`` and ``merge`` end to end on the real build, loopback servers standing in for the models:
each merged cell is an ordinary run that ``verify`` accepts and equals the unsharded ``eval`` of the cell, byte for
byte in scores.json and details.jsonl (rule-scored tasks); a second run asks nothing again; no secret is written."""

from __future__ import annotations

import json
import os
import sqlite3
import threading

import pytest

from cogbench.cli import main

from openai_server import Reply
from sweep_helpers import SECRET, cells, every_text, letter_responder, plan_and_run, prediction_keys, with_credentials


def test_sweep_runs_merges_and_equals_the_unsharded_runs(openai_server, built_release, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    server = openai_server(letter_responder)
    other = openai_server(lambda request: Reply(text="B"))
    models = [
        {"model": "openai:good", "base_url": with_credentials(server.base_url), "concurrency": 2},
        {"model": f"openai:other@{other.base_url}", "name": "other"},
    ]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a").mkdir()
    monkeypatch.chdir(tmp_path / "a")
    sweep = plan_and_run(main, capsys, tmp_path / "a", built_release, models, tasks=["vqa", "codis"], limit=3)
    sweep = sweep.relative_to(tmp_path / "a")  # as a user names it: scores.json records the path as given
    asked = len(server.requests) + len(other.requests)
    assert asked == 2 * (3 + 6)  # each model: 3 vqa questions, 3 codis pairs of 2 queries, each asked once

    assert main(["sweep", "status", str(sweep)]) == 0
    status = capsys.readouterr().out.splitlines()
    assert status[-1] == "cells: 0 queued, 0 running, 4 done, 0 failed, 0 missing"
    assert all(" done     3/3        2/2     no" in line for line in status[1:-1])

    assert main(["sweep", "merge", str(sweep)]) == 0, capsys.readouterr().err
    merged = capsys.readouterr().out.splitlines()
    assert len(merged) == 4 and all(line.endswith("(PARTIAL, verified)") for line in merged)
    with sqlite3.connect(sweep / "status.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM cells WHERE merged = 1 AND state = 'done'").fetchone() == (4,)
    for cell in cells(sweep):
        keys = prediction_keys(sweep / "cells" / cell / "run" / "predictions.jsonl")
        assert len(keys) == len(set(keys)) == (3 if cell.startswith("vqa") else 6)
    # `cogbench verify` accepts a merged cell as it accepts any run (merge verified each already)
    assert main(["verify", str(sweep / "cells" / cells(sweep)[-1] / "run"), "--dataset", str(built_release)]) == 0
    capsys.readouterr()

    # The same cells run unsharded, by `cogbench eval`, to the same relative path from another folder.
    (tmp_path / "b").mkdir()
    monkeypatch.chdir(tmp_path / "b")
    for cell, url, model in (
        ("vqa--good--thinking-auto--tokens-default--judge-default", server.base_url, "openai:good"),
        ("codis--other--thinking-auto--tokens-default--judge-default", other.base_url, "openai:other"),
    ):
        task = cell.split("--")[0]
        out = sweep / "cells" / cell / "run"
        argv = ["eval", "--task", task, "--model", model, "--base-url", url, "--dataset", str(built_release)]
        assert main([*argv, "--limit", "3", "--out", str(out)]) == 0
        for name in ("score/scores.json", "score/details.jsonl", "run.json", "official_codis_output.json"):
            unsharded, merged_file = tmp_path / "b" / out / name, tmp_path / "a" / out / name
            if unsharded.exists() or merged_file.exists():
                assert unsharded.read_bytes() == merged_file.read_bytes(), (cell, name)
        outputs = [
            {k: v for k, v in json.loads(line).items() if k != "seconds"}
            for line in (tmp_path / "b" / out / "predictions.jsonl").read_text().splitlines()
        ]
        assert outputs == [
            {k: v for k, v in json.loads(line).items() if k != "seconds"}
            for line in (tmp_path / "a" / out / "predictions.jsonl").read_text().splitlines()
        ]
    capsys.readouterr()

    # Run again: every shard already done, nothing asked again; merge again: the same files.
    monkeypatch.chdir(tmp_path / "a")
    before = (sweep / "cells" / cells(sweep)[0] / "run" / "score" / "scores.json").read_bytes()
    asked = len(server.requests) + len(other.requests)
    assert main(["sweep", "run", str(sweep)]) == 0
    assert capsys.readouterr().out.count("already done") == 8
    assert main(["sweep", "merge", str(sweep)]) == 0
    assert len(server.requests) + len(other.requests) == asked
    assert (sweep / "cells" / cells(sweep)[0] / "run" / "score" / "scores.json").read_bytes() == before
    out, err = capsys.readouterr()
    assert SECRET not in out + err
    assert SECRET not in every_text(tmp_path / "a" / sweep)  # the spec holds it; nothing cogbench wrote does


@pytest.mark.slow  # two spawned worker processes, each importing cogbench
def test_jobs_run_cells_side_by_side_in_worker_processes(openai_server, built_release, tmp_path, monkeypatch, capsys):
    """Each model's first request waits (up to 60 s) until the other model has asked too: cells run one after
    another would never meet, so both meeting proves they ran at the same time (a pid count would not: one
    pool worker may take both cells when the first ends before the second worker starts)."""
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    asked = {"m": threading.Event(), "n": threading.Event()}
    met: dict[str, bool] = {}

    def meeting_responder(request):
        model = request.body.get("model")
        asked[model].set()
        other = "n" if model == "m" else "m"
        met.setdefault(model, asked[other].wait(timeout=60))
        return letter_responder(request)

    server = openai_server(meeting_responder)
    models = [{"model": "openai:m", "base_url": server.base_url}, {"model": "openai:n", "base_url": server.base_url}]
    sweep = plan_and_run(main, capsys, tmp_path, built_release, models, limit=2, shards=1, jobs=2)
    assert met == {"m": True, "n": True}
    attempts = [json.loads(path.read_text()) for path in sorted(sweep.glob("cells/*/attempts/*.json"))]
    assert [a["state"] for a in attempts] == ["done", "done"]
    assert os.getpid() not in {a["pid"] for a in attempts}  # worker processes, not this one
    assert len(server.requests) == 4
    assert main(["sweep", "merge", str(sweep)]) == 0
