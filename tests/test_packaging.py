"""The package as users get it: one version, said by `--version` and the changelog (issue 34, item 4).

The wheel itself is built, installed into a fresh venv and run by .ci/run-wheel.
"""

from __future__ import annotations

import re
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_version_is_written_once_and_reported():
    written = PYPROJECT["project"]["version"]
    assert version("cogbench-codis") == written, "reinstall the checkout (pip install -e .) after a bump"
    shown = subprocess.run([sys.executable, "-m", "cogbench", "--version"], capture_output=True, text=True, check=True)
    assert shown.stdout.strip() == f"cogbench {written}"


def test_changelog_has_this_version_and_an_unreleased_section():
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    sections = re.findall(r"(?m)^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?$", changelog)
    assert sections[0] == ("Unreleased", "")
    assert sections[1][0] == PYPROJECT["project"]["version"], "the newest release in CHANGELOG.md is not the version"
    assert all(date for _, date in sections[1:]), "every released version has its date"


def test_typed_marker_and_no_stray_files_at_the_root():
    assert (ROOT / "cogbench" / "py.typed").is_file()
    assert PYPROJECT["tool"]["setuptools"]["package-data"]["cogbench"] == ["py.typed"]
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    assert not [name for name in tracked if "/" not in name and name.endswith((".whl", ".tar.gz", ".zip"))]


def test_every_package_folder_is_listed_for_the_wheel():
    """pyproject lists the packages one by one (package-dir maps each folder under `cogbench.`): a new room left
    out installs in editable mode but not from the wheel (`cogbench score` imported answers/, absent there)."""
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    folders = {"cogbench": "cogbench", "reference_eval": "cogbench.reference_eval"}
    found = {
        f"{name}.{init.parent.relative_to(ROOT / folder).as_posix().replace('/', '.')}".rstrip(".")
        for folder, name in folders.items()
        for init in (ROOT / folder).rglob("__init__.py")
    }
    assert found - listed == set()
