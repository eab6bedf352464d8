"""``cogbench eval``: the parsed options become ``EvalSettings``, the run, then its score.

The command's parser is in ``reference_eval/cli.py``; the run and its score go through the
Python API's ``run_evaluation`` (``api/evaluation.py``: ``runner``, then ``scoring.pipeline``,
the same code as ``cogbench score`` and ``cogbench.evaluate``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from cogbench.errors import UsageError
from cogbench.reference_eval.answers.reasoning import parse_tags
from cogbench.reference_eval.api.evaluation import run_evaluation
from cogbench.reference_eval.backends.vllm_offline import EngineOptions
from cogbench.reference_eval.metrics.recognition import check_models
from cogbench.reference_eval.recording.run_files import interval_summary
from cogbench.reference_eval.reports.summary import render_summary
from cogbench.reference_eval.run.completeness import failure_line
from cogbench.reference_eval.run.request_files import write_eval_requests, written_lines
from cogbench.reference_eval.run.runner import EvalSettings, RunSummary, default_run_dir, parse_model_spec
from cogbench.reference_eval.scoring.judge_setup import check_judge_alive, check_judge_options, openai_judge
from cogbench.reference_eval.scoring.options import ScoreOptions


def eval_from_args(args: argparse.Namespace, engine_options: tuple[str, ...]) -> int:
    """``cogbench eval``: the parsed options as ``EvalSettings``, the run, then its score."""
    parse_model_spec(args.model)  # a bad spec is a usage error before anything else
    check_judge_options(
        args.task,
        args.judge,
        args.judge_parsing,
        None,
        args.judge_base_url,
        engine_args=tuple(args.judge_engine_args),
        structured=args.judge_structured_outputs,
    )
    if not args.no_score and not args.write_requests and (args.judge or "").startswith("openai:"):
        # A retired or unlisted judge is refused before the model runs, not after (judges/retirement.py).
        judge_options = ScoreOptions(args.task, args.dataset, judge_base_url=args.judge_base_url)
        judge_options.judge_accept_retired = args.judge_accept_retired
        judge_options.judge_shutdowns = tuple(args.judge_shutdowns)
        check_judge_alive(judge_options, openai_judge(args.judge, args.judge_base_url))
    if args.task == "description" and not args.no_score:
        # The scorer's models, loaded before the first query: not found missing after every description.
        args.loaded_models = check_models(
            args.spacy_model or ScoreOptions.spacy_model, args.embedder or ScoreOptions.embedder
        )
    args.mode = args.mode or "spontaneous"
    out = Path(args.out) if args.out else default_folder(args)
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
        image_variants=args.image_variants,
        engine=EngineOptions(
            trust_remote_code=args.trust_remote_code,
            **{name: getattr(args, name) for name in engine_options},
        ),
        write_requests=args.write_requests,
        shards=args.shards,
        read_responses=tuple(args.read_responses or ()),
        thinking=args.thinking,
        structured_regex=args.structured_regex,
    )
    if args.shards != 1 and not args.write_requests:
        raise UsageError("--shards applies only with --write-requests")
    if args.write_requests:
        print("\n".join(written_lines(write_eval_requests(settings), Path(args.write_requests))))
        return 0
    scoring = None if args.no_score else score_options(args, out / "score")
    evaluation = run_evaluation(settings, scoring, on_generated=_print_generated)
    if evaluation.scores is None:  # --no-score, or a rank other than 0
        return 0
    print(render_summary(evaluation.scores, evaluation.score_folder))
    print(f"intervals: {interval_summary(evaluation.scores)}")
    return 0


def default_folder(args: argparse.Namespace) -> Path:
    """The run folder when no --out is given; probes get their own beside the plain run's.

    Before the default named the thinking setting, a --thinking on or off run went to the folder an auto run now
    takes: found there (its run.json says the same thinking setting), it goes on there, as the same command did.
    """
    probes = ("-circular" if args.circular else "") + ("-no-image" if args.no_image else "")
    probes += "".join(f"-{name}" for name in args.image_variants)
    out = default_run_dir(args.task, args.model, args.mode, args.no_context, args.thinking)
    out = out.with_name(out.name + probes)
    before = default_run_dir(args.task, args.model, args.mode, args.no_context)
    before = before.with_name(before.name + probes)
    if args.thinking != "auto" and not out.exists() and _thinking_of(before) == args.thinking:
        print(
            f"note: resuming {before}, a --thinking {args.thinking} run in the folder the default named before it "
            f"named the thinking setting (new runs: {out})",
            file=sys.stderr,
        )
        return before
    return out


def _thinking_of(folder: Path) -> str | None:
    """The thinking setting of the eval run in ``folder``, or None (no run there, or not readable)."""
    try:
        generation = json.loads((folder / "run.json").read_text(encoding="utf-8")).get("generation")
    except (OSError, ValueError, RecursionError, AttributeError):
        return None
    return generation.get("thinking", "auto") if isinstance(generation, dict) else None


def _print_generated(summary: RunSummary) -> None:
    print("\n".join(summary.lines()))
    if summary.failures:
        print(
            f"warning: {failure_line('model queries', len(summary.failures), summary.total_queries, summary.failures)}"
            "; scoring the rest (partial)",
            file=sys.stderr,
        )
        if summary.missing_command:
            print(f"write requests for exactly the missing ones with: {summary.missing_command}", file=sys.stderr)


def score_options(args: argparse.Namespace, out: Path) -> ScoreOptions:
    """The one place where `eval` hands over to the scoring code (``scoring.run_scoring``, through the API)."""
    options = ScoreOptions(
        task=args.task,
        dataset=args.dataset,
        revision=args.revision,
        judge=args.judge,
        judge_base_url=args.judge_base_url,
        out=str(out),
        judge_concurrency=args.judge_concurrency,
        judge_parsing=args.judge_parsing or "tolerant",
        judge_accept_retired=args.judge_accept_retired,
        judge_shutdowns=tuple(args.judge_shutdowns),
        judge_engine_args=tuple(args.judge_engine_args),
        judge_structured_outputs=args.judge_structured_outputs,
        allow_failures=args.allow_failures,
        # With --limit only the first rows were run: score those, report the rest as missing
        # (so too, with --allow-failures, the queries that failed).
        allow_partial=args.limit is not None or args.allow_failures,
        circular=args.circular,
        no_image=args.no_image,
        image_variants=args.image_variants,
        think_tags=parse_tags(getattr(args, "think_tags", None)),
        reasoning_in_details=getattr(args, "reasoning_in_details", "full"),
    )
    for name in ("spacy_model", "embedder"):
        if getattr(args, name) is not None:
            setattr(options, name, getattr(args, name))
    options.loaded_models = getattr(args, "loaded_models", None)  # checked before the first query: not loaded again
    return options
