"""`cogbench report --site` of judge-panel runs, opened in a real browser (Playwright driving Debian's Chromium by
its path, as tests/test_site_browser.py does): an item shows each member's verdict and raw reply beside the panel's
majority (issue 48 item 9d).

Real runs on the real data: a CODIS panel of two LLM judges behind real local OpenAI-compatible servers (one
compares output and gold exactly, one always says the opposite) and the rule judge, on eight pairs, two of them
answered wrong; a description panel of two LLM judges on the public samples' annotations (``--oracle``). Every
member verdict and reply the page shows is checked against details.jsonl.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from conftest import needs_real_data
from test_score import minilm_path

from cogbench.cli import main

from openai_server import OpenAIServer, Reply, numbered_verdicts
from shared_files import codis_example, skip_or_fail, spacy_stand_in

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
PAIRS, SWAPPED = 8, (1, 4)  # the pairs scored; the ones whose two outputs are swapped (both queries wrong)


def codis_judge(flip: bool):
    """Right when output and gold are the same text (``flip``: the opposite, every time)."""

    def respond(request):
        text = request.prompt_text
        truth = re.search(r"Here is the groundtruth: (.*)\n", text).group(1)
        right = (truth.strip() == text.rsplit("Here is the output: ", 1)[1].strip()) != flip
        return Reply(text="right" if right else "wrong")

    return respond


@pytest.fixture(scope="module")
def panel_site(built_release, tmp_path_factory):
    if CHROMIUM is None:
        skip_or_fail("chromium is not installed (apt-get install -y chromium; .ci/run installs it)")
    root = tmp_path_factory.mktemp("panel-site")
    pairs = json.loads(codis_example().read_text())[:PAIRS]
    for index in SWAPPED:
        pairs[index]["output"] = {
            "output_1": pairs[index]["output"]["output_2"],
            "output_2": pairs[index]["output"]["output_1"],
        }
    (root / "pairs.json").write_text(json.dumps(pairs))
    servers = [OpenAIServer(responder).start() for responder in (codis_judge(False), codis_judge(True))]
    servers += [OpenAIServer(numbered_verdicts(v)).start() for v in (lambda n: 1, lambda n: n % 2)]
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_API_KEY", "sk-local")
        try:
            codis = ["score", "--task", "codis", "--dataset", str(built_release), "--allow-partial"]
            codis += ["--predictions", str(root / "pairs.json"), "--out", str(root / "codis"), "--judge", "rule"]
            codis += [f"--judge=openai:exact@{servers[0].base_url}", f"--judge=openai:contrary@{servers[1].base_url}"]
            assert main(codis) == 0
            described = ["score", "--task", "description", "--dataset", str(built_release), "--oracle"]
            described += ["--spacy-model", str(spacy_stand_in()), "--embedder", minilm_path()]
            described += ["--out", str(root / "described")]
            described += [f"--judge=openai:yes@{servers[2].base_url}", f"--judge=openai:odd@{servers[3].base_url}"]
            assert main(described) == 0
        finally:
            for server in servers:
                server.stop()
    site = root / "site"
    assert main(["report", str(root / "codis"), str(root / "described"), "--site", str(site)]) == 0
    return root, site


@pytest.fixture
def page(panel_site):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
        yield page
        browser.close()
        assert errors == []


def details_of(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "details.jsonl").read_text().splitlines()]


def words(verdict) -> str:
    return {True: "right", False: "wrong", None: "not scored"}[verdict]


@needs_real_data
def test_a_codis_item_shows_each_members_verdict_and_reply(panel_site, page):
    root, site = panel_site
    detail = details_of(root / "codis")[SWAPPED[0]]
    page.goto((site / "index.html").as_uri() + f"#item=codis/{detail['item_id']}")
    page.wait_for_selector("#item-title")
    card = page.locator("article.answer[data-run='0']")
    blocks = card.locator("details.panel")
    assert blocks.count() == 2  # one per query
    for j, query in enumerate(detail["queries"]):
        members = query["panel"]
        assert [m["judge"] for m in members] == ["rule", "openai:exact", "openai:contrary"]
        assert {m["right"] for m in members} == {True, False}  # the contrary member disagrees: all three shown
        rows = blocks.nth(j).locator("tr.member")
        assert rows.count() == 3
        for k, member in enumerate(members):
            row = rows.nth(k)
            assert row.get_attribute("data-judge") == member["judge"]
            assert row.locator("td.verdict").inner_text() == words(member["right"])
            if member["judge"] == "rule":
                assert row.locator("td.replies").inner_text() == "none (the rule judge gives no reply)"
            else:
                assert row.locator("td.replies pre").inner_text() == member["judge_reply"]
        assert "Judge panel: each of its 3 members" in blocks.nth(j).inner_text()
    assert "none (rule judge or not judged)" not in card.inner_text()  # a panel's item no longer says no judge replied
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page, options={"resultTypes": ["violations"], "preload": False})
    assert [v["id"] for v in results.response["violations"] if v["impact"] in ("serious", "critical")] == []


@needs_real_data
def test_a_description_item_shows_each_members_cor_verdicts_and_replies(panel_site, page):
    root, site = panel_site
    detail = details_of(root / "described")[0]
    page.goto((site / "index.html").as_uri() + f"#item=description/{detail['item_id']}")
    page.wait_for_selector("#item-title")
    rows = page.locator("article.answer[data-run='1'] details.panel tr.member")
    assert rows.count() == 2
    for k, name in enumerate(("openai:yes", "openai:odd")):
        verdicts = [next(m["verdict"] for m in cor["panel"] if m["judge"] == name) for cor in detail["cognition"]]
        replies = [r for r in detail["panel_replies"] if r["judge"] == name]
        row = rows.nth(k)
        assert row.locator("td.verdict").inner_text() == (
            f"{sum(verdicts)}/{len(verdicts)} CoRs right ({'; '.join(map(str, verdicts))})"
        )
        assert row.locator("td.replies pre").all_inner_texts() == [
            f"Figure {r['figure']}: {r['reply']}" for r in replies
        ]
    assert {v for cor in detail["cognition"] for v in (m["verdict"] for m in cor["panel"])} == {0, 1}
