"""What ``verify`` checks of the invariance probe (``eval --image-variant``) beyond its metrics, which
``check_scores`` re-derives from the details' variant entries like every other metric (``metrics.invariance``):

- each entry's answer against the variant prediction it was scored from, and its image sha256 against the one
  the prediction records; each VQA entry's letter and verdict read again from its response;
- with the build (``--dataset``): each variant image made again from the build's image and hashed, under the
  Pillow version that made it (another version is named as such, never compared: its encoders may differ).
"""

from __future__ import annotations

from typing import Any

from cogbench.reference_eval.answers.reasoning import final_answer
from cogbench.reference_eval.metrics import invariance, vqa
from cogbench.reference_eval.tasks import image_variants
from cogbench.reference_eval.tasks.queries import undecoded_images
from cogbench.reference_eval.verifying.verify_result import TaskData, Verification
from cogbench.schemas.vocabulary import ID_COLUMN
from cogbench.validation.integrity import load_verified


def _entries(details: list[dict[str, Any]]):
    for detail in details:
        for entry in detail.get("variants") or []:
            yield detail, entry


def check_entries(data: TaskData, result: Verification) -> None:
    """Each VQA entry's extracted letter and verdict from its response; the variants named in scores.json."""
    if not any(d.get("variants") for d in data.details):
        if "image_variants" in data.scores:
            result.problem(str(data.scores_path), "image_variants: stated, but no item has a variant entry")
        return
    stated = (data.scores.get("image_variants") or {}).get("names")
    result.same(
        f"{data.scores_path}: image_variants.names (the details' variants)",
        sorted(stated or []),
        sorted(invariance.variant_names(data.details)),
    )
    if data.scores["task"] != "vqa":
        return
    for detail, entry in _entries(data.details):
        where, item = f"{data.where}: item {detail['item_id']} variant {entry['variant']}", [str(detail["item_id"])]
        extracted = vqa.extract_robust(entry.get("response", ""), detail.get("choices") or [])
        if "choices" in detail:
            result.same(f"{where}: extracted (read again from its response)", entry["extracted"], extracted, item)
        result.same(f"{where}: correct", entry["correct"], entry["extracted"] == detail["answer"], item)


def check_predictions(data: TaskData, result: Verification, predictions: list, tags, thinking: str) -> None:
    """Each entry against its variant prediction of the run's predictions.jsonl: answer and image sha256."""
    task = data.scores["task"]
    shown = {(p.item_id, p.query, p.variant): p for p in predictions if p.variant is not None}
    for detail, entry in _entries(data.details):
        item, name = detail["item_id"], entry["variant"]
        where, items = f"{data.where}: item {item} variant {name}", [str(item)]
        queries = (1, 2) if task == "codis" else (None,)
        found = [shown.get((item, q, name)) for q in queries]
        if None in found:
            result.problem(where, "has no variant prediction in predictions.jsonl", items)
            continue
        answers = [final_answer(p, tags, thinking).answer for p in found]
        stated = entry.get("outputs") if task == "codis" else [entry.get("response")]
        result.same(f"{where}: answer (predictions.jsonl's final answer)", stated, answers, items)
        hashes = sorted({p.variant_image.get("sha256") for p in found})
        result.same(f"{where}: image_sha256 (predictions.jsonl's)", [entry.get("image_sha256")], hashes, items)


def check_images(data: TaskData, result: Verification, dataset: str) -> None:
    """Each variant image made again from the build's image; its sha256 against the entry's."""
    entries = list(_entries(data.details))
    if not entries:
        return
    task, here = data.scores["task"], image_variants.pillow_version()
    other = sorted({str(e.get("pillow")) for _, e in entries if e.get("pillow") != here})
    if other:
        result.state(
            f"variant images made with Pillow {', '.join(other)} (this is Pillow {here}: its encoders may give "
            "other bytes; verify with that version to re-derive their sha256)"
        )
    loaded = load_verified(dataset, task)
    rows = {str(item): k for k, item in enumerate(loaded[ID_COLUMN[task]])}
    images = undecoded_images(loaded)
    made: dict[tuple[int, str], str] = {}
    for detail, entry in entries:
        if entry.get("pillow") != here or str(detail["item_id"]) not in rows:
            continue  # an item the build lacks is named by check_build
        key = (rows[str(detail["item_id"])], entry["variant"])
        if entry["variant"] not in image_variants.VARIANTS:
            result.problem(f"{data.where}: item {detail['item_id']}", f"variant {entry['variant']!r}: not a variant")
            continue
        if key not in made:
            made[key] = image_variants.variant_sha256(entry["variant"], images[key[0]]["image"])
        where = f"{data.where}: item {detail['item_id']} variant {entry['variant']}: image_sha256 (made from the build)"
        result.same(where, entry.get("image_sha256"), made[key], [str(detail["item_id"])])


def expected_units(data: TaskData, rows: int) -> dict[str, int]:
    """Each invariance metric's units over the config: one per item."""
    return dict.fromkeys(invariance.units(data.scores["task"], data.details), rows)
