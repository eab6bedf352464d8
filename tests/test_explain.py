"""``cogbench explain`` puts every injected difference in its stage, exactly, with its items (issue 41).

One real CODIS run (the authors' output_example.json on the real build) and one VQA run, each
scored for real (``run_scoring``), are the A runs. Each B run is the same scoring with one stage
changed: outputs edited, the rendered prompt's hash changed (with its output), items left out, a
gold answer edited in a second build, the think tags that split the final answer from its
reasoning, the local LLM judge's verdicts, the eval run's generation settings. ``explain`` must give
that stage 100% of B - A for every metric and column, and name exactly the changed items; runs
that differ in two or three stages must add up exactly. The expected shares are derived by hand
(a swapped pair costs 1/353 of Acc_p, two queries of 706 of Acc_q), never from explain's own code.
The VQA run's stages and the command (refusals, Markdown and JSON, --published) are in
tests/test_explain_vqa.py; its inputs (details datasets, the Hub) in tests/test_explain_inputs.py.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from pathlib import Path

import pytest
from conftest import needs_real_data

from cogbench.reference_eval.explaining.explain import explain_runs
from cogbench.reference_eval.explaining.explain_text import as_json, as_markdown
from cogbench.reference_eval.explaining.stages import STAGES
from cogbench.reference_eval.recording.run_reader import read_run
from cogbench.reference_eval.scoring.pipeline import ScoreOptions, run_scoring

from openai_server import Reply
from release_helpers import copy_real_raw
from shared_files import codis_example

EXACT = 1e-9


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def codis_lines(prompt_salt: dict[str, str] | None = None, outputs: dict[tuple[str, int], str] | None = None):
    """output_example.json as project-format predictions, each query with a rendered prompt hash."""
    lines = []
    for pair in json.loads(codis_example().read_text()):
        for q in (1, 2):
            key = (pair["id"], q)
            output = (outputs or {}).get(key, pair["output"][f"output_{q}"])
            salt = (prompt_salt or {}).get(pair["id"], "")
            lines.append(
                {
                    "task": "codis",
                    "item_id": pair["id"],
                    "query": q,
                    "model": "example-vlm",
                    "prompt_id": "codis-v1",
                    "rendered_prompt_sha256": sha(f"{pair['id']}-{q}{salt}"),
                    "output": output,
                }
            )
    return lines


def write_lines(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def score(dataset: Path, task: str, lines: list[dict], out: Path, **options) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    predictions = write_lines(out.parent / f"{out.name}.jsonl", lines)
    run_scoring(
        ScoreOptions(
            task=task, dataset=str(dataset), predictions=str(predictions), out=str(out), resamples=20, **options
        )
    )
    return out


def explain(a: Path, b: Path):
    return explain_runs(read_run(a), read_run(b))


def assert_all_in(explanation, stage: str, items: set[str]) -> None:
    """Stage ``stage`` carries 100% of every difference, and exactly ``items`` are assigned there."""
    assert set(explanation.assigned[stage]) == items
    for other in STAGES:
        if other != stage:
            assert explanation.assigned[other] == [] or other == "metric", other
    moved = 0
    for name, columns in explanation.metrics.items():
        for column, row in columns.items():
            if row["difference"] is None:
                continue
            assert row["shares"][stage] == pytest.approx(row["difference"], abs=EXACT), (name, column)
            for other in STAGES:
                if other != stage:
                    assert row["shares"][other] == pytest.approx(0.0, abs=EXACT), (name, column, other)
            moved += abs(row["difference"]) > EXACT
        assert set(explanation.contributions[name]) <= items
    assert moved, "the injected drift moved no number: the test would prove nothing"


def assert_adds_up(explanation) -> None:
    for columns in explanation.metrics.values():
        for row in columns.values():
            if row["difference"] is not None:
                assert sum(row["shares"].values()) == pytest.approx(row["difference"], abs=EXACT)


@pytest.fixture(scope="module")
def pairs() -> list[dict]:
    return json.loads(codis_example().read_text())


@pytest.fixture(scope="module")
def codis_a(built_release, tmp_path_factory) -> Path:
    return score(built_release, "codis", codis_lines(), tmp_path_factory.mktemp("codis") / "a")


def swapped_outputs(pairs, ids) -> dict[tuple[str, int], str]:
    chosen = [p for p in pairs if p["id"] in ids]
    return {(p["id"], q): p["output"][f"output_{3 - q}"] for p in chosen for q in (1, 2)}


@needs_real_data
@pytest.mark.parametrize("seed", range(10))
def test_changed_outputs_are_the_output_stage(built_release, codis_a, pairs, tmp_path, seed):
    ids = set(random.Random(seed).sample([p["id"] for p in pairs], 1 + seed * 3))
    b = score(built_release, "codis", codis_lines(outputs=swapped_outputs(pairs, ids)), tmp_path / "b")
    explanation = explain(codis_a, b)
    assert_all_in(explanation, "output", ids)
    assert set(explanation.listed["parse"]) == ids and set(explanation.listed["judge"]) == ids
    # by hand: a swapped pair has both queries wrong, so each costs 1/353 of Acc_p and 2/706 of Acc_q
    for item in ids:
        assert explanation.contributions["acc_p"][item] == pytest.approx(-100 / 353, abs=EXACT)
        assert explanation.contributions["acc_q"][item] == pytest.approx(-200 / 706, abs=EXACT)


@needs_real_data
@pytest.mark.parametrize("seed", range(6))
def test_a_changed_prompt_is_the_prompt_stage(built_release, codis_a, pairs, tmp_path, seed):
    ids = set(random.Random(100 + seed).sample([p["id"] for p in pairs], 2 + seed))
    lines = codis_lines(prompt_salt=dict.fromkeys(ids, "-v2"), outputs=swapped_outputs(pairs, ids))
    explanation = explain(codis_a, score(built_release, "codis", lines, tmp_path / "b"))
    assert_all_in(explanation, "prompt", ids)
    assert set(explanation.listed["output"]) == ids  # listed where it also differs


@needs_real_data
@pytest.mark.parametrize("seed", range(6))
def test_items_one_run_lacks_are_the_items_stage(built_release, codis_a, pairs, tmp_path, seed):
    ids = set(random.Random(200 + seed).sample([p["id"] for p in pairs], 5 + 7 * seed))
    lines = [line for line in codis_lines() if line["item_id"] not in ids]
    # drop items scored wrong in a run whose other items are right: the number moves
    outputs = swapped_outputs(pairs, ids)
    a = score(built_release, "codis", codis_lines(outputs=outputs), tmp_path / "a")
    b = score(built_release, "codis", lines, tmp_path / "b", allow_partial=True)
    explanation = explain(a, b)
    assert_all_in(explanation, "items", ids)
    assert explanation.b["partial"] and not explanation.a["partial"]
    assert "PARTIAL" in as_markdown(explanation)


def parse_lines(pairs, ids) -> list[dict]:
    """Replies cut inside an unclosed think block: with the default tags nothing is left to score."""
    outputs = {(p["id"], q): "<think>\n" + p["output"][f"output_{q}"] for p in pairs if p["id"] in ids for q in (1, 2)}
    return codis_lines(outputs=outputs)


@needs_real_data
@pytest.mark.parametrize("seed", range(3))
def test_another_think_tag_split_is_the_parse_stage(built_release, pairs, tmp_path, seed):
    ids = set(random.Random(300 + seed).sample([p["id"] for p in pairs], 3 + seed))
    a = score(built_release, "codis", parse_lines(pairs, ids), tmp_path / "a")
    b = score(built_release, "codis", parse_lines(pairs, ids), tmp_path / "b", think_tags=(("<r>", "</r>"),))
    explanation = explain(a, b)
    assert_all_in(explanation, "parse", ids)
    assert set(explanation.listed["output"]) == set()  # the reply as written is the same


def flipping_judge(flip: set[tuple[str, str]]):
    """A judge that compares output and truth exactly, and says the opposite for ``flip`` (question, truth)."""

    def responder(request):
        text = request.prompt_text
        truth = re.search(r"Here is the groundtruth: (.*)\n", text).group(1).strip()
        question = re.search(r"Here is the question: (.*)\n", text).group(1).strip()
        right = truth == text.rsplit("Here is the output: ", 1)[1].strip()
        return Reply(text="right" if right != ((question, truth) in flip) else "wrong")

    return responder


@needs_real_data
@pytest.mark.parametrize("seed", range(4))
def test_flipped_verdicts_of_another_judge_are_the_judge_stage(
    built_release, pairs, tmp_path, openai_server, monkeypatch, seed
):
    from cogbench.dataset_builders.load import load_config

    monkeypatch.setenv("OPENAI_API_KEY", "sk-local")
    rows = load_config(str(built_release), "codis").remove_columns("image").to_list()
    questions = [row["question"] for row in rows]
    unique = [row for row in rows if questions.count(row["question"]) == 1]
    chosen = random.Random(400 + seed).sample(unique, 2 + 2 * seed)
    ids = {row["id"] for row in chosen}
    flip = {(row["question"].strip(), row["answer_1"].strip()) for row in chosen}
    runs = []
    for name, responder in (("a", flipping_judge(set())), ("b", flipping_judge(flip))):
        server = openai_server(responder, models=[f"judge-{name}"])
        judge = {"judge": f"openai:judge-{name}", "judge_base_url": server.base_url, "judge_backoff": 0.01}
        runs.append(score(built_release, "codis", codis_lines(), tmp_path / name, **judge))
    explanation = explain(*runs)
    assert_all_in(explanation, "judge", ids)
    # by hand: one query of each chosen pair flipped from right to wrong
    for item in ids:
        assert explanation.contributions["acc_q"][item] == pytest.approx(-100 / 706, abs=EXACT)


def as_eval_run(score_folder: Path, generation: dict) -> Path:
    """An ``eval`` run folder's run.json beside its score folder (what `eval` writes: run/folder.py)."""
    record = {
        "task": "codis",
        "model": "example-vlm",
        "prompt_id": "codis-v1",
        "dataset": "x",
        "dataset_revision": "x",
        "generation": generation,
    }
    (score_folder.parent / "run.json").write_text(json.dumps(record))
    return score_folder.parent


@needs_real_data
@pytest.mark.parametrize("seed", range(4))
def test_other_generation_settings_are_the_generation_stage(built_release, pairs, tmp_path, seed):
    ids = set(random.Random(500 + seed).sample([p["id"] for p in pairs], 4 + seed))
    a = score(built_release, "codis", codis_lines(), tmp_path / "eval-a" / "score")
    b = score(built_release, "codis", codis_lines(outputs=swapped_outputs(pairs, ids)), tmp_path / "eval-b" / "score")
    as_eval_run(a, {"max_new_tokens": 64, "temperature": 0.0})
    as_eval_run(b, {"max_new_tokens": 8 + seed, "temperature": 0.0})
    assert_all_in(explain(a.parent, b.parent), "generation", ids)
    # the same settings: the same changed outputs are the output stage again
    as_eval_run(b, {"max_new_tokens": 64, "temperature": 0.0})
    assert_all_in(explain(a.parent, b.parent), "output", ids)


@needs_real_data
def test_an_edited_gold_answer_is_the_items_stage(built_release, codis_a, real_raw_dir, tmp_path):
    """Two builds whose raw files differ by one answer (the errata path): the item moves in the items stage."""
    from cogbench.cards.release import build_release

    raw = copy_real_raw(real_raw_dir, tmp_path / "raw")
    data = json.loads((raw / "codis" / "data.json").read_text())
    data[0]["answer"]["answer_1"] = "Neither, says the erratum."
    (raw / "codis" / "data.json").write_text(json.dumps(data))
    build_release(raw, tmp_path / "build2")
    explanation = explain(codis_a, score(tmp_path / "build2", "codis", codis_lines(), tmp_path / "b"))
    assert_all_in(explanation, "items", {data[0]["id"]})


# --- combinations, the metric stage, what was not recorded ------------------------------


@needs_real_data
def test_two_and_three_stages_add_up_exactly(built_release, codis_a, pairs, tmp_path):
    ids = [p["id"] for p in pairs]
    prompt, output, dropped = set(ids[10:14]), set(ids[20:27]), set(ids[40:45])
    for number, stages in enumerate(((prompt, output, set()), (prompt, output, dropped), (set(), output, dropped))):
        lines = codis_lines(
            prompt_salt=dict.fromkeys(stages[0], "-v2"), outputs=swapped_outputs(pairs, stages[0] | stages[1])
        )
        lines = [line for line in lines if line["item_id"] not in stages[2]]
        b = score(built_release, "codis", lines, tmp_path / f"b{number}", allow_partial=bool(stages[2]))
        explanation = explain(codis_a, b)
        assert_adds_up(explanation)
        assert set(explanation.assigned["prompt"]) == stages[0]
        assert set(explanation.assigned["output"]) == stages[1]
        assert set(explanation.assigned["items"]) == stages[2]
        if not stages[2]:  # the same denominator: each stage's share counted by hand
            acc_p = explanation.metrics["acc_p"]["overall"]["shares"]
            assert acc_p["prompt"] == pytest.approx(-100 * len(stages[0]) / 353, abs=EXACT)
            assert acc_p["output"] == pytest.approx(-100 * len(stages[1]) / 353, abs=EXACT)


@needs_real_data
def test_a_metric_difference_with_equal_verdicts_is_the_metric_stage(codis_a):
    """Numbers stated otherwise (another pooling) over the same verdicts: the residual is the metric stage's."""
    a, b = read_run(codis_a), read_run(codis_a)
    b.scores = json.loads(json.dumps(b.scores))
    b.scores["metrics"]["acc_q"]["overall"] -= 2.5
    explanation = explain_runs(a, b)
    row = explanation.metrics["acc_q"]["overall"]
    assert row["difference"] == pytest.approx(-2.5) and row["shares"]["metric"] == pytest.approx(-2.5)
    assert all(explanation.assigned[stage] == [] for stage in STAGES)


@needs_real_data
def test_a_changed_interval_option_moves_no_number(built_release, codis_a, tmp_path):
    b = score(built_release, "codis", codis_lines(), tmp_path / "b")  # resamples differ from nothing: same run
    run_scoring(
        ScoreOptions(
            task="codis",
            dataset=str(built_release),
            predictions=str(tmp_path / "b.jsonl"),
            out=str(tmp_path / "c"),
            resamples=7,
            seed=3,
        )
    )
    explanation = explain(b, tmp_path / "c")
    assert all(row["difference"] == 0 for columns in explanation.metrics.values() for row in columns.values())
    assert all(explanation.listed[stage] == [] for stage in STAGES)


@needs_real_data
def test_unrecorded_prompts_are_said_and_never_guessed(built_release, codis_a, pairs, tmp_path):
    """The authors' file keeps no prompt: the prompt stage is "not recorded", the change falls to output."""
    path = tmp_path / "official.json"
    chosen = {p["id"] for p in pairs[:3]}
    changed = json.loads(codis_example().read_text())
    for pair in changed:
        if pair["id"] in chosen:
            pair["output"] = {"output_1": pair["output"]["output_2"], "output_2": pair["output"]["output_1"]}
    path.write_text(json.dumps(changed))
    run_scoring(
        ScoreOptions(
            task="codis", dataset=str(built_release), predictions=str(path), out=str(tmp_path / "b"), resamples=20
        )
    )
    explanation = explain(codis_a, tmp_path / "b")
    assert_all_in(explanation, "output", chosen)
    assert explanation.not_recorded["prompt"] == 353
    assert "prompt" in json.dumps(as_json(explanation)["stages"]["prompt"]["not_recorded"])
    assert "not recorded for 353" in as_markdown(explanation)
