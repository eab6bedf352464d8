"""Subcommands that show finished runs: ``compare`` and ``report``.

Each reads run folders through ``run_reader`` (schema-checked, numbers recomputed from
details.jsonl); heavy libraries are imported inside the functions that run a command.
"""

from __future__ import annotations

import argparse

from cogbench.option_types import (
    DEFAULT_PERMUTATIONS,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    metric_points,
    resample_count,
    significance,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    add_compare_parser(subparsers)
    add_report_parser(subparsers)


# --- compare: two runs, paired ------------------------------------------------


def add_compare_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "compare",
        help="paired difference of two scored runs per metric, with 95%% interval and p-value",
        description=(
            "Compare two runs of the same task, dataset revision and prompt template (folders written by "
            "`cogbench score` or `eval`). Runs that differ in items, dataset version or fingerprint, or generation "
            "settings are refused unless --allow-mismatch. Each metric's difference A - B gets a t interval over the "
            "images (G-1 degrees of freedom), a p-value from a paired permutation test over images, and a minimum "
            "detectable difference at 80%% power."
        ),
    )
    parser.add_argument(
        "runs",
        nargs="+",
        metavar="RUN",
        help="RUN_A RUN_B: score folders (with scores.json and details.jsonl) or eval run folders; differences are "
        "A - B. With --judges: two scorings of each model's predictions by two judges, any number of models",
    )
    parser.add_argument(
        "--judges",
        action="store_true",
        help="judge agreement instead of a model comparison: per category Cohen's kappa with a 95%% interval "
        "clustered by image, verdict flips, how each score moves, and (3+ models) Kendall's tau of the rankings",
    )
    parser.add_argument("--chart", help="with --judges: also draw the kappas to this PNG file (default: no chart)")
    parser.add_argument(
        "--resamples",
        type=resample_count,
        default=DEFAULT_RESAMPLES,
        help="with --judges: bootstrap resamples of the kappa and tau intervals; otherwise recorded only (the "
        "interval of A - B is a t interval over images, not resampled)",
    )
    parser.add_argument(
        "--permutations", type=resample_count, default=DEFAULT_PERMUTATIONS, help="random swaps of the permutation test"
    )
    parser.add_argument(
        "--seed", type=int, default=DEFAULT_SEED, help="seed of the resampling (same seed, same result)"
    )
    parser.add_argument(
        "--alpha", type=significance, default=0.05, help="significance level marked with * (default 0.05)"
    )
    parser.add_argument(
        "--json", dest="json_out", help="also write the comparison to this JSON file (default: print only)"
    )
    parser.add_argument(
        "--allow-mismatch",
        action="store_true",
        help="compare runs that differ (items, dataset, generation settings) on their shared items only, "
        "labelled so on every line; without it such a pair is refused",
    )
    parser.add_argument(
        "--gate",
        action="store_true",
        help="regression gate for CI: A is the baseline, B the candidate; FAIL (exit 4) when the upper end of the "
        "95%% paired interval of B - A on the gate metric, overall, is below -MAX_DROP (B is worse than A by "
        "more than MAX_DROP points with that confidence), else PASS (exit 0); one line says which",
    )
    parser.add_argument(
        "--max-drop",
        type=metric_points,
        metavar="X",
        help="with --gate (and required by it): the largest drop of B below A allowed, in points of the metric's "
        "0-100 scale (default: none)",
    )
    parser.add_argument(
        "--gate-metric",
        metavar="METRIC",
        help="with --gate: the metric gated (default: the task's headline metric: codis acc_p, vqa accuracy, "
        "description cognition)",
    )
    parser.set_defaults(func=run_compare)


def run_compare(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from cogbench.dataset_builders.output import check_option_file
    from cogbench.dataset_builders.writes import write_file
    from cogbench.errors import UsageError
    from cogbench.reference_eval.api.evaluation import compare
    from cogbench.reference_eval.reports.compare import render_comparison

    for option, value in (("--json", args.json_out), ("--chart", args.chart)):
        if value and (Path(value).is_dir() or not Path(value).parent.is_dir()):
            raise UsageError(f"{option} {value}: give a file name in an existing folder (not a folder)")
        if value:
            # Never onto a build's manifest.json, nor into a run, marked or not (nor one being compared).
            check_option_file(Path(value), option, reads=[("RUN", run) for run in args.runs])
    bar = {"gate": args.gate, "max_drop": args.max_drop, "gate_metric": args.gate_metric}
    if args.judges:
        from cogbench.reference_eval.reports.judge_agreement import agreement_chart, render_agreement

        result = compare(*args.runs, judges=True, resamples=args.resamples, seed=args.seed, **bar)
        print(render_agreement(result), end="")
        if args.chart:
            print(f"wrote {agreement_chart(Path(args.chart), result)}")
    else:
        if args.chart:
            raise UsageError("--chart applies to compare --judges")
        result = compare(
            *args.runs,
            resamples=args.resamples,
            seed=args.seed,
            permutations=args.permutations,
            allow_mismatch=args.allow_mismatch,
            **bar,
        )
        print(render_comparison(result, args.alpha), end="")
    if args.json_out:
        write_file(Path(args.json_out), json.dumps(result, indent=2) + "\n")
    if args.gate:  # compare() added its decision under "gate"
        from cogbench.errors import EXIT_GATE_FAILED
        from cogbench.reference_eval.reports.gate import Gate

        gate = Gate(**result["gate"])
        print(gate.line())
        return 0 if gate.passed else EXIT_GATE_FAILED
    return 0


# --- report: many runs beside the papers ----------------------------------------


def add_report_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "report",
        help="one report over many scored runs: tables like the papers' with intervals, published results, charts",
        description=(
            "Write report.md, a self-contained report.html, leaderboard.csv and PNG charts for any number of "
            "runs (folders written by `cogbench score` or `eval`, any mix of tasks and models), with the "
            "papers' published results beside them."
        ),
    )
    parser.add_argument(
        "runs",
        nargs="+",
        metavar="RUN_DIR",
        help="score folder or eval run folder; with --site only, also a details dataset (a folder written by "
        "publish-results, or ORG/NAME[@REVISION] on the Hub) or an .eval_results file, each verified first; or, "
        "alone with --site, a sweep folder (`sweep plan`): its board of coverage, health and groups (docs/sweeps.md)",
    )
    parser.add_argument(
        "--out",
        help="folder for report.md, report.html, leaderboard.csv and *.png (default: none; give --out, --site or both)",
    )
    parser.add_argument(
        "--site",
        metavar="DIR",
        help="also (or instead of --out) write a static site into DIR: the leaderboard with 95%% intervals and "
        "Holm-corrected significance groups, and every item with each run's answer, verdict and judge reply; it "
        "works offline from the disk and uploads unchanged as a static Hugging Face Space (docs/site.md; default: none)",
    )
    parser.add_argument(
        "--alpha",
        type=significance,
        default=0.05,
        help="--site: the level at which two runs are told apart, after Holm's correction (default: 0.05)",
    )
    parser.add_argument(
        "--permutations",
        type=resample_count,
        default=DEFAULT_PERMUTATIONS,
        help="--site: permutations of each pair's paired permutation test, as `compare` (default: 9999)",
    )
    parser.add_argument(
        "--allow-mismatch",
        action="store_true",
        help="report runs of one task scored on different builds (dataset revision or shards) or generated with "
        "different settings (prompt, max new tokens, temperature), each labelled NOT COMPARABLE and never ranked "
        "with the task's first run; without it such runs are refused (exit 2), as `compare` refuses them",
    )
    parser.add_argument(
        "--certificate",
        metavar="CERT.json",
        help="a judge certificate (`cogbench judges certify --json`), schema-checked and re-derived from the sources "
        "it names before use: report.md and report.html get a Judge certificate section with its verdict and "
        "figures; runs judged by another LLM judge than the papers' are named there with or without one "
        "(docs/judges.md; default: none)",
    )
    parser.set_defaults(func=run_report)


# Folders cogbench writes that hold no run (`report runs/*` meets the request files it suggests under runs/).
NOT_RUNS = {
    "requests": "request files (--write-requests)",
    "report": "a `cogbench report` folder",
    "export": "a `cogbench export` folder",
    "publish-results": "a `cogbench publish-results` folder",
}


def _skip_unscored(folder) -> bool:
    """A folder `report runs/*` meets that holds no scored run (an `eval --no-score` or unfinished run, request
    files): skipped with a note saying what it is and, for a run, how to score it."""
    import json
    import shlex
    import sys

    from cogbench.dataset_builders.output import kind_of
    from cogbench.reference_eval.run.folder import PARTIAL_NOTE

    kind = kind_of(folder)
    if kind in NOT_RUNS:
        print(f"skipped {folder}: {NOT_RUNS[kind]}, not a run", file=sys.stderr)
        return True
    if kind == "score" and not (folder / "scores.json").is_file():
        print(
            f"skipped {folder}: a `cogbench score` folder with no scores.json yet (its judge requests wait for "
            "--read-responses, or the score stopped early): nothing scored to report",
            file=sys.stderr,
        )
        return True
    if kind != "eval" or (folder / "score" / "scores.json").is_file():
        return False
    try:
        run = json.loads((folder / "run.json").read_text(encoding="utf-8"))
        options = ["--task", run["task"], "--dataset", run["dataset"]]
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return False  # not a run folder this note can help with: read_run says what is wrong
    if not (folder / "predictions.jsonl").is_file():
        print(
            f"skipped {folder}: an unfinished `eval` run (no predictions.jsonl yet); finish it by running the same "
            "`cogbench eval` command again (it resumes), then score it",
            file=sys.stderr,
        )
        return True
    options += ["--circular"] if run.get("circular") else []
    options += ["--no-image"] if run.get("no_image") else []
    options += ["--predictions", str(folder / "predictions.jsonl"), "--out", str(folder / "score")]
    options += ["--allow-partial"] if run.get(PARTIAL_NOTE) else []
    print(
        f"skipped {folder}: an `eval --no-score` run, not scored yet; score it with "
        f"`cogbench score {shlex.join(options)}`",
        file=sys.stderr,
    )
    return True


def run_report(args: argparse.Namespace) -> int:
    from functools import partial
    from pathlib import Path

    from cogbench.dataset_builders.output import kind_of
    from cogbench.errors import UsageError
    from cogbench.reference_eval.certifying.certificate_report import report_section, verified_certificate
    from cogbench.reference_eval.explaining.report_section import explain_tables
    from cogbench.reference_eval.reports.runs import write_report

    if not (args.out or args.site):
        raise UsageError("give --out (report files), --site (the static site) or both")
    if any(kind_of(Path(path)) == "sweep" for path in args.runs):
        return _report_sweep(args)
    if args.certificate and not args.out:
        raise UsageError("--certificate goes into report.md and report.html: give --out as well")
    certificate = verified_certificate(args.certificate) if args.certificate else None  # before any other work
    section = partial(report_section, certificate=certificate, source=args.certificate or "")
    runs = [path for path in args.runs if not _skip_unscored(Path(path))]
    if not runs:
        raise UsageError(f"no scored run among {', '.join(args.runs)}; nothing to report (see the notes above)")
    if args.out:
        written = write_report(runs, Path(args.out), args.allow_mismatch, explain_tables, section)
        print(f"{written['runs']} run(s): {', '.join(written['tables'])}")
        for path in written["files"] + written["charts"]:
            print(f"wrote {path}")
    if args.site:
        from cogbench.reference_eval.site.site_writer import write_site

        site = write_site(runs, Path(args.site), args.allow_mismatch, args.alpha, args.permutations)
        items = ", ".join(f"{task} {count}" for task, count in site["items"].items())
        index = Path(site["folder"]) / "index.html"
        print(f"wrote the static site {index}: {site['runs']} run(s), items {items}, {site['images']} image(s)")
        _print_replaced(site)
    return 0


def _report_sweep(args: argparse.Namespace) -> int:
    """``report SWEEP_DIR --site DIR``: the sweep's board (site/board.py), every merged cell verified first."""
    from pathlib import Path

    from cogbench.errors import UsageError
    from cogbench.reference_eval.site.site_writer import write_board
    from cogbench.reference_eval.sweeping.ledger import board_rows

    if len(args.runs) != 1 or args.out or not args.site or args.certificate:
        raise UsageError(
            f"a sweep folder ({', '.join(args.runs)}) is reported alone, with --site DIR only (its board); "
            "to report its cells with --out, name their run folders (cells/*/run)"
        )
    folder = Path(args.runs[0])
    written = write_board(folder, lambda: board_rows(folder), Path(args.site), args.alpha, args.permutations)
    states = ", ".join(f"{count} {state}" for state, count in sorted(written["states"].items()))
    print(f"wrote the sweep's board {Path(written['folder']) / 'index.html'}: {written['cells']} cell(s) ({states})")
    _print_replaced(written)
    return 0


def _print_replaced(written: dict) -> None:
    """What a site or board write removed of an earlier one, and what it kept (not as cogbench wrote it)."""
    if written["removed"]:
        print(
            f"removed {len(written['removed'])} file(s) an earlier `report --site` wrote there and this one did not: "
            + _some(written["removed"])
        )
    if written["kept"]:
        print(f"kept {_some(written['kept'])}: not as cogbench wrote them (changed since, or not its own)")


def _some(names: list[str], shown: int = 5) -> str:
    return ", ".join(names[:shown]) + (f" and {len(names) - shown} more" if len(names) > shown else "")
