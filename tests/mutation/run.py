"""Mutation testing of the scoring core: cosmic-ray's mutants, run in parallel clones of the checkout.

    .venv/bin/python tests/mutation/run.py                  # every module in mutation.toml
    .venv/bin/python tests/mutation/run.py --module vqa     # metrics/vqa.py only

cosmic-ray makes the mutants (``cosmic_ray.commands.init``), applies one and runs the tests
(``cosmic_ray.mutating.mutate_and_test``) and stores the outcomes (its ``WorkDB``). What this file
adds is what the 30-minute budget on 2 cores needs (README "Mutation testing"):

- each module runs only the fast tests that cover it (``mutation.toml``);
- ``--workers`` processes mutate and test at once, each in its own copy of the checkout (in a
  temporary folder, removed at the end), importing ``cogbench`` from that copy (not through the
  editable install);
- a mutant inside an annotation is not run: with ``from __future__ import annotations`` Python
  never evaluates it, so it cannot change behaviour (counted apart, with that reason);
- a surviving mutant named in ``tests/mutation/equivalent.toml`` (with the reason it cannot change
  what the code computes) counts as equivalent; any other survivor is printed with its diff.

Score = killed / (mutants run - named equivalents). Exit 0 when it reaches ``fail-under`` and no
listed equivalent was killed, 1 otherwise; a mistake (a bad --out, --source, --module or config)
is one ``error:`` line and exit 1, argparse's own usage errors exit 2. Outcomes are stored as they come, so
an interrupted run resumes with ``--out`` the same folder. ``--source REV`` mutates a git revision
(with that revision's tests) instead of the working tree: how the score before a change is measured.
"""

from __future__ import annotations

import argparse
import ast
import concurrent.futures
import contextlib
import json
import multiprocessing
import os
import random
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import tomllib
from cosmic_ray.commands import init as cosmic_ray_init
from cosmic_ray.mutating import mutate_and_test
from cosmic_ray.work_db import WorkDB, use_db
from cosmic_ray.work_item import MutationSpec, WorkerOutcome, WorkResult

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]
from mutation_report import load_equivalents, summarize  # noqa: E402

from shared_files import shared_dir  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[2]
MARKER = "cogbench-mutation-run.json"
ANNOTATION = "not run: inside an annotation, never evaluated (from __future__ import annotations)"
NOT_SAMPLED = "not run: outside the random sample"


@dataclass(frozen=True)
class Config:
    modules: dict[str, list[str]]  # module path -> test files that cover it
    pytest_args: list[str]
    workers: int
    min_timeout: float
    fail_under: float
    equivalent_file: Path


def load_config(path: Path) -> Config:
    try:
        table = tomllib.loads(path.read_text())["mutation"]
    except (OSError, tomllib.TOMLDecodeError, KeyError) as error:
        sys.exit(f"error: {path}: cannot read its [mutation] table ({type(error).__name__}: {error})")
    return Config(
        modules=dict(table["modules"]),
        pytest_args=list(table["pytest-args"]),
        workers=int(table["workers"]),
        min_timeout=float(table["min-timeout"]),
        fail_under=float(table["fail-under"]),
        equivalent_file=REPO_ROOT / table["equivalent"],
    )


def test_command(config: Config, tests: list[str]) -> str:
    """pytest on the module's test files; with none (an older revision), a command that runs nothing."""
    if not tests:
        return shlex.join([sys.executable, "-c", "pass"])
    return shlex.join([sys.executable, "-m", "pytest", *config.pytest_args, *tests])


# -- the copies of the checkout -------------------------------------------------------------------


def copy_checkout(dest: Path, revision: str | None) -> None:
    """The working tree's files that git tracks or would track, or a revision's tree."""
    dest.mkdir(parents=True)
    if revision:
        archive = subprocess.run(["git", "archive", revision], cwd=REPO_ROOT, capture_output=True)
        if archive.returncode != 0:
            sys.exit(f"error: --source {revision}: {archive.stderr.decode().strip().splitlines()[0]}")
        archive = archive.stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
        return
    listed = (
        subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=REPO_ROOT,
            check=True,
            capture_output=True,
        )
        .stdout.decode()
        .split("\0")
    )
    for name in filter(None, listed):
        source = REPO_ROOT / name
        if source.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)


def make_copy(dest: Path, revision: str | None) -> Path:
    copy_checkout(dest, revision)
    link_subpackages(dest)
    return dest


def link_subpackages(checkout: Path) -> None:
    """Lay the copy's ``cogbench/`` out as the installed package: links to the top-level folders.

    pyproject maps ``cogbench.X`` to the top-level folder ``X``. With the copy first on the path
    (PYTHONPATH, and the current folder under ``python -m``), ``cogbench`` and all its parts are then
    imported from the copy being mutated, not through the editable install's finder.
    """
    mapping = tomllib.loads((checkout / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    for name, folder in mapping.items():
        if name != "cogbench":
            (checkout / mapping["cogbench"] / name.split(".", 1)[1]).symlink_to(Path("..") / folder)


def worker_environment(checkout: Path) -> dict[str, str]:
    """Import from the copy; find the shared data where this checkout finds it (the copies lie elsewhere)."""
    return {
        **os.environ,
        "PYTHONPATH": str(checkout),
        "PYTHONDONTWRITEBYTECODE": "1",
        "COGBENCH_SHARED": str(shared_dir().resolve()),
    }


def check_imports_from(checkout: Path, module: str) -> None:
    dotted = "cogbench." + module.removesuffix(".py").replace("/", ".")
    probe = subprocess.run(
        [sys.executable, "-c", f"import {dotted} as m; print(m.__file__)"],
        cwd=checkout,
        env=worker_environment(checkout),
        capture_output=True,
        text=True,
    )
    imported = Path(probe.stdout.strip()).resolve() if probe.returncode == 0 else None
    if imported != (checkout / module).resolve():
        sys.exit(
            f"error: {dotted} is not imported from the copy {checkout} ({probe.stdout.strip() or probe.stderr.strip()})"
        )


# -- the work done in each worker process ---------------------------------------------------------


def _start_worker(copies: multiprocessing.Queue) -> None:
    """Each worker process takes one copy for its life: it mutates and tests there only."""
    checkout = copies.get()
    os.chdir(checkout)
    os.environ.update(worker_environment(Path(checkout)))


def _mutate_and_test(job_id: str, mutation: MutationSpec, command: str, timeout: float) -> tuple[str, WorkResult]:
    return job_id, mutate_and_test([mutation], command, timeout)


# -- the session ----------------------------------------------------------------------------------


def prepare_out(out: Path, modules: list[str], source: str | None, sample: int | None, seed: int) -> dict:
    """Our folder only: a new one, or one this script made (its marker says with which settings)."""
    marker = out / MARKER
    settings = {
        "tool": "cogbench mutation run",
        "modules": modules,
        "source": source or "working tree",
        "sample": sample,
        "seed": seed,
    }
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        sys.exit(f"error: {out} exists and is not a folder; pass a folder to --out")
    if marker.is_file():
        try:
            recorded = json.loads(marker.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError) as error:
            sys.exit(
                f"error: {marker}: damaged ({error}); this is not a run this script can resume, pass another --out"
            )
        if recorded != settings:
            sys.exit(f"error: {out} holds a run with other settings ({recorded}); pass another --out")
        return settings
    if out.exists() and any(out.iterdir()):
        sys.exit(f"error: {out} is not empty and was not made by this script; pass a new folder to --out")
    out.mkdir(parents=True, exist_ok=True)
    marker.write_text(json.dumps(settings))
    return settings


def in_annotation(source: str) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Spans of every annotation, if the module defers them (else none: they are evaluated)."""
    tree = ast.parse(source)
    deferred = any(
        isinstance(node, ast.ImportFrom)
        and node.module == "__future__"
        and any(alias.name == "annotations" for alias in node.names)
        for node in tree.body
    )
    spans = []
    for node in ast.walk(tree) if deferred else ():
        annotations = [
            getattr(node, "annotation", None) if isinstance(node, (ast.arg, ast.AnnAssign)) else None,
            getattr(node, "returns", None),
        ]
        spans += [((a.lineno, a.col_offset), (a.end_lineno, a.end_col_offset)) for a in annotations if a is not None]
    return spans


def create_session(db_path: Path, checkout: Path, modules: list[str], sample: int | None, seed: int) -> None:
    """cosmic-ray's mutants of ``modules``; those in annotations, and those outside a sample, marked not run."""
    partial = db_path.with_suffix(".partial")
    partial.unlink(missing_ok=True)
    with contextlib.chdir(checkout), use_db(str(partial), WorkDB.Mode.create) as db:
        cosmic_ray_init([Path(m) for m in modules], db, {})
        spans = {m: in_annotation(Path(m).read_text()) for m in modules}
        runnable = []
        for item in db.work_items:
            mutation = item.mutations[0]
            if any(
                a <= tuple(mutation.start_pos) and tuple(mutation.end_pos) <= b
                for a, b in spans[str(mutation.module_path)]
            ):
                db.set_result(item.job_id, WorkResult(worker_outcome=WorkerOutcome.SKIPPED, output=ANNOTATION))
            else:  # job ids are random: the sample is drawn by what each mutant is, so a seed repeats it
                runnable.append((str(mutation.module_path), mutation.operator_name, mutation.occurrence, item.job_id))
        if sample is not None and sample < len(runnable):
            chosen = set(random.Random(seed).sample(sorted(runnable), sample))
            for key in runnable:
                job_id = key[-1]
                if key not in chosen:
                    db.set_result(job_id, WorkResult(worker_outcome=WorkerOutcome.SKIPPED, output=NOT_SAMPLED))
    partial.rename(db_path)


def baseline_seconds(config: Config, checkout: Path, tests: list[str], module: str) -> float:
    """The module's tests must pass on the unmutated copy; their time sets the mutants' timeout."""
    started = time.monotonic()
    run = subprocess.run(
        shlex.split(test_command(config, tests)),
        cwd=checkout,
        env=worker_environment(checkout),
        capture_output=True,
        text=True,
    )
    if run.returncode != 0:
        tail = (run.stdout + run.stderr).strip().splitlines()[-1:] or ["(no output)"]
        sys.exit(f"error: the tests of {module} fail before any mutation ({tail[0]})")
    return time.monotonic() - started


def run_pending(
    config: Config, db_path: Path, copies: list[Path], tests_of: dict[str, list[str]], timeouts: dict[str, float]
) -> None:
    with use_db(str(db_path), WorkDB.Mode.open) as db:
        pending = [item for item in db.pending_work_items if str(item.mutations[0].module_path) in tests_of]
        total, done, started = len(pending), 0, time.monotonic()
        print(f"{total} mutants to run on {len(copies)} workers", flush=True)
        queue = multiprocessing.get_context("spawn").Queue()
        for checkout in copies:
            queue.put(str(checkout))
        with concurrent.futures.ProcessPoolExecutor(
            len(copies), mp_context=multiprocessing.get_context("spawn"), initializer=_start_worker, initargs=(queue,)
        ) as pool:
            futures = []
            for item in pending:
                module = str(item.mutations[0].module_path)
                futures.append(
                    pool.submit(
                        _mutate_and_test,
                        item.job_id,
                        item.mutations[0],
                        test_command(config, tests_of[module]),
                        timeouts[module],
                    )
                )
            for future in concurrent.futures.as_completed(futures):
                job_id, result = future.result()
                db.set_result(job_id, result)
                done += 1
                if done % 50 == 0 or done == total:
                    elapsed = time.monotonic() - started
                    print(
                        f"  {done}/{total} in {elapsed:.0f} s (about {elapsed / done * (total - done):.0f} s left)",
                        flush=True,
                    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=REPO_ROOT / "mutation.toml")
    parser.add_argument("--out", type=Path, help="run folder (default: a new temporary folder); reuse it to resume")
    parser.add_argument(
        "--module",
        action="append",
        default=[],
        help="only this module: its file name without .py (vqa) or its path; repeatable",
    )
    parser.add_argument("--workers", type=int, help="processes at once (default: mutation.toml)")
    parser.add_argument("--source", help="mutate this git revision with its own tests (default: the working tree)")
    parser.add_argument("--sample", type=int, help="run a seeded random sample of this many mutants")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    started = time.monotonic()
    config = load_config(args.config)
    selected = [m for m in config.modules if not args.module or Path(m).stem in args.module or m in args.module]
    if not selected:
        sys.exit(f"error: no module in {args.config} matches {args.module}")
    out = args.out or Path(tempfile.mkdtemp(prefix="cogbench-mutation-"))
    prepare_out(out, selected, args.source, args.sample, args.seed)
    print(f"run folder: {out}", flush=True)

    # The copies live outside --out: they are scratch, made afresh each time (a killed run may leave one
    # mutated) and removed at the end; --out keeps only the marker, the session and the report.
    with tempfile.TemporaryDirectory(prefix="cogbench-mutation-copies-") as scratch:
        copies = [make_copy(Path(scratch) / str(index), args.source) for index in range(args.workers or config.workers)]
        return measure(args, config, out, selected, copies, started)


def measure(
    args: argparse.Namespace, config: Config, out: Path, selected: list[str], copies: list[Path], started: float
) -> int:
    """Baselines, the pending mutants, then the report: all in ``copies``, outcomes into ``out``."""
    first_checkout = copies[0]
    tests_of = {}
    for module in selected:
        if not (first_checkout / module).is_file():
            print(f"{module}: not in this checkout, skipped")
            continue
        tests_of[module] = [t for t in config.modules[module] if (first_checkout / t).is_file()]
        if not tests_of[module]:
            print(f"{module}: none of its test files is in this checkout: its mutants survive (no test runs)")
    if not tests_of:
        sys.exit("error: none of the selected modules is in this checkout")
    check_imports_from(first_checkout, next(iter(tests_of)))

    db_path = out / "session.sqlite"
    if not db_path.is_file():
        create_session(db_path, first_checkout, list(tests_of), args.sample, args.seed)
    timeouts = {}
    for module, tests in tests_of.items():
        seconds = baseline_seconds(config, first_checkout, tests, module)
        timeouts[module] = max(config.min_timeout, 10 * seconds)
        print(f"{module}: {len(tests)} test files, {seconds:.1f} s unmutated", flush=True)
    run_pending(config, db_path, copies, tests_of, timeouts)

    with use_db(str(db_path), WorkDB.Mode.open) as db:
        completed = [
            (item, result) for item, result in db.completed_work_items if str(item.mutations[0].module_path) in tests_of
        ]
    equivalents = load_equivalents(config.equivalent_file)
    summary = summarize(completed, first_checkout, equivalents, config.fail_under)
    text = (
        f"{summary.text}\n\nsource: {args.source or 'the working tree'}; this invocation took "
        f"{time.monotonic() - started:.0f} s on {len(copies)} workers (set-up included; a resumed run "
        "counts only its own part)"
    )
    (out / "report.txt").write_text(text)
    print(text)
    print(f"report: {out / 'report.txt'}")
    return 0 if summary.passed else 1


if __name__ == "__main__":
    sys.exit(main())
