"""The labelling sample: runs' judged units, drawn stratified by task, category and answers with a seed.

A unit is what one verdict decides, keyed as the run's verdicts are (``reports.judge_agreement.verdicts``, the
key ``certifying.verdict_archive`` and ``judges validate`` use): a CODIS query (item, category, query number) or a
description's CoR (image, CoR category, index in it). Each run's answers get an opaque id (random; kept from an
earlier key of the same answers, so a sample written again keeps its ids); the model behind it is written only to
the blinding key. What a labeller is shown is what the judge was: CODIS the question, the query's context, its
reference and the output; description the CoR's key point and the description; and the image.
"""

from __future__ import annotations

import hashlib
import json
import random
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cogbench import __version__
from cogbench.errors import UsageError, shown
from cogbench.reference_eval.judges.cognition import judge_calls
from cogbench.reference_eval.labelling.labels_format import KEY_FORMAT, SAMPLE_FORMAT, KeyEntry
from cogbench.reference_eval.recording.run_reader import ScoredRun
from cogbench.reference_eval.reports.judge_agreement import _answers_id, judge_label, verdicts
from cogbench.schemas.vocabulary import CATEGORY_LABEL

TASKS = ("codis", "description")
QUESTIONS = {
    "codis": "Does the answer match the reference for this context?",
    "description": "Is this reasoning item present in the description?",
}
EVENT_QUESTION = "Does the description clearly depict this cause-and-effect relationship?"
ROLES = (
    "A labels every unit; B, the second labeller, labels only the shared units, so the two labellers' "
    "agreement is measured on those"
)
ORDER = "all units shuffled with the seed, so one model's answers do not come in a row"


@dataclass
class Unit:
    """One unit to label: its key, the content shown, and whether it is shared with the second labeller."""

    task: str
    answers: str
    item_id: str
    category: str
    query: str
    content: dict[str, Any] = field(repr=False)
    shared: bool = False
    unit: str = ""

    def record(self) -> dict[str, Any]:
        """The unit as sample.json lists it (no content)."""
        names = ("unit", "task", "answers", "item_id", "category", "query", "shared")
        return {name: getattr(self, name) for name in names}


def answer_ids(runs: list[ScoredRun], previous: dict[str, KeyEntry]) -> dict[str, str]:
    """Per run folder, its answers' opaque id: the earlier key's for the same answers, else a new random one."""
    reused = {(e.task, e.answers_sha256): name for name, e in previous.items()}
    ids: dict[str, str] = {}
    seen: dict[tuple[str, str], str] = {}
    for run in runs:
        task = run.scores["task"]
        if task not in TASKS:
            raise UsageError(f"{run.folder}: a {task} run; only codis and description answers are judged")
        answers = (task, _answers_id(run))
        if answers in seen:
            raise UsageError(f"{run.folder} and {seen[answers]}: the same answers twice; give one run of each")
        seen[answers] = str(run.folder)
        ids[str(run.folder)] = reused.get(answers) or secrets.token_hex(6)
    return ids


def run_units(run: ScoredRun, answers: str, rows: dict[str, dict[str, Any]]) -> list[Unit]:
    """Every unit the run's judge decided (a verdict or a failure), with what the labeller is shown (the image as
    the build's bytes, written only for the units drawn)."""
    task = run.scores["task"]
    by_item = {d["item_id"]: d for d in run.details}
    units = []
    for key in verdicts(run):
        item = str(key[0])
        row, detail = rows.get(item), by_item[key[0]]
        if row is None:
            raise UsageError(f"{run.folder}: item {shown(item)} is not in the build it was scored on")
        picture = (row.get("image") or {}).get("bytes")
        if task == "codis":
            query = int(key[1])
            output = next(q for q in detail["queries"] if q["query"] == query)["output"]
            category = detail["category"]
            content = {
                "image": picture,
                "question": row["question"],
                "context": row[f"context_{query}"],
                "reference": row[f"answer_{query}"],
                "answer": output,
                "ask": QUESTIONS["codis"],
            }
        else:
            category, index = key[1], int(key[2])
            point = next(
                c.key_point
                for call in judge_calls(item, row["cors"], detail["description"])
                for c in call.items
                if (c.category, c.index) == (category, index)
            )
            content = {
                "image": picture,
                "item": point,
                "answer": detail["description"],
                "ask": EVENT_QUESTION if category == "event_relationship" else QUESTIONS["description"],
            }
            query = index
        content["category_label"] = CATEGORY_LABEL.get(category, category)
        units.append(Unit(task, answers, item, category, str(query), content))
    return units


def draw(units: list[Unit], per_stratum: int, shared_share: float, seed: int) -> tuple[list[Unit], list[dict]]:
    """(the drawn units, numbered u0001... in the order shown; each stratum's counts). Per (task, category,
    answers): ``per_stratum`` units at random (all when it holds fewer), the first ``round(share x drawn)`` of them
    (halves up) shared; then every drawn unit shuffled. One ``random.Random(seed)`` makes it all."""
    rng = random.Random(seed)
    strata: dict[tuple[str, str, str], list[Unit]] = {}
    for unit in units:
        strata.setdefault((unit.task, unit.category, unit.answers), []).append(unit)
    drawn, counts = [], []
    for key in sorted(strata):
        pool = sorted(strata[key], key=lambda u: (u.item_id, int(u.query)))
        chosen = rng.sample(pool, min(per_stratum, len(pool)))
        shared = int(shared_share * len(chosen) + 0.5)
        for position, unit in enumerate(chosen):
            unit.shared = position < shared
        drawn += chosen
        task, category, answers = key
        counts.append(
            {"task": task, "category": category, "answers": answers, "units": len(pool), "drawn": len(chosen)}
        )
        counts[-1]["shared"] = shared
    rng.shuffle(drawn)
    for number, unit in enumerate(drawn, 1):
        unit.unit = f"u{number:04d}"
    return drawn, counts


def sample_id(seed: int, units: list[Unit]) -> str:
    """sha256 of the canonical JSON of [seed, units]: the id every label and the key carry."""
    text = json.dumps([seed, [u.record() for u in units]], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def manifest(
    units: list[Unit], strata: list[dict], seed: int, per_stratum: int, share: float, version: str | None
) -> dict[str, Any]:
    """sample.json: the seed, the protocol and the units, nothing that tells a verdict or a model."""
    tasks = sorted({u.task for u in units})
    protocol = {
        "version": 1,
        "questions": {task: QUESTIONS[task] for task in tasks},
        "per_stratum": per_stratum,
        "shared_share": share,
        "roles": ROLES,
        "order": ORDER,
    }
    return {
        "format": SAMPLE_FORMAT,
        "sample": sample_id(seed, units),
        "seed": seed,
        "cogbench_version": __version__,
        "dataset_version": version,
        "protocol": protocol,
        "strata": strata,
        "units": [u.record() for u in units],
    }


def key_document(sample: str, seed: int, runs: list[ScoredRun], ids: dict[str, str]) -> dict[str, Any]:
    """The blinding key: each opaque id's task, model, answers_sha256, judge and run folder."""
    answers = {}
    for run in runs:
        answers[ids[str(run.folder)]] = {
            "task": run.scores["task"],
            "model": str(run.scores["model"]),
            "answers_sha256": _answers_id(run),
            "judge": judge_label(run),
            "run": str(Path(run.folder).resolve()),
        }
    return {"format": KEY_FORMAT, "sample": sample, "seed": seed, "answers": answers}
