"""Subcommands of the reference evaluator: ``score`` (and ``eval``, running models).

Heavy libraries are imported inside the functions that run a command.
"""

from __future__ import annotations

import argparse
import math

from cogbench.reference_eval.tasks.queries import DEFAULT_MAX_NEW_TOKENS
from cogbench.schemas.features import CONFIGS


def register(subparsers: argparse._SubParsersAction) -> None:
    add_score_parser(subparsers)
    add_eval_parser(subparsers)
    add_compare_parser(subparsers)
    add_report_parser(subparsers)
    add_hub_results_parsers(subparsers)


class _DefaultsFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows each option's default; options without one say in their help what happens."""

    def _get_help_string(self, action: argparse.Action) -> str:
        if action.default in (None, False) or "default" in (action.help or ""):
            return action.help or ""
        return super()._get_help_string(action)


def _add_failure_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--allow-failures",
        action="store_true",
        help="exit 0 even when some judge or model queries still fail after their retries (the result is "
        "labelled partial); without it such a run exits 3",
    )
    parser.add_argument(
        "--judge-parsing",
        choices=("tolerant", "official"),
        default="tolerant",
        help="how judge replies become verdicts: tolerant (case, labels, markdown; never ambiguous) or official "
        "(the authors' rule); scores.json gives the other mode's numbers when they differ",
    )


def _add_task_and_dataset(parser: argparse.ArgumentParser) -> None:
    """The arguments that pick what is evaluated; `score` and `eval` share them."""
    parser.add_argument(
        "--task",
        required=True,
        choices=CONFIGS,
        help="which config to evaluate: description (Recognition/Cognition), vqa or codis",
    )
    parser.add_argument("--dataset", required=True, help="built dataset folder or Hugging Face repo id")
    parser.add_argument("--revision", help="Hub revision (tag, branch or commit) of --dataset (default: main)")


def add_score_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "score",
        help="score a model's predictions (Recognition, Cognition, VQA accuracy, CODIS Acc_p/Acc_q)",
        description=(
            "Score predictions against a built CogBench/CODIS dataset. Predictions may be in the "
            "project's format or the benchmarks' official ones. Writes scores.json, details.jsonl "
            "and report.md to --out. Exit codes: 0 done; 1 error; 2 usage error; 3 some judge "
            "queries failed (partial result written; re-run to retry them)."
        ),
        formatter_class=_DefaultsFormatter,
    )
    _add_task_and_dataset(parser)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--predictions", help="predictions file (project JSONL or an official format)")
    source.add_argument(
        "--oracle",
        action="store_true",
        help="score the annotated reference descriptions as predictions (description task; the papers' Oracle rows)",
    )
    parser.add_argument(
        "--judge",
        default=None,
        help="rule (offline CODIS judge), none (skip judge-based metrics), openai:MODEL, or an offline "
        "Cognition judge rouge|bertscore|nli (description) (default: rule for codis, none otherwise)",
    )
    parser.add_argument("--judge-base-url", help="base URL of an OpenAI-compatible API (default: OpenAI's)")
    parser.add_argument(
        "--judge-concurrency",
        type=_positive_int,
        default=64,
        help="most judge requests in flight; the client adapts below it (429, timeouts, 5xx)",
    )
    parser.add_argument(
        "--judge-max-attempts", type=_positive_int, default=6, help="tries per judge request (429/5xx/timeouts)"
    )
    parser.add_argument(
        "--judge-timeout",
        type=_positive_seconds,
        default=120.0,
        help="seconds one judge request may take in all (connecting, sending, the whole reply), per attempt",
    )
    parser.add_argument(
        "--judge-backoff",
        type=_non_negative_seconds,
        default=1.0,
        help="seconds before the first retry; doubles with each retry",
    )
    parser.add_argument(
        "--judge-cache",
        help="sqlite file of cached verdicts, outside any build or other command's folder (another score "
        "folder's judge_cache.sqlite may be shared) (default: OUT/judge_cache.sqlite)",
    )
    parser.add_argument("--spacy-model", default="en_core_web_sm", help="spaCy pipeline name or path (nouns)")
    parser.add_argument(
        "--embedder",
        default="sentence-transformers/all-mpnet-base-v2",
        help="sentence-transformers model name or path (Recognition Score)",
    )
    parser.add_argument("--embed-batch-size", type=_positive_int, default=64, help="strings per embedder batch")
    parser.add_argument(
        "--out",
        help="run folder for scores.json, details.jsonl, report.md "
        "(default: runs/score-TASK-PREDICTIONS, PREDICTIONS the file's name without suffix)",
    )
    parser.add_argument(
        "--allow-partial",
        action="store_true",
        help="score only the ids present in both predictions and dataset, and report the rest",
    )
    parser.add_argument(
        "--circular", action="store_true", help="VQA predictions of `eval --circular` (four rotations per question)"
    )
    parser.add_argument(
        "--no-image", action="store_true", help="record that the predictions were made without images (blind baseline)"
    )
    parser.add_argument(
        "--resamples",
        type=_positive_int,
        default=2000,
        help="recorded in scores.json for compare; the 95%% intervals are Korn-Graubard "
        "(metrics/small_sample.py) and need no resampling",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the bootstrap (same seed, same intervals)")
    _add_analysis_options(parser)
    _add_failure_options(parser)
    _add_request_file_options(parser, "the judge queries", "no cached verdict answers (--judge openai:MODEL)")
    parser.set_defaults(func=run_score, only_for=SCORE_ONLY_FOR)


# Options refused where they do not apply (see cogbench.cli.refuse_inapplicable).
DESCRIPTION_ONLY = ("task", ("description",))
VQA_ONLY = ("task", ("vqa",))
SCORE_ONLY_FOR = {
    "spacy_model": DESCRIPTION_ONLY,
    "embedder": DESCRIPTION_ONLY,
    "embed_batch_size": DESCRIPTION_ONLY,
    "circular": VQA_ONLY,
    **dict.fromkeys(("write_requests", "read_responses"), ("judge", ("openai",))),
}
ENGINE_OPTIONS = (
    "tensor_parallel_size",
    "data_parallel_size",
    "max_model_len",
    "limit_mm_per_prompt",
    "dtype",
    "gpu_memory_utilization",
    "enforce_eager",
)
EVAL_ONLY_FOR = {
    "mode": DESCRIPTION_ONLY,
    "spacy_model": DESCRIPTION_ONLY,
    "embedder": DESCRIPTION_ONLY,
    "circular": VQA_ONLY,
    **dict.fromkeys(("device", "num_workers"), ("model", ("hf",))),
    **dict.fromkeys(("batch_size", "trust_remote_code"), ("model", ("hf", "vllm"))),
    **dict.fromkeys(ENGINE_OPTIONS, ("model", ("vllm",))),
    **dict.fromkeys(
        ("base_url", "concurrency", "max_attempts", "request_timeout", "write_requests", "read_responses"),
        ("model", ("openai",)),
    ),
}


def _add_analysis_options(parser: argparse.ArgumentParser) -> None:
    """The papers' further measurements (reference_eval/scoring/analyses.py; README "Further measurements")."""
    group = parser.add_argument_group("further measurements")
    group.add_argument(
        "--metrics",
        action="append",
        default=[],
        choices=("captioning",),
        help="description: also METEOR, CIDEr, BLEU-1..4 against the reference (CogBench Appendix E, Table 7; needs Java); "
        "repeatable (default: none)",
    )
    group.add_argument(
        "--offline-judge",
        choices=("rouge", "bertscore", "nli"),
        help="description: an offline Cognition judge (CogBench Appendix F) beside --judge openai:MODEL, "
        "with agreement per category; --judge rouge|bertscore|nli uses one alone (default: none)",
    )
    group.add_argument(
        "--offline-threshold",
        type=_finite,
        help="score threshold of rouge (default 0.5) / bertscore (default 0.9); not given by the paper",
    )
    group.add_argument(
        "--offline-model",
        help="bertscore / nli model name or local path "
        "(defaults: roberta-large; MoritzLaurer/mDeBERTa-v3-base-xnli-multilingual-nli-2mil7)",
    )
    group.add_argument(
        "--offline-layers", type=int, help="bertscore: hidden layer to use (default: bert-score's, else the last)"
    )
    group.add_argument("--offline-device", help="torch device for bertscore / nli (default: bert-score's / CPU)")
    group.add_argument(
        "--no-context-predictions",
        help="codis: predictions of `eval --no-context`; reports output variability (CODIS Section 4.2, Table 4) "
        "(default: not reported)",
    )
    group.add_argument(
        "--word-pairs",
        help="codis answer bias (CODIS Table 6): FIRST/SECOND pairs, comma-separated "
        "(default: up/down,morning/afternoon,appropriate/not appropriate)",
    )


def run_score(args: argparse.Namespace) -> int:
    from cogbench.reference_eval.scoring.pipeline import score_from_args

    return score_from_args(args)


# --- eval: run a model, then score it ---------------------------------------


def add_eval_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "eval",
        help="run a model on a config (hf:MODEL or openai:MODEL), write predictions, then score them",
        description=(
            "Run a vision-language model on one config of a built dataset or Hub repo, write "
            "RUN_DIR/predictions.jsonl (resumable: re-run the same command after a crash) and the "
            "official-format export, then score with `cogbench score`'s code. Exit codes: 0 done; "
            "1 error; 2 usage error; 3 some model or judge queries failed (what succeeded is saved; re-run "
            "the same command to retry only those)."
        ),
        formatter_class=_DefaultsFormatter,
    )
    _add_task_and_dataset(parser)
    parser.add_argument(
        "--model",
        required=True,
        help="hf:MODEL_ID_OR_PATH (transformers, local GPU/CPU), openai:MODEL (OpenAI-compatible API, see --base-url) "
        "or vllm:MODEL_ID_OR_PATH (vLLM's offline engine in this process; needs vllm installed)",
    )
    parser.add_argument(
        "--mode",
        choices=("spontaneous", "directed"),
        default=None,
        help="description prompt: Spontaneous Description or Directed Reasoning, CogBench Section 3.2.1 "
        "(default: spontaneous)",
    )
    parser.add_argument("--out", help="run folder (default: runs/eval-TASK-MODEL); re-use it to resume")
    parser.add_argument("--limit", type=_positive_int, help="only the first N rows of the config (default: all)")
    parser.add_argument(
        "--batch-size",
        type=_positive_int,
        default=16,
        help="queries per generate() call (hf), per LLM.chat call (vllm: answers are saved after each)",
    )
    parser.add_argument(
        "--max-new-tokens",
        type=_positive_int,
        default=None,
        help="generated tokens per query at most (default: per task, "
        + ", ".join(f"{task} {tokens}" for task, tokens in DEFAULT_MAX_NEW_TOKENS.items())
        + ")",
    )
    parser.add_argument("--device", help="torch device for hf models (default: this rank's GPU, else CPU)")
    parser.add_argument(
        "--num-workers", type=_non_negative_int, default=2, help="image preprocessing processes (hf; 0: in this one)"
    )
    parser.add_argument(
        "--trust-remote-code",
        action="store_true",
        help="allow the model repo's own Python code to run (hf; only for models that need it)",
    )
    parser.add_argument(
        "--base-url", help="OpenAI-compatible API base URL, e.g. http://host:8000/v1 for vLLM (default: OpenAI's)"
    )
    parser.add_argument(
        "--concurrency",
        type=_positive_int,
        default=64,
        help="most API requests in flight (openai); the client adapts below it (429, timeouts, 5xx)",
    )
    parser.add_argument("--max-attempts", type=_positive_int, default=6, help="tries per API request (openai)")
    parser.add_argument(
        "--request-timeout",
        type=_positive_seconds,
        default=120.0,
        help="seconds one API request may take in all (connecting, sending, the whole reply), per attempt (openai)",
    )
    parser.add_argument(
        "--circular",
        action="store_true",
        help="VQA: ask each question four times with the options rotated; adds all-four-right accuracy, "
        "position bias and answer changes (resumable like plain runs)",
    )
    parser.add_argument(
        "--no-image", action="store_true", help="blind baseline: send the same prompts without the image"
    )
    parser.add_argument(
        "--no-context",
        action="store_true",
        help="codis: ask each query without its context (CODIS Section 4.2); score with --no-context-predictions",
    )
    _add_engine_options(parser)
    _add_request_file_options(parser, "the run's queries", "the run folder --out has no prediction for")
    scoring = parser.add_argument_group("scoring (passed to `cogbench score`)")
    scoring.add_argument("--no-score", action="store_true", help="only generate and export")
    scoring.add_argument("--judge", help="as in `cogbench score --judge` (default: rule for codis, none otherwise)")
    scoring.add_argument("--judge-base-url", help="as in `cogbench score --judge-base-url` (default: OpenAI's)")
    scoring.add_argument(
        "--judge-concurrency", type=_positive_int, default=64, help="as in `cogbench score --judge-concurrency`"
    )
    scoring.add_argument("--spacy-model", help="as in `cogbench score --spacy-model` (default: en_core_web_sm)")
    scoring.add_argument(
        "--embedder", help="as in `cogbench score --embedder` (default: sentence-transformers/all-mpnet-base-v2)"
    )
    _add_failure_options(scoring)
    parser.set_defaults(func=run_eval_command, only_for=EVAL_ONLY_FOR)


def _add_engine_options(parser: argparse.ArgumentParser) -> None:
    """vllm: engine options, passed to vllm.LLM as they are and recorded in run.json."""
    engine = parser.add_argument_group("vLLM engine (vllm: models)")
    engine.add_argument("--tensor-parallel-size", type=_positive_int, default=1, help="GPUs per model copy")
    engine.add_argument(
        "--data-parallel-size", type=_positive_int, default=1, help="model copies (where vLLM supports it offline)"
    )
    engine.add_argument("--max-model-len", type=_positive_int, help="prompt + answer tokens (default: the model's)")
    engine.add_argument(
        "--limit-mm-per-prompt", type=_json_counts, default={"image": 1}, help="JSON, e.g. '{\"image\":1}'"
    )
    engine.add_argument("--dtype", default="auto", help="weights and activations (auto, bfloat16, float16, float32)")
    engine.add_argument("--gpu-memory-utilization", type=float, default=0.9, help="share of GPU memory vLLM may use")
    engine.add_argument("--enforce-eager", action="store_true", help="no CUDA graphs (faster start, slower decode)")


def _json_counts(text: str) -> dict[str, int]:
    import json

    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if not isinstance(value, dict) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value.values()):
        raise argparse.ArgumentTypeError(f"{text!r} is not a JSON object of counts, e.g. '{{\"image\":1}}'")
    return value


def _add_request_file_options(parser: argparse.ArgumentParser, what: str, which: str) -> None:
    """Request files any engine runs (OpenAI Batch API JSONL; README "Request files"): eval's and score's."""
    group = parser.add_argument_group("request files (OpenAI Batch API JSONL, for batch APIs, vllm run-batch, Ray)")
    files = group.add_mutually_exclusive_group()
    files.add_argument(
        "--write-requests",
        metavar="DIR",
        help=f"write {what} that {which} as request files in DIR (with manifest.json) and stop; nothing is sent "
        "(default: send them)",
    )
    files.add_argument(
        "--read-responses",
        nargs="+",
        metavar="FILE_OR_DIR",
        help="take the answers from Batch API / vllm run-batch / Ray Data output files (folders: their *.jsonl, *.json), "
        "any order "
        "(default: from the model)",
    )
    group.add_argument("--shards", type=_positive_int, default=1, help="with --write-requests: files of equal size")


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive integer")
    return value


def _non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is not 0 or a positive integer")
    return value


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text} is not a finite number")
    return value


def _positive_seconds(text: str) -> float:
    """A timeout: 0 would fail every request at once, nan or inf would never end one."""
    value = _finite(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text} is not a positive number of seconds")
    return value


def _non_negative_seconds(text: str) -> float:
    value = _finite(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is not 0 or a positive number of seconds")
    return value


def _significance(text: str) -> float:
    """A significance level: nan compares false with every p-value, 0 or 1 and beyond mark none or all."""
    value = _finite(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a significance level between 0 and 1 (exclusive)")
    return value


def run_eval_command(args: argparse.Namespace) -> int:
    from pathlib import Path

    from cogbench.reference_eval.backends.vllm_offline import EngineOptions
    from cogbench.reference_eval.run.runner import (
        EvalSettings,
        default_run_dir,
        distributed_rank,
        parse_model_spec,
        run_eval,
    )

    parse_model_spec(args.model)  # a bad spec is a usage error before anything else
    if args.task == "description" and not args.no_score:
        # The scorer's models, loaded before the first query: not found missing after every description.
        from cogbench.reference_eval.metrics.recognition import check_models
        from cogbench.reference_eval.scoring.pipeline import ScoreOptions

        args.loaded_models = check_models(
            args.spacy_model or ScoreOptions.spacy_model, args.embedder or ScoreOptions.embedder
        )
    args.mode = args.mode or "spontaneous"
    out = Path(args.out) if args.out else default_run_dir(args.task, args.model, args.mode, args.no_context)
    if not args.out:  # probes get their own default folder beside the plain run's
        out = out.with_name(out.name + ("-circular" if args.circular else "") + ("-no-image" if args.no_image else ""))
    settings = EvalSettings(
        task=args.task,
        model=args.model,
        dataset=args.dataset,
        out=out,
        revision=args.revision,
        mode=args.mode,
        limit=args.limit,
        batch_size=args.batch_size,
        max_new_tokens=args.max_new_tokens,
        device=args.device,
        num_workers=args.num_workers,
        trust_remote_code=args.trust_remote_code,
        base_url=args.base_url,
        concurrency=args.concurrency,
        max_attempts=args.max_attempts,
        timeout_seconds=args.request_timeout,
        allow_failures=args.allow_failures,
        circular=args.circular,
        no_image=args.no_image,
        no_context=args.no_context,
        engine=EngineOptions(
            trust_remote_code=args.trust_remote_code,
            **{name: getattr(args, name) for name in ENGINE_OPTIONS},
        ),
        write_requests=args.write_requests,
        shards=args.shards,
        read_responses=tuple(args.read_responses or ()),
    )
    if args.shards != 1 and not args.write_requests:
        from cogbench.errors import UsageError

        raise UsageError("--shards applies only with --write-requests")
    if args.write_requests:
        from cogbench.reference_eval.run.request_files import write_eval_requests, written_lines

        print("\n".join(written_lines(write_eval_requests(settings), Path(args.write_requests))))
        return 0
    summary = run_eval(settings)
    if distributed_rank()[0] != 0:
        return 0
    print("\n".join(summary.lines()))
    if summary.failures:
        import sys

        from cogbench.reference_eval.run.completeness import failure_line

        print(
            f"warning: {failure_line('model queries', len(summary.failures), summary.total_queries, summary.failures)}"
            "; scoring the rest (partial)",
            file=sys.stderr,
        )
        if summary.missing_command:
            print(f"write requests for exactly the missing ones with: {summary.missing_command}", file=sys.stderr)
    if args.no_score:
        return 0
    return score_run_folder(args, summary.predictions_path, out / "score")


def score_run_folder(args: argparse.Namespace, predictions_path, out) -> int:
    """The one place where `eval` hands over to the scoring code (``scoring.run_scoring``)."""
    from pathlib import Path

    from cogbench.reference_eval.reports.run_files import interval_summary
    from cogbench.reference_eval.reports.summary import render_summary
    from cogbench.reference_eval.scoring.pipeline import ScoreOptions, run_scoring

    options = ScoreOptions(
        task=args.task,
        dataset=args.dataset,
        predictions=str(predictions_path),
        revision=args.revision,
        judge=args.judge,
        judge_base_url=args.judge_base_url,
        out=str(out),
        judge_concurrency=args.judge_concurrency,
        judge_parsing=args.judge_parsing,
        allow_failures=args.allow_failures,
        # With --limit only the first rows were run: score those, report the rest as missing
        # (so too, with --allow-failures, the queries that failed).
        allow_partial=args.limit is not None or args.allow_failures,
        circular=args.circular,
        no_image=args.no_image,
    )
    for name in ("spacy_model", "embedder"):
        if getattr(args, name) is not None:
            setattr(options, name, getattr(args, name))
    options.loaded_models = getattr(args, "loaded_models", None)  # checked before the first query: not loaded again
    scores = run_scoring(options)
    print(render_summary(scores, Path(out)))
    print(f"intervals: {interval_summary(scores)}")
    return 0


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
        type=_positive_int,
        default=2000,
        help="with --judges: bootstrap resamples of the kappa and tau intervals; otherwise recorded only (the "
        "interval of A - B is a t interval over images, not resampled)",
    )
    parser.add_argument("--permutations", type=_positive_int, default=9999, help="random swaps of the permutation test")
    parser.add_argument("--seed", type=int, default=0, help="seed of the resampling (same seed, same result)")
    parser.add_argument(
        "--alpha", type=_significance, default=0.05, help="significance level marked with * (default 0.05)"
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
    parser.set_defaults(func=run_compare)


def run_compare(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from cogbench.dataset_builders.output import check_option_file
    from cogbench.dataset_builders.writes import write_file
    from cogbench.errors import UsageError
    from cogbench.reference_eval.reports.compare import compare_runs, load_run, render_comparison

    for option, value in (("--json", args.json_out), ("--chart", args.chart)):
        if value and (Path(value).is_dir() or not Path(value).parent.is_dir()):
            raise UsageError(f"{option} {value}: give a file name in an existing folder (not a folder)")
        if value:
            check_option_file(Path(value), option)  # never onto a build's manifest.json or into a run
    if args.judges:
        from cogbench.reference_eval.reports.judge_agreement import agreement_chart, judge_agreement, render_agreement

        if len(args.runs) < 2:
            raise UsageError("compare --judges: give two or more runs (two scorings of each model's predictions)")
        result = judge_agreement([load_run(r) for r in args.runs], args.resamples, args.seed)
        print(render_agreement(result), end="")
        if args.chart:
            print(f"wrote {agreement_chart(Path(args.chart), result)}")
    else:
        if args.chart:
            raise UsageError("--chart applies to compare --judges")
        if len(args.runs) != 2:
            raise UsageError(f"compare: give two runs, RUN_A and RUN_B ({len(args.runs)} given; --judges takes more)")
        result = compare_runs(
            load_run(args.runs[0]),
            load_run(args.runs[1]),
            args.resamples,
            args.seed,
            args.permutations,
            args.allow_mismatch,
        )
        print(render_comparison(result, args.alpha), end="")
    if args.json_out:
        write_file(Path(args.json_out), json.dumps(result, indent=2) + "\n")
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
    parser.add_argument("runs", nargs="+", metavar="RUN_DIR", help="score folder or eval run folder")
    parser.add_argument("--out", required=True, help="folder for report.md, report.html, leaderboard.csv and *.png")
    parser.add_argument(
        "--allow-mismatch",
        action="store_true",
        help="report runs of one task scored on different builds (dataset revision or shards) or generated with "
        "different settings (prompt, max new tokens, temperature), each labelled NOT COMPARABLE and never ranked "
        "with the task's first run; without it such runs are refused (exit 2), as `compare` refuses them",
    )
    parser.set_defaults(func=run_report)


def _skip_unscored(folder) -> bool:
    """An `eval --no-score` run folder (`report runs/*` meets them): skipped with a note saying how to score it."""
    import json
    import shlex
    import sys

    from cogbench.dataset_builders.output import kind_of

    if kind_of(folder) != "eval" or (folder / "score" / "scores.json").is_file():
        return False
    try:
        run = json.loads((folder / "run.json").read_text(encoding="utf-8"))
        options = ["--task", run["task"], "--dataset", run["dataset"]]
    except (OSError, ValueError, KeyError, TypeError):
        return False  # not a run folder this note can help with: read_run says what is wrong
    options += ["--circular"] if run.get("circular") else []
    options += ["--no-image"] if run.get("no_image") else []
    options += ["--predictions", str(folder / "predictions.jsonl"), "--out", str(folder / "score")]
    print(
        f"skipped {folder}: an `eval --no-score` run, not scored yet; score it with "
        f"`cogbench score {shlex.join(options)}`",
        file=sys.stderr,
    )
    return True


def run_report(args: argparse.Namespace) -> int:
    from pathlib import Path

    from cogbench.errors import UsageError
    from cogbench.reference_eval.reports.runs import write_report

    runs = [path for path in args.runs if not _skip_unscored(Path(path))]
    if not runs:
        raise UsageError(f"no scored run among {', '.join(args.runs)}; score them first (commands above)")
    written = write_report(runs, Path(args.out), args.allow_mismatch)
    print(f"{written['runs']} run(s): {', '.join(written['tables'])}")
    for path in written["files"] + written["charts"]:
        print(f"wrote {path}")
    return 0


# --- publish-results and verify: numbers on the Hub, re-derived from the details -------


def add_hub_results_parsers(subparsers: argparse._SubParsersAction) -> None:
    publish = subparsers.add_parser(
        "publish-results",
        help="open a pull request adding a run's results (.eval_results/*.yaml) to a model repo, with its details",
        description=(
            "Verify each run (its numbers recomputed from details.jsonl), push its per-item details as a Parquet "
            "dataset to --details-repo, and open a pull request on --model-repo adding one .eval_results/TASK.yaml "
            "per task and metric family, pinned to the dataset commit the run read. PARTIAL and SAMPLE runs, runs "
            "on a local build naming no Hub repo, and edited runs are refused. Exit codes: 0 done; 1 error (edited "
            "run or build, Hub failure); 2 usage error or refused run."
        ),
    )
    publish.add_argument("runs", nargs="+", metavar="RUN", help="score folder or eval run folder, one per task")
    publish.add_argument("--model-repo", required=True, metavar="ORG/MODEL", help="the model repo the results are for")
    publish.add_argument(
        "--details-repo", required=True, metavar="ORG/NAME", help="dataset repo for the per-item details (created)"
    )
    publish.add_argument("--dry-run", action="store_true", help="write the files to --out and push nothing")
    publish.add_argument("--out", help="folder for .eval_results/, model-index.yaml and details/ (default: none)")
    publish.add_argument(
        "--no-pr", action="store_true", help="commit to the model repo's main branch instead of opening a pull request"
    )
    publish.set_defaults(func=run_publish_results)
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
    verify.set_defaults(func=run_verify)


def run_publish_results(args: argparse.Namespace) -> int:
    from cogbench.reference_eval.reports.hub_results import publish_results

    return publish_results(args)


def run_verify(args: argparse.Namespace) -> int:
    from cogbench.reference_eval.reports.verify import run_verify as verify_command

    return verify_command(args)
