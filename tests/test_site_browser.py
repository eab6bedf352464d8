"""`cogbench report --site` opened in a real browser (issue 43): Playwright drives Debian's Chromium by its path.

The site is built from real runs: rule-judged CODIS runs (the ground truth, 12 pairs wrong on 12 images, 6 other
pairs wrong), an LLM-judged CODIS run through a real local OpenAI-compatible server (some replies reasoning in
think blocks, some never closing them, some judge replies flipped or unusable), the same judge read in constrained
parsing (its replies outside the official labels unscored: neither wrong nor failures), VQA and description runs. Every
count the page shows is checked against details.jsonl; the groups against the hand-worked case of
test_site_significance.py; the intervals against scores.json.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from pathlib import Path

import pytest
from conftest import needs_real_data
from test_report_run_kind import description_predictions, score_description
from test_runs_report import vqa_run

from cogbench.cli import main
from cogbench.reference_eval.answers.reasoning import NO_ANSWER
from cogbench.reference_eval.scoring.pipeline import ScoreOptions, run_scoring
from cogbench.reference_eval.tasks.prompts import DESCRIPTION_DIRECTED

from openai_server import OpenAIServer, Reply
from shared_files import codis_example, skip_or_fail

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
THINKING, TRUNCATED, FLIPPED, UNUSABLE = range(8), range(8, 11), range(20, 25), range(25, 28)
OFF_LABEL = range(30, 34)  # "Right." / "Wrong, ...": read by tolerant parsing, unscored by constrained parsing
CODIS_RUNS = ("truth", "twelve", "six", "llm", "constrained")


def one_pair_per_image(pairs: list[dict], images: list[str]) -> list[int]:
    """The first pair of each image, in file order: swapping one changes exactly one image's result."""
    seen: set[str] = set()
    chosen = []
    for index, image in enumerate(images):
        if image not in seen:
            seen.add(image)
            chosen.append(index)
    return chosen


def codis_predictions(path: Path, edit) -> Path:
    pairs = json.loads(codis_example().read_text())
    for index, pair in enumerate(pairs):
        edit(index, pair)
    path.write_text(json.dumps(pairs))
    return path


def swap(indexes):
    def edit(index, pair):
        if index in indexes:
            pair["output"] = {"output_1": pair["output"]["output_2"], "output_2": pair["output"]["output_1"]}

    return edit


def think(index, pair):
    """Reasoning before the answer on some pairs; a think block never closed (no answer: unclosed, the authors'
    format keeps no finish reason) on others."""
    if index in THINKING:
        pair["output"]["output_1"] = f"<think>Look at the context of pair {index}.</think>{pair['output']['output_1']}"
    if index in TRUNCATED:
        pair["output"]["output_2"] = "<think>The hand moves, so"


def judge_responder(questions: dict[str, int]):
    """Right/wrong as a perfect judge would, except: flipped on FLIPPED pairs, unusable on UNUSABLE pairs."""

    def respond(request):
        text = request.prompt_text
        question = re.search(r"Here is the question: (.*)\n", text).group(1)
        truth = re.search(r"Here is the groundtruth: (.*)\n", text).group(1)
        right = truth.strip() == text.rsplit("Here is the output: ", 1)[1].strip()
        index = questions.get(question.strip(), -1)
        if index in UNUSABLE:
            return Reply(text="I cannot say.")
        if index in FLIPPED:
            right = not right
        if index in OFF_LABEL:
            return Reply(text="Right." if right else "Wrong, it is not.")
        return Reply(text="right" if right else "wrong")

    return respond


@pytest.fixture(scope="module")
def site_runs(built_release, tmp_path_factory):
    """The runs and their site (built once for the module)."""
    if CHROMIUM is None:
        skip_or_fail("chromium is not installed (apt-get install -y chromium; .ci/run installs it)")
    root = tmp_path_factory.mktemp("site-runs")
    truth = root / "truth"
    run_scoring(
        ScoreOptions(task="codis", dataset=str(built_release), predictions=str(codis_example()), out=str(truth))
    )
    details = [json.loads(line) for line in (truth / "details.jsonl").read_text().splitlines()]
    firsts = one_pair_per_image(details, [d["image_id"] for d in details])
    runs = {"truth": truth}
    for name, chosen in (("twelve", firsts[:12]), ("six", firsts[12:18])):
        predictions = codis_predictions(root / f"{name}.json", swap(set(chosen)))
        runs[name] = root / name
        run_scoring(
            ScoreOptions(task="codis", dataset=str(built_release), predictions=str(predictions), out=str(runs[name]))
        )
    questions = {d["question"].strip(): k for k, d in enumerate(details)}
    server = OpenAIServer(judge_responder(questions)).start()
    previous = os.environ.get("OPENAI_API_KEY")
    os.environ["OPENAI_API_KEY"] = "sk-local"
    try:
        runs["llm"] = root / "llm"
        run_scoring(
            ScoreOptions(
                task="codis",
                dataset=str(built_release),
                predictions=str(codis_predictions(root / "thinking.json", think)),
                out=str(runs["llm"]),
                judge="openai:gpt-judge",
                judge_base_url=server.base_url,
                judge_backoff=0.01,
                judge_concurrency=16,
                allow_failures=True,  # the unusable replies: a PARTIAL run, shown and never ranked
            )
        )
        runs["constrained"] = root / "constrained"
        run_scoring(
            ScoreOptions(
                task="codis",
                dataset=str(built_release),
                predictions=str(codis_example()),
                out=str(runs["constrained"]),
                judge="openai:gpt-judge",
                judge_base_url=server.base_url,
                judge_backoff=0.01,
                judge_concurrency=16,
                judge_parsing="constrained",  # the unusable and off-label replies: unscored, not failures
            )
        )
    finally:
        server.stop()
        if previous is None:
            os.environ.pop("OPENAI_API_KEY", None)
        else:
            os.environ["OPENAI_API_KEY"] = previous
    runs["good"], runs["poor"] = vqa_run(built_release, root, "good", 1), vqa_run(built_release, root, "poor", 3)
    runs["described"] = score_description(
        built_release,
        description_predictions(built_release, root / "directed.jsonl", DESCRIPTION_DIRECTED),
        root / "described",
    )
    site = root / "site"
    assert main(["report", *map(str, runs.values()), "--site", str(site), "--permutations", "9999"]) == 0
    return runs, site


@pytest.fixture
def page(site_runs):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
        page.on(
            "request",
            lambda request: errors.append(f"request {request.url}") if not request.url.startswith("file:") else None,
        )
        yield page
        browser.close()
        assert errors == []  # no script error, and nothing fetched from outside the folder


def details_of(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "details.jsonl").read_text().splitlines()]


def open_site(page, site: Path, fragment: str = "") -> None:
    page.goto((site / "index.html").as_uri() + fragment)


@needs_real_data
def test_groups_intervals_and_labelled_rows(site_runs, page, tmp_path):
    runs, site = site_runs
    open_site(page, site)
    page.wait_for_selector("table[data-metric='acc_p']")
    letters = {
        name: page.inner_text(f"table[data-metric='acc_p'] tr.run[data-run='{index}'] td.letters")
        for index, name in enumerate(runs)
        if name in CODIS_RUNS
    }
    # the hand-worked case: truth and twelve differ, six cannot be told apart from either; the LLM-judged runs are
    # never ranked with rule-judged runs
    assert letters == {"truth": "a", "twelve": "b", "six": "ab", "llm": "", "constrained": ""}
    assert "Holm" in page.inner_text("#rule")
    alone = page.inner_text(
        f"table[data-metric='recognition_micro'] tr.run[data-run='{list(runs).index('described')}']"
    )
    assert "not ranked: no other run of its kind (build, judge, mode, circular, no image, image variants)" in alone
    for index, name in enumerate(runs):
        scores = json.loads((runs[name] / "scores.json").read_text())
        metric = (
            "acc_p" if scores["task"] == "codis" else "accuracy" if scores["task"] == "vqa" else "recognition_micro"
        )
        shown = page.inner_text(f"table[data-metric='{metric}'] tr.run[data-run='{index}'] td.value")
        if name == "constrained":  # its unscored rate on a second line: test_unscored_units_are_shown_as_such
            shown = shown.split("\n")[0]
        stated = scores["metrics"][metric]
        value = stated["overall"] if stated["overall"] is not None else stated["overall_partial"]  # PARTIAL (llm)
        low, high = stated["interval"]["overall"]
        assert shown == f"{value:.1f} [{low:.1f}, {high:.1f}]", name
    human = page.locator("table[data-metric='acc_p'] tr.published[data-kind='human baseline']")
    assert human.count() == 1 and "Human" in human.inner_text() and "86.2" in human.inner_text()  # CODIS Table 3
    assert page.locator("table[data-metric='accuracy'] tr.published[data-kind='human baseline']").count() == 1
    assert page.locator("table[data-metric='acc_p'] tr.published[data-kind='published']").count() >= 10
    page.screenshot(path=str(tmp_path / "board.png"))


@needs_real_data
def test_a_leaderboard_cell_leads_to_its_items(site_runs, page):
    runs, site = site_runs
    twelve = list(runs).index("twelve")
    category = "Location and Orientation"
    open_site(page, site)
    page.select_option("#col-codis", category)
    page.click(f"table[data-metric='acc_p'] tr.run[data-run='{twelve}'] a.cell-link")
    page.wait_for_selector("#item-list li")
    expected = sum(d["category"] == category for d in details_of(runs["twelve"]))
    assert page.inner_text("#count") == f"{expected} of 353 items"
    assert page.input_value("#f-cat") == category


def expected_counts(runs: dict[str, Path]) -> dict[str, int]:
    """The filters' counts over the CODIS runs, from details.jsonl alone."""
    per_run = [{d["item_id"]: d for d in details_of(runs[name])} for name in CODIS_RUNS]
    counts = {"runs": 0, "judges": 0, "unscored": 0}
    for item in per_run[0]:
        lines = [run[item] for run in per_run]
        verdicts = [tuple(q["right"] for q in d["queries"]) for d in lines]
        counts["runs"] += len(set(verdicts)) > 1
        by_answer: dict[tuple, set] = {}
        for d, verdict in zip(lines, verdicts):
            by_answer.setdefault(tuple(q["final_answer"] for q in d["queries"]), set()).add(verdict)
        counts["judges"] += any(len(v) > 1 for v in by_answer.values())
        counts["unscored"] += any(
            q["right"] is None or q.get("judge_error") or q.get("answer_status") in NO_ANSWER
            for d in lines
            for q in d["queries"]
        )
    return counts


@needs_real_data
def test_each_filter_counts_what_details_jsonl_says(site_runs, page):
    runs, site = site_runs
    expected = expected_counts(runs)
    # by construction the LLM run's judge flips some replies and gives unusable ones (every count a real filter)
    assert min(expected.values()) > 0 and expected["unscored"] >= len(TRUNCATED)
    open_site(page, site, "#view=items&task=codis")
    page.wait_for_selector("#item-list li")
    for box, key in (("#f-runs", "runs"), ("#f-judges", "judges"), ("#f-unscored", "unscored")):
        page.check(box)
        assert page.inner_text("#count") == f"{expected[key]} of 353 items", box
        page.uncheck(box)
    categories = [d["category"] for d in details_of(runs["truth"])]
    for category in sorted(set(categories)):
        page.select_option("#f-cat", category)
        assert page.inner_text("#count") == f"{categories.count(category)} of 353 items"
    page.select_option("#f-cat", "")
    term = "bag"
    page.fill("#f-q", term)
    from cogbench.dataset_builders.load import load_config

    rows = {
        r["id"]: r
        for r in load_config(str(Path(json.loads((runs["truth"] / "scores.json").read_text())["dataset"])), "codis")
        .remove_columns("image")
        .to_list()
    }
    matching = 0
    for name_lines in zip(*(details_of(runs[n]) for n in CODIS_RUNS)):
        row = rows[name_lines[0]["item_id"]]
        text = " ".join(
            [row["id"], row["question"], row["context_1"], row["context_2"], row["answer_1"], row["answer_2"]]
        )
        text += " ".join(q["output"] for d in name_lines for q in d["queries"])
        matching += term in text.lower()
    assert matching > 0 and page.inner_text("#count") == f"{matching} of 353 items"


@needs_real_data
def test_an_item_link_opens_it_with_every_answer(site_runs, page, tmp_path):
    runs, site = site_runs
    details = details_of(runs["llm"])
    item = details[THINKING[0]]
    open_site(page, site, f"#item=codis/{item['item_id']}")
    page.wait_for_selector("#item-title")
    assert page.evaluate("document.querySelector('.item-head img').naturalWidth") > 0  # the build's image, on disk
    assert item["question"] in page.inner_text("main")
    cards = page.locator("article.answer")
    assert cards.count() == len(CODIS_RUNS)
    llm = page.locator(f"article.answer[data-run='{list(runs).index('llm')}']")
    reasoning = llm.locator("details.reasoning").first
    assert not reasoning.get_attribute("open")  # folded
    reasoning.click()  # unfolds
    assert f"Look at the context of pair {THINKING[0]}." in reasoning.inner_text()  # as think() wrote it
    assert "right" in llm.locator("details.judge").first.inner_text()  # the judge's raw reply
    page.screenshot(path=str(tmp_path / "item.png"), full_page=True)
    truncated = details[TRUNCATED[0]]
    open_site(page, site, f"#item=codis/{truncated['item_id']}")
    page.wait_for_selector(f"#item-title:has-text('{truncated['item_id']}')")
    assert "unclosed" in llm.inner_text()


@needs_real_data
def unread(query: dict) -> bool:
    """Constrained parsing's rule, worked from the reply alone: a reply that is not exactly a label once stripped."""
    return isinstance(query["judge_reply"], str) and query["judge_reply"].strip() not in ("right", "wrong")


@needs_real_data
def test_unscored_units_are_shown_as_such(site_runs, page):
    runs, site = site_runs
    details = details_of(runs["constrained"])
    queries = [q for d in details for q in d["queries"]]
    assert all((q["judge_error"] is not None) == unread(q) for q in queries)  # no failure: only unscored replies
    unscored_q, judged_q = sum(map(unread, queries)), sum(not unread(q) for q in queries)
    unscored_p = sum(any(map(unread, d["queries"])) for d in details)
    judged_p = len(details) - unscored_p
    # the off-label and unusable pairs, both queries each (unless a question repeats): unscored, never failures
    assert unscored_q >= len(OFF_LABEL) and unscored_p >= len(OFF_LABEL) // 2
    scores = json.loads((runs["constrained"] / "scores.json").read_text())
    assert (scores["counts"]["unscored"], scores["counts"]["judge_failures"]) == (unscored_q, 0)
    open_site(page, site)
    index = list(runs).index("constrained")
    for metric, unscored, judged, unit in (
        ("acc_p", unscored_p, judged_p, "pairs"),
        ("acc_q", unscored_q, judged_q, "queries"),
    ):
        cell = page.inner_text(f"table[data-metric='{metric}'] tr.run[data-run='{index}'] td.value")
        rate = 100 * unscored / (unscored + judged)
        assert cell.split("\n")[1] == f"unscored {unscored}/{unscored + judged} {unit} ({rate:.1f}%)", metric
    llm_index = list(runs).index("llm")
    assert "unscored" not in page.inner_text(f"table[data-metric='acc_p'] tr.run[data-run='{llm_index}'] td.value")

    # an item unscored in the constrained run, a judge failure in the LLM run (the same "I cannot say." reply)
    llm = {d["item_id"]: d for d in details_of(runs["llm"])}
    item = next(
        d["item_id"]
        for d in details
        if all(map(unread, d["queries"]))
        and all(q["judge_error"] and q["right"] is None for q in llm[d["item_id"]]["queries"])
    )
    open_site(page, site, "#view=items&task=codis")
    page.wait_for_selector("#item-list li")
    page.check("#f-unscored")
    page.fill("#f-q", item)
    assert page.inner_text("#count") == "1 of 353 items"
    chips = page.locator(f"#item-list li[data-id='{item}'] .chip").all_inner_texts()
    assert (chips[index], chips[llm_index]) == ("U", "?")
    # an item unscored only in the constrained run (an off-label reply): the filter finds it through that run alone
    others = [{d["item_id"]: d for d in details_of(runs[name])} for name in CODIS_RUNS if name != "constrained"]
    alone = next(
        d["item_id"]
        for d in details
        if any(map(unread, d["queries"]))
        and not any(
            q["right"] is None or q.get("answer_status") in NO_ANSWER
            for o in others
            for q in o[d["item_id"]]["queries"]
        )
    )
    page.fill("#f-q", alone)
    assert page.inner_text("#count") == "1 of 353 items"
    page.uncheck("#f-unscored")

    open_site(page, site, f"#item=codis/{item}")
    page.wait_for_selector(f"#item-title:has-text('{item}')")
    card = page.locator(f"article.answer[data-run='{index}']")
    assert card.locator(".verdict-unscored").all_inner_texts() == ["UNSCORED", "UNSCORED"]
    assert "Judge error" not in card.inner_text() and "neither wrong nor a judge failure" in card.inner_text()
    failed = page.locator(f"article.answer[data-run='{llm_index}']")
    assert "Judge error" in failed.inner_text() and "UNSCORED" not in failed.inner_text()
    # a wrong verdict in the same run reads wrong, not unscored
    wrong = next(
        d["item_id"]
        for d in details
        if any(q["right"] is False for q in d["queries"]) and not any(map(unread, d["queries"]))
    )
    open_site(page, site, f"#item=codis/{wrong}")
    page.wait_for_selector(f"#item-title:has-text('{wrong}')")
    assert "wrong" in card.locator(".verdict-bad").all_inner_texts() and card.locator(".verdict-unscored").count() == 0


@needs_real_data
def test_keyboard_and_accessibility(site_runs, page):
    from axe_playwright_python.sync_playwright import Axe

    runs, site = site_runs
    open_site(page, site)
    page.wait_for_selector("table[data-metric='acc_p']")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "skip"
    for _ in range(3):
        page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "nav-about"
    page.keyboard.press("Enter")
    page.wait_for_selector("#run-0")
    for fragment in ("#view=board", "#view=items&task=codis", f"#item=codis/{details_of(runs['truth'])[0]['item_id']}"):
        open_site(page, site, fragment)
        page.wait_for_selector("main h2")
        results = Axe().run(page, options={"resultTypes": ["violations"], "preload": False})  # no XHR of file://
        serious = [v for v in results.response["violations"] if v["impact"] in ("serious", "critical")]
        assert serious == [], (fragment, [(v["id"], v["nodes"][0]["target"]) for v in serious])


@needs_real_data
def test_the_folder_is_a_static_space_offline(site_runs):
    runs, site = site_runs
    readme = (site / "README.md").read_text()
    assert readme.startswith("---\n") and "sdk: static" in readme and "app_file: index.html" in readme
    page = (site / "index.html").read_text() + (site / "app.js").read_text()
    assert not re.search(r"https?://", page)  # no CDN
    images = list((site / "images").iterdir())
    assert len(images) == len({p.name for p in images}) and len(images) > 216  # CODIS's 216 and the samples'
    for path in images[:5]:
        assert path.stem == hashlib.sha256(path.read_bytes()).hexdigest()
    assert json.loads((site / ".cogbench-output.json").read_text())["kind"] == "site"
    assert main(["report", str(runs["truth"]), "--site", str(site)]) == 0  # its own folder: written again
    foreign = site.parent / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    assert main(["report", str(runs["truth"]), "--site", str(foreign)]) == 2
    assert (foreign / "notes.txt").read_text() == "mine"


def test_report_needs_out_or_site(tmp_path, capsys):
    assert main(["report", str(tmp_path)]) == 2
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and "give --out (report files), --site (the static site) or both" in error
