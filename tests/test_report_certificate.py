"""A judge certificate in ``cogbench report`` (issue 40 item 4, "a section in report").

The runs are test_judge_certify's: three models' real CODIS answers, judged by a reference LLM judge,
by the rule judge and by ``judge-b`` (served by tests/openai_server.py). ``report --certificate``
re-derives the certificate from the sources it names before showing it: an edited figure, a
certificate that is not one, or sources that are gone are refused in one line. Runs judged by an
LLM judge other than the papers' are named in the section with or without a certificate. report.html's
certificate section, and the section explaining two runs of one model, are opened in Chromium (the end).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from conftest import needs_real_data
from test_judge_certify import _runs, codis_runs, people_labels  # noqa: F401 (the module-scoped runs fixture)

from cogbench.cli import main

from shared_files import skip_or_fail


def _certificate(codis_runs, candidate: str, name: str):  # noqa: F811
    tmp_path, runs, _ = codis_runs
    path = tmp_path / f"{name}.json"
    argv = ["judges", "certify", "--reference", *_runs(runs, "reference-judge"), "--candidate", *_runs(runs, candidate)]
    main([*argv, "--json", str(path)])
    return path


def _labels(report: str) -> dict[str, str]:
    """Each run's folder -> its label, from the report's list of runs (``- **LABEL**: ..., `FOLDER```)."""
    return {folder: label for label, folder in re.findall(r"^- \*\*(.+?)\*\*: .*, `([^`]+)`$", report, re.M)}


def _section(report: str) -> str:
    """The "Judge certificate" section of a report.md, up to the next section."""
    return report.split("## Judge certificate\n", 1)[1].split("\n## ", 1)[0]


def test_a_certificate_section_with_its_verdict_and_figures(codis_runs, tmp_path, capsys):  # noqa: F811
    _, runs, _ = codis_runs
    path = _certificate(codis_runs, "judge-b", "judge-b")
    certificate = json.loads(path.read_text())
    out = tmp_path / "report"
    given = [*_runs(runs, "judge-b"), runs[(0, "rule")]]
    assert main(["report", *given, "--out", str(out), "--allow-mismatch", "--certificate", str(path)]) == 0
    report = (out / "report.md").read_text()
    section = _section(report)
    assert (
        "candidate judge **openai:judge-b, tolerant parsing** in place of the papers' CODIS judge `gpt-4-turbo-preview` "
        "(the CODIS judge (authors' data/eval.py), shut down 2026-10-23), certified against the verdicts of "
        "openai:reference-judge, tolerant parsing: **FAIL**." in section
    )
    assert ": **FAIL**." in section and certificate["status"] == "FAIL"
    kappa = certificate["tasks"][0]["agreement"]["overall"]["kappa"]
    result = "pass" if kappa >= 0.8 else "FAIL"
    assert f"| Cohen's kappa, every model's verdicts pooled | {kappa:.3f} | >= 0.8 | {result} |" in section
    rows = [line for line in section.splitlines() if line.startswith("| ") and "|---" not in line][1:]
    assert len(rows) == len(certificate["tasks"][0]["criteria"])
    for row, criterion in zip(rows, certificate["tasks"][0]["criteria"]):
        cells = [cell.strip().replace("\\|", "|") for cell in re.split(r"(?<!\\)\|", row)[1:-1]]
        value = criterion["value"]
        shown = "n/a" if value is None else f"{value:.2f}" if criterion["name"] == "difference" else f"{value:.3f}"
        assert cells[:4] == [
            criterion["what"],
            shown,
            criterion["bar"],
            "pass" if criterion["passed"] else "FAIL",
        ], row  # five cells: the criterion's own pipes split none
        assert len(cells) == 5
    labels = _labels(report)
    certified = ", ".join(labels[folder] for folder in _runs(runs, "judge-b"))
    assert re.search(r"^Runs judged by the certified judge: (.*)\.$", section, re.M).group(1) == certified
    assert "Judge certificate" in (out / "report.html").read_text()


def test_runs_judged_otherwise_are_named_without_a_certificate(codis_runs, tmp_path, capsys):  # noqa: F811
    _, runs, _ = codis_runs
    out = tmp_path / "plain"
    assert main(["report", *_runs(runs, "judge-b"), "--out", str(out)]) == 0
    section = _section((out / "report.md").read_text())
    assert section.lstrip().startswith("No certificate given")
    assert "(openai:judge-b, tolerant parsing)" in section and "cogbench judges certify" in section
    rule = tmp_path / "rule"
    assert main(["report", *_runs(runs, "rule"), "--out", str(rule)]) == 0
    assert "Judge certificate" not in (rule / "report.md").read_text()  # the rule judge: nothing to certify


def test_a_certificate_that_does_not_re_derive_is_refused_in_one_line(codis_runs, tmp_path, capsys):  # noqa: F811
    _, runs, _ = codis_runs
    path = _certificate(codis_runs, "rule", "rule")
    good = json.loads(path.read_text())
    assert good["status"] == "PASS"
    capsys.readouterr()

    def refused(edit, code: int, message: str) -> None:
        bad = json.loads(json.dumps(good))
        edit(bad)
        edited = tmp_path / "edited.json"
        edited.write_text(json.dumps(bad))
        argv = ["report", *_runs(runs, "rule"), "--out", str(tmp_path / "never"), "--certificate", str(edited)]
        assert main(argv) == code
        err = capsys.readouterr().err
        assert err.startswith(f"error: {edited}: ") and err.count("\n") == 1 and message in err, err
        assert not (tmp_path / "never").exists()  # refused before any work

    def kappa(c):
        c["tasks"][0]["criteria"][0]["value"] = 0.99

    def status(c):
        c["status"] = "FAIL"

    def no_settings(c):
        del c["settings"]

    def gone(c):
        c["tasks"][0]["models"][1]["candidate"] = str(tmp_path / "moved-away")

    refused(kappa, 1, "field tasks.0.criteria.0.value: NOT verified: the file says 0.99, its sources give")
    refused(status, 1, 'field status: NOT verified: the file says "FAIL", its sources give "PASS"')
    refused(no_settings, 2, "'settings' is a required property")
    refused(gone, 2, f"field candidate: {tmp_path / 'moved-away'} is not there to re-derive the certificate from")
    # Copied beside the report elsewhere, the sources (absolute paths) are still found: accepted.
    shutil.copy(path, tmp_path / "copy.json")
    out = tmp_path / "accepted"
    argv = ["report", *_runs(runs, "rule"), "--out", str(out), "--certificate", str(tmp_path / "copy.json")]
    assert main(argv) == 0
    assert ": **PASS**." in (out / "report.md").read_text()


# report.html's "Judge certificate" and "Why two runs ... differ" sections in a real browser (issue 40).
#
# The runs are test_judge_certify's (three models' real CODIS answers judged by a reference LLM judge, the rule
# judge and ``judge-b``, served by tests/openai_server.py); the report holds judge-b's three runs, a certificate of
# judge-b against the reference (FAIL) and model 0's rule-judged run, so model 0 has two runs and the report
# explains their difference. Playwright drives Debian's Chromium at 1400 x 1000: the page must not scroll sideways,
# each section's tables must lie inside the window, and the verdict and figures the certificate JSON holds must be
# visible on the page as text a person reads (table cells, not Markdown source).

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
WIDTH = 1400


@pytest.fixture(scope="module")
def report_html(codis_runs):  # noqa: F811
    if CHROMIUM is None:
        skip_or_fail("chromium is not installed (apt-get install -y chromium; .ci/run installs it)")
    tmp_path, runs, _ = codis_runs
    certificate = tmp_path / "judge-b-certificate.json"
    argv = ["judges", "certify", "--reference", *_runs(runs, "reference-judge"), "--candidate"]
    labels, key, _, _ = people_labels(tmp_path, runs, "report")  # anchored on people: the human anchor's bars too
    anchored = ["--labels", labels, "--key", key, "--resamples", "200"]
    main([*argv, *_runs(runs, "judge-b"), *anchored, "--json", str(certificate)])
    out = tmp_path / "html-report"
    given = [*_runs(runs, "judge-b"), runs[(0, "rule")]]
    assert main(["report", *given, "--out", str(out), "--allow-mismatch", "--certificate", str(certificate)]) == 0
    return out / "report.html", json.loads(certificate.read_text())


@pytest.fixture
def page(report_html):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": WIDTH, "height": 1000})
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(report_html[0].as_uri())
        yield page
        shots = Path(os.environ.get("COGBENCH_CHART_DIR") or report_html[0].parent)
        shots.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(shots / "report_sections_1400.png"), full_page=True)
        browser.close()
        assert errors == []


def section(page, title: str):
    """The section headed ``title``: its heading and what follows up to the next h2."""
    heading = page.locator("h2", has_text=title)
    assert heading.count() == 1, title
    return heading


def inside_window(page, selector: str) -> list[str]:
    """Each element matching ``selector`` that reaches past the window's right edge (none, when all fit)."""
    return page.eval_on_selector_all(
        selector,
        f"els => els.filter(e => e.getBoundingClientRect().right > {WIDTH}).map(e => e.outerHTML.slice(0, 120))",
    )


@needs_real_data
def test_the_certificate_section_shows_its_verdict_and_figures_in_the_window(report_html, page):
    _, certificate = report_html
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH  # nothing scrolls the page sideways
    section(page, "Judge certificate")
    verdict = page.locator("#judge-certificate strong", has_text=certificate["status"])
    assert certificate["status"] == "FAIL" and verdict.first.is_visible()
    table = page.locator("#judge-certificate table")
    assert table.count() == len(certificate["tasks"])
    task = certificate["tasks"][0]
    rows = table.first.locator("tbody tr")
    assert rows.count() == len(task["criteria"])
    # the human anchor (issue 52): its three bars are rows of the table, its sample a line a person reads
    assert {"human_kappa", "ac1_margin", "parse_failures"} <= {criterion["name"] for criterion in task["criteria"]}
    sample = task["human_anchor"]["sample"]
    anchor = page.locator("#judge-certificate p", has_text="Human anchor: codis: a sample of")
    assert (
        anchor.count() == 1
        and anchor.is_visible()
        and f"{sample['units_labelled']} labelled units" in anchor.inner_text()
    )
    for k, criterion in enumerate(task["criteria"]):
        cells = [c.strip() for c in rows.nth(k).locator("td").all_inner_texts()]
        value = criterion["value"]
        shown = "n/a" if value is None else f"{value:.2f}" if criterion["name"] == "difference" else f"{value:.3f}"
        assert cells[:4] == [criterion["what"], shown, criterion["bar"], "pass" if criterion["passed"] else "FAIL"]
        assert rows.nth(k).locator("td").nth(1).is_visible()
    assert inside_window(page, "#judge-certificate table, #judge-certificate td") == []
    assert "|---" not in page.inner_text("body")  # no Markdown table source left on the page


@needs_real_data
def test_the_explain_section_fits_the_window(codis_runs, report_html, page):  # noqa: F811
    _, runs, _ = codis_runs
    heading = section(page, "Why two runs of model-0 differ (codis)")
    table = page.locator("table:below(h2:has-text('Why two runs of model-0'))").first
    assert table.is_visible() and heading.is_visible()
    assert table.locator("th").all_inner_texts()[:4] == ["Metric", "A", "B", "B - A"]
    a, b = (json.loads((Path(runs[(0, judge)]) / "scores.json").read_text()) for judge in ("judge-b", "rule"))
    for row in table.locator("tbody tr").all():
        cells = row.locator("td")
        metric = cells.nth(0).inner_text()
        assert [cells.nth(k).inner_text() for k in (1, 2)] == [
            f"{scores['metrics'][metric]['overall']:.2f}" for scores in (a, b)
        ]
        # A, B and B - A are numbers alike: aligned alike (not the left, smaller Source column of run tables)
        assert cells.evaluate_all("tds => tds.slice(1, 4).map(td => getComputedStyle(td).textAlign)") == ["right"] * 3
    assert inside_window(page, "table, td, th, p.note, pre") == []
