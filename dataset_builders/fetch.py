"""Download the authors' public raw files, pinned to a commit and checked by sha256.

The pinned file list (``raw_files.json``) names every file, where it lives in
the authors' repository and its sha256, so a download is verified file by file
and an interrupted one resumes: files already present with the right hash are
kept, others are fetched to a temporary name and renamed only once verified.

The full CogBench release is not public: it is given out under the authors'
data use agreement, so it cannot be fetched here.
"""

from __future__ import annotations

import hashlib
import json
import os
import urllib.error
import urllib.request
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from cogbench.dataset_builders.raw import sha256_file
from cogbench.dataset_builders.writes import write_with
from cogbench.errors import CogbenchError, UsageError
from cogbench.redaction import redact_text, redact_url

DEFAULT_BASE_URL = "https://raw.githubusercontent.com"
PUBLIC_SOURCES = ("codis", "cogbench-samples")
FULL_COGBENCH_NOTICE = (
    "the full CogBench release (251 images, 2577 questions) is not public: it is distributed by its "
    "authors under the CogBench data use agreement (see https://github.com/xiujiesong/CogBench). "
    "Once you have it, put its cogbench_description.json, cogbench_vqa.json and images/ in {raw}/cogbench/ "
    "and run `cogbench build --raw-dir {raw}`; `cogbench fetch-raw cogbench-samples --dest {raw}` gets the public samples."
)


@dataclass(frozen=True)
class FetchReport:
    source: str
    folder: Path
    downloaded: int
    kept: int


def pinned_files() -> dict[str, Any]:
    text = resources.files("cogbench.dataset_builders").joinpath("raw_files.json").read_text(encoding="utf-8")
    return json.loads(text)


# The pinned release (raw_files.json) of each benchmark's raw folder.
RELEASE_OF = {"cogbench": "cogbench-samples", "codis": "codis"}


def against_release(folders: dict[str, Path], hashes: dict[Path, str]) -> dict[str, dict[str, Any]]:
    """Per benchmark: the raw files read (``hashes``: path -> sha256) against the authors' release.

    Why: a JPEG whose bytes changed (a flipped block) may still decode, so decoding every pixel
    cannot tell it from the original; its sha256 can. Gives the release (repository@commit), how
    many files were read, which of them differ from the release and which it does not hold.
    """
    pins = pinned_files()
    found = {}
    for benchmark, folder in sorted(folders.items()):
        pin = pins[RELEASE_OF[benchmark]]
        read = {
            path.relative_to(folder).as_posix(): digest
            for path, digest in hashes.items()
            if path.is_relative_to(folder)
        }
        released = {name: entry["sha256"] for name, entry in pin["files"].items()}
        found[benchmark] = {
            "release": f"{pin['repository']}@{pin['commit']}",
            "read": len(read),
            "differing": sorted(name for name, digest in read.items() if released.get(name, digest) != digest),
            "not_in_release": sorted(name for name in read if name not in released),
        }
    return found


def _download(url: str, target: Path, expected_sha256: str, progress, root: Path) -> None:
    """Into a temporary (dataset_builders/writes.py) renamed onto ``target`` only once its sha256 matches."""

    def download(handle) -> None:
        digest = hashlib.sha256()
        with urllib.request.urlopen(url, timeout=60) as response:
            for block in iter(lambda: response.read(1 << 16), b""):
                handle.write(block)
                digest.update(block)
                progress.update(len(block))
        if digest.hexdigest() != expected_sha256:
            raise CogbenchError(
                f"{redact_url(url)}: sha256 {digest.hexdigest()} does not match the pinned {expected_sha256}; file not kept"
            )

    try:
        write_with(target, download, root)
    except urllib.error.HTTPError as error:
        raise CogbenchError(f"download of {redact_url(url)} failed: HTTP {error.code} {error.reason}") from None
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", error)
        raise CogbenchError(
            f"cannot download {redact_url(url)}: {redact_text(str(reason))}. Are you offline? Re-run the same command when the network is back; "
            "files already verified are kept."
        ) from None


def fetch_source(
    source: str, dest: str | os.PathLike, base_url: str = DEFAULT_BASE_URL, show_progress: bool = True
) -> FetchReport:
    """Make ``dest/<source>/`` hold exactly the pinned files of one public source."""
    from tqdm.auto import tqdm

    pins = pinned_files()
    if source not in pins:
        raise UsageError(f"unknown source {source!r}; choose one of {', '.join(PUBLIC_SOURCES)}")
    pin = pins[source]
    folder = Path(dest) / source
    todo, kept = [], 0
    for name, entry in sorted(pin["files"].items()):
        target = folder / name
        if target.is_file() and target.stat().st_size == entry["bytes"] and sha256_file(target) == entry["sha256"]:
            kept += 1
        else:
            todo.append((name, entry))
    total = sum(entry["bytes"] for _, entry in todo)
    made: list[Path] = []  # folders this call created: removed again when left empty by a failure
    try:
        with tqdm(total=total, unit="B", unit_scale=True, desc=source, disable=not show_progress or not todo) as bar:
            for name, entry in todo:
                target = folder / name
                made += [parent for parent in reversed(target.parents) if not parent.exists()]
                target.parent.mkdir(parents=True, exist_ok=True)
                url = f"{base_url.rstrip('/')}/{pin['repository']}/{pin['commit']}/{entry['source']}"
                _download(url, target, entry["sha256"], bar, folder)
    except BaseException:
        for created in reversed(made):
            if created.is_dir() and not any(created.iterdir()):
                created.rmdir()
        raise
    return FetchReport(source=source, folder=folder, downloaded=len(todo), kept=kept)
