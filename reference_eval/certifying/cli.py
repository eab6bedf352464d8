"""``cogbench judges``: ``certify`` (may a candidate judge replace the retired one?) and ``archive``.

The code each command runs is imported when it runs.
"""

from __future__ import annotations

import argparse
import functools

from cogbench.option_types import DEFAULT_RESAMPLES, DEFAULT_SEED, finite, resample_count


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "judges",
        help="judges as a whole: certify a replacement judge against the official one, archive verdicts",
        description="Judges as a whole (docs/judges.md): `certify` a candidate judge against reference verdicts, "
        "`archive` a run's verdicts as Parquet.",
    )
    commands = parser.add_subparsers(
        dest="judges_command",
        required=True,
        metavar="SUBCOMMAND",
        help="certify or archive",
        parser_class=functools.partial(argparse.ArgumentParser, epilog=parser.epilog),  # the exit codes
    )
    add_certify_parser(commands)
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
        "--resamples",
        type=resample_count,
        default=DEFAULT_RESAMPLES,
        help="bootstrap resamples of kappa and tau (default: %(default)s)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=DEFAULT_SEED,
        help="seed of the resampling, same seed, same result (default: %(default)s)",
    )
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
    from cogbench.errors import EXIT_FAILURES, EXIT_OK
    from cogbench.reference_eval.certifying.certificate_text import render_card_block, render_certificate
    from cogbench.reference_eval.certifying.certify import Bars, certify
    from cogbench.reference_eval.certifying.verdict_archive import read_verdicts

    reads = [("--reference", s) for s in args.reference] + [("--candidate", s) for s in args.candidate]
    _output_files([("--json", args.json_out), ("--markdown", args.markdown), ("--card", args.card)], reads)
    references = [judged for source in args.reference for judged in read_verdicts(source)]
    candidates = [judged for source in args.candidate for judged in read_verdicts(source)]
    bars = Bars(args.min_kappa, args.min_tau, args.max_difference)
    result = certify(references, candidates, bars, args.resamples, args.seed)
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
