"""Writable copies of the real raw data for fault injection.

JSON files are copied (and optionally cut down to their first records);
images are hard-linked, so a copy costs milliseconds. A test that corrupts an
image must replace the link (``replace_file``), never write through it.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path


def link_or_copy(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def replace_file(path: Path, data: bytes) -> None:
    """Write new bytes to a fresh inode, leaving a hard-linked original untouched."""
    path.unlink()
    path.write_bytes(data)


def read_json(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


def write_json(path: Path, data) -> None:
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")


def edit_json(path: Path, edit) -> None:
    data = read_json(path)
    edit(data)
    write_json(path, data)


def copy_codis(real: Path, dest: Path, keep: int | None = None) -> Path:
    """``real/codis`` copied to ``dest/codis``; with ``keep``, only its first pairs and their images."""
    pairs = read_json(real / "codis" / "data.json")
    if keep is not None:
        pairs = pairs[:keep]
    folder = dest / "codis"
    (folder / "images").mkdir(parents=True)
    write_json(folder / "data.json", pairs)
    for name in sorted(
        {pair["image_id"] for pair in pairs} if keep is not None else os.listdir(real / "codis" / "images")
    ):
        link_or_copy(real / "codis" / "images" / name, folder / "images" / name)
    return dest


def copy_samples(real: Path, dest: Path) -> Path:
    """``real/cogbench-samples`` (5 images, 64 questions) copied to ``dest``."""
    source, folder = real / "cogbench-samples", dest / "cogbench-samples"
    (folder / "images").mkdir(parents=True)
    for name in ("cogbench_description.json", "cogbench_vqa.json"):
        shutil.copyfile(source / name, folder / name)
    for image in (source / "images").iterdir():
        link_or_copy(image, folder / "images" / image.name)
    return dest
