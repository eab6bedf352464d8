"""What ``cogbench verify`` checks against the files that made a run: an ``eval`` folder's run.json
and predictions.jsonl (model, prompt template, generation settings and the answers, per line), and
with ``--dataset BUILD`` the build itself (ids, images, categories, questions, reference answers,
option texts, entities, the revision and shards' hashes, and how many units each metric expects).
"""

from __future__ import annotations

from typing import Any

from cogbench.reference_eval.answers.reasoning import THINK_TAGS, final_answer
from cogbench.reference_eval.formats.predictions import read_predictions
from cogbench.reference_eval.reports.run_reader import read_run_record
from cogbench.reference_eval.reports.verify_result import TaskData, Verification
from cogbench.reference_eval.run import provenance
from cogbench.schemas.vocabulary import CHOICE_COLUMNS
from cogbench.validation.integrity import verified_rows


def check_run_record(data: TaskData, result: Verification) -> None:
    """run.json against scores.json and the predictions.jsonl it made; a missing one is named."""
    run_dir, scores = data.run_dir, data.scores
    if run_dir is None:
        result.state("how the answers were generated (no eval run folder: run.json absent)")
        return
    record, where = read_run_record(run_dir / "score"), str(run_dir / "run.json")
    if record is None:
        result.problem(where, "missing: the eval run folder's record of model, prompt and generation settings")
        return
    for key in ("task", "model", "dataset_revision"):
        result.same(f"{where}: {key} (scores.json's)", record.get(key), scores.get(key))
    models = [t["sha256"] for t in (scores.get("provenance") or {}).get("prompt_templates", []) if t["role"] == "model"]
    result.same(f"{where}: prompt_sha256 (scores.json's model template)", [record.get("prompt_sha256")], models)
    path = run_dir / "predictions.jsonl"
    if not path.is_file():
        result.problem(str(path), "missing: the answers run.json's settings made")
        return
    predictions = read_predictions(path)
    for key in ("model", "prompt_id", "prompt_sha256", "generation"):
        seen = sorted({repr(getattr(p, key)) for p in predictions})
        result.same(f"{where}: {key} (each line of predictions.jsonl)", [repr(record.get(key))], seen)
    # Scoring hashed each reply's final answer (answers/reasoning.py), with the think tags it used.
    tags = tuple(tuple(pair) for pair in (scores.get("answers") or {}).get("think_tags", THINK_TAGS))
    answers = {
        (p.item_id, p.query) if p.query is not None else p.item_id: final_answer(p, tags).answer  # type: ignore[arg-type]
        for p in predictions
    }
    if "answers_sha256" in (scores.get("provenance") or {}):
        result.same(
            f"{path}: answers (provenance.answers_sha256)",
            provenance.answers_sha256(answers),
            scores["provenance"]["answers_sha256"],
        )
    result.state("run.json generation (temperature, max tokens: the model's settings, as each answer records them)")


def build_rows(dataset: str, task: str) -> list[dict[str, Any]]:
    """The config's rows, images left out, class labels as names (a local build verified first)."""
    import datasets

    datasets.disable_progress_bars()
    return verified_rows(dataset, task)


def _reference(task: str, row: dict[str, Any]) -> dict[str, Any]:
    """What a details line states about its dataset row."""
    if task == "codis":
        return {
            "item_id": row["id"],
            "image_id": row["image_id"],
            "category": row["category"],
            "question": row["question"],
            "answers": [row["answer_1"], row["answer_2"]],
        }
    if task == "vqa":
        return {
            "item_id": row["question_id"],
            "image_id": row["image_id"],
            "category": row["category"],
            "answer": row["answer"],
            "choices": [row[c] for c in CHOICE_COLUMNS],
        }
    return {"item_id": row["image_id"], "entities": sorted(row["entities"])}


def _stated_reference(task: str, detail: dict[str, Any]) -> dict[str, Any]:
    if task == "codis":
        keys = ("item_id", "image_id", "category", "question")
        return {**{k: detail.get(k) for k in keys}, "answers": [q.get("answer") for q in detail["queries"]]}
    if task == "vqa":
        return {k: detail.get(k) for k in ("item_id", "image_id", "category", "answer", "choices")}
    matches = detail["recognition"].get("matches") or []
    return {"item_id": detail["item_id"], "entities": sorted(m.get("entity") for m in matches)}


def check_build(data: TaskData, result: Verification, dataset: str) -> dict[str, int]:
    """Ids and reference answers against the build; returns each metric's units over the config."""
    scores, task, where = data.scores, data.scores["task"], str(data.scores_path)
    rows = build_rows(dataset, task)
    by_id = {_reference(task, row)["item_id"]: row for row in rows}
    for number, detail in enumerate(data.details, 1):
        row = by_id.get(detail["item_id"])
        line = f"{data.where}: line {number}"
        if row is None:
            result.problem(line, f"item_id {detail['item_id']!r} is not in {dataset}", [str(detail["item_id"])])
            continue
        expected, stated = _reference(task, row), _stated_reference(task, detail)
        for key, value in expected.items():
            if task == "vqa" and key == "choices" and "choices" not in detail:
                continue
            result.same(f"{line}: {key}", stated.get(key), value, [str(detail["item_id"])])
    counts = scores["counts"]
    result.same(f"{where}: counts.dataset_items", counts.get("dataset_items"), len(rows))
    result.same(f"{where}: counts.dataset_images", counts.get("dataset_images"), len({r["image_id"] for r in rows}))
    revision = provenance.dataset_provenance(dataset, task, None)
    result.same(f"{where}: dataset_revision (the build's)", scores["dataset_revision"], revision["revision"])
    stated_shards = (scores.get("provenance") or {}).get("dataset", {}).get("shards")
    if stated_shards is not None:
        result.same(f"{where}: provenance.dataset.shards (the build's)", stated_shards, revision["shards"])
    missing = [i for i in by_id if i not in {d["item_id"] for d in data.details}]
    stated_missing = {str(m).split("#")[0] for m in counts.get("missing_predictions") or []}
    result.same(
        f"{where}: counts.missing_predictions (items the build has, the details lack)",
        sorted(stated_missing),
        sorted(map(str, missing)),
    )
    if task == "codis":
        return {
            "acc_p": len(rows),
            "context_awareness": len(rows),
            "acc_q": 2 * len(rows),
            "output_variability": 2 * len(rows),
            "output_variability_llm": 2 * len(rows),
        }
    if task == "vqa":
        return {
            "accuracy": len(rows),
            "accuracy_official": len(rows),
            "accuracy_circular": len(rows),
            "answer_changed": len(rows),
            **{f"choice_{x}": 4 * len(rows) for x in "ABCD"},
        }
    entities = sum(len(row["entities"]) for row in rows)
    cors = sum(len(cors or []) for row in rows for cors in row["cors"].values())
    return {"recognition_micro": entities, "recognition_macro": entities, "cognition": cors}


def stated_without_build(result: Verification) -> None:
    result.state("item ids, image ids, categories and reference answers (give --dataset BUILD to check them)")
