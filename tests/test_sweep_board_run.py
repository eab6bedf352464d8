"""The board of a real sweep (``cogbench report SWEEP_DIR --site DIR``, issue 50 item 5): loopback servers stand in
for models that answer, stop at the token limit, fail on one task, or fail on every request; one merged cell is
then edited so that it no longer verifies. Every figure the board shows is checked against values derived here
from each cell's details.jsonl and predictions.jsonl; the "complete on these tasks" filter in Chromium."""

from __future__ import annotations

import json
import shutil
import statistics
from pathlib import Path

import pytest

from cogbench.cli import main

from openai_server import OpenAIServer, Reply
from shared_files import skip_or_fail
from sweep_helpers import letter_responder, write_spec

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CELL = "{task}--{model}--thinking-auto--tokens-default--judge-default"


def is_vqa(request) -> bool:
    return "A." in request.prompt_text or "(A)" in request.prompt_text


RESPONDERS = {
    "letters": letter_responder,  # VQA: A; CODIS: a fixed sentence
    "cut": lambda request: Reply(text="", finish_reason="length"),  # every reply stopped at the token limit
    "halfway": lambda request: letter_responder(request) if is_vqa(request) else Reply(status=500),
    "failing": lambda request: Reply(status=500),
}


def read_board(site: Path) -> dict:
    text = (site / "data" / "board.js").read_text(encoding="utf-8")
    return json.loads(text[text.index('["board"]=') + len('["board"]=') :].rstrip().rstrip(";"))


@pytest.fixture(scope="module")
def board_site(built_release, tmp_path_factory):
    """The sweep (4 models x VQA and CODIS, 2 items each), run, merged where it can be; one cell edited; the board."""
    root = tmp_path_factory.mktemp("board")
    servers = {name: OpenAIServer(responder).start() for name, responder in RESPONDERS.items()}
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("OPENAI_API_KEY", "test-key")
            models = [
                {"model": f"openai:{name}", "base_url": server.base_url, "max_attempts": 1}
                for name, server in servers.items()
            ]
            spec = write_spec(root, built_release, models, tasks=["vqa", "codis"], limit=2)
            sweep = root / "sweep"
            assert main(["sweep", "plan", str(spec), "--out", str(sweep)]) == 0
            assert main(["sweep", "run", str(sweep)]) != 0  # the failing cells
            done = [CELL.format(task=t, model=m) for t in ("vqa", "codis") for m in ("letters", "cut")]
            done.append(CELL.format(task="vqa", model="halfway"))
            assert main(["sweep", "merge", str(sweep), *(f"--cell={cell}" for cell in done)]) == 0
    finally:
        for server in servers.values():
            server.stop()
    # The cut model's CODIS cell: an answer edited after merging; its run no longer verifies.
    details = sweep / "cells" / CELL.format(task="codis", model="cut") / "run" / "score" / "details.jsonl"
    details.write_text(details.read_text().replace('"output": ""', '"output": "edited"', 1))
    site = root / "site"
    assert main(["report", str(sweep), "--site", str(site), "--permutations", "99"]) == 0
    return sweep, site, read_board(site)


def derived(sweep: Path, cell: str) -> dict:
    """What a cell's files say, counted here: the headline value, and each health figure over the answers."""
    run = sweep / "cells" / cell / "run"
    details = [json.loads(line) for line in (run / "score" / "details.jsonl").read_text().splitlines()]
    seconds = sorted(json.loads(line)["seconds"] for line in (run / "predictions.jsonl").read_text().splitlines())
    if cell.startswith("vqa"):
        units = details
        value = 100 * sum(d["correct"] for d in details) / len(details)
    else:
        units = [query for d in details for query in d["queries"]]
        value = 100 * sum(all(q["right"] for q in d["queries"]) for d in details) / len(details)
    return {
        "value": value,
        "answers": len(units),
        "unparsed": sum(u["extracted"] is None for u in units) if cell.startswith("vqa") else None,
        "truncated": sum((u.get("reply") or {}).get("finish_reason") == "length" for u in units),
        "empty": sum(u["answer_status"] == "empty" for u in units),
        "judge_failures": None if cell.startswith("vqa") else sum(u["judge_error"] is not None for u in units),
        "refusals": sum("refusal" in (u.get("reply") or {}) for u in units),  # openai: models, which record them
        "median": statistics.median(seconds),
        "max": seconds[-1],
    }


def test_each_cell_state_items_and_figures_are_those_of_its_files(board_site):
    sweep, _, board = board_site
    cells = {cell["id"]: cell for cell in board["cells"]}
    assert board["models"] == ["letters", "cut", "halfway", "failing"]
    states = {cell_id: cell["state"] for cell_id, cell in cells.items()}
    assert states == {
        CELL.format(task="vqa", model="letters"): "complete",
        CELL.format(task="vqa", model="cut"): "complete",
        CELL.format(task="vqa", model="halfway"): "complete",
        CELL.format(task="vqa", model="failing"): "failed",
        CELL.format(task="codis", model="letters"): "complete",
        CELL.format(task="codis", model="cut"): "failed-verification",
        CELL.format(task="codis", model="halfway"): "failed",
        CELL.format(task="codis", model="failing"): "failed",
    }
    assert cells[CELL.format(task="vqa", model="failing")]["items_t"] == "0/2"
    assert cells[CELL.format(task="vqa", model="letters")]["items_t"] == "2/2"
    for cell_id, cell in cells.items():
        if not cell["complete"]:
            assert "value" not in cell and "health" not in cell and cell["letters"] == ""
            continue
        found = derived(sweep, cell_id)
        assert cell["value"]["v"] == pytest.approx(found["value"])
        assert any(label.startswith("PARTIAL") for label in cell["labels"])  # 2 items of the build: a subset
        health = cell["health"]
        assert health["answers"] == found["answers"]
        for name in ("unparsed", "truncated", "empty", "judge_failures", "refusals"):
            if found[name] is None:
                assert health[name] == {"n": None, "pct": None, "t": "n/a"}, (cell_id, name)
            else:
                assert health[name]["n"] == found[name], (cell_id, name)
                assert health[name]["pct"] == pytest.approx(100 * found[name] / found["answers"])
        assert health["refusals"]["t"] == "0.0% (0)"  # an openai: model records refusals: none refused
        assert health["latency"] == pytest.approx({"median": found["median"], "max": found["max"]})
    cut = cells[CELL.format(task="vqa", model="cut")]["health"]
    assert cut["truncated"]["t"] == "100.0% (2)" and cut["unparsed"]["t"] == "100.0% (2)"


def test_an_unverifiable_cell_is_not_scored(board_site):
    _, _, board = board_site
    cell = next(c for c in board["cells"] if c["id"] == CELL.format(task="codis", model="cut"))
    assert cell["state"] == "failed-verification" and not cell["complete"]
    assert "not verified" in cell["note"]
    assert ("cut", "codis") not in {(b["model"], b["task"]) for b in board["best"]}
    # Groups only among complete cells: three in the VQA column, one alone (no groups) in CODIS.
    vqa = next(key for key in board["groups"] if key.startswith("vqa|"))
    assert set(board["groups"][vqa]["letters"]) == {
        CELL.format(task="vqa", model=m) for m in ("letters", "cut", "halfway")
    }
    assert not any(key.startswith("codis|") for key in board["groups"])
    best = {(b["model"], b["task"]): b for b in board["best"]}
    assert set(best) == {("letters", "vqa"), ("cut", "vqa"), ("halfway", "vqa"), ("letters", "codis")}


def test_the_filter_keeps_the_models_complete_on_the_tasks_ticked(board_site, tmp_path):
    if CHROMIUM is None:
        skip_or_fail("chromium is not installed (apt-get install -y chromium; .ci/run installs it)")
    from playwright.sync_api import sync_playwright

    _, site, _ = board_site
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto((site / "index.html").as_uri())

        def shown() -> list[str]:
            return [row.get_attribute("data-model") for row in page.locator("#matrix tbody tr:not([hidden])").all()]

        assert shown() == ["letters", "cut", "halfway", "failing"]
        assert page.locator("#shown-count").inner_text() == "4 of 4 models"
        page.check("#filter-vqa")
        assert shown() == ["letters", "cut", "halfway"]
        page.check("#filter-codis")
        assert shown() == ["letters"]  # cut's CODIS cell does not verify; halfway's failed
        assert page.locator("#shown-count").inner_text() == "1 of 4 models complete on vqa, codis"
        assert page.locator("#health-table tbody tr:not([hidden])").count() == 2  # letters' two cells
        page.uncheck("#filter-vqa")
        assert shown() == ["letters"]
        page.uncheck("#filter-codis")
        assert len(shown()) == 4
        cell = page.locator(f'#matrix td[data-cell="{CELL.format(task="codis", model="cut")}"]')
        assert cell.locator(".state").inner_text() == "failed-verification" and cell.locator(".value").count() == 0
        page.screenshot(path=str(tmp_path / "board.png"), full_page=True)
        assert errors == []
        browser.close()
