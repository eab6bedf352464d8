"""One rounding rule for every number shown (issue 48 item 9e): half away from zero on the value's decimal
text (the shortest text that reads back as the same float, as scores.json writes it), so 31.25 reads 31.3 on the
command line, in report.md and on the site alike. Python's ``f"{31.25:.1f}"`` rounds the binary value half to
even (31.2) and JavaScript's ``toFixed`` rounds ties up (31.3): they disagreed on every exact tie.

The expected strings are worked by hand from the decimal text, never from ``fixed`` itself.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from conftest import needs_real_data

from cogbench.cli import main
from cogbench.numbers import fixed

from shared_files import skip_or_fail

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

BY_HAND = [
    # (value, digits, sign, shown): ties go away from zero, on the decimal text
    (31.25, 1, False, "31.3"),  # Python's format gave 31.2 (half to even on the binary value, exactly 31.25)
    (31.35, 1, False, "31.4"),  # binary 31.350000000000001...: up either way
    (0.125, 2, False, "0.13"),  # Python gave 0.12
    (2.675, 2, False, "2.68"),  # binary 2.67499999999999982236431605997495353221893310546875: Python gave 2.67
    (0.15, 1, False, "0.2"),  # binary 0.1499999999999999944488848768742172978818416595458984375: Python and JS: 0.1
    (-0.25, 1, False, "-0.3"),  # away from zero, as a difference B - A reads
    (-0.25, 1, True, "-0.3"),
    (0.25, 1, True, "+0.3"),
    (0.0, 1, True, "+0.0"),
    (100.0, 1, False, "100.0"),
    (50, 1, False, "50.0"),  # an int
    (31.24999, 1, False, "31.2"),
    (0.00005, 4, False, "0.0001"),
    (1e-7, 2, False, "0.00"),
    (123456.78125, 4, False, "123456.7813"),
]


@pytest.mark.parametrize(("value", "digits", "sign", "shown"), BY_HAND)
def test_half_away_from_zero_on_the_decimal_text(value, digits, sign, shown):
    assert fixed(value, digits, sign=sign) == shown


def test_numpy_floats_and_non_finite_values():
    import numpy as np

    assert fixed(np.float64(31.25)) == "31.3" and fixed(np.float32(0.5), 0) == "1"
    assert fixed(float("nan")) == "nan" and fixed(float("inf")) == "inf"


def vqa_predictions(built_release, path: Path, right: int) -> Path:
    """Official VQA predictions: the first ``right`` questions right, the rest a wrong letter."""
    from cogbench.dataset_builders.load import load_config

    rows = load_config(str(built_release), "vqa").remove_columns("image").to_list()
    lines = []
    for index, row in enumerate(rows):
        letter = row["answer"] if index < right else (row["answer"] + 1) % 4
        record = {k: row[k] for k in ("question", "choice_a", "choice_b", "choice_c", "choice_d")}
        record.update(img_id=row["image_id"], answer="ABCD"[row["answer"]], response="ABCD"[letter])
        lines.append(json.dumps(record))
    path.write_text("\n".join(lines) + "\n")
    return path


@needs_real_data
def test_a_tie_reads_the_same_on_the_command_line_in_report_md_and_on_the_site(built_release, tmp_path, capsys):
    """20 of the samples' 64 VQA questions right: 31.25 exactly. The CLI, report.md, `cogbench report` and the
    site (in Chromium) all show 31.3."""
    if CHROMIUM is None:
        skip_or_fail("chromium is not installed (apt-get install -y chromium; .ci/run installs it)")
    predictions = vqa_predictions(built_release, tmp_path / "p.jsonl", 20)
    run = tmp_path / "run"
    argv = ["score", "--task", "vqa", "--dataset", str(built_release), "--predictions", str(predictions)]
    assert main([*argv, "--out", str(run)]) == 0
    scores = json.loads((run / "scores.json").read_text())
    assert scores["metrics"]["accuracy"]["overall"] == 31.25  # 100 * 20 / 64, exact in binary
    printed = capsys.readouterr().out
    overall = re.search(r"^Overall\s+(\S+)\s+(\S+)$", printed, re.M)
    assert overall.groups() == ("31.3", "31.3"), printed  # robust and official extractor alike
    assert "accuracy 31.3 [" in printed
    report = (run / "report.md").read_text()
    assert "| 31.3 |" in report and "| 31.2 |" not in report
    assert re.search(r"\| accuracy \| 31\.3 \[", report)  # the interval table
    assert main(["report", str(run), "--out", str(tmp_path / "report"), "--site", str(tmp_path / "site")]) == 0
    assert "31.3" in (tmp_path / "report" / "report.md").read_text()
    low, high = scores["metrics"]["accuracy"]["interval"]["overall"]
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page()
        page.goto((tmp_path / "site" / "index.html").as_uri())
        page.wait_for_selector("table[data-metric='accuracy']")
        shown = page.inner_text("table[data-metric='accuracy'] tr.run td.value")
        browser.close()
    assert shown == f"31.3 [{fixed(low)}, {fixed(high)}]"
    script = (tmp_path / "site" / "app.js").read_text()
    assert not re.search(r"toFixed|toPrecision|Math\.round", script)  # the page shows the texts it is given
