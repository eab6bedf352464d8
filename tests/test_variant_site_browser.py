"""The invariance probe's metrics on the site, opened in a real browser (issue 51 item 4): a VQA run of the public
sample's 64 questions under two image variants, through a real local OpenAI-compatible server whose answer depends on the image it is sent
(right on a JPEG, "A" on a PNG: the run flips under shift2 only, on the JPEG images), then ``cogbench report RUN --site DIR``. Playwright
drives Debian's Chromium: the flip rate, the accuracy under every variant and each variant's own metrics are tables
of the leaderboard, each value and image-clustered interval as scores.json states it.
"""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import needs_real_data
from test_image_variant_runs import _image_of  # the image a request carries, as that test reads it

from cogbench.cli import main
from cogbench.dataset_builders.load import load_config

from openai_server import Reply
from shared_files import skip_or_fail

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
VARIANT_METRICS = ("flip_rate", "accuracy_invariant", "flip_rate_jpeg30", "flip_rate_shift2", "accuracy_shift2")


@pytest.fixture
def variant_site(openai_server, built_release, tmp_path, monkeypatch):
    if CHROMIUM is None:
        skip_or_fail("chromium is not installed (apt-get install -y chromium; .ci/run installs it)")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    rows = load_config(str(built_release), "vqa").to_list()
    truth = {row["question"]: "ABCD"[row["answer"]] for row in rows}
    # a question flips under shift2 (a PNG: "A") when its own image is a JPEG and the server's answer to its text is
    # not A (a question text asked twice is answered with the later row's letter)
    flips = sum(row["image"]["bytes"][:3] == b"\xff\xd8\xff" and truth[row["question"]] != "A" for row in rows)

    def reader(request):
        question = request.prompt_text.split("\nA. ")[0]
        return Reply(text=truth[question] if _image_of(request)[:3] == b"\xff\xd8\xff" else "A")

    server = openai_server(reader)
    run = tmp_path / "run"
    argv = ["eval", "--task", "vqa", "--model", "openai:m", "--base-url", server.base_url, "--dataset"]
    assert main([*argv, str(built_release), "--out", str(run), "--image-variant", "jpeg30,shift2"]) == 0
    site = tmp_path / "site"
    assert main(["report", str(run), "--site", str(site)]) == 0
    return json.loads((run / "score" / "scores.json").read_text()), site, flips


@needs_real_data
def test_the_variant_metrics_are_leaderboard_tables_as_scores_json_states(variant_site):
    from playwright.sync_api import sync_playwright

    scores, site, flips = variant_site
    assert scores["metrics"]["flip_rate_shift2"]["overall"] == pytest.approx(100 * flips / 64) and flips > 0
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto((site / "index.html").as_uri())
        page.wait_for_selector("table[data-metric='flip_rate']")
        for metric in VARIANT_METRICS:
            table = page.locator(f"table[data-metric='{metric}']")
            assert table.count() == 1 and table.is_visible(), metric
            stated = scores["metrics"][metric]
            low, high = stated["interval"]["overall"]
            shown = page.inner_text(f"table[data-metric='{metric}'] tr.run[data-run='0'] td.value")
            assert shown.split("\n")[0] == f"{stated['overall']:.1f} [{low:.1f}, {high:.1f}]", metric
        for label in ("Flip rate under image variants", "Accuracy under every image variant"):
            assert page.locator("h3", has_text=label).first.is_visible(), label
        for name in ("jpeg30", "shift2"):
            assert page.locator("h3", has_text=f"Flip rate under image variant {name}").first.is_visible(), name
        page.screenshot(path=str(site.parent / "variant-board.png"), full_page=True)
        browser.close()
    assert errors == []
