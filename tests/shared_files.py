"""Where the tests find the shared data, models and papers: the one place that knows.

The shared folder (``data/``, ``models/``, ``papers/``) is ``$COGBENCH_SHARED``
when set, else ``../shared`` beside the repository. The raw data is
``$COGBENCH_RAW_DIR`` when set, else ``data/`` of the shared folder. No path
of any one machine is written here, so a fresh clone runs the README's test
command wherever the shared folder sits; a test whose files are absent skips
and says which file and which variable to set. Under ``CI=true`` an absent
file fails the test instead (and ``conftest.py`` stops the run at its start
when the shared folder is incomplete): CI must never pass by skipping.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


def shared_dir() -> Path:
    """``$COGBENCH_SHARED``, else ``../shared`` next to the repository root."""
    return Path(os.environ.get("COGBENCH_SHARED") or REPO_ROOT.parent / "shared")


def raw_data_dir() -> Path:
    """``$COGBENCH_RAW_DIR``, else the shared folder's ``data/``."""
    return Path(os.environ.get("COGBENCH_RAW_DIR") or shared_dir() / "data")


def shared_path(*parts: str) -> Path:
    """A path inside the shared folder (not checked; see ``require_shared``)."""
    return shared_dir().joinpath(*parts)


def missing_message(path: Path, what: str) -> str:
    return (
        f"{what} is not present: {path} (set COGBENCH_SHARED to the folder holding data/, models/, papers/, oracles/)"
    )


SHARED_PARTS = ("data", "models", "papers", "oracles")


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def skip_or_fail(message: str):
    """Skip naming the missing file; under ``CI=true`` fail instead."""
    import pytest  # here, so that tests/tiny_models.py runs without the test extra

    if in_ci():
        pytest.fail(f"CI=true: {message}", pytrace=False)
    pytest.skip(message)


def missing_shared_parts() -> list[Path]:
    """The parts of the shared folder that are absent (all four are needed in CI)."""
    return [shared_path(part) for part in SHARED_PARTS if not shared_path(part).is_dir()]


def require_shared(*parts: str, what: str) -> Path:
    """The shared file or folder at ``parts``, or skip the test naming what is missing."""
    path = shared_path(*parts)
    if not path.exists():
        skip_or_fail(missing_message(path, what))
    return path


def require_raw(*parts: str, what: str) -> Path:
    """A file of the real raw data, or skip the test naming what is missing."""
    path = raw_data_dir().joinpath(*parts)
    if not path.exists():
        skip_or_fail(f"{what} is not present: {path} (set COGBENCH_RAW_DIR or COGBENCH_SHARED)")
    return path


def codis_example() -> Path:
    """The authors' CODIS output example (706 answers, the ground truth) from the real raw data."""
    return require_raw("codis", "output_example.json", what="CODIS output_example.json")


def spacy_stand_in() -> Path:
    """The offline spaCy POS pipeline that stands in for en_core_web_sm in the tests."""
    return require_shared("models", "en_ud_ewt_pos", what="the spaCy POS stand-in model")
