"""report.html's "Judge certificate" and "Why two runs ... differ" sections in a real browser (issue 40).

The runs are test_judge_certify's (three models' real CODIS answers judged by a reference LLM judge, the rule
judge and ``judge-b``, served by tests/openai_server.py); the report holds judge-b's three runs, a certificate of
judge-b against the reference (FAIL) and model 0's rule-judged run, so model 0 has two runs and the report
explains their difference. Playwright drives Debian's Chromium at 1400 x 1000: the page must not scroll sideways,
each section's tables must lie inside the window, and the verdict and figures the certificate JSON holds must be
visible on the page as text a person reads (table cells, not Markdown source).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from conftest import needs_real_data
from test_judge_certify import _runs, codis_runs  # noqa: F401 (the module-scoped runs fixture)

from cogbench.cli import main

from shared_files import skip_or_fail

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
WIDTH = 1400


@pytest.fixture(scope="module")
def report_html(codis_runs):  # noqa: F811
    if CHROMIUM is None:
        skip_or_fail("chromium is not installed (apt-get install -y chromium; .ci/run installs it)")
    tmp_path, runs, _ = codis_runs
    certificate = tmp_path / "judge-b-certificate.json"
    argv = ["judges", "certify", "--reference", *_runs(runs, "reference-judge"), "--candidate"]
    main([*argv, *_runs(runs, "judge-b"), "--json", str(certificate)])
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
