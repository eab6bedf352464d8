"""Subcommands of the reference evaluator: ``score`` (and ``eval``, running models).

Heavy libraries are imported inside the functions that run a command.
"""

from __future__ import annotations

import argparse

from cogbench.dataset_builders.features import CONFIGS


def register(subparsers: argparse._SubParsersAction) -> None:
    add_score_parser(subparsers)


def add_score_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "score",
        help="score a model's predictions (Recognition, Cognition, VQA accuracy, CODIS Acc_p/Acc_q)",
        description=(
            "Score predictions against a built CogBench/CODIS dataset. Predictions may be in the "
            "project's format or the benchmarks' official ones. Writes scores.json, details.jsonl "
            "and report.md to --out."
        ),
    )
    parser.add_argument("--task", required=True, choices=CONFIGS)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--predictions", help="predictions file (project JSONL or an official format)")
    source.add_argument(
        "--oracle", action="store_true",
        help="score the annotated reference descriptions as predictions (description task; the papers' Oracle rows)",
    )
    parser.add_argument("--dataset", required=True, help="built dataset folder or Hugging Face repo id")
    parser.add_argument("--revision", help="Hub revision (tag, branch or commit) of --dataset")
    parser.add_argument(
        "--judge", default=None,
        help="rule (offline CODIS judge), none (skip judge-based metrics) or openai:MODEL "
        "(default: rule for codis, none otherwise)",
    )
    parser.add_argument("--judge-base-url", help="base URL of an OpenAI-compatible API (default: OpenAI's)")
    parser.add_argument("--judge-concurrency", type=int, default=8, help="judge requests in flight at once")
    parser.add_argument("--judge-max-attempts", type=int, default=6, help="tries per judge request (429/5xx/timeouts)")
    parser.add_argument("--judge-timeout", type=float, default=120.0, help="seconds per judge request")
    parser.add_argument("--judge-cache", help="sqlite file of cached verdicts (default: OUT/judge_cache.sqlite)")
    parser.add_argument("--spacy-model", default="en_core_web_sm", help="spaCy pipeline name or path (nouns)")
    parser.add_argument(
        "--embedder", default="sentence-transformers/all-mpnet-base-v2",
        help="sentence-transformers model name or path (Recognition Score)",
    )
    parser.add_argument("--embed-batch-size", type=int, default=64)
    parser.add_argument("--out", default="runs/score", help="run folder for scores.json, details.jsonl, report.md")
    parser.add_argument(
        "--allow-partial", action="store_true",
        help="score only the ids present in both predictions and dataset, and report the rest",
    )
    parser.set_defaults(func=run_score)


def run_score(args: argparse.Namespace) -> int:
    from cogbench.reference_eval.scoring import score_from_args

    return score_from_args(args)
