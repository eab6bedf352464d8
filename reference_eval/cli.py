"""Subcommands of the reference evaluator: ``score`` (and ``eval``, running models).

Heavy libraries are imported inside the functions that run a command.
"""

from __future__ import annotations

import argparse

from cogbench.schemas.features import CONFIGS


def register(subparsers: argparse._SubParsersAction) -> None:
    add_score_parser(subparsers)
    add_eval_parser(subparsers)


def _add_task_and_dataset(parser: argparse.ArgumentParser) -> None:
    """The arguments that pick what is evaluated; `score` and `eval` share them."""
    parser.add_argument("--task", required=True, choices=CONFIGS)
    parser.add_argument("--dataset", required=True, help="built dataset folder or Hugging Face repo id")
    parser.add_argument("--revision", help="Hub revision (tag, branch or commit) of --dataset")


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
    _add_task_and_dataset(parser)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--predictions", help="predictions file (project JSONL or an official format)")
    source.add_argument(
        "--oracle", action="store_true",
        help="score the annotated reference descriptions as predictions (description task; the papers' Oracle rows)",
    )
    parser.add_argument(
        "--judge", default=None,
        help="rule (offline CODIS judge), none (skip judge-based metrics), openai:MODEL, or an offline "
        "Cognition judge rouge|bertscore|nli (description) (default: rule for codis, none otherwise)",
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
    _add_analysis_options(parser)
    parser.set_defaults(func=run_score)


def _add_analysis_options(parser: argparse.ArgumentParser) -> None:
    """The papers' further measurements (reference_eval/analyses.py; README "Further measurements")."""
    group = parser.add_argument_group("further measurements")
    group.add_argument(
        "--metrics", action="append", default=[], choices=("captioning",),
        help="description: also METEOR, CIDEr, BLEU-1..4 against the reference (CogBench Appendix E, Table 7; needs Java)",
    )
    group.add_argument(
        "--offline-judge", choices=("rouge", "bertscore", "nli"),
        help="description: an offline Cognition judge (CogBench Appendix F) beside --judge openai:MODEL, "
        "with agreement per category; --judge rouge|bertscore|nli uses one alone",
    )
    group.add_argument("--offline-threshold", type=float,
                       help="score threshold of rouge (default 0.5) / bertscore (default 0.9); not given by the paper")
    group.add_argument("--offline-model", help="bertscore / nli model name or local path "
                       "(defaults: roberta-large; MoritzLaurer/mDeBERTa-v3-base-xnli-multilingual-nli-2mil7)")
    group.add_argument("--offline-layers", type=int, help="bertscore: hidden layer to use (default: bert-score's, else the last)")
    group.add_argument("--offline-device", help="torch device for bertscore / nli (default: bert-score's / CPU)")
    group.add_argument(
        "--no-context-predictions",
        help="codis: predictions of `eval --no-context`; reports output variability (CODIS Section 4.2, Table 4)",
    )
    group.add_argument(
        "--word-pairs",
        help="codis answer bias (CODIS Table 6): FIRST/SECOND pairs, comma-separated "
        "(default: up/down,morning/afternoon,appropriate/not appropriate)",
    )


def run_score(args: argparse.Namespace) -> int:
    from cogbench.reference_eval.scoring import score_from_args

    return score_from_args(args)


# --- eval: run a model, then score it ---------------------------------------


def add_eval_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "eval",
        help="run a model on a config (hf:MODEL or openai:MODEL), write predictions, then score them",
        description=(
            "Run a vision-language model on one config of a built dataset or Hub repo, write "
            "RUN_DIR/predictions.jsonl (resumable: re-run the same command after a crash) and the "
            "official-format export, then score with `cogbench score`'s code."
        ),
    )
    _add_task_and_dataset(parser)
    parser.add_argument(
        "--model", required=True,
        help="hf:MODEL_ID_OR_PATH (transformers, local GPU/CPU) or openai:MODEL (OpenAI-compatible API, see --base-url)",
    )
    parser.add_argument(
        "--mode", choices=("spontaneous", "directed"), default="spontaneous",
        help="description prompt: Spontaneous Description or Directed Reasoning (CogBench Section 3.2.1)",
    )
    parser.add_argument("--out", help="run folder (default: runs/eval-TASK-MODEL); re-use it to resume")
    parser.add_argument("--limit", type=_positive_int, help="only the first N rows of the config")
    parser.add_argument("--batch-size", type=_positive_int, default=16, help="queries per generate() call (hf)")
    parser.add_argument("--max-new-tokens", type=_positive_int, default=512)
    parser.add_argument("--device", help="torch device for hf models (default: this rank's GPU, else CPU)")
    parser.add_argument("--num-workers", type=int, default=2, help="image preprocessing processes (hf)")
    parser.add_argument(
        "--trust-remote-code", action="store_true",
        help="allow the model repo's own Python code to run (hf; only for models that need it)",
    )
    parser.add_argument("--base-url", help="OpenAI-compatible API base URL, e.g. http://host:8000/v1 for vLLM")
    parser.add_argument("--concurrency", type=_positive_int, default=8, help="API requests in flight (openai)")
    parser.add_argument("--max-attempts", type=_positive_int, default=6, help="tries per API request (openai)")
    parser.add_argument("--request-timeout", type=float, default=120.0, help="seconds per API request (openai)")
    parser.add_argument(
        "--no-context", action="store_true",
        help="codis: ask each query without its context (CODIS Section 4.2); score with --no-context-predictions",
    )
    scoring = parser.add_argument_group("scoring (passed to `cogbench score`)")
    scoring.add_argument("--no-score", action="store_true", help="only generate and export")
    scoring.add_argument("--judge", help="as in `cogbench score --judge`")
    scoring.add_argument("--judge-base-url", help="as in `cogbench score --judge-base-url`")
    scoring.add_argument("--spacy-model", help="as in `cogbench score --spacy-model`")
    scoring.add_argument("--embedder", help="as in `cogbench score --embedder`")
    parser.set_defaults(func=run_eval_command)


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive integer")
    return value


def run_eval_command(args: argparse.Namespace) -> int:
    from pathlib import Path

    from cogbench.reference_eval.runner import EvalSettings, default_run_dir, distributed_rank, run_eval

    out = Path(args.out) if args.out else default_run_dir(args.task, args.model, args.mode, args.no_context)
    settings = EvalSettings(
        task=args.task, model=args.model, dataset=args.dataset, out=out, revision=args.revision,
        mode=args.mode, limit=args.limit, batch_size=args.batch_size, max_new_tokens=args.max_new_tokens,
        device=args.device, num_workers=args.num_workers, trust_remote_code=args.trust_remote_code,
        base_url=args.base_url, concurrency=args.concurrency, max_attempts=args.max_attempts,
        timeout_seconds=args.request_timeout, no_context=args.no_context,
    )
    summary = run_eval(settings)
    if distributed_rank()[0] != 0:
        return 0
    print("\n".join(summary.lines()))
    if args.no_score:
        return 0
    return score_run_folder(args, summary.predictions_path, out / "score")


def score_run_folder(args: argparse.Namespace, predictions_path, out) -> int:
    """The one place where `eval` hands over to the scoring code (``scoring.run_scoring``)."""
    import json

    from cogbench.reference_eval.scoring import ScoreOptions, run_scoring

    options = ScoreOptions(
        task=args.task, dataset=args.dataset, predictions=str(predictions_path), revision=args.revision,
        judge=args.judge, judge_base_url=args.judge_base_url, out=str(out),
        # With --limit only the first rows were run: score those, report the rest as missing.
        allow_partial=args.limit is not None,
    )
    for name in ("spacy_model", "embedder"):
        if getattr(args, name) is not None:
            setattr(options, name, getattr(args, name))
    scores = run_scoring(options)
    overall = {name: value["overall"] for name, value in scores["metrics"].items()}
    print(f"scores: {json.dumps(overall)}")
    print(f"score report: {out / 'report.md'}")
    return 0
