"""Every command cogbench prints as a hint runs as printed (issue 24, items 1 and 2).

One table, run in order in one fresh folder as a new user would: each row runs a command
through bash, finds the hint in its output, and runs that hint through bash too. Raw files come
from a real local HTTP server mirroring raw.githubusercontent.com ($COGBENCH_RAW_BASE_URL), so
`fetch-raw` works offline; everything else is the real data of ../shared/data.

Hints that name another tool's command with placeholders (the harness `run:`/`score:` lines of
`export`, `hf download` in an offline message) are not cogbench commands and are not run here.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from cogbench.dataset_builders.fetch import PUBLIC_SOURCES

from raw_mirror import lay_out_mirror, serve
from shared_files import missing_message, skip_or_fail

BIN = str(Path(sys.executable).parent)

# (what, command that prints the hint, its exit code, regex whose group 1 is the hint, the hint's exit code)
# Rows run in order in one folder: later rows use what earlier hints made (raw/, dist/...).
HINTS = [
    (
        "missing raw folder -> fetch it",
        "cogbench build --raw-dir raw --out dist/cogbench",
        2,
        r"`(cogbench fetch-raw --dest raw)`",
        0,
    ),
    ("fetch-raw, no SOURCE (all) -> build", "cogbench fetch-raw", 0, r"next: (cogbench build --raw-dir raw)$", 0),
    (
        "full CogBench release -> the public samples",
        "cogbench fetch-raw cogbench",
        2,
        r"`(cogbench fetch-raw cogbench-samples --dest raw)`",
        0,
    ),
    (
        "full CogBench release -> build once it is in raw/",
        "cogbench fetch-raw cogbench",
        2,
        r"`(cogbench build --raw-dir raw)`",
        0,
    ),
    (
        "validate a raw file -> its folder",
        "cogbench validate raw/codis/data.json",
        2,
        r"`(cogbench validate raw/codis)`",
        0,
    ),
    ("build -> validate", "cogbench build --raw-dir raw --out dist/a", 0, r"next: (cogbench validate dist/a)$", 0),
    (
        "publish without --repo-id at build -> rebuild with it",
        "cogbench publish dist/a --repo-id me/cb --version 2.0.0 --dry-run",
        2,
        r"`(cogbench build --raw-dir raw --out dist/a --version 2.0.0 --repo-id me/cb)`",
        0,
    ),
    (
        "build with --repo-id -> publish dry run",
        "cogbench build --raw-dir raw --out dist/b --repo-id me/cb",
        0,
        r"publish: (cogbench publish dist/b --repo-id me/cb --version 2.0.0 --dry-run)$",
        0,
    ),
    (
        "publish another version -> rebuild with it",
        "cogbench publish dist/b --repo-id me/cb --version 2.0.1 --dry-run",
        2,
        r"`(cogbench build --raw-dir raw --out dist/b --version 2.0.1 --repo-id me/cb)`",
        0,
    ),
    (
        "score --dataset on the raw folder -> build from it (not into it)",
        "cogbench score --task vqa --dataset raw --predictions p.jsonl",
        1,
        r"`(cogbench build --raw-dir raw --out dist/cogbench)`",
        0,
    ),
    (
        "build edited after it was written -> validate lists the findings",
        "cogbench build --raw-dir raw --out dist/t && echo edited >> dist/t/README.md && "
        "cogbench export --format vlmevalkit --dataset dist/t --out exports/t",
        1,
        r"`(cogbench validate dist/t)`",
        1,
    ),
    (
        "dataset folder that is no build -> build it",
        "mkdir -p empty && cogbench export --format vlmevalkit --dataset empty --out exports",
        2,
        r"`(cogbench build --raw-dir raw --out empty)`",
        0,
    ),
]


def _run(command: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def user_folder(real_raw_dir, tmp_path_factory):
    """A fresh folder, and the environment of a user whose raw files come from a local mirror."""
    root = lay_out_mirror(real_raw_dir, tmp_path_factory.mktemp("mirror"), PUBLIC_SOURCES)
    with serve(root) as url:
        env = {k: v for k, v in os.environ.items() if not k.startswith("COGBENCH_")}
        env |= {"PATH": f"{BIN}{os.pathsep}{env.get('PATH', '')}", "COGBENCH_RAW_BASE_URL": url, "HF_HUB_OFFLINE": "1"}
        yield tmp_path_factory.mktemp("user"), env


def test_every_hint_runs_as_printed(user_folder):
    cwd, env = user_folder
    for what, command, code, pattern, hint_code in HINTS:
        shown = _run(command, cwd, env)
        output = shown.stdout + shown.stderr
        assert shown.returncode == code, f"{what}: `{command}` exited {shown.returncode}:\n{output[-1500:]}"
        found = re.search(pattern, output, re.MULTILINE)
        assert found, f"{what}: `{command}` printed no hint matching {pattern!r}:\n{output[-1500:]}"
        ran = _run(found.group(1), cwd, env)
        assert ran.returncode == hint_code, (
            f"{what}: hint `{found.group(1)}` exited {ran.returncode}:\n{(ran.stdout + ran.stderr)[-1500:]}"
        )
        assert "Traceback" not in ran.stderr


def test_version_hints_run_as_printed(user_folder):
    """`build --previous` and `diff` name the version to use; the same command with it succeeds."""
    cwd, env = user_folder
    build = "cogbench build --raw-dir raw --out dist/next --previous dist/a --version {}"
    refused = _run(build.format("2.0.0"), cwd, env)
    assert refused.returncode == 2
    version = re.search(r"run the same command with --version (\S+) \(or higher\)", refused.stderr).group(1)
    assert version == "2.0.1"
    assert _run(build.format(version), cwd, env).returncode == 0

    low = _run("cogbench build --raw-dir raw --out dist/low --version 1.0.0", cwd, env)
    assert low.returncode == 0, low.stderr
    diff = _run("cogbench diff dist/a dist/low", cwd, env)
    assert diff.returncode == 0, diff.stderr
    hint = re.search(r"rebuild it: `(cogbench build [^`]+)`$", diff.stdout, re.MULTILINE).group(1)
    assert hint == "cogbench build --raw-dir raw --out dist/low --previous dist/a --version 2.0.1"
    assert _run(hint, cwd, env).returncode == 0  # the whole command, as printed (issue 32 item 7)
    assert "proposed version 2.0.1" in _run("cogbench diff dist/a dist/low", cwd, env).stdout


def test_template_hints_run_once_filled_in(user_folder, built_release):
    """Hints marked as templates (issue 32 item 7): filled in with what they name, they run as printed."""
    import pandas as pd
    from test_harnesses import vlmevalkit_dump

    cwd, env = user_folder
    assert _run("cogbench fetch-raw --dest raw", cwd, env).returncode == 0  # as the table's rows do (or did)
    shown = _run("cogbench build --raw-dir raw --out dist/c", cwd, env)
    template = re.search(r"\(a template: put your repo for ORG/NAME\): (cogbench build .*)$", shown.stdout, re.M)
    assert template and "--version 2.0.0" in template.group(1), shown.stdout
    assert _run(template.group(1).replace("ORG/NAME", "me/cb"), cwd, env).returncode == 0
    assert json.loads((cwd / "dist/c/manifest.json").read_text())["repo_id"] == "me/cb"

    shown = _run(f"cogbench export --format vlmevalkit --dataset {built_release} --out exports/v", cwd, env)
    run = re.search(
        r"^run \(in VLMEvalKit's folder; a template: MODEL .*?\): (cp .*) && (python run.py .*)$", shown.stdout, re.M
    )
    score = re.search(
        r"^score \(a template: MODEL as above, VLMEVALKIT its folder.*?\): (cogbench score .*)$", shown.stdout, re.M
    )
    assert run and score, shown.stdout
    unset = _run(run.group(1), cwd, {k: v for k, v in env.items() if k != "LMUData"})
    assert unset.returncode != 0 and "set LMUData to the VLMEvalKit data folder" in unset.stderr  # never cp to /
    (cwd / "lmu").mkdir()
    assert _run(run.group(1), cwd, env | {"LMUData": str(cwd / "lmu")}).returncode == 0
    table = pd.read_csv(cwd / "lmu" / "CogBench_VQA.tsv", sep="\t").drop(columns=["image"])
    (cwd / "vlmevalkit" / "outputs" / "M").mkdir(parents=True)  # what VLMEvalKit's run.py writes there
    vlmevalkit_dump(table.assign(prediction=table["answer"]), cwd / "vlmevalkit/outputs/M/M_CogBench_VQA.xlsx")
    filled = _run(score.group(1).replace("VLMEVALKIT", "vlmevalkit").replace("MODEL", "M"), cwd, env)
    assert filled.returncode == 0, filled.stderr
    assert (
        json.loads((cwd / "runs/vqa-vlmevalkit-M/scores.json").read_text())["metrics"]["accuracy"]["overall"] == 100.0
    )


# Where the code prints a cogbench command with arguments, and how many: a new one fails the test
# below until it has its row above. Not hints: harness.py names the `cogbench export` call a file
# comes from, lmms_eval.py writes that call into the YAML it generates, output.py builds `build_command`.
# Not run here: harnesses/cli.py's description and its two `score:` lines, whose --predictions is the
# file another harness (lmms-eval, VLMEvalKit) writes (tested on real harness output in test_harnesses).
HINT_SITES = {
    "cards/cli.py": 3,
    "cards/publish.py": 2,
    "cards/versions.py": 2,
    "dataset_builders/cli.py": 1,
    "dataset_builders/fetch.py": 1,
    "dataset_builders/load.py": 1,
    "dataset_builders/output.py": 1,
    "dataset_builders/raw.py": 1,
    "validation/api.py": 1,
    "validation/integrity.py": 5,
    "reference_eval/formats/harness.py": 1,
    "reference_eval/harnesses/lmms_eval.py": 1,
    "reference_eval/harnesses/cli.py": 3,
    # `report --site` and `explain` refusing a details dataset that does not verify: the `cogbench verify` it names
    # is run by tests/test_site_inputs.py::test_a_details_dataset_is_a_run_of_the_site_and_an_edited_one_is_refused.
    "reference_eval/verifying/run_inputs.py": 1,
    # `report` skipping an `eval --no-score` folder: the score command it prints is run by
    # tests/test_first_hour.py::test_report_skips_an_unscored_eval_run_with_the_command_that_scores_it.
    "reference_eval/reports/cli.py": 1,
    # `report`'s section on two runs of one model: the `cogbench explain` it names is run as printed by
    # tests/test_explain_report.py::test_a_report_of_two_runs_of_one_model_explains_their_difference.
    "reference_eval/explaining/report_section.py": 1,
    # publish-results of a run on an unpublished build: `cogbench publish` needs the Hub
    # (tests/test_hub_results.py publishes to the local Hub server with the real client).
    "reference_eval/publishing/hub_results.py": 1,
    # `rescore` of a run that does not verify: the `cogbench verify` it names is run by
    # tests/test_rescore.py::test_rescore_refusals_in_one_line.
    "reference_eval/api/rescoring.py": 1,
}
HINT_SITE = re.compile(
    r"(next|publish): cogbench |`cogbench [a-z-]+ \{|cogbench [a-z-]+ [^`\"]*--|\{build_command\(|rebuild (it )?with --version|the same command with --version"
)


def test_every_printed_cogbench_command_is_in_the_table():
    """Grep the sources for printed commands: a hint added without a row in HINTS fails here."""
    root = Path(__file__).resolve().parents[1]
    sites: dict[str, int] = {}
    for folder in ("cogbench", "cards", "dataset_builders", "validation", "reference_eval"):
        for path in sorted((root / folder).rglob("*.py")):
            for line in path.read_text(encoding="utf-8").splitlines():
                text = line.strip()
                found = HINT_SITE.search(text)  # inside a string literal (not a docstring or comment)
                if found and '"' in text[: found.start()] and "help=" not in text and not text.startswith(("#", '"""')):
                    name = path.relative_to(root).as_posix()
                    sites[name] = sites.get(name, 0) + 1
    assert sites == HINT_SITES


@contextlib.contextmanager
def _foreign_judge_on(port: int):
    """Another OpenAI-compatible server (not the block's) on ``port`` while the block runs, when it is free."""
    from openai_server import OpenAIServer, Reply

    try:
        stand_in = OpenAIServer(lambda request: Reply(text="wrong"), record=False, port=port)
    except OSError:  # taken by someone else: the block must not talk to it either way
        yield
        return
    with stand_in:
        yield


def test_readme_offline_cpu_block_runs_as_written(built_release, real_raw_dir, tmp_path):
    """Issue 32 item 7, issue 48 item 9i: the tiny-model and local-judge block of docs/running.md, run by bash as
    written from the quickstart's folder, with the installed package's commands alone (no tests/ folder; the test
    extra's modules hidden from its Python: it needs the eval extra alone). Its Hub is a local one holding
    Qwen2.5-VL's tokenizer files, which the first line downloads into an empty cache."""
    from hub_server import HubRepo, LocalHub
    from tiny_models import QWEN_PROCESSOR_DIR

    if not QWEN_PROCESSOR_DIR.is_dir():
        skip_or_fail(missing_message(QWEN_PROCESSOR_DIR, "the Qwen2.5-VL tokenizer files"))
    readme = (Path(__file__).resolve().parents[1] / "docs" / "running.md").read_text()
    block = re.search(r"```bash\n(cogbench demo tiny-model .*?)```", readme, re.S).group(1)
    assert "tests/" not in block  # what a wheel user does not have
    (tmp_path / "dist").mkdir()
    (tmp_path / "dist" / "cogbench").symlink_to(built_release)
    (tmp_path / "raw").symlink_to(real_raw_dir)
    hide = tmp_path / "hide"  # `import pytest` fails in the block's Python, as without the test extra
    hide.mkdir()
    (hide / "pytest.py").write_text("raise ModuleNotFoundError('pytest is not installed', name='pytest')\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("COGBENCH_")}
    env |= {"PATH": f"{BIN}{os.pathsep}{env.get('PATH', '')}", "PYTHONPATH": str(hide)}
    env |= {"HF_HUB_OFFLINE": "0", "TRANSFORMERS_OFFLINE": "0", "HF_HOME": str(tmp_path / "hf-home")}
    assert not re.search(r"--port|127\.0\.0\.1:\d", block)  # a port chosen at run time: never one already taken
    files = {path.name: path.read_bytes() for path in QWEN_PROCESSOR_DIR.iterdir() if path.is_file()}
    with LocalHub() as hub, _foreign_judge_on(8001):  # 8001: what once listened where the block looked ("wrong")
        hub.models["Qwen/Qwen2.5-VL-7B-Instruct"] = HubRepo(files=files)
        shown = _run("set -e\n" + block, tmp_path, env | {"HF_ENDPOINT": hub.endpoint})
    assert shown.returncode == 0, (shown.stdout + shown.stderr)[-3000:]
    downloaded = {path.rsplit("/", 1)[-1] for method, path in hub.requests if "/resolve/" in path}
    assert {"vocab.json", "merges.txt", "tokenizer_config.json"} <= downloaded
    marker = json.loads((tmp_path / "models" / "tiny-llava" / ".cogbench-output.json").read_text())
    assert marker["kind"] == "demo tiny-model"
    assert (tmp_path / "runs" / "eval-vqa-hf-models_tiny-llava" / "predictions.jsonl").is_file()
    scores = json.loads((tmp_path / "runs" / "codis-local-judge" / "scores.json").read_text())
    assert scores["judge"]["kind"] == "openai" and scores["metrics"]["acc_q"]["overall"] == 100.0
