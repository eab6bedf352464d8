"""``cogbench sweep merge DIR``: each cell's shards joined into the cell's run, an ordinary eval run folder.

Before anything is written, the shards must be one run cut in parts: each holding the items the plan gave it,
the same run.json but for their items (build and revision, model, prompt and its hash, generation settings), the
same judge, cogbench version and build files in their scores.json; then every shard must pass ``verify`` (against
the build), and no item may be answered in two shards with different outputs. A refusal is one line naming both
sides. The merged run is then written through ``eval``'s own code (``run_evaluation``: the shards' predictions as
its one shard, nothing left to generate, merged, exported and scored as ``eval`` does) and verified; it equals
an unsharded run of the cell (byte for byte in scores.json for rule-scored tasks). A cell judged by an LLM judge is
scored with its shards' verdicts (``shared_verdicts``): the judge is asked nothing the shards asked it, and each
item's details equal its shard's. The shards are kept unless ``--remove-shards`` asks (``shard_removal``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cogbench.dataset_builders.output import claim_output
from cogbench.dataset_builders.writes import write_file
from cogbench.errors import CogbenchError, UsageError
from cogbench.reference_eval.api.evaluation import run_evaluation
from cogbench.reference_eval.formats.predictions import Prediction, read_predictions
from cogbench.reference_eval.recording.run_files import RUN_FILES
from cogbench.reference_eval.run.folder import (
    ENGINE_NOTE,
    EVAL_FILES,
    OOM_NOTE,
    PARTIAL_NOTE,
    item_ids_record,
    read_run_json,
    settings_differences,
    write_run_json,
)
from cogbench.reference_eval.sweeping import ledger, shard_removal, shared_verdicts
from cogbench.reference_eval.sweeping.execute import shard_settings
from cogbench.reference_eval.sweeping.layout import merged_dir, read_cell, read_json, read_plan, shard_dir
from cogbench.reference_eval.verifying.verify import verify

NOTES = (OOM_NOTE, ENGINE_NOTE, PARTIAL_NOTE)
# What a shard's judge did, not which judge it is: its own counts (scores.json's judge block, panels' members too).
JUDGE_COUNTS = ("prompts", "cache_hits", "calls", "failures", "failure_examples", "usage", "parsing_comparison")


class MergeRefused(CogbenchError):
    """The shards of a cell cannot be one run: merging them would lose or invent something."""


def both(first: str, second: str, what: str) -> MergeRefused:
    return MergeRefused(f"{first} and {second}: {what}; refusing to merge this cell")


def read_shard(folder: Path, cell: dict[str, Any], number: int) -> tuple[Path, dict, dict]:
    """A shard's folder, run.json and scores.json, once it has run and holds the items the plan gave it."""
    where = shard_dir(folder, cell["id"], number)
    scores_path = where / "score" / "scores.json"
    if not scores_path.is_file():
        raise MergeRefused(
            f"{where}: not run yet (no score/scores.json); run `cogbench sweep run {folder}` first, then merge"
        )
    record = read_run_json(where / "run.json")
    expected = item_ids_record(tuple(cell["shards"][number]))
    if record.get("item_ids") != expected:
        raise both(
            str(where / "run.json"),
            str(folder / "cells" / cell["id"] / "cell.json"),
            f"the shard holds other items than the plan gave it ({json.dumps(record.get('item_ids'))} against "
            f"{json.dumps(expected)})",
        )
    return where, record, read_json(scores_path, "")


def verified(where: Path, build: str) -> None:
    """A shard ``verify`` accepts (against the build); else one line naming the shard and verify."""
    try:
        result = verify(str(where), dataset=build)
    except CogbenchError as error:
        raise both(str(where), "`cogbench verify`", f"verify cannot read it ({str(error).splitlines()[0]})") from None
    if result.differences:
        first = result.differences[0].line()
        raise both(
            str(where),
            "`cogbench verify`",
            f"verify rejects it ({len(result.differences)} differences, first: {first})",
        )


def judge_identity(judge: Any) -> Any:
    """A scores.json ``judge`` block but for ``JUDGE_COUNTS``: what two shards of one cell must share."""
    if not isinstance(judge, dict):
        return judge
    kept = {key: value for key, value in judge.items() if key not in JUDGE_COUNTS}
    if isinstance(kept.get("members"), list):
        kept["members"] = [judge_identity(member) for member in kept["members"]]
    return kept


def same_run(first: tuple[Path, dict, dict], other: tuple[Path, dict, dict]) -> None:
    """Two shards of one cell: one run but for their items; else one line naming both."""
    (a, record_a, scores_a), (b, record_b, scores_b) = first, other
    strip = lambda record: {k: v for k, v in record.items() if k not in (*NOTES, "item_ids")}  # noqa: E731
    differing = settings_differences(strip(record_a), strip(record_b))
    if differing:
        raise both(str(a / "run.json"), str(b / "run.json"), f"different runs ({'; '.join(differing[:3])})")
    for name, value_a, value_b in (
        ("judge", judge_identity(scores_a.get("judge")), judge_identity(scores_b.get("judge"))),
        (
            "cogbench version",
            (scores_a.get("provenance") or {}).get("cogbench_version"),
            (scores_b.get("provenance") or {}).get("cogbench_version"),
        ),
        (
            "dataset shards",
            ((scores_a.get("provenance") or {}).get("dataset") or {}).get("shards"),
            ((scores_b.get("provenance") or {}).get("dataset") or {}).get("shards"),
        ),
    ):
        if value_a != value_b:
            shown = "; ".join(settings_differences({name: value_a}, {name: value_b})[:3])
            raise both(
                str(a / "score" / "scores.json"), str(b / "score" / "scores.json"), f"different {name} ({shown})"
            )


def joined_predictions(shards: list[tuple[Path, dict, dict]]) -> list[Prediction]:
    """Every shard's predictions, each key once; one answered twice with different outputs is refused."""
    found: dict[tuple[str, int | None, str | None], tuple[Prediction, Path]] = {}
    for where, _, _ in shards:
        path = where / "predictions.jsonl"
        for prediction in read_predictions(path):
            if prediction.key in found:
                before, source = found[prediction.key]
                if before.output != prediction.output:
                    item = prediction.item_id + ("" if prediction.query is None else f" query {prediction.query}")
                    item += "" if prediction.variant is None else f" variant {prediction.variant}"
                    raise both(str(source), str(path), f"item {item} answered twice, with different outputs")
                continue
            found[prediction.key] = (prediction, path)
    return [prediction for prediction, _ in found.values()]


def merge_cell(folder: Path, plan: dict[str, Any], cell_id: str) -> Path:
    """Merge one cell's shards into ``cells/CELL/run`` and verify it; returns that folder."""
    cell = read_cell(folder, cell_id)
    shards = [read_shard(folder, cell, number) for number in range(len(cell["shards"]))]
    for other in shards[1:]:  # first what the shards say they are: a mismatch names both of them
        same_run(shards[0], other)
    for where, _, _ in shards:
        verified(where, plan["build"])
    predictions = joined_predictions(shards)
    shown = [None, *cell.get("image_variants", [])]  # the image, then each variant the cell asks on again
    planned = {
        (item, query, variant)
        for items in cell["shards"]
        for item in items
        for query in cell["queries_per_item"]
        for variant in shown
    }
    missing = sorted(planned - {p.key for p in predictions}, key=str)
    if missing:
        raise MergeRefused(
            f"{folder / 'cells' / cell_id}: {len(missing)} planned queries have no prediction in any shard "
            f"(first: item {missing[0][0]}); run the sweep again, then merge"
        )
    verdicts = shared_verdicts.gathered(shards, both)
    out = merged_dir(folder, cell_id)
    claim_output(out, "eval", EVAL_FILES, reads=[("--dataset", plan["build"])])
    for stale in sorted((out / "shards").glob("rank-*.jsonl")):
        if stale.name != "rank-0.jsonl":  # a merge writes only rank-0: another would be joined unchecked
            raise UsageError(f"{stale}: not written by `cogbench sweep merge`; remove it, then merge again")
    record = {k: v for k, v in shards[0][1].items() if k not in (*NOTES, "item_ids")}
    write_run_json(out / "run.json", record)
    (out / "shards").mkdir(exist_ok=True)
    write_file(out / "shards" / "rank-0.jsonl", "".join(p.to_json() + "\n" for p in predictions), root=out)
    settings, scoring = shard_settings(folder, plan, cell, out, None)
    claim_output(out / "score", "score", RUN_FILES, task=cell["task"], reads=[("--dataset", plan["build"])])
    if shared_verdicts.write_verdicts(verdicts, out / "score"):  # the judge asked nothing the shards asked
        scoring.judge_accept_retired = True  # every verdict cached: its endpoint is not even asked for its models
    run_evaluation(settings, scoring)
    result = verify(str(out), dataset=plan["build"])
    if result.differences:
        raise CogbenchError(f"{out}: the merged run does not verify: {result.differences[0].line()}")
    shared_verdicts.same_details(shards, out)
    return out


def merge_sweep(folder: Path, cells: tuple[str, ...] = (), remove_shards: bool = False) -> list[str]:
    """``sweep merge``: every cell (or those named), each merged and verified; one line per cell. ``remove_shards``:
    then each cell's shard folders removed (``shard_removal``). A cell whose shards were removed is not merged again:
    its merged run is verified (and, asked, the rest of its shards removed)."""
    plan = read_plan(folder)
    known = [entry["id"] for entry in plan["cells"]]
    for name in cells:
        if name not in known:
            raise UsageError(f"--cell {name}: not a cell of {folder} (see `cogbench sweep status {folder}`)")
    lines = []
    try:
        for cell_id in cells or known:
            if shard_removal.requested(folder, cell_id):
                lines.append(merged_before(folder, plan, cell_id, remove_shards))
                continue
            out = merge_cell(folder, plan, cell_id)
            scores = read_json(out / "score" / "scores.json", "")
            lines.append(
                f"{cell_id}: merged into {out} ({'complete' if scores.get('complete') else 'PARTIAL'}, verified)"
            )
            if remove_shards:
                lines.append(shard_removal.remove_shards(folder, plan, cell_id))
    finally:
        ledger.rebuild(folder)
    return lines


def merged_before(folder: Path, plan: dict[str, Any], cell_id: str, remove_shards: bool) -> str:
    """The line of a cell whose shards were removed: its merged run verified again, never merged from what is left."""
    if remove_shards:
        return shard_removal.remove_shards(folder, plan, cell_id)
    out = shard_removal.verified_run(folder, plan, cell_id)
    if shard_removal.left(folder, read_cell(folder, cell_id)):
        return (
            f"{cell_id}: merged into {out} before, verified; its shards partly removed: run `cogbench sweep merge "
            f"{folder} --remove-shards` to finish"
        )
    return f"{cell_id}: merged into {out} before, verified; its shards removed"
