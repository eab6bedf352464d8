"""The labelling page of `cogbench label` (issue 52 part 1) in a real Chromium: label ten units by keyboard, undo,
reload and resume, export the labels (checked by the format's own reader against the page's sample), a second
labeller on the shared units, the adjudication view of the two exports, and axe on both views."""

from __future__ import annotations

import shutil

import pytest
from conftest import needs_real_data
from labelling_helpers import labelling_runs

from cogbench.reference_eval.labelling.labels_format import check_against_sample, read_labels, read_sample
from cogbench.reference_eval.labelling.page import write_label_page

from shared_files import skip_or_fail

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def page_folder(built_release, tmp_path_factory):
    if CHROMIUM is None:
        skip_or_fail("chromium is not installed (apt-get install -y chromium; .ci/run installs it)")
    root = tmp_path_factory.mktemp("label-page")
    runs = labelling_runs(built_release, root, description=False)  # descriptions: test_labelling.py
    page = root / "page"
    write_label_page([str(r) for r in runs.values()], page, seed=5, per_stratum=3, shared_share=0.5)
    return page


@pytest.fixture
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        errors: list[str] = []

        def new_page():
            page = browser.new_context(accept_downloads=True, viewport={"width": 1300, "height": 950}).new_page()
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("request", lambda r: errors.append(r.url) if not r.url.startswith(("file:", "blob:")) else None)
            return page

        yield new_page
        browser.close()
        assert errors == []  # no script error, nothing fetched from outside the folder


def start(page, folder, labeller: str, role: str) -> None:
    page.goto((folder / "index.html").as_uri())
    page.fill("#labeller", labeller)
    page.check(f"#role-{role}")
    page.click("#start")
    page.wait_for_selector("#unit-title")


def export(page, path):
    with page.expect_download() as download:
        page.click("#export")
    download.value.save_as(path)
    return read_labels(path)


def axe_serious(page) -> list:
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page, options={"resultTypes": ["violations"], "preload": False})
    return [
        (v["id"], v["nodes"][0]["target"])
        for v in results.response["violations"]
        if v["impact"] in ("serious", "critical")
    ]


@needs_real_data
def test_label_ten_reload_resume_export_and_adjudicate(page_folder, browser, tmp_path):
    sample = read_sample(page_folder)
    units = sample["units"]
    assert {u["task"] for u in units} == {"codis"} and len(units) > 12
    page = browser()
    start(page, page_folder, "ann", "A")
    assert page.inner_text("#unit-title") == "Unit u0001" and "null" not in page.inner_text("main")
    assert axe_serious(page) == []
    pressed = {}
    for number in range(10):
        page.keyboard.press("1" if number % 3 else "2")
        pressed[units[number]["unit"]] = 1 if number % 3 else 0
    assert "10 labelled" in page.inner_text("#progress") and page.inner_text("#unit-title") == "Unit u0011"
    assert page.inner_text("#progress").startswith(f"Unit 11 of {len(units)} · ")  # the place, counted from 1
    page.keyboard.press("u")  # undo: u0010's label is gone, and the page is back on it
    assert page.inner_text("#unit-title") == "Unit u0010" and "9 labelled" in page.inner_text("#progress")
    page.keyboard.press("2")
    pressed["u0010"] = 0
    page.reload()  # resumed from the browser's storage: same labeller, same place, same labels
    page.wait_for_selector("#unit-title")
    assert page.inner_text("#unit-title") == "Unit u0011"
    assert "10 labelled · labeller ann (role A)" in page.inner_text("#progress")
    page.keyboard.press("ArrowLeft")
    assert page.inner_text("#unit-title") == "Unit u0010" and page.inner_text("#current") == "Your label: no"
    page.keyboard.press("1")  # a relabel, then its undo: the earlier label comes back, not an empty one
    assert page.inner_text("#unit-title") == "Unit u0011"
    page.keyboard.press("u")
    assert page.inner_text("#unit-title") == "Unit u0010" and page.inner_text("#current") == "Your label: no"
    assert "10 labelled" in page.inner_text("#progress")
    text = page.inner_text("main")
    assert "Does the answer match" in text or "present in the description" in text or "cause-and-effect" in text
    first = export(page, tmp_path / "ann.jsonl")
    check_against_sample(first, sample, "sample.json")
    assert {label.unit: label.label for label in first} == pressed
    assert {(label.labeller, label.role) for label in first} == {("ann", "A")}
    assert [label.unit for label in first] == [u["unit"] for u in units[:10]]

    second = browser()  # a second labeller, in a fresh browser: role B sees only the shared units
    start(second, page_folder, "bob", "B")
    shared = [u["unit"] for u in units if u["shared"]]
    assert f"of {len(shared)}" in second.inner_text("#progress")
    for _ in shared:
        second.keyboard.press("1")
    assert second.locator("#finished").count() == 1
    other = export(second, tmp_path / "bob.jsonl")
    check_against_sample(other, sample, "sample.json")
    assert [label.unit for label in other] == shared

    mine, theirs = {x.unit: x.label for x in first}, {x.unit: x.label for x in other}
    both = [unit for unit in mine if unit in theirs]
    differ = [unit for unit in both if mine[unit] != theirs[unit]]
    assert both and differ  # the hand-picked keys: some shared units labelled 0 by ann, 1 by bob
    second.goto((page_folder / "index.html").as_uri() + "#adjudicate")
    second.set_input_files("#file-first", str(tmp_path / "ann.jsonl"))
    second.set_input_files("#file-second", str(tmp_path / "bob.jsonl"))
    second.wait_for_selector("#adj-summary")
    summary = f"{len(both)} units labelled by both: {len(both) - len(differ)} agree, {len(differ)} differ"
    assert second.inner_text("#adj-summary") == summary
    assert second.locator("article.differ").evaluate_all("xs => xs.map(x => x.dataset.unit)") == differ
    assert "ann (A) no, bob (B) yes" in second.inner_text(f"article[data-unit='{differ[0]}'] h3")
    assert axe_serious(second) == []
    second.click(f"article[data-unit='{differ[0]}'] .settle-yes")  # the adjudicator settles one unit
    second.fill("#adjudicator", "cat")
    with second.expect_download() as download:
        second.click("#adj-export")
    download.value.save_as(tmp_path / "cat.jsonl")
    settled = read_labels(tmp_path / "cat.jsonl")
    check_against_sample(settled, sample, "sample.json")
    assert [(x.unit, x.label, x.labeller, x.role) for x in settled] == [(differ[0], 1, "cat", "adjudicator")]
