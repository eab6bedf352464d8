"""The api room's subcommand: ``rescore`` (an eval run's stored answers scored on a corrected build,
``api/rescoring.py``; its handler and printed lines are ``api/commands.py``'s).

The command's code is imported when it runs, so ``cogbench --help`` loads none of it.
"""

from __future__ import annotations

import argparse

from cogbench.option_types import positive_int


def register(subparsers: argparse._SubParsersAction) -> None:
    add_rescore_parser(subparsers)


def add_rescore_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "rescore",
        help="score an eval run's stored answers against a corrected build, without calling the model",
        description="Score RUN's stored answers (its predictions.jsonl) against NEW_BUILD into a new eval run "
        "folder, with RUN's judge: only prompts that changed (items whose gold changed) reach an LLM judge, the "
        "others are answered from RUN's verdict cache. Queries the new build asks that RUN did not answer (new "
        "items, a changed question, context or image) are left for `eval` on the new folder (or written as request "
        "files with --write-requests), and the score is labelled PARTIAL until then. `cogbench explain RUN OUT` gives "
        "the impact (docs/explain.md).",
    )
    parser.add_argument("run", metavar="RUN", help="an eval run folder (run.json, predictions.jsonl, score/)")
    parser.add_argument("--dataset", required=True, metavar="NEW_BUILD", help="the corrected build (required)")
    parser.add_argument("--revision", help="Hub revision of NEW_BUILD (default: main)")
    parser.add_argument("--out", required=True, help="the new eval run folder (required)")
    parser.add_argument("--judge-base-url", help="base URL of RUN's LLM judge, when it had one (default: OpenAI's)")
    parser.add_argument(
        "--judge-cache",
        help="sqlite file of cached verdicts to use and add to (default: OUT/score/judge_cache.sqlite, "
        "starting as a copy of RUN's)",
    )
    parser.add_argument(
        "--write-requests",
        metavar="DIR",
        help="write the queries OUT lacks as request files here (openai: models; default: print the "
        "`cogbench eval` command that answers them)",
    )
    parser.add_argument(
        "--shards", type=positive_int, default=1, help="how many request files with --write-requests (default: 1)"
    )
    parser.set_defaults(func=run_rescore)


def run_rescore(args: argparse.Namespace) -> int:
    from cogbench.reference_eval.api.commands import rescore_from_args

    return rescore_from_args(args)
