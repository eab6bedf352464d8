"""``cogbench report`` over several real scored runs: every file, published rows, intervals, best marks."""

from __future__ import annotations

import csv
import json
import re

from conftest import needs_real_data
from PIL import Image
from test_intervals import codis_example, score_codis, swap_pairs

from cogbench.cli import main
from cogbench.errors import UsageError
from cogbench.reference_eval.scoring.pipeline import ScoreOptions, run_scoring


def vqa_run(built_release, tmp_path, name: str, right_every: int, template: str = "{}"):
    """Official VQA predictions: every ``right_every``-th question right, the rest answered with a wrong letter
    (``template``: how the letter is written, e.g. "The answer is {}." which only the robust extractor reads)."""
    from cogbench.dataset_builders.load import load_config

    rows = load_config(str(built_release), "vqa").remove_columns("image").to_list()
    lines = []
    for index, row in enumerate(rows):
        record = {k: row[k] for k in ("question", "choice_a", "choice_b", "choice_c", "choice_d")}
        letter = row["answer"] if index % right_every == 0 else (row["answer"] + 1) % 4
        record.update(img_id=row["image_id"], answer="ABCD"[row["answer"]], response=template.format("ABCD"[letter]))
        lines.append(json.dumps(record))
    path = tmp_path / f"{name}.jsonl"
    path.write_text("\n".join(lines) + "\n")
    out = tmp_path / name
    run_scoring(
        ScoreOptions(task="vqa", dataset=str(built_release), predictions=str(path), out=str(out), resamples=300)
    )
    return out


@needs_real_data
def test_report_over_four_runs_writes_every_file(built_release, tmp_path, capsys):
    truth = tmp_path / "truth"
    score_codis(built_release, codis_example(), truth, resamples=300)
    swapped = tmp_path / "swapped"
    score_codis(built_release, swap_pairs(codis_example(), 0.3, 1, tmp_path / "swapped.json"), swapped, resamples=300)
    good, poor = vqa_run(built_release, tmp_path, "good", 1), vqa_run(built_release, tmp_path, "poor", 3)
    out = tmp_path / "report"
    assert main(["report", str(truth), str(swapped), str(good), str(poor), "--out", str(out)]) == 0
    assert "4 run(s)" in capsys.readouterr().out

    markdown = (out / "report.md").read_text()
    assert "## CODIS (CODIS Table 3)" in markdown and "## VQA accuracy (CogBench Table 5)" in markdown
    codis_rows = [line for line in markdown.splitlines() if line.startswith("| ") and "CODIS Table 3" in line]
    assert any(  # the papers' best row is bold among the papers' rows, whatever the runs score
        line.startswith("| _GPT-4V_ | published, CODIS Table 3, human judges | **33.3** | **54.2** |")
        for line in codis_rows
    )
    swapped_row = next(line for line in markdown.splitlines() if line.startswith("| swapped |"))
    assert re.search(r"\| 70\.0 \[\d+\.\d, \d+\.\d\] \|", swapped_row)  # overall Acc_p with its interval
    # Best per column: the ground truth (100) in CODIS, the all-right VQA run beats every published model.
    truth_row = next(line for line in markdown.splitlines() if line.startswith("| output_example |"))
    # 100% still has an interval of positive width (Korn-Graubard: an exact binomial bound below 100)
    assert len(re.findall(r"\*\*100\.0 \[9\d\.\d, 100\.0\]\*\*", truth_row)) == 13
    good_row = next(
        line for line in markdown.splitlines() if line.startswith("| good [SAMPLE (5 of 251 images)] | run | robust |")
    )
    assert good_row.count("**100.0") == 9  # best among the two runs of the sample build, not above the papers
    vqa_published = [line for line in markdown.splitlines() if "published, CogBench Table 5" in line]
    assert any("**" in line for line in vqa_published if not line.startswith("| _Human_"))  # the papers' best
    human = next(line for line in markdown.splitlines() if line.startswith("| _Human_ | published, CogBench Table 5"))
    assert "**" not in human  # references are never "best"

    page = (out / "report.html").read_text()
    assert page.count('src="data:image/png;base64,') == 4  # radar, two bar charts, CODIS categories
    assert not re.search(r'(src|href)="(?!data:)', page)  # nothing outside the file

    with (out / "leaderboard.csv").open() as handle:
        board = list(csv.DictReader(handle))
    sample = " [SAMPLE (5 of 251 images)]"  # the VQA runs are on the public samples, not the full release
    assert [row["run"] for row in board] == ["output_example", "swapped", "good" + sample, "poor" + sample]
    assert float(board[1]["acc_p"]) == float(
        json.loads((swapped / "scores.json").read_text())["metrics"]["acc_p"]["overall"]
    )
    assert float(board[1]["acc_p.low"]) < float(board[1]["acc_p"]) < float(board[1]["acc_p.high"])
    assert board[2]["accuracy.time"] == "100.0" and board[0]["accuracy"] == ""

    for name in ("radar_vqa", "bars_vqa", "bars_codis", "codis_categories"):
        with Image.open(out / f"{name}.png") as image:
            assert image.width > 600 and image.height > 400


def test_report_of_a_folder_without_scores_is_a_usage_error(tmp_path, capsys):
    (tmp_path / "run").mkdir()
    assert main(["report", str(tmp_path / "run"), "--out", str(tmp_path / "r")]) == UsageError.exit_code
    assert "no scores.json" in capsys.readouterr().err


def test_bold_ranks_only_comparable_rows_and_never_a_lone_row():
    """Issue 32 item 8: a run is never bold above the papers' rows, and a lone row is the best of nothing."""
    from cogbench.reference_eval.reports.tables import Cell, Table

    rows = [
        [Cell("run a"), Cell("90.0", 90.0)],
        [Cell("paper x"), Cell("80.0", 80.0)],
        [Cell("paper y"), Cell("70.0", 70.0)],
        [Cell("run b (other judge)"), Cell("95.0", 95.0)],
    ]
    table = Table("t", ["model", "score"], rows, published_rows={1, 2}, rank_groups=[{1, 2}, {0}, {3}])
    assert table.best() == {(1, 1)}
    table.rank_groups = [{1, 2}, {0, 3}]  # two runs of one build and judge: ranked between themselves
    assert table.best() == {(1, 1), (3, 1)}
    table.rank_groups = None  # one group: every row, as before
    assert table.best() == {(3, 1)}
