"""The suite's tiers (tests/tiers.py, issue 49): a plain `pytest` leaves the slow and browser tiers out.

The selection is checked on a small project of its own (the same addopts as pyproject.toml), run by a
real pytest in a subprocess; the table is checked against the test files it names, and `.ci/run`,
README.md and docs/testing.md against the tiers.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

from tiers import DEFAULT_TIER, TIER_OF, TIERS, tier_of

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
INI = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]["ini_options"]

CONFTEST = f"""
import sys
sys.path.insert(0, {str(TESTS)!r})
import tiers
tiers.TIER_OF = {{"tests/test_browser.py": "browser", "tests/test_mixed.py::test_long": "slow"}}
from tiers import pytest_collection_modifyitems, pytest_ignore_collect
"""
FILES = {
    "test_browser.py": "def test_page():\n    pass\n\ndef test_other_page():\n    pass\n",
    "test_mixed.py": (
        "import pytest\n\n"
        "def test_quick():\n    pass\n\n"
        "@pytest.mark.parametrize('n', [1, 2])\ndef test_long(n):\n    pass\n\n"
        "@pytest.mark.slow\ndef test_marked_here():\n    pass\n"
    ),
}
QUICK = "tests/test_mixed.py::test_quick"
LONG = {"tests/test_mixed.py::test_long[1]", "tests/test_mixed.py::test_long[2]"}
MARKED = "tests/test_mixed.py::test_marked_here"
PAGES = {"tests/test_browser.py::test_page", "tests/test_browser.py::test_other_page"}


@pytest.fixture
def project(tmp_path):
    markers = "".join(f"    {line!r},\n" for line in INI["markers"])
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.pytest.ini_options]\ntestpaths = ["tests"]\naddopts = {INI["addopts"]!r}\nmarkers = [\n{markers}]\n'
    )
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "tests").mkdir()
    for name, text in FILES.items():
        (tmp_path / "tests" / name).write_text(text)
    return tmp_path


def collected(project: Path, *args: str) -> subprocess.CompletedProcess:
    """The small project collected by a real pytest. Third-party plugins (hypothesis, playwright, xdist...) are not
    loaded: the tiers are this project's conftest alone, and loading them took 2.5 of each run's 3 seconds."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
    )


def ids(project: Path, *args: str) -> set[str]:
    done = collected(project, *args)
    assert done.returncode in (0, 5), done.stdout + done.stderr
    return {line for line in done.stdout.splitlines() if "::" in line}


def test_a_plain_pytest_runs_the_default_tier_only(project):
    assert ids(project) == {QUICK}
    assert ids(project, "tests/test_mixed.py") == {QUICK}
    assert ids(project, "-k", "quick or long or page") == {QUICK}


def test_each_tier_runs_by_its_marker_and_an_empty_one_runs_everything(project):
    assert ids(project, "-m", "browser") == PAGES
    assert ids(project, "-m", "slow") == LONG | {MARKED}
    assert ids(project, "-m", "") == PAGES | LONG | {QUICK, MARKED}


def test_a_test_in_two_tiers_is_refused(project):
    (project / "tests" / "test_browser.py").write_text(
        "import pytest\n\n@pytest.mark.slow\ndef test_page():\n    pass\n"
    )
    done = collected(project, "-m", "")
    assert done.returncode == 4
    assert "tests/test_browser.py::test_page is in more than one tier: browser, slow (tests/tiers.py)" in done.stderr


def test_tier_of_reads_a_function_before_its_file():
    assert tier_of("tests/test_doc_blocks.py::test_every_page_is_in_the_nav") == "slow"
    assert tier_of("tests/test_site_browser.py::test_x[a-b]") == "browser"
    certificate = "tests/test_report_certificate.py::test_the_explain_section_fits_the_window"
    assert tier_of(certificate) == "browser" and tier_of(f"{certificate}[1]") == "browser"
    assert (
        tier_of("tests/test_report_certificate.py::test_runs_judged_otherwise_are_named_without_a_certificate")
        == "slow"
    )
    assert tier_of("tests/test_oracle_vqa_codis.py::test_anything") is None


def test_every_entry_names_a_test_file_or_function():
    for nodeid, tier in TIER_OF.items():
        assert tier in TIERS, nodeid
        path, _, function = nodeid.partition("::")
        assert (ROOT / path).is_file(), f"tests/tiers.py names {path}, which is not there"
        if function:
            assert re.search(rf"^def {re.escape(function)}\(", (ROOT / path).read_text(encoding="utf-8"), re.M), (
                f"tests/tiers.py names {nodeid}, which is not a test function of {path}"
            )


def test_the_checks_against_the_authors_scripts_and_the_papers_stay_in_the_default_tier():
    for name in ("test_oracle_vqa_codis", "test_oracle_description", "test_published", "test_verdicts"):
        assert tier_of(f"tests/{name}.py::test_x") is None, name


def test_the_default_tier_does_not_import_a_file_wholly_in_another_tier(project):
    (project / "tests" / "test_browser.py").write_text("raise ImportError('imported')\n")
    assert ids(project) == {QUICK}
    done = collected(project, "-m", "browser")
    assert done.returncode == 2 and "imported" in done.stdout + done.stderr


def test_the_default_tier_is_pyprojects_addopts():
    assert INI["addopts"].endswith(f"-m '{DEFAULT_TIER}'")


def test_every_tier_is_a_marker_run_by_ci_and_named_in_the_docs():
    markers = {line.split(":")[0] for line in INI["markers"]}
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    testing = (ROOT / "docs" / "testing.md").read_text(encoding="utf-8")
    assert "for tier in slow browser; do" in ci
    for tier in TIERS:
        assert tier in markers
        assert f"-m {tier}" in readme and f"-m {tier}" in testing, tier
