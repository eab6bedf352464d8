"""leak-scan.html opened in a real browser (Playwright driving Debian's Chromium by its path, as
tests/test_site_browser.py does): each match shows the benchmark image beside the corpus image, both
decoded, in the site's style, with no serious accessibility violation (axe)."""

from __future__ import annotations

import io
import shutil

import pytest
from PIL import Image

from cogbench.cards.release import build_release
from cogbench.reference_eval.contamination.leak_report import write_report
from cogbench.reference_eval.contamination.scan import leak_scan

from shared_files import skip_or_fail
from validation_helpers import copy_samples

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytest.importorskip("faiss", reason="leak-scan needs the leak-scan extra (pip install -e '.[leak-scan]')")


@pytest.fixture(scope="module")
def page_file(real_raw_dir, tmp_path_factory):
    if CHROMIUM is None:
        skip_or_fail("chromium is not installed (apt-get install -y chromium; .ci/run installs it)")
    raw = copy_samples(real_raw_dir, tmp_path_factory.mktemp("raw"))
    build = build_release(raw, tmp_path_factory.mktemp("build") / "out").out
    corpus = tmp_path_factory.mktemp("corpus")
    for index, path in enumerate(sorted((raw / "cogbench-samples" / "images").iterdir())[:2]):
        image = Image.open(path).convert("RGB")
        buffer = io.BytesIO()
        image.resize((image.width // 2, image.height // 2)).save(buffer, format="JPEG", quality=50)
        (corpus / f"copy-{index}.jpg").write_bytes(buffer.getvalue())
    out = tmp_path_factory.mktemp("report")
    write_report(out, leak_scan([corpus], build))
    return out / "leak-scan.html"


def test_both_images_of_each_match_are_shown_side_by_side(page_file):
    from axe_playwright_python.sync_playwright import Axe
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.goto(page_file.as_uri())
        rows = page.locator("tbody tr")
        assert rows.count() == 2
        assert page.locator("#summary").inner_text().startswith("2 corpus images scanned")
        for index in range(2):
            images = rows.nth(index).locator("img")
            assert images.count() == 2
            widths = images.evaluate_all("els => els.map(e => [e.complete, e.naturalWidth])")
            assert all(done and width > 0 for done, width in widths), widths
            first, second = (images.nth(i).bounding_box() for i in range(2))
            assert second["x"] > first["x"] + first["width"] - 1 and abs(second["y"] - first["y"]) < 40  # side by side
        assert page.evaluate("getComputedStyle(document.body).fontFamily").startswith("system-ui")
        results = Axe().run(page, options={"resultTypes": ["violations"], "preload": False})
        serious = [v for v in results.response["violations"] if v["impact"] in ("serious", "critical")]
        assert serious == [], [(v["id"], v["nodes"][0]["target"]) for v in serious]
        browser.close()
