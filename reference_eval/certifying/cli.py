"""``cogbench judges``: ``certify`` (may a candidate judge replace the retired one?), ``validate`` (judges
against people's labels) and ``archive``.

The code each command runs is imported when it runs.
"""

from __future__ import annotations

import argparse
import functools

from cogbench.option_types import DEFAULT_RESAMPLES, DEFAULT_SEED, finite, resample_count


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "judges",
        help="judges as a whole: certify a replacement judge against the official one, validate judges against "
        "people's labels, archive verdicts",
        description="Judges as a whole (docs/judges.md, docs/reanchoring.md): `certify` a candidate judge against "
        "reference verdicts (and people's labels), `validate` judges against people's labels, `archive` a run's "
        "verdicts as Parquet.",
    )
    commands = parser.add_subparsers(
        dest="judges_command",
        required=True,
        metavar="SUBCOMMAND",
        help="certify, validate or archive",
        parser_class=functools.partial(argparse.ArgumentParser, epilog=parser.epilog),  # the exit codes
    )
    add_certify_parser(commands)
    add_validate_parser(commands)
    add_archive_parser(commands)


def add_certify_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "certify",
        help="PASS or FAIL: does a candidate judge agree enough with the reference (official) judge's verdicts?",
        description="Compare a candidate judge's scorings with reference verdicts of the same answers (paired by "
        "answers_sha256): per task and category raw agreement, Cohen's kappa with its image-clustered interval, "
        "prevalence and confusion matrix; per model the moved score with its paired interval; over three or more "
        "models Kendall's tau-b of the rankings and the largest |difference|. Exit 0 on PASS, 1 on FAIL.",
    )
    parser.add_argument(
        "--reference",
        nargs="+",
        required=True,
        metavar="RUN_OR_PARQUET",
        help="the official judge's verdicts: score folders, or .parquet verdict archives (docs/judges.md)",
    )
    parser.add_argument(
        "--candidate",
        nargs="+",
        required=True,
        metavar="RUN",
        help="score folders of the candidate judge, one per model",
    )
    parser.add_argument(
        "--min-kappa",
        type=finite,
        default=0.80,
        help="PASS needs the pooled kappa at least this (default: %(default)s)",
    )
    parser.add_argument(
        "--min-tau", type=finite, default=0.88, help="PASS needs Kendall's tau-b at least this (default: %(default)s)"
    )
    parser.add_argument(
        "--max-difference",
        type=finite,
        default=1.0,
        help="PASS needs every model's |score difference| at most this many points, its interval covering 0 "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--labels",
        nargs="+",
        metavar="LABELS",
        help="people's labels of the candidate's answers (JSON Lines of `cogbench label`'s page, docs/labelling.md): "
        "adds the human anchor and its bars (docs/reanchoring.md; default: none)",
    )
    parser.add_argument("--key", help="the labels' blinding key (needs --labels; default: none)")
    for option, default, what in ANCHOR_OPTIONS:
        parser.add_argument(option, type=finite, default=None, help=f"{what} (needs --labels; default: {default})")
    _resampling_options(parser)
    parser.add_argument(
        "--json", dest="json_out", help="also write the certificate as JSON to this file (default: print Markdown only)"
    )
    parser.add_argument(
        "--markdown", help="also write the certificate as Markdown to this file (default: print it only)"
    )
    parser.add_argument(
        "--card", help="also write a Markdown block for a dataset or model card to this file (default: none)"
    )
    parser.set_defaults(func=run_certify)


ANCHOR_OPTIONS = (
    (
        "--human-kappa-margin",
        0.10,
        "PASS needs kappa's 95%% lower bound against the people at least their own kappa minus this",
    ),
    ("--min-ac1-margin", 0.10, "PASS needs Gwet's AC1 against the people above the better constant judge's by this"),
    ("--max-parse-failures", 2.0, "PASS needs the share of units with no verdict at most this (%%)"),
)


def _resampling_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--resamples",
        type=resample_count,
        default=DEFAULT_RESAMPLES,
        help="bootstrap resamples of kappa, AC1 and tau (default: %(default)s)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=DEFAULT_SEED,
        help="seed of the resampling, same seed, same result (default: %(default)s)",
    )


def add_validate_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "validate",
        help="each judge of the runs against people's labels: kappa, Gwet's AC1, PABAK, the constant judges",
        description="Join people's labels (docs/labelling.md) to the runs' verdicts of the same answers (each run "
        "verified first): per task and category people against people on the shared units, and each judge against "
        "the people's labels (adjudicated where two differ) with kappa, Gwet's AC1, PABAK, prevalence, the confusion "
        "matrix and the constant judges, each with an image-clustered BCa interval; Kendall's tau-b of the models' "
        "scores over three or more models (docs/reanchoring.md). Prints Markdown; exit 0.",
    )
    parser.add_argument("labels", nargs="+", metavar="LABELS", help="labels files (JSON Lines)")
    parser.add_argument("--key", required=True, help="the labels' blinding key (written beside the page's folder)")
    parser.add_argument(
        "--run",
        nargs="+",
        required=True,
        metavar="RUN",
        help="score folders (or .parquet verdict archives) of the labelled answers, one per model and judge",
    )
    _resampling_options(parser)
    parser.add_argument("--json", dest="json_out", help="also write the figures as JSON to this file (default: none)")
    parser.set_defaults(func=run_validate)


def add_archive_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "archive",
        help="write score folders' verdicts as a Parquet verdict archive (the format certify --reference reads)",
        description="One row per judged unit (docs/judges.md): what anyone with the official judge's runs can share.",
    )
    parser.add_argument("runs", nargs="+", metavar="RUN", help="score folders (codis or description, LLM-judged)")
    parser.add_argument("--out", required=True, help="the .parquet file to write")
    parser.set_defaults(func=run_archive)


def _output_files(pairs: list[tuple[str, str | None]], reads: list[tuple[str, str]]) -> None:
    from pathlib import Path

    from cogbench.dataset_builders.output import check_option_file
    from cogbench.errors import UsageError

    for option, value in pairs:
        if value and (Path(value).is_dir() or not Path(value).parent.is_dir()):
            raise UsageError(f"{option} {value}: give a file name in an existing folder (not a folder)")
        if value:
            check_option_file(Path(value), option, reads=reads)  # never into a build, a command's folder, an input


def run_certify(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from cogbench.dataset_builders.writes import write_file
    from cogbench.errors import EXIT_FAILURES, EXIT_OK, UsageError
    from cogbench.reference_eval.certifying.certificate_text import render_card_block, render_certificate
    from cogbench.reference_eval.certifying.certify import Bars, certify
    from cogbench.reference_eval.certifying.verdict_archive import read_verdicts

    anchor = [getattr(args, option[2:].replace("-", "_")) for option, _, _ in ANCHOR_OPTIONS]
    if not args.labels:
        given = [option for (option, _, _), value in zip(ANCHOR_OPTIONS, anchor) if value is not None]
        if args.key or given:
            raise UsageError(f"{(['--key'] if args.key else given)[0]} applies only with --labels")
    elif not args.key:
        raise UsageError("--labels needs --key, the labels' blinding key (docs/labelling.md)")
    reads = [("--reference", s) for s in args.reference] + [("--candidate", s) for s in args.candidate]
    reads += [("--labels", s) for s in args.labels or []] + ([("--key", args.key)] if args.key else [])
    _output_files([("--json", args.json_out), ("--markdown", args.markdown), ("--card", args.card)], reads)
    references = [judged for source in args.reference for judged in read_verdicts(source)]
    candidates = [judged for source in args.candidate for judged in read_verdicts(source)]
    defaults = [default if value is None else value for (_, default, _), value in zip(ANCHOR_OPTIONS, anchor)]
    bars = Bars(args.min_kappa, args.min_tau, args.max_difference, *defaults)
    labels = (args.labels, args.key) if args.labels else None
    result = certify(references, candidates, bars, args.resamples, args.seed, labels)
    text = render_certificate(result)
    print(text, end="")
    for path, content in (
        (args.json_out, json.dumps(result, indent=2) + "\n"),
        (args.markdown, text),
        (args.card, render_card_block(result) if args.card else ""),
    ):
        if path:
            write_file(Path(path), content)
    return EXIT_OK if result["status"] == "PASS" else EXIT_FAILURES


def run_validate(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from cogbench.dataset_builders.writes import write_file
    from cogbench.reference_eval.certifying.anchor_text import render_validation
    from cogbench.reference_eval.certifying.human_anchor import check_runs_labelled, read_human_units, validate
    from cogbench.reference_eval.certifying.verdict_archive import read_verdicts

    reads = [("LABELS", s) for s in args.labels] + [("--key", args.key)] + [("--run", s) for s in args.run]
    _output_files([("--json", args.json_out)], reads)
    judged = [answers for source in args.run for answers in read_verdicts(source)]
    units = read_human_units(args.labels, args.key, judged)
    check_runs_labelled(units, judged)
    result = validate(units, judged, args.resamples, args.seed)
    print(render_validation(result), end="")
    if args.json_out:
        write_file(Path(args.json_out), json.dumps(result, indent=2) + "\n")
    return 0


def run_archive(args: argparse.Namespace) -> int:
    from pathlib import Path

    from cogbench.errors import UsageError
    from cogbench.reference_eval.certifying.verdict_archive import read_verdicts, write_archive

    if Path(args.out).suffix != ".parquet":
        raise UsageError(f"--out {args.out}: give a .parquet file name")
    _output_files([("--out", args.out)], [("RUN", run) for run in args.runs])
    judged = [answers for run in args.runs for answers in read_verdicts(run)]
    rows = write_archive(judged, Path(args.out))
    print(f"wrote {rows} verdicts of {len(judged)} run(s) to {args.out}")
    return 0
