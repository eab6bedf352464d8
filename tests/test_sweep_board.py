"""The board's folder rules and a sweep not run yet (``cogbench report SWEEP_DIR --site DIR``, issue 50 item 5), and
what makes it fast at 100 models: every pair's permutation test of a column at once, with the p-values of
``cogbench compare``, and each cell's run read once; the board of a run sweep, checked figure by figure, is in
test_sweep_board_run.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from cogbench.cli import main
from cogbench.option_types import DEFAULT_SEED
from cogbench.reference_eval.metrics import intervals, paired_many
from cogbench.reference_eval.reports.compare import load_run, overall_rows

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


# --- the significance groups at 100 models: every pair's test at once, the p-values of `compare` ---------------


def _per_pair(hits_a, totals_a, hits_b, totals_b, permutations: int) -> list[float]:
    """``intervals``' test of each pair, one pair at a time (scipy.stats.permutation_test)."""
    n = hits_a.shape[1]
    return [
        intervals._paired_permutation_p(np.concatenate([ha, hb]), np.concatenate([ta, tb]), n, permutations, 0)
        for ha, ta, hb, tb in zip(hits_a, totals_a, hits_b, totals_b)
    ]


@pytest.mark.parametrize("images, permutations", [(4, 9999), (5, 32), (6, 20), (30, 999)])
def test_all_pairs_at_once_give_each_pairs_own_p_value(images, permutations):
    """Exact (2^n swaps enumerated: 16 and 32 of them) and drawn (scipy's generator, 20 and 999 draws); pairs that
    agree on every image (p 1), that differ on every image, images with no units, a column of B's totals apart."""
    rng = np.random.default_rng(images)
    totals_a = rng.integers(1, 4, (12, images)).astype(float)
    totals_a[:, 0] = 0  # an image with no unit in this column
    hits_a = np.minimum(rng.integers(0, 4, (12, images)), totals_a)
    totals_b, hits_b = totals_a.copy(), np.minimum(rng.integers(0, 4, (12, images)), totals_a)
    hits_b[:2] = hits_a[:2]  # the same answers: every swap leaves the statistic at 0
    hits_b[2], hits_a[2] = totals_a[2], 0  # B right on every unit, A on none
    totals_b[3] = totals_b[3] + 1  # B with more units on each image
    found = paired_many.paired_permutation_ps(hits_a, totals_a, hits_b, totals_b, permutations, 0)
    assert found == _per_pair(hits_a, totals_a, hits_b, totals_b, permutations)
    assert found[:2] == [1.0, 1.0] and found[2] < 1.0


def test_a_permuted_statistic_equal_but_for_rounding_counts_as_equal():
    """Observed: 4/5 - 5/10 = 0.3, as a float 0.30000000000000004. Swapping the second image: 7/10 - 2/5, also 0.3,
    as a float 0.29999999999999993. scipy's relative tolerance (100 eps) counts it as reaching the observed value:
    p 1 (two-sided, of the 8 swaps), not 0.75 as an exact float comparison would give."""
    hits_a, totals_a = np.array([[1.0, 1.0, 2.0]]), np.array([[1.0, 1.0, 3.0]])
    hits_b, totals_b = np.array([[0.0, 4.0, 1.0]]), np.array([[3.0, 6.0, 1.0]])
    found = paired_many.paired_permutation_ps(hits_a, totals_a, hits_b, totals_b, 9999, 0)
    assert found == _per_pair(hits_a, totals_a, hits_b, totals_b, 9999) == [1.0]


def test_fractional_hits_are_tested_pair_by_pair_and_agree():
    """Recognition macro's hits are fractions, whose sums depend on their order: tested by ``intervals`` itself."""
    rng = np.random.default_rng(3)
    hits_a, hits_b = rng.random((4, 6)), rng.random((4, 6))
    totals = np.ones((4, 6))
    found = paired_many.paired_permutation_ps(hits_a, totals, hits_b, totals, 50, 0)
    assert found == _per_pair(hits_a, totals, hits_b, totals, 50)


@pytest.fixture(scope="module")
def vqa_runs(built_release, tmp_path_factory) -> list[Path]:
    """Three scored VQA runs of the build, right on all but every 2nd, 3rd and 5th question."""
    from cogbench.dataset_builders.load import load_config
    from cogbench.reference_eval.scoring.pipeline import ScoreOptions, run_scoring

    root = tmp_path_factory.mktemp("vqa-runs")
    rows = load_config(str(built_release), "vqa").remove_columns("image").to_list()
    folders = []
    for every in (2, 3, 5):
        lines = [
            json.dumps(
                {
                    **{k: r[k] for k in ("question", "choice_a", "choice_b", "choice_c", "choice_d")},
                    "img_id": r["image_id"],
                    "answer": "ABCD"[r["answer"]],
                    "response": "ABCD"[(r["answer"] + (i % every == 0)) % 4],
                }
            )
            for i, r in enumerate(rows)
        ]
        (root / f"{every}.jsonl").write_text("\n".join(lines) + "\n")
        options = ScoreOptions(
            task="vqa", dataset=str(built_release), predictions=str(root / f"{every}.jsonl"), out=str(root / str(every))
        )
        run_scoring(options)
        folders.append(root / str(every))
    return folders


def test_the_groups_rows_are_those_of_cogbench_compare(vqa_runs, tmp_path, capsys):
    """``compare.overall_rows`` (what the board and the site rank by) against ``cogbench compare --json``'s overall
    row, p-value and all, for drawn permutations (20 < 2^images) and the exact test (9999 >= 2^images)."""
    runs = [load_run(folder) for folder in vqa_runs]
    images = len({d["image_id"] for d in runs[0].details})
    assert 2**images > 20 and 2**images <= 9999  # both branches of the test below
    for permutations, pairs in ((20, [(0, 1), (0, 2), (1, 2)]), (9999, [(0, 2)])):
        rows = overall_rows(runs, pairs, "accuracy", DEFAULT_SEED, permutations)
        for i, j in pairs:
            out = tmp_path / f"{permutations}-{i}{j}.json"
            argv = ["compare", str(vqa_runs[i]), str(vqa_runs[j]), "--json", str(out)]
            assert main([*argv, "--permutations", str(permutations)]) == 0
            compared = json.loads(out.read_text())["metrics"]["accuracy"][-1]
            assert json.loads(json.dumps(rows[(i, j)], default=float)) == compared
            assert compared["p_value"] is not None and compared["column"] == "overall"
    capsys.readouterr()
    assert rows[(0, 2)]["p_value"] < 1.0


def test_a_run_folder_is_read_once_the_files_verify_checked(vqa_runs, monkeypatch):
    """``read_input`` (each board cell) verifies the run and makes it of the details verify read: details.jsonl
    is read once, not verified and then read again."""
    from cogbench.reference_eval.recording import run_reader
    from cogbench.reference_eval.verifying import run_inputs, verify

    reads = []
    real = run_reader.read_details
    monkeypatch.setattr(verify, "read_details", lambda *args: reads.append(args) or real(*args))
    monkeypatch.setattr(run_reader, "read_details", lambda *args: reads.append(args) or real(*args))
    [run] = run_inputs.read_input(str(vqa_runs[0]))
    assert len(reads) == 1
    assert run.details == load_run(vqa_runs[0]).details and run.scores["task"] == "vqa"
