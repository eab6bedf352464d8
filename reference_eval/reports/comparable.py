"""Are two scored runs comparable? ``compare`` refuses pairs whose difference would not mean what it says.

Two runs are comparable when they cover the same items of the same dataset
version and fingerprint (the sha256 of its Parquet shards) and were generated
the same way: prompt version, circular, no-image, no-context, max new tokens,
temperature, thinking (``eval --thinking``; a run recorded before the setting is ``auto``, one with
no run.json, scored from another harness's predictions, unknown and not compared); and their judged metrics were decided by the same judge (kind, model,
reply parsing: ``run_kind.judge_difference``). ``--allow-mismatch`` compares what two mismatched runs share (the
common items only) and every line of the output says so.

``report`` applies the same rule to each run against the first run of its task
(``report_mismatches``): a run on another build or generated another way is
refused, or with ``--allow-mismatch`` labelled NOT COMPARABLE and never ranked.
Items are not a reason there: a run on a subset of the build is PARTIAL (n/N)
already, labelled and never ranked; nor are the settings the report shows with
each run (``[circular]``, ``[no image]``, a description run's mode column).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cogbench.errors import UsageError
from cogbench.reference_eval.recording.run_kind import judge_difference

SETTINGS = (
    "prompt_id",
    "circular",
    "no_image",
    "image_variants",
    "no_context",
    "max_new_tokens",
    "temperature",
    "thinking",
    "structured_regex",
)


@dataclass
class Mismatch:
    """What differs between two runs; ``shared`` the items both scored."""

    reasons: list[str]
    shared: set[str]
    only_a: int
    only_b: int


def generation_settings(folder: Path, scores: dict[str, Any], prompt_id: str | None) -> dict[str, Any]:
    """The settings that change a model's outputs: from scores.json and the ``eval`` run's run.json, where recorded."""
    record: dict[str, Any] = {}
    for run_json in (folder / "run.json", folder.parent / "run.json"):
        if run_json.is_file():
            record = json.loads(run_json.read_text(encoding="utf-8"))
            break
    generation = record.get("generation") or {}
    return {
        "prompt_id": prompt_id,
        "circular": bool(scores.get("circular") or record.get("circular")),
        "no_image": bool(scores.get("no_image") or record.get("no_image")),
        "image_variants": ",".join(
            (scores.get("image_variants") or record.get("image_variants") or {}).get("names") or []
        )
        or None,
        "no_context": bool(
            record.get("no_context") or "no-context" in (prompt_id or "") or "no_context" in (prompt_id or "")
        ),
        "max_new_tokens": generation.get("max_new_tokens", generation.get("max_tokens")),
        "temperature": generation.get("temperature"),
        "thinking": generation.get("thinking", "auto") if generation else None,
        "structured_regex": generation.get("structured_regex"),
    }


def dataset_fingerprint(scores: dict[str, Any]) -> tuple[str, ...] | None:
    """The sha256 of every Parquet shard the run read, when recorded."""
    shards = ((scores.get("provenance") or {}).get("dataset") or {}).get("shards")
    return tuple(sorted(str(s.get("sha256")) for s in shards)) if shards else None


def build_and_settings_reasons(a, b, skip: tuple[str, ...] = (), settings=None) -> list[tuple[str, str]]:
    """(what, why) for each way the runs' dataset build or generation settings differ; ``skip``: settings left out;
    ``settings``: both runs' ``generation_settings``, when read already (one run in many pairs)."""
    reasons = []
    if a.scores["dataset_revision"] != b.scores["dataset_revision"]:
        reasons.append(
            (
                "dataset revision",
                f"dataset revision {a.scores['dataset_revision']!r} vs {b.scores['dataset_revision']!r}",
            )
        )
    fingerprints = dataset_fingerprint(a.scores), dataset_fingerprint(b.scores)
    if None not in fingerprints and fingerprints[0] != fingerprints[1]:
        reasons.append(("dataset fingerprint", "dataset fingerprint (shard sha256) differs"))
    settings_a, settings_b = settings or [generation_settings(r.folder, r.scores, r.prompt_id) for r in (a, b)]
    for name in SETTINGS:
        x, y = settings_a[name], settings_b[name]
        if name not in skip and x is not None and y is not None and x != y:
            reasons.append((name, f"{name} {x!r} vs {y!r}"))
    return reasons


def find_mismatch(a, b, judged_alike: bool = True, settings=None) -> Mismatch:
    """Every reason the runs ``a`` and ``b`` (``compare.ScoredRun``) are not comparable; refuse across tasks.

    ``judged_alike=False`` (``compare --judges``, whose runs differ in their judge on purpose) leaves the judge out.
    """
    if a.scores["task"] != b.scores["task"]:
        raise UsageError(
            f"cannot compare runs of different tasks: {a.folder} has {a.scores['task']!r}, "
            f"{b.folder} has {b.scores['task']!r}"
        )
    reasons = [why for _, why in build_and_settings_reasons(a, b, settings=settings)]
    judges = judge_difference(a.scores, b.scores) if judged_alike else None
    if judges:
        reasons.append(judges)
    items_a, items_b = {d["item_id"] for d in a.details}, {d["item_id"] for d in b.details}
    if items_a != items_b:
        reasons.append(
            f"items: {len(items_a - items_b)} only in A, {len(items_b - items_a)} only in B, "
            f"{len(items_a & items_b)} shared"
        )
    return Mismatch(reasons, items_a & items_b, len(items_a - items_b), len(items_b - items_a))


def check_or_refuse(a, b, allow_mismatch: bool, judged_alike: bool = True, settings=None) -> Mismatch:
    """The mismatch (empty when comparable), or a one-line refusal without ``--allow-mismatch``."""
    mismatch = find_mismatch(a, b, judged_alike, settings)
    if mismatch.reasons and not allow_mismatch:
        raise UsageError(
            f"cannot compare {a.folder} with {b.folder}: {'; '.join(mismatch.reasons)} "
            "(--allow-mismatch compares the shared items only, labelled so)"
        )
    if not mismatch.shared:
        raise UsageError(f"cannot compare {a.folder} with {b.folder}: they share no scored item")
    return mismatch


def report_mismatches(runs, modes: list[str], allow_mismatch: bool) -> list[list[tuple[str, str]]]:
    """Per run of ``report``: how it differs from the first run of its task ([] when it may be ranked with it).

    Without ``allow_mismatch`` the first such run is refused in one line.
    """
    first: dict[str, int] = {}
    found = []
    for index, (run, mode) in enumerate(zip(runs, modes)):
        ref = first.setdefault(run.scores["task"], index)
        skip = ("circular", "no_image", "image_variants") + (("prompt_id",) if mode != modes[ref] else ())
        reasons = build_and_settings_reasons(runs[ref], run, skip) if ref != index else []
        if reasons and not allow_mismatch:
            raise UsageError(
                f"cannot rank {run.folder} with {runs[ref].folder} in one report: "
                f"{'; '.join(why for _, why in reasons)} (--allow-mismatch reports them labelled NOT COMPARABLE, "
                "never ranked together)"
            )
        found.append(reasons)
    return found
