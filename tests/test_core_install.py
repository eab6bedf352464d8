"""On the core install (README command 1), the commands that need the `eval` extra say so in one line (issue 32, item 4).

Each command runs in a subprocess through ``tests/core_only.py``, which hides every module that
the core requirements do not pull in, as a fresh core-only venv would lack them.
"""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
import tomllib
from conftest import REPO_ROOT
from test_runs_report import vqa_run

from cogbench.cli import EVAL_EXTRA_MODULES, eval_extra_command

CORE_ONLY = str(Path(__file__).with_name("core_only.py"))


def core_only(*argv: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, CORE_ONLY, *argv], cwd=cwd, capture_output=True, text=True, timeout=300, check=False
    )


def test_the_emulated_core_install_lacks_the_eval_extra():
    probe = (
        f"import sys; sys.path.insert(0, {str(Path(CORE_ONLY).parent)!r}); import core_only; core_only.hide_non_core(); "
        "import importlib.util as u; print(u.find_spec('scipy'), u.find_spec('torch'), u.find_spec('datasets') is not None)"
    )
    shown = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert shown.stdout.split() == ["None", "None", "True"]


def test_the_module_list_covers_the_eval_extra():
    """Every distribution of pyproject's `eval` extra has its import names in EVAL_EXTRA_MODULES."""
    extra = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["eval"]
    names = {requirement.split(">")[0].split("=")[0].strip().replace("-", "_").lower() for requirement in extra}
    modules = {
        module
        for module, dists in metadata.packages_distributions().items()
        if any(dist.replace("-", "_").lower() in names for dist in dists) and not module.startswith("_")
    }
    assert modules - {"functorch", "torchgen", "pylab", "mpl_toolkits", "bert_score_cli"} <= set(EVAL_EXTRA_MODULES)
    assert len(EVAL_EXTRA_MODULES) == len(names)


@pytest.fixture(scope="module")
def scored_run(built_release, tmp_path_factory):
    return vqa_run(built_release, tmp_path_factory.mktemp("runs"), "some", 2)


@pytest.mark.parametrize(
    "argv",
    [
        "eval --task vqa --model hf:m --dataset {build} --out r1",
        "eval --task codis --model openai:m --dataset {build} --out r2",
        "score --task vqa --dataset {build} --predictions p.jsonl --out r3",
        "report {run} --out rep",
        "compare {run} {run}",
        "verify {run}",
        "publish-results {run} --model-repo o/m --details-repo o/d --out pr",
        "export --format lmms-eval --dataset {build} --out ex",
        "demo tiny-model tiny",
    ],
)
def test_a_command_of_the_eval_extra_says_so_in_one_line(argv, built_release, scored_run, tmp_path):
    (tmp_path / "p.jsonl").write_text('{"id": "x", "output": "A"}\n')
    shown = core_only(*argv.format(build=built_release, run=scored_run).split(), cwd=tmp_path)
    command = argv.split()[0]
    assert shown.returncode == 2, shown.stderr
    assert shown.stderr.splitlines() == [
        f"error: `cogbench {command}` needs the eval extra (module {shown.stderr.split(chr(39))[1]!r} is not "
        f"installed); install it with `{eval_extra_command()}`"
    ]
    assert "Traceback" not in shown.stderr and shown.stdout == ""
    assert eval_extra_command() == f"{sys.executable} -m pip install -e '{REPO_ROOT}[eval]'"
    assert not any((tmp_path / name).exists() for name in ("r1", "r2", "r3", "rep", "ex", "pr", "tiny"))


def test_the_core_install_still_builds_and_exports_for_vlmevalkit(built_release, tmp_path):
    shown = core_only("export", "--format", "vlmevalkit", "--dataset", str(built_release), "--out", "ex", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert (tmp_path / "ex" / "CogBench_VQA.tsv").is_file()


def test_the_core_install_builds_fingerprints_of_sha256_alone(real_raw_dir, tmp_path):
    """Without the fingerprints extra (imagehash, pdqhash) the build still writes fingerprints.parquet: every
    image's sha256 and size, no hash column, the manifest saying so; it validates, and publish refuses it."""
    import hashlib
    import json

    import pyarrow.parquet as pq

    from cogbench.cards.publish import check_build
    from cogbench.errors import UsageError
    from cogbench.validation import validate

    from validation_helpers import copy_samples

    raw = copy_samples(real_raw_dir, tmp_path / "raw")
    shown = core_only("build", "--raw-dir", str(raw), "--out", "built", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    build = tmp_path / "built"
    manifest = json.loads((build / "manifest.json").read_text())
    assert manifest["fingerprints"]["families"] == [] and list(manifest["fingerprints"]["libraries"]) == ["pillow"]
    rows = pq.read_table(build / "fingerprints.parquet").to_pylist()
    images = sorted((raw / "cogbench-samples" / "images").iterdir())
    assert [r["sha256"] for r in rows] == [hashlib.sha256(p.read_bytes()).hexdigest() for p in images]
    assert "phash" not in rows[0] and validate(build).ok
    with pytest.raises(UsageError, match="has no phash, dhash, whash, pdq hashes"):
        check_build(build, manifest | {"repo_id": "o/n"}, "o/n", manifest["dataset_version"])
