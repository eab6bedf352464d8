"""``cogbench verify``: every number of a run, details dataset or ``.eval_results`` file re-derived from the details.

The code the command runs is imported when it runs.
"""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    verify = subparsers.add_parser(
        "verify",
        help="recompute every number of a run, details dataset or .eval_results file from the per-item details",
        description=(
            "Offline (no judge or model call): recompute each metric, its interval, the report's numbers and the "
            ".eval_results values from the details, and list each number that differs with the items behind it. "
            "Exit codes: 0 all equal; 1 a number differs or a file is broken; 2 usage error."
        ),
    )
    verify.add_argument(
        "target", metavar="TARGET", help="run folder, details dataset (folder or Hub ORG/NAME), or .eval_results file"
    )
    verify.add_argument(
        "--details",
        help="details dataset (folder or Hub ORG/NAME) of an .eval_results file (default: the one its source.url names)",
    )
    verify.add_argument("--revision", help="Hub revision of a details dataset (default: main, or the file's source)")
    verify.add_argument(
        "--dataset",
        metavar="BUILD",
        help="the build the run scored: ids, image ids, categories, reference answers and counts re-derived from it "
        "(default: none; they are then listed as stated)",
    )
    verify.set_defaults(func=run_verify)


def run_verify(args: argparse.Namespace) -> int:
    from cogbench.reference_eval.api.commands import verify_from_args

    return verify_from_args(args)
