"""``cogbench sweep plan SPEC --out DIR``: the sweep folder, its cells and their shards, and the cost before anything runs.

Each cell's items (the config's ids, in dataset order, the first ``limit`` of them) are cut into ``--shards``
contiguous shards; shard K of a cell is then ``eval`` restricted to those ids (``EvalSettings.item_ids``). Every
shard has one index across the sweep, which the Slurm array and the Kubernetes Indexed Job run by. Planning
an existing sweep folder again is allowed only for the same plan (it then says what is already complete).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cogbench.dataset_builders.load import dataset_revision
from cogbench.dataset_builders.output import claim_output
from cogbench.dataset_builders.writes import write_file
from cogbench.errors import UsageError
from cogbench.reference_eval.run.folder import settings_differences
from cogbench.reference_eval.run.runner import EvalSettings, dataset_and_queries
from cogbench.reference_eval.sweeping import launchers, ledger, scoring_models
from cogbench.reference_eval.sweeping.layout import (
    KIND,
    KUBERNETES_FILE,
    PLAN_FILE,
    PLAN_FORMAT,
    SLURM_FILE,
    SWEEP_FILES,
    cell_dir,
    read_json,
    write_json,
)
from cogbench.reference_eval.sweeping.spec import Spec, read_spec

LLM_JUDGES = ("openai:", "vllm:")
JUDGE_CALLS_PER_QUERY = {"description": 2}  # a description is judged in up to two calls (Figures 8 and 9); else one


@dataclass
class Cost:
    cells: int = 0
    shards: int = 0
    queries: int = 0
    judge_calls: int = 0  # LLM-judge queries: each shard's scoring (the merged run reuses their verdicts)
    complete: int = 0

    def lines(self) -> list[str]:
        return [
            f"cells: {self.cells} ({self.shards} shards)",
            f"queries: {self.queries} model queries in all",
            f"judge calls: {self.judge_calls} LLM-judge queries at most (each shard scored; each merged run reuses "
            "its shards' verdicts; rule and none judges make none)",
            f"cells already complete: {self.complete} of {self.cells}",
        ]


def split(items: list[str], shards: int) -> list[list[str]]:
    """``items`` in ``shards`` contiguous parts as equal as can be (the first ones one longer); none empty."""
    count = max(1, min(shards, len(items)))
    size, extra = divmod(len(items), count)
    parts, start = [], 0
    for number in range(count):
        end = start + size + (1 if number < extra else 0)
        parts.append(items[start:end])
        start = end
    return parts


def task_items(spec: Spec, task: str) -> tuple[list[str], list[int | None]]:
    """A config's item ids in dataset order (the first ``limit``), and the query numbers each item is asked with."""
    settings = EvalSettings(task=task, model="openai:plan", dataset=str(spec.build), out=Path("."), limit=spec.limit)
    _, _, queries = dataset_and_queries(settings)
    items = list(dict.fromkeys(q.item_id for q in queries))
    numbers = list(dict.fromkeys(q.query for q in queries if q.item_id == items[0])) if items else []
    return items, numbers


def make_plan(spec: Spec, shards: int) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """plan.json's content and each cell's cell.json, by cell id."""
    if not spec.build.is_dir():
        raise UsageError(f"{spec.path}: field build: {spec.build} is not a folder (the output of `cogbench build`)")
    per_task = {task: task_items(spec, task) for task in dict.fromkeys(cell.task for cell in spec.cells)}
    cells, records, index = {}, [], 0
    for cell in spec.cells:
        items, numbers = per_task[cell.task]
        parts = split(items, shards)
        cells[cell.id] = {**cell.record(), **cell.key_record(), "queries_per_item": numbers, "shards": parts}
        records.append(
            {
                **cell.record(),
                "first_index": index,
                "shards": len(parts),
                "items": len(items),
                "queries": len(items) * len(numbers) * (1 + len(cell.image_variants)),  # each variant asks again
            }
        )
        index += len(parts)
    plan = {
        "format": PLAN_FORMAT,
        "spec": str(spec.path),
        "spec_sha256": spec.sha256,
        "build": str(spec.build),
        "dataset_revision": dataset_revision(str(spec.build), None),
        "limit": spec.limit,
        "description": spec.description,  # the description cells' spaCy model and embedder (None: no such cell)
        "shards_per_cell": shards,
        "total_shards": index,
        "cells": records,
    }
    return plan, cells


def plan_sweep(spec_path: str | Path, out: Path, shards: int, image: str = launchers.DEFAULT_IMAGE) -> Cost:
    """Write the sweep folder ``out`` for the spec (or find it planned the same) and return the cost."""
    spec = read_spec(spec_path)
    claim_output(out, KIND, SWEEP_FILES, create=False, reads=[("build", spec.build), ("SPEC", spec.path)])
    plan, cells = make_plan(spec, shards)
    out = Path(out)
    if (out / PLAN_FILE).is_file():
        refuse_other_plan(out, plan)
    scoring_models.check(spec.description, spec.path)  # loaded now, as eval loads them before its first query
    claim_output(out, KIND, SWEEP_FILES, reads=[("build", spec.build), ("SPEC", spec.path)])
    for cell_id, cell in cells.items():
        write_json(cell_dir(out, cell_id) / "cell.json", cell)
    folder = out.resolve()
    write_file(out / SLURM_FILE, launchers.slurm_script(folder, plan["total_shards"]))
    variables = sorted({cell.api_key_env for cell in spec.cells if cell.api_key_env is not None})
    write_file(out / KUBERNETES_FILE, launchers.kubernetes_manifest(folder, plan["total_shards"], image, variables))
    write_json(out / PLAN_FILE, plan)
    states = ledger.rebuild(out)
    return Cost(
        cells=len(cells),
        shards=plan["total_shards"],
        queries=sum(record["queries"] for record in plan["cells"]),
        judge_calls=sum(
            JUDGE_CALLS_PER_QUERY.get(record["task"], 1) * record["queries"]
            for record in plan["cells"]
            if (record["judge"] or "").startswith(LLM_JUDGES)
        ),
        complete=sum(1 for state in states if state.merged),
    )


def refuse_other_plan(out: Path, plan: dict[str, Any]) -> None:
    """A sweep folder is planned again only for the same plan: another would mix two sweeps' shards."""
    old = read_json(out / PLAN_FILE, "")
    keep = ("spec", "spec_sha256")  # the same spec moved or commented plans the same sweep
    differing = settings_differences(
        {k: v for k, v in old.items() if k not in keep}, {k: v for k, v in plan.items() if k not in keep}
    )
    differing.sort(key=lambda line: line.startswith("cells:"))  # a setting first, then the cells it changed
    if differing:
        raise UsageError(
            f"{out / PLAN_FILE}: {out} holds another sweep's plan ({differing[0]}"
            f"{f' and {len(differing) - 1} more' if len(differing) > 1 else ''}); "
            "choose another --out, or empty it yourself"
        )
