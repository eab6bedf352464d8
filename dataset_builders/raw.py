"""Reading the authors' raw files: find them, schema-check them, resolve images.

Every problem is collected (not just the first) and reported with file,
record and field, so one run tells an annotator everything to fix.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cogbench.errors import RawDataError, UsageError, locate
from cogbench.schemas.text import MAX_ID_CHARS, MAX_JSON_DEPTH, json_depth

COGBENCH_FILES = ("cogbench_description.json", "cogbench_vqa.json")
CODIS_FILE = "data.json"
IMAGES_DIR = "images"
IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".webp")
# Folder names tried, in order, below --raw-dir. "cogbench" is the full release
# (under the data use agreement), "cogbench-samples" the public samples.
COGBENCH_DIRS = ("cogbench", "cogbench-samples")
CODIS_DIRS = ("codis",)


RAW_LAYOUT = (
    f"a folder holding codis/{CODIS_FILE} and/or cogbench/ or cogbench-samples/ with "
    f"{' and '.join(COGBENCH_FILES)} (and images/), or one of those folders itself"
)


@dataclass(frozen=True)
class RawSources:
    """Where the raw folders of each benchmark are; ``None`` when absent."""

    root: Path
    cogbench: Path | None
    codis: Path | None


def _is_cogbench_dir(path: Path) -> bool:
    return any((path / name).is_file() for name in COGBENCH_FILES)


def default_raw_dir() -> Path:
    """Where ``build`` reads raw data when ``--raw-dir`` is not given: ``$COGBENCH_RAW_DIR``, then ``./raw``."""
    return Path(os.environ.get("COGBENCH_RAW_DIR") or "raw")


def find_sources(raw_dir: str | os.PathLike) -> RawSources:
    """Find the benchmark folders in ``raw_dir`` (or ``raw_dir`` itself being one)."""
    root = Path(raw_dir)
    if root.is_file():
        raise UsageError(f"{root} is a file; expected a raw data folder: {RAW_LAYOUT}")
    if not root.is_dir():
        raise UsageError(f"raw data folder {root} does not exist (get it with `cogbench fetch-raw --dest {root}`)")
    cogbench = next((root / name for name in COGBENCH_DIRS if _is_cogbench_dir(root / name)), None)
    codis = next((root / name for name in CODIS_DIRS if (root / name / CODIS_FILE).is_file()), None)
    if cogbench is None and _is_cogbench_dir(root):
        cogbench = root
    if codis is None and (root / CODIS_FILE).is_file():
        codis = root
    if cogbench is None and codis is None:
        raise UsageError(f"no raw data found in {root}: expected {RAW_LAYOUT}")
    return RawSources(root=root, cogbench=cogbench, codis=codis)


def relative_name(path: Path, root: Path) -> str:
    """The path as shown in messages and the manifest: relative, with '/'."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def load_json(path: Path, shown_as: str) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise RawDataError([f"{shown_as}: not UTF-8 text ({error.reason} at byte {error.start})"]) from None
    duplicates: list[str] = []

    def keep_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        # json.loads would silently keep the last of two equal keys.
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                duplicates.append(key)
            seen.add(key)
        return dict(pairs)

    try:
        document = json.loads(text, object_pairs_hook=keep_pairs)
    except json.JSONDecodeError as error:
        raise RawDataError(
            [f"{shown_as}: invalid JSON: {error.msg} (line {error.lineno}, column {error.colno})"]
        ) from None
    except RecursionError:
        raise RawDataError(
            [f"{shown_as}: JSON nested too deeply (the raw formats nest at most {MAX_JSON_DEPTH} levels)"]
        ) from None
    if json_depth(document) > MAX_JSON_DEPTH:
        raise RawDataError(
            [f"{shown_as}: JSON nested more than {MAX_JSON_DEPTH} levels deep; the raw formats nest far less"]
        )
    if duplicates:
        raise RawDataError([f"{locate(shown_as, key)}: key appears more than once in the file" for key in duplicates])
    return document


class UnsafeImageId(ValueError):
    """An image id that is empty, absolute, or would leave the images folder."""


def resolve_image(images_dir: Path, image_name: str) -> Path:
    """The file an image id names, guaranteed to lie inside ``images_dir``.

    Raises ``UnsafeImageId`` for ids that try to escape (``..``, absolute
    paths, drive letters, symlinks out) and ``FileNotFoundError`` when the id is
    safe but names no file.
    """
    if not image_name or image_name != image_name.strip():
        raise UnsafeImageId("image id is empty or has surrounding whitespace")
    if len(image_name) > MAX_ID_CHARS or any(ord(char) < 32 for char in image_name):
        raise UnsafeImageId(f"image id is longer than {MAX_ID_CHARS} characters or holds a control character")
    pure = Path(image_name)
    if (
        pure.is_absolute()
        or "\\" in image_name
        or ":" in image_name
        or ".." in pure.parts
        or image_name.startswith("/")
    ):
        raise UnsafeImageId(f"image id {image_name!r} would escape the images folder")
    candidate = images_dir / pure
    try:
        base = images_dir.resolve()
        resolved = candidate.resolve()
        is_file = resolved.is_file()
    except (OSError, ValueError) as error:  # unencodable, too long for the file system, ...
        raise UnsafeImageId(f"image id cannot be used as a file name ({type(error).__name__})") from None
    if base != resolved and base not in resolved.parents:
        raise UnsafeImageId(f"image id {image_name!r} resolves outside the images folder")
    if not is_file:
        raise FileNotFoundError(f"no image file {IMAGES_DIR}/{image_name}")
    return resolved


def find_image_by_stem(images_dir: Path, image_id: str) -> Path:
    """Resolve an id given without extension, as CogBench's VQA file does."""
    for extension in IMAGE_EXTENSIONS:
        try:
            return resolve_image(images_dir, image_id + extension)
        except FileNotFoundError:
            continue
    raise FileNotFoundError(f"no image file {IMAGES_DIR}/{image_id}.* ({', '.join(IMAGE_EXTENSIONS)})")
