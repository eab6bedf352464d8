"""The files of an eval run folder: ``run.json`` (what the run is, checked on resume, plus notes on
how it went), the per-rank prediction shards and their merge into ``predictions.jsonl``.

Every file `cogbench eval` may write there is listed in ``EVAL_FILES`` (``claim_output`` refuses a
folder holding anything else).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from cogbench.dataset_builders.output import OUTPUT_MARKER
from cogbench.dataset_builders.writes import write_file
from cogbench.errors import CogbenchError, UsageError
from cogbench.reference_eval.formats.official import OFFICIAL_FILE_NAME
from cogbench.reference_eval.formats.predictions import Prediction, parse_json, read_predictions
from cogbench.reference_eval.recording.file_names import RUN_FILES
from cogbench.reference_eval.tasks.queries import Query

OOM_NOTE = "batch_size_after_oom"  # in run.json: the batch size kept after out-of-memory splits
ENGINE_NOTE = "vllm_engine"  # in run.json: the vllm: placement options of each session that generated
# in run.json: whether the last merged predictions.jsonl covers part of the dataset (--limit, or failures allowed),
# so that the score command `report` prints for an unscored run carries --allow-partial when it must
PARTIAL_NOTE = "predictions_partial"

# Every file `cogbench eval` writes in its run folder, its score/ folder included (claim_output).
EVAL_FILES = (
    "run.json",
    "run.json.*.tmp",
    "predictions.jsonl",
    "predictions.jsonl.tmp",
    "shards/rank-*.jsonl",
    "rank-*.lock",
    "rank-*.lock.json",
    "rank-*.lock.json.*.tmp",
    *(name + suffix for name in OFFICIAL_FILE_NAME.values() for suffix in ("", ".tmp")),
    f"score/{OUTPUT_MARKER}",
    f"score/{OUTPUT_MARKER}.*.tmp",
    *(f"score/{name}" for name in RUN_FILES),
)


def check_run_record(run_dir: Path, record: dict[str, Any]) -> None:
    """Write ``run.json``, or check that a resumed run is the same run."""
    path = run_dir / "run.json"
    if path.exists():
        existing = read_run_json(path)
        if isinstance(existing.get("generation"), dict):  # runs made before the thinking setting: auto
            existing["generation"] = {"thinking": "auto", **existing["generation"]}
        notes = (OOM_NOTE, ENGINE_NOTE, PARTIAL_NOTE)
        differing = settings_differences({k: v for k, v in existing.items() if k not in notes}, record)
        if differing:
            raise CogbenchError(
                f"{path}: this run's settings differ from those of the run the folder holds: "
                f"{', '.join(differing)}; use another --out to keep both"
            )
        return
    write_run_json(path, record)


MISSING = object()  # a field one of the two runs does not have


def settings_differences(old: dict[str, Any], new: dict[str, Any], prefix: str = "") -> list[str]:
    """Each field that differs, as ``field: old → new`` (``generation.max_new_tokens: 32 → 9``), nested fields by name."""
    lines = []
    for name in sorted(set(old) | set(new)):
        before, after = old.get(name, MISSING), new.get(name, MISSING)
        if before == after:
            continue
        if isinstance(before, dict) and isinstance(after, dict):
            lines += settings_differences(before, after, f"{prefix}{name}.")
        else:
            lines.append(f"{prefix}{name}: {_shown(before)} → {_shown(after)}")
    return lines


def _shown(value: Any) -> str:
    if value is MISSING:
        return "(none)"
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    text = text.encode("unicode_escape").decode("ascii") if isinstance(value, str) else text
    return text if len(text) <= 80 else text[:77] + "..."


def item_ids_record(item_ids: tuple[str, ...]) -> dict[str, Any]:
    """How ``run.json`` (``item_ids``) names a run restricted to some items: how many, and the sha256 of their sorted ids."""
    text = "\n".join(sorted(set(item_ids)))
    return {"count": len(set(item_ids)), "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()}


def read_run_json(path: Path) -> dict[str, Any]:
    """A run folder's ``run.json`` as an object; anything else (not JSON, nested too deeply, a list) is one line."""
    fix = "remove it or use another --out"
    try:
        record = parse_json(path.read_text(encoding="utf-8"), str(path))
    except UnicodeDecodeError as error:
        raise UsageError(f"{path}: not UTF-8 text (byte {error.start}); {fix}") from None
    except UsageError as error:
        raise UsageError(f"{error}; {fix}") from None
    if not isinstance(record, dict):
        raise UsageError(f"{path}: not a run record (a JSON object, as `cogbench eval` writes); {fix}")
    return record


def write_run_json(path: Path, record: dict[str, Any]) -> None:
    write_file(path, json.dumps(record, indent=2, sort_keys=True) + "\n")


def recorded_oom_batch_size(run_dir: Path) -> int | None:
    try:
        value = read_run_json(run_dir / "run.json").get(OOM_NOTE)
    except (OSError, UsageError):
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 1 else None


def note_batch_cut(run_dir: Path, size: int) -> None:
    """Record in ``run.json`` and print (once per cut) the batch size kept after out-of-memory."""
    path = run_dir / "run.json"
    record = json.loads(path.read_text(encoding="utf-8"))
    record[OOM_NOTE] = size
    write_run_json(path, record)
    print(f"out of memory: batches split; continuing at batch size {size} (noted in {path})", file=sys.stderr)


def note_engine(run_dir: Path, options: dict[str, Any]) -> None:
    """Add this session's vllm: placement options to ``run.json`` (not compared on resume: they must not change an answer)."""
    path = run_dir / "run.json"
    record = json.loads(path.read_text(encoding="utf-8"))
    sessions = record.get(ENGINE_NOTE) or []
    if not sessions or sessions[-1] != options:
        record[ENGINE_NOTE] = [*sessions, options]
        write_run_json(path, record)


def note_partial(run_dir: Path, partial: bool) -> None:
    """Record in ``run.json`` whether the merged predictions cover part of the dataset (not compared on resume)."""
    path = run_dir / "run.json"
    record = json.loads(path.read_text(encoding="utf-8"))
    if record.get(PARTIAL_NOTE) != partial:
        record[PARTIAL_NOTE] = partial
        write_run_json(path, record)


def shard_paths(run_dir: Path) -> list[Path]:
    return sorted((run_dir / "shards").glob("rank-*.jsonl"))


def done_keys(run_dir: Path) -> set[tuple[str, int | None, str | None]]:
    """Keys answered in any shard, whichever run or rank wrote them."""
    keys: set[tuple[str, int | None, str | None]] = set()
    for path in shard_paths(run_dir):
        keys.update(p.key for p in read_predictions(path, skip_torn_tail=True))
    return keys


def merge_shards(run_dir: Path, queries: list[Query], allow_missing: bool = False) -> Path:
    """Write ``predictions.jsonl``: every query's prediction once, in dataset order."""
    found: dict[tuple[str, int | None, str | None], Prediction] = {}
    for path in shard_paths(run_dir):
        for prediction in read_predictions(path, skip_torn_tail=True):
            found.setdefault(prediction.key, prediction)
    missing = [q.key for q in queries if q.key not in found]
    if missing and not allow_missing:
        raise CogbenchError(
            f"{run_dir}: {len(missing)} queries have no prediction yet (first: item {missing[0][0]!r}"
            f"{'' if missing[0][1] is None else f' query {missing[0][1]}'}); run the same command again to finish them"
        )
    path = run_dir / "predictions.jsonl"
    return write_file(path, "".join(found[q.key].to_json() + "\n" for q in queries if q.key in found))
