"""A scoring run's judge from its options: the options' rules, the judge (``openai:``, ``vllm:``, a panel),
the check that it still serves, and its request files. ``scoring/pipeline`` calls these before any judging."""

from __future__ import annotations

import datetime
import os
from pathlib import Path
from typing import Any

from cogbench.dataset_builders.load import dataset_revision
from cogbench.dataset_builders.output import check_option_file
from cogbench.errors import UsageError
from cogbench.redaction import redacted_command
from cogbench.reference_eval.backends import batch_files, model_list
from cogbench.reference_eval.backends.openai_api import API_KEY_VARIABLE, ChatSettings
from cogbench.reference_eval.judges import panel as judge_panel
from cogbench.reference_eval.judges import retirement, vllm_judge
from cogbench.reference_eval.judges.llm import JudgeSpec, LLMJudge
from cogbench.reference_eval.metrics import panel_agreement
from cogbench.reference_eval.run import provenance
from cogbench.reference_eval.run.request_files import request_folder_lock
from cogbench.reference_eval.scoring import analyses
from cogbench.reference_eval.scoring.options import ScoreOptions

# The judge options' rules, in one place: ``check_judge_options`` on the values typed (the commands call it before
# defaults fill them in), ``check_panel`` on a panel's options (every scoring, the Python API's too).


def check_judge_options(
    task: str,
    judge: str | None,
    parsing: str | None,
    cache: str | None,
    url: str | None,
    panel: tuple[str, ...] = (),
    engine_args: tuple[str, ...] = (),
    structured: bool = False,
) -> None:
    """An LLM judge's options without an LLM judge (``openai:``, ``vllm:``, or a panel with one) are refused,
    not silently ignored (docs/conventions.md); so are a ``vllm:`` judge's engine arguments without one."""
    if engine_args and not any((name or "").startswith("vllm:") for name in (judge, *panel)):
        named = " --judge ".join(panel) if panel else judge or ("rule" if task == "codis" else "none")
        raise UsageError(f"--judge-engine-arg applies only with --judge vllm:PATH_OR_ID, not to --judge {named}")
    if structured and not any((name or "").startswith("openai:") for name in (judge, *panel)):
        named = " --judge ".join(panel) if panel else judge or ("rule" if task == "codis" else "none")
        raise UsageError(
            f"--judge-structured-outputs applies only with --judge openai:MODEL (a vllm: judge is always "
            f"constrained), not to --judge {named}"
        )
    if any((name or "").startswith(("openai:", "vllm:")) for name in (judge, *panel)):
        return
    named = " --judge ".join(panel) if panel else judge or ("rule" if task == "codis" else "none")
    for option, value in (("--judge-parsing", parsing), ("--judge-cache", cache), ("--judge-base-url", url)):
        if value is not None:
            raise UsageError(f"{option} applies only with an LLM judge (--judge openai:MODEL), not to --judge {named}")


def checkbuild_panel(options: ScoreOptions) -> None:
    """A panel is two or more members (judges/panel.py's grammar) judged online: request files and the offline
    Cognition judges take one judge."""
    if options.judge not in (None, "panel") or len(options.panel) < 2:
        raise UsageError(
            "a judge panel takes two or more --judge values (rule, vllm:PATH_OR_ID, openai:MODEL[@URL][#KEY_VARIABLE])"
        )
    for given, option in ((options.write_requests, "--write-requests"), (options.read_responses, "--read-responses")):
        if given:
            raise UsageError(f"{option} takes one judge, not a panel: write and read each member's requests apart")
    if options.offline_judge:
        raise UsageError("--offline-judge compares with one LLM judge, not a panel")
    if options.judge_parsing == "constrained":
        raise UsageError(
            "--judge-parsing constrained takes one judge: a panel counts a member's unread reply as "
            "a failure (tolerant or official parsing)"
        )
    judge_panel.parse_members(options.panel, options.judge_base_url, options.task)
    panel_agreement.require_krippendorff()


def judge_spec(options: ScoreOptions) -> JudgeSpec:
    analyses.check_options(options)
    if options.panel:
        checkbuild_panel(options)
        if any(value.startswith("vllm:") for value in options.panel):  # each vllm: member gets the engine arguments
            vllm_judge.engine_arguments(options.judge_engine_args)
            vllm_judge.require_vllm()
        return JudgeSpec("panel")
    if options.judge in analyses.offline_judges.OFFLINE_JUDGES:
        return JudgeSpec(options.judge)  # an offline Cognition judge (analyses.run_offline_judge)
    spec = JudgeSpec.parse(options.judge or ("rule" if options.task == "codis" else "none"))
    if spec.kind == "openai":
        spec = openai_judge(str(options.judge), options.judge_base_url)
    if spec.kind == "rule" and options.task != "codis":
        raise UsageError("--judge rule is the offline CODIS judge; use none or openai:MODEL for this task")
    if spec.kind in ("openai", "vllm") and options.task == "vqa":
        raise UsageError("VQA accuracy needs no judge; leave --judge out")
    if spec.kind == "vllm":
        vllm_judge.split_spec(spec.model or "")
        vllm_judge.engine_arguments(options.judge_engine_args)
        vllm_judge.require_vllm()
    if options.oracle and options.task != "description":
        raise UsageError("--oracle scores the annotated descriptions; it applies to --task description")
    return spec


def openai_judge(value: str, judge_base_url: str | None) -> JudgeSpec:
    """A single ``--judge openai:MODEL[@URL][#VARIABLE]`` read as a panel's member is (judges/panel.openai_member):
    its model apart from its endpoint, whose URL is never part of a name, a request's model or a file."""
    member = judge_panel.openai_member(value, judge_base_url)
    if member is None:
        raise UsageError(f"--judge {value.split('@', 1)[0]!r}: expected rule, none, openai:MODEL or vllm:PATH_OR_ID")
    return JudgeSpec("openai", member.model, member.base_url, member.key_variable)


def llm_judge(options: ScoreOptions, spec: JudgeSpec) -> LLMJudge | None:
    if spec.kind == "vllm":
        return vllm_judge.VLLMJudge(  # type: ignore[return-value]
            spec.model, cache_path(options), options.judge_parsing, options.judge_engine_args
        )
    if spec.kind != "openai":
        return None
    settings = ChatSettings(
        model=spec.model,
        base_url=spec.base_url or options.judge_base_url,
        temperature=0.0,
        concurrency=options.judge_concurrency,
        max_attempts=options.judge_max_attempts,
        timeout_seconds=options.judge_timeout,
        backoff_seconds=options.judge_backoff,
        api_key_variable=spec.key_variable,
    )
    if options.judge_cache:  # outside any build or output folder, or another score folder's own cache
        check_option_file(Path(options.judge_cache), "--judge-cache", shared=("score", "judge_cache.sqlite"))
    responses = batch_files.read_responses(options.read_responses) if options.read_responses else None
    return LLMJudge(
        settings,
        cache_path(options),
        options.judge_parsing,
        bool(options.write_requests),
        responses,
        options.judge_structured_outputs,
    )


def build_panel(options: ScoreOptions) -> judge_panel.Panel:
    """Each member's judge (one cache file: each member's entries keyed by its own endpoint and model)."""
    judges = {
        m.name: llm_judge(options, JudgeSpec(m.kind, m.model, m.base_url, m.key_variable))
        for m in judge_panel.llm_members(options)
    }
    return judge_panel.Panel(judge_panel.parse_members(options.panel, options.judge_base_url, options.task), judges)


def check_judge_alive(options: ScoreOptions, spec: JudgeSpec) -> None:
    """Before the first judge request: refuse a judge past its shutdown, or one the endpoint does not list."""
    added = retirement.parse_shutdowns(options.judge_shutdowns)
    if options.judge_accept_retired:
        return
    timeout = min(options.judge_timeout, 30.0)
    model, key_variable = str(spec.model), spec.key_variable
    url = spec.base_url or options.judge_base_url
    listing = None if options.write_requests else model_list.list_models(url, timeout, key_variable)
    if listing is not None and key_variable is None and listing.error in ("HTTP 401", "HTTP 403"):
        raise UsageError(
            f"judge openai:{model}: {listing.url} demands a key ({listing.error}), and none is sent to it: "
            f"{API_KEY_VARIABLE} goes only to --judge-base-url's host; name the environment variable holding "
            f"this server's key after a # (--judge openai:{model}@URL#VARIABLE)"
        )
    retirement.check_judge(model, datetime.date.today(), listing, added)


def cache_path(options: ScoreOptions) -> str:
    return options.judge_cache or os.path.join(options.out, "judge_cache.sqlite")


def write_judge_requests(options: ScoreOptions, judge: LLMJudge, spec: JudgeSpec) -> dict[str, Any]:
    """The judge queries no cached verdict answers, as request files; returns ``{"request_files": manifest}``."""
    about = {
        "kind": "judge",
        "task": options.task,
        "dataset": options.dataset,
        "dataset_revision": dataset_revision(options.dataset, options.revision),
        "predictions": options.predictions or "oracle",
        "judge": {"model": spec.model, "cache_key": judge.stats.cache_key, "parsing": options.judge_parsing},
        "prompt_templates": provenance.judge_templates(options.task, spec.kind),
        "cache": cache_path(options),
        "prompts_total": len(judge.asked),  # the judge's distinct prompts, the cached ones with them
    }
    requests = list(judge.requests.values())
    folder = Path(options.write_requests)
    with request_folder_lock(folder):
        return {"request_files": batch_files.write_requests(folder, requests, len(requests), options.shards, about)}


def missing_judge_requests_command(options: ScoreOptions) -> str:
    """The ``cogbench score`` line that writes request files for exactly the judge queries still unanswered."""
    pairs = [
        ("--task", options.task),
        ("--dataset", options.dataset),
        ("--revision", options.revision),
        *([("--predictions", options.predictions)] if options.predictions else []),
        ("--judge", options.judge),
        ("--judge-base-url", options.judge_base_url),
        ("--judge-cache", cache_path(options)),
        ("--judge-parsing", options.judge_parsing if options.judge_parsing != "tolerant" else None),
        ("--no-context-predictions", options.no_context_predictions),
        ("--out", options.out),
        ("--write-requests", f"{options.out}-missing-judge-requests"),
    ]
    flags = [("--oracle", options.oracle), ("--allow-partial", options.allow_partial), ("--circular", options.circular)]
    flags.append(("--judge-accept-retired", options.judge_accept_retired))
    flags.append(("--judge-structured-outputs", options.judge_structured_outputs))
    words = ["cogbench", "score"] + [w for option, value in pairs if value is not None for w in (option, str(value))]
    words += [w for value in options.judge_shutdowns for w in ("--judge-shutdown", value)]
    return redacted_command(words + [flag for flag, on in flags if on])
