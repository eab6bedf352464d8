"""Helpers for the release tests: writable copies of the real raw data, a fixed validation report."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any


def copy_real_raw(real_raw_dir: Path, dest: Path) -> Path:
    """A writable copy of the real raw data: annotation files and CogBench images copied,
    CODIS images (76 MB) linked as a folder, which the builder resolves safely."""
    for source in ("codis", "cogbench-samples"):
        (dest / source).mkdir(parents=True)
        for path in (real_raw_dir / source).glob("*.json"):
            shutil.copy(path, dest / source / path.name)
    shutil.copytree(real_raw_dir / "cogbench-samples" / "images", dest / "cogbench-samples" / "images")
    (dest / "codis" / "images").symlink_to(real_raw_dir / "codis" / "images", target_is_directory=True)
    return dest


def report(*errors: str) -> Callable[..., Any]:
    """A ``validate`` function with the validation package's signature returning fixed errors."""

    def validate(path, expected="auto"):
        validate.calls.append((Path(path), expected))
        return SimpleNamespace(errors=list(errors), ok=not errors, findings=list(errors))

    validate.calls = []
    return validate
