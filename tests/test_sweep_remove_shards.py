"""``cogbench sweep merge DIR --remove-shards``: a cell's shard folders removed only on request, only after its merged
run verifies, only files cogbench wrote; each refusal with its failing input (nothing removed); a removal stopped
midway leaves a state ``status``, ``run`` and ``merge`` read right, and the same command finishes it."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3

import pytest

from cogbench.cli import main
from cogbench.reference_eval.run.lock import RunLock

from openai_server import OpenAIServer
from sweep_helpers import CELL, letter_responder, status, write_spec


@pytest.fixture(scope="module")
def ran(built_release, tmp_path_factory):
    """One VQA cell (3 items) run in 3 shards, not merged; each test works on a copy."""
    saved = pytest.MonkeyPatch()
    saved.setenv("OPENAI_API_KEY", "test-key")
    with OpenAIServer(letter_responder) as server:
        folder = tmp_path_factory.mktemp("remove")
        spec = write_spec(folder, built_release, [{"model": "openai:m", "base_url": server.base_url}], limit=3)
        assert main(["sweep", "plan", str(spec), "--out", str(folder / "sweep"), "--shards", "3"]) == 0
        assert main(["sweep", "run", str(folder / "sweep")]) == 0
        yield folder / "sweep", server
    saved.undo()


def copy(ran, tmp_path):
    return shutil.copytree(ran[0], tmp_path / "sweep")


def shards(sweep):
    return sweep / "cells" / CELL / "shards"


def merge(capsys, sweep, *options) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["sweep", "merge", str(sweep), *options])
    out, err = capsys.readouterr()
    return code, out, err


def refused(capsys, sweep, code: int, resumed: bool = False) -> str:
    """``merge --remove-shards`` refused in one line, every shard folder left whole (a removal not begun, unless
    ``resumed``: one stopped before)."""
    before = {p: p.read_bytes() for p in shards(sweep).rglob("*") if p.is_file()}
    got, _, err = merge(capsys, sweep, "--remove-shards")
    assert got == code and err.count("\n") == 1 and err.startswith("error: ") and "Traceback" not in err, err
    assert {p: p.read_bytes() for p in shards(sweep).rglob("*") if p.is_file()} == before
    assert (sweep / "cells" / CELL / "shards-removed.json").exists() == resumed
    return err


def test_shards_are_removed_only_on_request_after_the_merged_run_verifies(ran, tmp_path, capsys):
    sweep, server = copy(ran, tmp_path), ran[1]
    code, out, _ = merge(capsys, sweep)
    assert code == 0 and [p.name for p in sorted(shards(sweep).iterdir())] == ["0", "1", "2"]  # kept unasked
    run = sweep / "cells" / CELL / "run"
    scores = (run / "score" / "scores.json").read_bytes()
    code, out, err = merge(capsys, sweep, "--remove-shards")
    assert code == 0, err
    assert out.splitlines()[-1] == f"{CELL}: its 3 shard folders removed, {run} verified again first"
    assert not shards(sweep).exists() and (sweep / "cells" / CELL / "attempts" / "0.json").is_file()
    assert main(["verify", str(run)]) == 0
    lines = status(capsys, sweep)
    assert lines[1].endswith("  done     3/3        3/3     yes, shards removed") and "1 done" in lines[-1]
    with sqlite3.connect(sweep / "status.sqlite") as db:
        assert db.execute("SELECT DISTINCT state FROM shards").fetchall() == [("removed",)]
    # Nothing runs again, nothing is merged again from the shards that are gone.
    asked = len(server.requests)
    capsys.readouterr()
    assert main(["sweep", "run", str(sweep)]) == 0 and capsys.readouterr().out.count("already done") == 3
    assert main(["sweep", "run-shard", str(sweep), "--index", "1"]) == 0 and len(server.requests) == asked
    code, out, _ = merge(capsys, sweep)
    assert code == 0 and out == f"{CELL}: merged into {run} before, verified; its shards removed\n"
    assert merge(capsys, sweep, "--remove-shards")[0] == 0
    assert (run / "score" / "scores.json").read_bytes() == scores and not shards(sweep).exists()
    # The sweep folder is still cogbench's alone: planned again, the same plan.
    spec = json.loads((sweep / "plan.json").read_text())["spec"]
    assert main(["sweep", "plan", spec, "--out", str(sweep), "--shards", "3"]) == 0
    assert "cells already complete: 1 of 1" in capsys.readouterr().out


@pytest.mark.parametrize("planted", ["file", "folder", "link", "linked shard", "file for a shard"])
def test_a_shard_holding_what_cogbench_did_not_write_is_refused_and_nothing_removed(ran, tmp_path, capsys, planted):
    sweep = copy(ran, tmp_path)
    target = shards(sweep) / "2"
    if planted == "file":
        (target / "score" / "my-notes.txt").write_text("mine")
        says = "holds files cogbench did not write (score/my-notes.txt)"
    elif planted == "folder":
        (target / "plots").mkdir()
        says = "holds files cogbench did not write (plots/)"
    elif planted == "link":
        (target / "predictions.jsonl").rename(tmp_path / "predictions.jsonl")
        (target / "predictions.jsonl").symlink_to(tmp_path / "predictions.jsonl")
        says = "holds a symbolic link (predictions.jsonl)"
    elif planted == "linked shard":  # the shard's folder itself a link to a folder elsewhere
        merge(capsys, sweep)
        target.rename(tmp_path / "elsewhere")
        target.symlink_to(tmp_path / "elsewhere")
        says = "a symbolic link, which cogbench never makes there"
    else:  # a file of the user's where a shard's folder was, in a removal stopped before (shard 1 held)
        with RunLock(shards(sweep) / "1"):
            assert merge(capsys, sweep, "--remove-shards")[0] == 2
        shutil.rmtree(target)
        target.write_text("mine")
        says = "not a folder, which cogbench never makes there"
    err = refused(capsys, sweep, 2, resumed=planted == "file for a shard")
    assert err.startswith(f"error: {target}: {says}; refusing to remove this cell's shards"), err
    assert planted != "linked shard" or len(list((tmp_path / "elsewhere").rglob("*"))) > 5


def test_a_shard_folder_without_its_marker_is_refused(ran, tmp_path, capsys):
    sweep = copy(ran, tmp_path)
    assert merge(capsys, sweep)[0] == 0
    (shards(sweep) / "1" / ".cogbench-output.json").unlink()
    err = refused(capsys, sweep, 2)
    assert err.startswith(f"error: {shards(sweep) / '1'}: not marked as the output of `cogbench eval`"), err


def test_a_removal_stopped_midway_is_read_right_and_finished_by_the_same_command(ran, tmp_path, capsys):
    """Shard 1 held by another writer: shard 0 is removed, then the removal stops, as a kill between removals
    leaves it. A kill inside shard 2's removal leaves some of its files: the same state, read the same way."""
    sweep, server = copy(ran, tmp_path), ran[1]
    run = sweep / "cells" / CELL / "run"
    with RunLock(shards(sweep) / "1"):
        code, _, err = merge(capsys, sweep, "--remove-shards")
    assert code == 2 and err.startswith(f"error: {shards(sweep) / '1'}: another process is writing this shard ")
    assert f"run `cogbench sweep merge {sweep} --remove-shards` again" in err and err.count("\n") == 1
    assert [p.name for p in sorted(shards(sweep).iterdir())] == ["1", "2"]
    (shards(sweep) / "2" / "score" / "scores.json").unlink()  # what a kill inside shard 2's removal leaves
    scores = (run / "score" / "scores.json").read_bytes()
    lines = status(capsys, sweep)
    assert lines[1].endswith("  done     3/3        3/3     yes, shards partly removed (1/3)"), lines
    asked = len(server.requests)
    assert main(["sweep", "run", str(sweep)]) == 0 and len(server.requests) == asked  # no shard runs again
    code, out, _ = merge(capsys, sweep)  # not merged again from what is left
    assert code == 0 and "its shards partly removed: run `cogbench sweep merge" in out
    assert (run / "score" / "scores.json").read_bytes() == scores
    code, out, err = merge(capsys, sweep, "--remove-shards")
    assert code == 0, err
    assert out == f"{CELL}: the last 2 of its 3 shard folders removed, {run} verified again first\n"
    assert not shards(sweep).exists() and status(capsys, sweep)[1].endswith("yes, shards removed")


def test_a_merged_run_that_no_longer_verifies_keeps_the_shards_left(ran, tmp_path, capsys):
    """Verified again right before removing: a merged run changed since is refused, what is left kept."""
    sweep = copy(ran, tmp_path)
    with RunLock(shards(sweep) / "2"):
        assert merge(capsys, sweep, "--remove-shards")[0] == 2  # shards 0 and 1 removed, then stopped
    scores = sweep / "cells" / CELL / "run" / "score" / "scores.json"
    record = json.loads(scores.read_text())
    record["metrics"]["accuracy"]["overall"] = 99.0
    scores.write_text(json.dumps(record))
    err = refused(capsys, sweep, 1, resumed=True)
    assert (
        err.startswith(f"error: {scores.parent.parent}: the merged run does not verify (")
        and "its shards are kept" in err
    )
    assert main(["sweep", "merge", str(sweep)]) == 1  # not merged again from shard 2 alone
    scores.unlink()
    assert "missing" in status(capsys, sweep)[1]  # its shards removed, its merged run gone
    err = refused(capsys, sweep, 1, resumed=True)
    assert "no merged run and its shards were removed (" in err


def test_the_python_api_removes_shards_as_the_command_does(built_release, tmp_path, monkeypatch, openai_server):
    import cogbench
    from cogbench.errors import UsageError

    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    server = openai_server(letter_responder)
    spec = write_spec(tmp_path, built_release, [{"model": "openai:m", "base_url": server.base_url}], limit=2)
    with pytest.raises(UsageError, match="remove_shards=True needs merge=True"):
        cogbench.sweep(spec, tmp_path / "sweep", shards=2, merge=False, remove_shards=True)
    with pytest.raises(UsageError, match="sweep: remove_shards: .yes. is not True or False"):
        cogbench.sweep(spec, tmp_path / "sweep", remove_shards="yes")
    result = cogbench.sweep(spec, tmp_path / "sweep", shards=2, remove_shards=True)
    assert not (tmp_path / "sweep" / "cells" / CELL / "shards").exists()
    assert [(c.state, c.merged, c.shards_done) for c in result.cells] == [("done", True, 2)]
    assert result.lines[-1].startswith(f"{CELL}: its 2 shard folders removed")
    assert os.path.isdir(result.runs[CELL])
