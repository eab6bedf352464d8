"""The board's folder rules and a sweep not run yet (``cogbench report SWEEP_DIR --site DIR``, issue 50 item 5);
the board of a run sweep, checked figure by figure, is in test_sweep_board_run.py."""

from __future__ import annotations

import json
import shutil

from cogbench.cli import main

from sweep_helpers import CELL, planned


def board_of(site) -> dict:
    text = (site / "data" / "board.js").read_text(encoding="utf-8")
    return json.loads(text[text.index('["board"]=') + len('["board"]=') :].rstrip().rstrip(";"))


def test_a_folder_cogbench_did_not_write_is_refused(built_release, tmp_path, capsys):
    sweep = planned(tmp_path, built_release, "http://127.0.0.1:9/v1", shards=1)
    site = tmp_path / "site"
    site.mkdir()
    (site / "notes.txt").write_text("mine")
    capsys.readouterr()
    assert main(["report", str(sweep), "--site", str(site)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "holds nothing cogbench wrote; refusing to write into it" in err
    assert [p.name for p in site.iterdir()] == ["notes.txt"] and (site / "notes.txt").read_text() == "mine"
    # inside the sweep folder, or with --out or other runs beside it: one line, exit 2
    assert main(["report", str(sweep), "--site", str(sweep / "board")]) == 2
    assert "error: " in capsys.readouterr().err
    assert main(["report", str(sweep), "--out", str(tmp_path / "r"), "--site", str(tmp_path / "s")]) == 2
    assert "is reported alone, with --site DIR only" in capsys.readouterr().err
    assert not (tmp_path / "r").exists() and not (tmp_path / "s").exists()


def test_a_sweep_not_run_yet_is_all_queued_with_no_number(built_release, tmp_path, capsys):
    sweep = planned(tmp_path, built_release, "http://127.0.0.1:9/v1", shards=1)
    site = tmp_path / "site"
    capsys.readouterr()
    assert main(["report", str(sweep), "--site", str(site)]) == 0
    assert capsys.readouterr().out.startswith(f"wrote the sweep's board {site / 'index.html'}: 1 cell(s) (1 queued)")
    board = board_of(site)
    [cell] = board["cells"]
    assert (cell["id"], cell["state"], cell["items_t"], cell["complete"]) == (CELL, "queued", "0/3", False)
    assert "value" not in cell and "health" not in cell and board["groups"] == {} and board["best"] == []
    marker = json.loads((site / ".cogbench-output.json").read_text())
    assert marker["kind"] == "site"
    assert sorted(p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()) == [
        ".cogbench-output.json",
        "README.md",
        "board.js",
        "data/board.js",
        "index.html",
        "style.css",
    ]
    shutil.rmtree(sweep / "cells" / CELL)  # the cell's folder gone: missing; the board is written again in place
    assert main(["report", str(sweep), "--site", str(site)]) == 0
    assert board_of(site)["cells"][0]["state"] == "missing"
