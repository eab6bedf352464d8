"""The handlers of ``cogbench score``, ``cogbench rescore`` and ``cogbench verify``: parsed options, the API's function, printed lines.

(``eval``'s handler is ``run/eval_command``; ``compare``'s is in ``reports/cli``; all call ``api.evaluation``.)
"""

from __future__ import annotations

import argparse
from pathlib import Path

from cogbench.reference_eval.answers.reasoning import parse_tags
from cogbench.reference_eval.api.evaluation import score_run, verify
from cogbench.reference_eval.api.rescoring import rescore
from cogbench.reference_eval.recording.run_files import interval_summary
from cogbench.reference_eval.reports.summary import render_summary
from cogbench.reference_eval.run.request_files import written_lines
from cogbench.reference_eval.scoring.judge_setup import check_judge_options
from cogbench.reference_eval.scoring.options import ScoreOptions, default_score_dir


def score_from_args(args: argparse.Namespace) -> int:
    check_judge_options(
        args.task,
        args.judge,
        args.judge_parsing,
        args.judge_cache,
        args.judge_base_url,
        tuple(args.panel or ()),
        tuple(args.judge_engine_args),
        args.judge_structured_outputs,
    )
    names = ScoreOptions.__dataclass_fields__
    options = ScoreOptions(**{k: v for k, v in vars(args).items() if k in names})
    options.judge_parsing = args.judge_parsing or "tolerant"
    options.read_responses = tuple(options.read_responses or ())
    options.judge_engine_args = tuple(args.judge_engine_args)
    options.think_tags = parse_tags(getattr(args, "think_tags", None))
    scores = score_run(options)
    if "request_files" in scores:
        manifest = scores["request_files"]
        cached = manifest["prompts_total"] - manifest["requests"]
        print(
            f"judge requests: {manifest['requests']} written to {options.write_requests} in "
            f"{len(manifest['shards'])} shard(s)"
            + (f" (the other {cached} prompt(s) have a cached verdict in {manifest['cache']})" if cached else "")
            + "; run them, then the same command with --read-responses OUTPUT_FILES_OR_FOLDERS instead of "
            "--write-requests"
        )
        return 0
    print(render_summary(scores, Path(options.out or default_score_dir(options.task, options.predictions))))
    print(interval_summary(scores))
    return 0


def rescore_from_args(args: argparse.Namespace) -> int:
    done = rescore(
        args.run,
        args.dataset,
        args.out,
        revision=args.revision,
        judge_base_url=args.judge_base_url,
        judge_cache=args.judge_cache,
        write_requests=args.write_requests,
        shards=args.shards,
    )
    scores = done.result.scores
    print(render_summary(scores, Path(args.out) / "score"))
    print(interval_summary(scores))
    judge = scores.get("judge") or {}
    asked = f", {judge['prompts'] - judge['cache_hits']} judge request(s)" if "cache_hits" in judge else ""
    print(f"rescored: {done.carried} stored answer(s) of {args.run}, no model called{asked}")
    if done.changed_prompt:
        print(
            f"not carried: {len(done.changed_prompt)} item(s) now asked other text: {', '.join(done.changed_prompt[:5])}"
        )
    if done.changed_image:
        print(
            f"not carried: {len(done.changed_image)} item(s) now shown another image: "
            + ", ".join(done.changed_image[:5])
        )
    if not done.images_compared:
        print(f"WARNING: {done.images}; an answer is carried where the prompt text is the same")
    if done.dropped:
        print(f"dropped: {len(done.dropped)} item(s) the new build no longer holds: {', '.join(done.dropped[:5])}")
    if done.requests is not None:
        for line in written_lines(done.requests, Path(args.write_requests)):
            print(line)
    elif done.next_command:
        print(f"PARTIAL: {len(done.missing)} query(ies) without an answer; answer them with: {done.next_command}")
    print(f"impact: cogbench explain {args.run} {args.out}")
    return 0


def verify_from_args(args: argparse.Namespace) -> int:
    result = verify(args.target, args.details, args.revision, getattr(args, "dataset", None))
    for difference in result.differences:
        print(difference.line())
    print(f"re-derived: {result.equal} numbers and fields equal to what the details, the build or another file give")
    print("stated, not re-derivable: " + "; ".join(result.stated))
    if result.differences:
        print(f"NOT verified: {len(result.differences)} number(s), field(s) or item(s) differ, {result.equal} equal")
        return 1
    print(f"verified: {result.equal} numbers and fields re-derived, {len(result.stated)} stated field(s) listed above")
    return 0
