"""``cogbench explain``: why two scorings differ, stage by stage, or a run beside a published row.

Runs are read only through ``explain_inputs`` (a run folder through ``recording.run_reader.read_run``:
schema-checked, every number recomputed from details.jsonl; a details dataset or ``.eval_results`` file
verified as ``cogbench verify`` verifies it); the code a command runs is imported when it runs.
"""

from __future__ import annotations

import argparse

from cogbench.schemas.vocabulary import CONFIGS


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "explain",
        help="why does my number differ? B - A split into pipeline stages, item by item; or a run beside the paper",
        description="Explain B - A for every metric, overall and per category, as shares of the pipeline stages "
        "items > prompt > image > generation > output > parse > judge > metric, adding up to the difference exactly, with "
        "the items behind each (docs/explain.md states the rule). With --published MODEL, one run beside the "
        "papers' row for MODEL: per category the difference, whether the published value lies in the run's "
        "interval, and the known protocol differences.",
    )
    parser.add_argument(
        "runs",
        nargs="+",
        metavar="RUN",
        help="RUN_A RUN_B: score folders (with scores.json and details.jsonl), eval run folders, details datasets "
        "(a folder written by publish-results, or ORG/NAME[@REVISION] on the Hub) or .eval_results files, each "
        "verified first; one task; with --published one RUN",
    )
    parser.add_argument(
        "--task",
        choices=CONFIGS,
        help="the task to explain where an input (a details dataset) holds several (default: the one task both hold)",
    )
    parser.add_argument(
        "--published",
        metavar="MODEL",
        help="set the run beside this model's row of the papers' tables (default: none, explain two runs)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of Markdown (default: Markdown)")
    parser.set_defaults(func=run_explain)


def run_explain(args: argparse.Namespace) -> int:
    import json

    from cogbench.errors import UsageError
    from cogbench.reference_eval.explaining.explain_api import explain, explanation
    from cogbench.reference_eval.explaining.explain_text import as_markdown
    from cogbench.reference_eval.explaining.published_gap import gap_markdown

    if args.published is not None and len(args.runs) != 1:
        raise UsageError(f"explain --published: give one run ({len(args.runs)} given)")
    if args.published is None and len(args.runs) != 2:
        raise UsageError(f"explain: give two runs, RUN_A and RUN_B ({len(args.runs)} given), or --published MODEL")
    if args.json or args.published is not None:
        found = explain(*args.runs, task=args.task, published=args.published)
        print(json.dumps(found, indent=2) if args.json else gap_markdown(found))
    else:
        print(as_markdown(explanation(*args.runs, task=args.task)))
    return 0
