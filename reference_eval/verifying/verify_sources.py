"""What ``cogbench verify`` checks against the files that made a run: an ``eval`` folder's run.json
and predictions.jsonl (model, prompt template, generation settings and the answers, per line), and
with ``--dataset BUILD`` the build itself (ids, images, categories, questions, reference answers,
option texts, entities, the revision and shards' hashes, how many units each metric expects, and
for an eval run each answer's rendered prompt hash, from its prompt rendered again).
"""

from __future__ import annotations

import hashlib
from typing import Any

from cogbench.reference_eval.answers import reply_details
from cogbench.reference_eval.answers.reasoning import THINK_TAGS, final_answer
from cogbench.reference_eval.formats.predictions import read_predictions
from cogbench.reference_eval.recording.run_reader import read_run_record
from cogbench.reference_eval.run import provenance
from cogbench.reference_eval.run.folder import item_ids_record
from cogbench.reference_eval.tasks.prompts import DESCRIPTION_MODES, template_for
from cogbench.reference_eval.tasks.queries import rotate
from cogbench.reference_eval.verifying import verify_variants
from cogbench.reference_eval.verifying.verify_result import TaskData, Verification
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
    for key in ("task", "model", "dataset", "dataset_revision"):
        result.same(f"{where}: {key} (scores.json's)", record.get(key), scores.get(key))
    if scores["task"] == "vqa":
        circular = any("rotations" in d for d in data.details)
        result.same(f"{where}: circular (the details' rotations)", bool(record.get("circular")), circular)
    models = [t["sha256"] for t in (scores.get("provenance") or {}).get("prompt_templates", []) if t["role"] == "model"]
    result.same(f"{where}: prompt_sha256 (scores.json's model template)", [record.get("prompt_sha256")], models)
    path = run_dir / "predictions.jsonl"
    if not path.is_file():
        result.problem(str(path), "missing: the answers run.json's settings made")
        return
    predictions = read_predictions(path)
    check_item_ids(record, where, predictions, result)
    for key in ("model", "prompt_id", "prompt_sha256", "generation"):
        seen = sorted({repr(getattr(p, key)) for p in predictions})
        result.same(f"{where}: {key} (each line of predictions.jsonl)", [repr(record.get(key))], seen)
    # Scoring hashed each reply's final answer (answers/reasoning.py), with the think tags it used.
    tags = tuple(tuple(pair) for pair in (scores.get("answers") or {}).get("think_tags", THINK_TAGS))
    thinking = (scores.get("answers") or {}).get("thinking", "auto")  # score --thinking, when it was given
    own = [p for p in predictions if p.variant is None]  # the variants' are checked by verify_variants
    keyed = {(p.item_id, p.query) if p.query is not None else p.item_id: p for p in own}
    answers = {key: final_answer(p, tags, thinking).answer for key, p in keyed.items()}  # type: ignore[arg-type]
    if "answers_sha256" in (scores.get("provenance") or {}):
        result.same(
            f"{path}: answers (provenance.answers_sha256)",
            provenance.answers_sha256(answers),
            scores["provenance"]["answers_sha256"],
        )
    check_replies_made(data, result, keyed, tags, thinking)  # after the hash: the whole first, then each answer
    if "image_variants" in record or "image_variants" in scores:
        names = (record.get("image_variants") or {}).get("names")
        result.same(
            f"{where}: image_variants.names (scores.json's)", names, (scores.get("image_variants") or {}).get("names")
        )
        verify_variants.check_predictions(data, result, predictions, tags, thinking)
    result.state(
        "run.json generation (temperature, max tokens: the model's settings, as each answer records them)",
        "run.json mode and no_image (the eval settings, as stated)",
    )


def check_item_ids(record: dict[str, Any], where: str, predictions: list[Any], result: Verification) -> None:
    """A run restricted to some items (a sweep's shard: ``item_ids``, a count and the sha256 of the sorted ids).
    Answers naming as many items as it was given (or more) must name exactly those; a run whose failed queries
    left some items without an answer names fewer, and then only the fact is stated."""
    if "item_ids" not in record:
        return
    named = item_ids_record(tuple(p.item_id for p in predictions))
    if named["count"] >= (record["item_ids"] or {}).get("count", 0):
        result.same(f"{where}: item_ids (the items of predictions.jsonl)", record["item_ids"], named)
    else:
        result.state(f"run.json item_ids (only {named['count']} of its items answered: the rest cannot be named)")


def check_replies_made(
    data: TaskData, result: Verification, keyed: dict[Any, Any], tags, thinking: str = "auto"
) -> None:
    """Each details answer against the prediction it was scored from: its scored text, status and
    ``reply`` record (finish reason, thinking setting, reasoning tokens, reasoning, content and refusal), as
    scoring wrote them from predictions.jsonl (``answers/reply_details``)."""
    task, field = data.scores["task"], reply_details.SCORED_FIELD[data.scores["task"]]
    for key, answer, line in reply_details.answer_dicts(task, data.details):
        where, item = f"{data.where}: item {key}", [str(line["item_id"])]
        prediction = keyed.get(key)
        if prediction is None:
            result.problem(where, "has no line in predictions.jsonl: it was scored from no answer of this run", item)
            continue
        reply = final_answer(prediction, tags, thinking)
        result.same(f"{where}: {field} (predictions.jsonl's final answer)", answer.get(field), reply.answer, item)
        if "answer_status" not in answer:
            continue
        result.same(f"{where}: answer_status (predictions.jsonl's)", answer["answer_status"], reply.status, item)
        stated = answer.get("reply") or {}
        keep = "hash" if any(name.endswith("_sha256") for name in stated) else "full"
        made = reply_details.reply_record(
            prediction.output, reply, reply_details.reply_inputs(prediction, thinking), keep
        )
        result.same(
            f"{where}: reply (predictions.jsonl's finish_reason, thinking, reasoning, refusal)", stated, made, item
        )


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
    check_rendered_prompts(data, result, by_id)
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
            **verify_variants.expected_units(data, len(rows)),
        }
    if task == "vqa":
        return {
            "accuracy": len(rows),
            "accuracy_official": len(rows),
            "accuracy_circular": len(rows),
            "answer_changed": len(rows),
            **{f"choice_{x}": 4 * len(rows) for x in "ABCD"},
            **verify_variants.expected_units(data, len(rows)),
        }
    entities = sum(len(row["entities"]) for row in rows)
    cors = sum(len(cors or []) for row in rows for cors in row["cors"].values())
    return {"recognition_micro": entities, "recognition_macro": entities, "cognition": cors}


def stated_without_build(result: Verification, data: TaskData | None = None) -> None:
    result.state("item ids, image ids, categories and reference answers (give --dataset BUILD to check them)")
    if data is not None and rendered_hashes(data.scores["task"], data.details):
        result.state("each answer's rendered_prompt_sha256 (give --dataset BUILD to re-render them)")


def rendered_hashes(task: str, details: list[dict[str, Any]]) -> dict[tuple[str, Any], str]:
    """``{(item, query or rotation or None): sha256}``: the prompt hashes the details state (not null)."""
    found = {}
    for detail in details:
        item = detail["item_id"]
        if task == "codis":
            answers = [((item, q.get("query")), q) for q in detail["queries"]]
        elif "rotations" in detail:
            answers = [((item, r.get("rotation")), r) for r in detail["rotations"]]
        else:
            answers = [((item, None), detail)]
        found.update({key: a["rendered_prompt_sha256"] for key, a in answers if a.get("rendered_prompt_sha256")})
    return found


def _rendered(task: str, template, row: dict[str, Any], key: Any) -> str | None:
    """The prompt ``eval`` sent for one answer (tasks/queries.build_queries), from the build's row."""
    if task == "description":
        return template.render()
    if task == "codis":
        return template.render(question=row["question"], context=row[f"context_{key}"]) if key in (1, 2) else None
    choices = [row[c] for c in CHOICE_COLUMNS]
    shown = rotate(choices, 0, key)[0] if key is not None else choices
    return template.render(question=row["question"], **dict(zip(CHOICE_COLUMNS, shown)))


def check_rendered_prompts(data: TaskData, result: Verification, rows: dict[str, dict[str, Any]]) -> None:
    """Each answer's ``rendered_prompt_sha256`` against its prompt rendered again from the build and the
    run's model template. Only for an eval run folder: cogbench rendered those prompts; a harness's
    or the authors' prompt text is theirs, so there the hashes are named as stated."""
    task = data.scores["task"]
    stated = rendered_hashes(task, data.details)
    if not stated:
        return
    models = [
        t["sha256"] for t in (data.scores.get("provenance") or {}).get("prompt_templates", []) if t["role"] == "model"
    ]
    candidates = {template_for(task, m, n) for m in DESCRIPTION_MODES for n in (False, True)}
    templates = [t for t in candidates if [t.sha256] == models]
    if data.run_dir is None or not templates:
        why = "not an eval run folder" if data.run_dir is None else "its model template is not one of cogbench's"
        result.state(f"each answer's rendered_prompt_sha256 ({why}: not re-rendered)")
        return
    for (item, key), sha in sorted(stated.items(), key=str):
        prompt = _rendered(task, templates[0], rows[item], key) if item in rows else None
        derived = hashlib.sha256(prompt.encode("utf-8")).hexdigest() if prompt is not None else None
        where = f"{data.where}: item {item}{f' ({key})' if key is not None else ''}: rendered_prompt_sha256"
        result.same(f"{where} (its prompt rendered from the build)", sha, derived, [item])
