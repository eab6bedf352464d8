"""The invariance probe's scores (``eval --image-variant``): does the answer survive a meaning-preserving change
of the image?

Not a paper metric. Each scored item carries, beside its answer on the image, one entry per image variant
(``variants``: VQA's extracted letter, CODIS's two verdicts). From those entries alone:

- ``flip_rate_NAME``: share of items whose answer under variant NAME differs from the answer on the image
  (VQA: the extracted letter, "no answer" counting as one; CODIS: either query's verdict, the only reading
  of a free-text answer both judges share);
- ``flip_rate``: share of items whose answer changed under at least one variant;
- ``accuracy_NAME`` (VQA) / ``acc_p_NAME`` (CODIS, both queries of the pair right): the score under NAME;
- ``accuracy_invariant`` / ``acc_p_invariant``: right on the image and under every variant.

An item counts for the "every variant" scores only with an entry for each variant the run holds; a CODIS
pair only where every verdict it needs was obtained. Each unit is one item on its image, so the intervals
are clustered by image like every other score (``intervals.units_from_details``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

MAIN = {"vqa": "accuracy", "codis": "acc_p"}
BASES = ("flip_rate", "accuracy", "acc_p")  # the per-variant metrics are BASE_NAME


def variant_names(details: Sequence[dict[str, Any]]) -> list[str]:
    """The variants the details hold, in the order the items list them."""
    return list(dict.fromkeys(e["variant"] for d in details for e in d.get("variants") or []))


def _vqa_entry(detail: dict[str, Any], entry: dict[str, Any]) -> tuple[bool | None, bool | None]:
    """(right under the variant, answer changed), each None where it cannot be told."""
    return entry["extracted"] == detail["answer"], entry["extracted"] != detail["extracted"]


def _codis_entry(detail: dict[str, Any], entry: dict[str, Any]) -> tuple[bool | None, bool | None]:
    rights = list(entry["rights"])
    base = [q["right"] for q in detail["queries"]]
    right = None if None in rights else all(rights)
    changed = None if None in rights or None in base else rights != base
    return right, changed


def _base_right(task: str, detail: dict[str, Any]) -> bool | None:
    if task == "vqa":
        return bool(detail["correct"])
    rights = [q["right"] for q in detail["queries"]]
    return None if None in rights else all(rights)


def units(task: str, details: Sequence[dict[str, Any]]) -> dict[str, list[tuple[str, str, float]]]:
    """Per metric, (image, category, 0 or 1) for each item it counts; empty without variants."""
    names = variant_names(details)
    if not names:
        return {}
    read = _vqa_entry if task == "vqa" else _codis_entry
    found: dict[str, list[tuple[str, str, float]]] = {"flip_rate": [], f"{MAIN[task]}_invariant": []}
    for name in names:
        found[f"flip_rate_{name}"] = []
        found[f"{MAIN[task]}_{name}"] = []
    for d in details:
        where = (d["image_id"], d["category"])
        entries = {e["variant"]: read(d, e) for e in d.get("variants") or []}
        for name, (right, changed) in entries.items():
            if right is not None:
                found[f"{MAIN[task]}_{name}"].append((*where, float(right)))
            if changed is not None:
                found[f"flip_rate_{name}"].append((*where, float(changed)))
        if set(entries) != set(names):
            continue
        changes = [changed for _, changed in entries.values()]
        if None not in changes:
            found["flip_rate"].append((*where, float(any(changes))))
        rights = [_base_right(task, d), *(right for right, _ in entries.values())]
        if None not in rights:
            found[f"{MAIN[task]}_invariant"].append((*where, float(all(rights))))
    return found
