"""Which items' images a new build changed since the build an eval run used, for ``rescore``.

A stored answer is about the image the model saw: an item whose image was corrected keeps its prompt
text, so the prompt's sha256 alone would carry an answer to a picture the model never got. The images
are told apart, most direct first, by the new build's errata when they are over the run's own build
(``old_revision`` is the fingerprint run.json records as ``dataset_revision``), else by hashing each
item's image in both builds when the run's build is a local folder with that fingerprint. Where neither
is at hand the check says so, and ``rescore`` prints it rather than carry answers on trust.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cogbench.dataset_builders.load import dataset_revision
from cogbench.schemas.vocabulary import ID_COLUMN
from cogbench.validation.integrity import load_verified


@dataclass
class ImageCheck:
    """The items whose image differs, and how that was found (``compared`` False: it could not be)."""

    changed: set[str] = field(default_factory=set)
    how: str = ""
    compared: bool = True


def image_hashes(loaded: Any, config: str) -> dict[str, str]:
    """Item id -> ``sha256:HEX`` of its image bytes, as the errata write an image."""
    import datasets

    rows = loaded.select_columns([ID_COLUMN[config], "image"]).cast_column("image", datasets.Image(decode=False))
    return {
        row[ID_COLUMN[config]]: "sha256:" + hashlib.sha256((row["image"] or {}).get("bytes") or b"").hexdigest()
        for row in rows
    }


def errata_images(dataset: str, config: str, loaded: Any, run_revision: str) -> set[str] | None:
    """The items whose image the new build's errata list as changed, when the errata are over the run's
    own build; None when the build has no such errata."""
    import datasets

    manifest_file = Path(dataset) / "manifest.json"
    if not manifest_file.is_file():
        return None
    errata = json.loads(manifest_file.read_text(encoding="utf-8")).get("errata") or {}
    if not errata or errata.get("old_revision") != run_revision:
        return None
    return {
        item["id"]
        for item in errata.get("items", [])
        if item["config"] == config and isinstance(loaded.features.get(item["field"]), datasets.Image)
    }


def changed_images(record: dict[str, Any], dataset: str, revision: str | None, loaded: Any) -> ImageCheck:
    """The items of ``loaded`` (the new build's rows of the run's task) whose image is not the one the run
    ``record`` (its run.json) showed the model."""
    if record.get("no_image"):
        return ImageCheck(how="the run showed no image (--no-image)")
    config, run_revision = record["task"], str(record.get("dataset_revision") or "")
    if "+manifest." in run_revision and dataset_revision(dataset, revision) == run_revision:
        return ImageCheck(how="the run's own build")
    listed = errata_images(dataset, config, loaded, run_revision)
    if listed is not None:
        return ImageCheck(listed, f"the new build's errata over the run's build {run_revision}")
    old = str(record.get("dataset") or "")
    if old and Path(old).is_dir() and dataset_revision(old) == run_revision:
        before, after = image_hashes(load_verified(old, config), config), image_hashes(loaded, config)
        changed = {item for item, digest in after.items() if before.get(item, digest) != digest}
        return ImageCheck(changed, f"each item's image compared with the run's build {old}")
    return ImageCheck(
        how=(
            f"images not compared: the run's build {run_revision or '(not recorded)'} is not a local folder at "
            f"{old or '(not recorded)'} and the new build's errata are not over it"
        ),
        compared=False,
    )
