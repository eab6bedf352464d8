"""``cogbench.sweep`` (issue 50, item 7): the Python API's sweep gives what ``cogbench sweep plan``, ``run`` and
``merge`` give on the same spec: the same cells and states as ``sweep status``, the same merge lines, and merged
runs byte for byte the same (scores.json, details.jsonl, run.json); a second call asks the model nothing again."""

from __future__ import annotations

from pathlib import Path

import pytest

import cogbench
from cogbench.cli import main
from cogbench.errors import IncompleteRunError, UsageError

from openai_server import Reply
from sweep_helpers import cells, letter_responder, write_spec


def status_rows(capsys, sweep: Path) -> list[tuple[str, ...]]:
    """``cogbench sweep status``'s cell lines, split into their columns."""
    assert main(["sweep", "status", str(sweep)]) == 0
    return [tuple(line.split()) for line in capsys.readouterr().out.splitlines()[1:-1]]


def test_sweep_in_python_equals_the_commands(openai_server, built_release, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    server = openai_server(letter_responder)
    models = [{"model": "openai:good", "base_url": server.base_url}]
    fields = {"tasks": ["vqa", "codis"], "limit": 3}

    # The command line, in folder a.
    (tmp_path / "a").mkdir()
    monkeypatch.chdir(tmp_path / "a")
    spec = write_spec(tmp_path / "a", built_release, models, **fields)
    assert main(["sweep", "plan", str(spec), "--out", "sweep", "--shards", "2"]) == 0
    planned = capsys.readouterr().out.splitlines()
    assert main(["sweep", "run", "sweep"]) == 0
    ran = capsys.readouterr().out.splitlines()
    assert main(["sweep", "merge", "sweep"]) == 0
    merged = capsys.readouterr().out.splitlines()
    by_command = status_rows(capsys, Path("sweep"))

    # The Python API, in folder b, the same relative path (scores.json records the path as given).
    (tmp_path / "b").mkdir()
    monkeypatch.chdir(tmp_path / "b")
    spec = write_spec(tmp_path / "b", built_release, models, **fields)
    asked = len(server.requests)
    result = cogbench.sweep(spec, "sweep", shards=2)
    capsys.readouterr()
    assert len(server.requests) == 2 * asked  # every query asked once, as the commands asked them

    assert isinstance(result, cogbench.SweepResult) and result.folder == Path("sweep")
    assert list(result.lines) == planned[:-1] + ran + merged  # plan's cost (not its "run it with" hint), shards, merges
    assert sorted(
        (c.id, c.state, f"{c.items_done}/{c.items_total}", f"{c.shards_done}/{c.shards_total}") for c in result.cells
    ) == [row[:4] for row in by_command]  # status lists the cells by id, the result in the plan's order
    assert all(row[4] == "yes" for row in by_command) and all(c.merged for c in result.cells)
    assert status_rows(capsys, Path("sweep")) == by_command
    assert sorted(result.runs) == sorted(cells(Path("sweep"))) == sorted(cells(tmp_path / "a" / "sweep"))
    assert (result.cost.cells, result.cost.shards, result.cost.queries) == (2, 4, 3 + 6)
    for cell, run in result.runs.items():
        assert run == Path("sweep") / "cells" / cell / "run"
        for name in ("score/scores.json", "score/details.jsonl", "run.json"):
            assert (tmp_path / "b" / run / name).read_bytes() == (tmp_path / "a" / run / name).read_bytes(), name

    # Called again: every shard already done, nothing asked again; the same merged runs.
    before = {cell: (run / "score" / "scores.json").read_bytes() for cell, run in result.runs.items()}
    again = cogbench.sweep(spec, "sweep", shards=2)
    capsys.readouterr()
    assert len(server.requests) == 2 * asked
    assert sum("already done" in line for line in again.lines) == 4
    assert {cell: (run / "score" / "scores.json").read_bytes() for cell, run in again.runs.items()} == before


def test_sweep_in_python_plans_only_and_refuses_what_the_commands_refuse(built_release, tmp_path, capsys):
    spec = write_spec(tmp_path, built_release, [{"model": "openai:m@http://127.0.0.1:9/v1"}], limit=2)
    planned = cogbench.sweep(spec, tmp_path / "sweep", shards=2, run=False, merge=False)
    assert [(c.state, c.shards_total, c.merged, c.run) for c in planned.cells] == [("queued", 2, False, None)]
    assert planned.runs == {} and planned.lines[-1] == "cells already complete: 0 of 1"
    for arguments, message in (
        ({"shards": 0}, "sweep: shards must be a whole number of 1 or more, not 0"),
        ({"jobs": True}, "sweep: jobs must be a whole number of 1 or more, not True"),
        ({"run": "yes"}, "sweep: run: 'yes' is not True or False"),
        ({"run": False}, "sweep: merge=True needs run=True"),
    ):
        with pytest.raises(UsageError, match=message.replace("(", r"\(")):
            cogbench.sweep(spec, tmp_path / "sweep", **arguments)
    with pytest.raises(UsageError, match="sweep: spec must be a path, not int 3"):
        cogbench.sweep(3, tmp_path / "sweep")


def test_a_failed_shard_is_raised_as_sweep_run_reports_it(openai_server, built_release, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    server = openai_server(lambda request: Reply(status=500))
    spec = write_spec(tmp_path, built_release, [{"model": "openai:m", "base_url": server.base_url}], limit=1)
    with pytest.raises(IncompleteRunError, match=r"^1 of 1 shards failed \(first: shard 0, vqa--m--"):
        cogbench.sweep(spec, tmp_path / "sweep")
    assert not (tmp_path / "sweep" / "cells" / cells(tmp_path / "sweep")[0] / "run").exists()  # never merged
