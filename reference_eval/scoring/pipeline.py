"""``cogbench score``: predictions + dataset -> scores.json, details.jsonl, report.md.

This module wires a run together: options, the dataset's rows and the
predictions (checked against its ids), the judge, the task's scorer
(``task_scorers``), the papers' further measurements (``analyses``), intervals
and provenance, then the run folder (``reports/run``). The metrics live in
``metrics/`` (one module per paper metric), the judges in ``judges/`` and the
file formats in ``formats/``.
"""

from __future__ import annotations

import datetime
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cogbench import __version__
from cogbench.dataset_builders.load import dataset_revision
from cogbench.dataset_builders.output import check_option_file, claim_output
from cogbench.errors import CogbenchError, IncompleteRunError, UsageError
from cogbench.redaction import redacted_command
from cogbench.reference_eval.answers.reasoning import THINK_TAGS, Reply, final_answer
from cogbench.reference_eval.answers.reply_details import answers_block, attach_replies
from cogbench.reference_eval.backends import batch_files, model_list
from cogbench.reference_eval.backends.openai_api import API_KEY_VARIABLE, ChatSettings
from cogbench.reference_eval.formats.harness import harness_provenance
from cogbench.reference_eval.formats.official import OfficialIds, read_any_predictions
from cogbench.reference_eval.harnesses.lmms_eval_tasks import task_docs
from cogbench.reference_eval.judges import panel as judge_panel
from cogbench.reference_eval.judges import retirement, vllm_judge
from cogbench.reference_eval.judges.llm import JudgeSpec, LLMJudge
from cogbench.reference_eval.metrics import intervals as metric_intervals
from cogbench.reference_eval.metrics import panel_agreement, recognition
from cogbench.reference_eval.reports.run_files import RUN_FILES, write_run
from cogbench.reference_eval.run import provenance
from cogbench.reference_eval.run.completeness import failure_line, is_complete, mark_scale
from cogbench.reference_eval.run.request_files import check_request_folder, request_folder_lock
from cogbench.reference_eval.scoring import analyses
from cogbench.reference_eval.tasks.queries import ROTATIONS
from cogbench.reference_eval.tasks.scorers import SCORERS, add_rendered_prompts, score_vqa_circular
from cogbench.schemas.features import CODIS_CATEGORIES, COGBENCH_CATEGORIES, ID_COLUMN
from cogbench.validation.integrity import verified_rows

SCORES_FORMAT_VERSION = 1


@dataclass
class ScoreOptions:
    """Everything a scoring run needs besides the data; built from the command line or by tests."""

    task: str
    dataset: str
    predictions: str | None = None  # None with oracle=True
    oracle: bool = False
    revision: str | None = None
    judge: str | None = None  # rule | none | openai:MODEL; None = the task's default
    panel: tuple[str, ...] = ()  # two or more --judge values: a judge panel (judges/panel.py); judge is then None
    judge_base_url: str | None = None
    judge_concurrency: int = 64  # ceiling of the adaptive concurrency
    judge_parsing: str = "tolerant"  # tolerant | official (judges/verdicts.py)
    judge_max_attempts: int = 6
    judge_timeout: float = 120.0
    judge_backoff: float = 1.0
    judge_cache: str | None = None
    judge_accept_retired: bool = False  # skip judges/retirement's check (a shut-down or unlisted judge)
    judge_shutdowns: tuple[str, ...] = ()  # MODEL=YYYY-MM-DD, added to retirement.KNOWN_SHUTDOWNS
    judge_engine_args: tuple[str, ...] = ()  # KEY=VALUE for a vllm: judge's vllm.LLM (judges/vllm_judge.py)
    judge_structured_outputs: bool = False  # openai: judges send each prompt's constraint (judges/constraints.py)
    spacy_model: str = "en_core_web_sm"
    embedder: str = "sentence-transformers/all-mpnet-base-v2"
    embed_batch_size: int = 64
    # The Recognition Score's models already loaded by this command (`eval` checks them first): used
    # when loaded from spacy_model and embedder, so each is loaded once per command.
    loaded_models: recognition.RecognitionModels | None = None
    out: str | None = None  # None: runs/score-TASK-PREDICTIONS (default_score_dir)
    allow_partial: bool = False
    allow_failures: bool = False
    resamples: int = metric_intervals.DEFAULT_RESAMPLES  # bootstrap resamples of the confidence intervals
    seed: int = metric_intervals.DEFAULT_SEED
    circular: bool = False  # vqa predictions of `eval --circular`: four rotations per question
    no_image: bool = False  # predictions of `eval --no-image` (recorded, scored as usual)
    # The papers' further measurements (analyses.py).
    metrics: tuple[str, ...] = ()  # "captioning" (description)
    offline_judge: str | None = None  # rouge | bertscore | nli beside an LLM judge (description)
    offline_threshold: float | None = None
    offline_model: str | None = None
    offline_layers: int | None = None
    offline_device: str | None = None
    no_context_predictions: str | None = None  # codis: output variability
    word_pairs: str | None = None  # codis: answer bias, "up/down,morning/afternoon"
    # Judge request files (backends/batch_files.py): write the uncached judge queries, or read the replies.
    write_requests: str | None = None
    shards: int = 1
    read_responses: tuple[str, ...] = ()
    # Thinking models (answers/reasoning.py): the inline think-block tags, and how details keep reasoning.
    think_tags: tuple[tuple[str, str], ...] | None = None  # None: answers.reasoning.THINK_TAGS
    reasoning_in_details: str = "full"  # full | hash (sha256 and length only)


def default_score_dir(task: str, predictions: str | None) -> str:
    """runs/score-TASK-NAME: a second task or predictions file never lands in the first one's folder."""
    name = Path(predictions).stem if predictions else "oracle"
    return str(Path("runs") / f"score-{task}-{re.sub(r'[^A-Za-z0-9_.-]+', '_', name)}")


# The judge options' rules, in one place: ``check_judge_options`` on the values typed (the commands call it before
# defaults fill them in), ``_check_panel`` on a panel's options (every scoring, the Python API's too).


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


def _check_panel(options: ScoreOptions) -> None:
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


def _judge_spec(options: ScoreOptions) -> JudgeSpec:
    analyses.check_options(options)
    if options.panel:
        _check_panel(options)
        if any(value.startswith("vllm:") for value in options.panel):  # each vllm: member gets the engine arguments
            vllm_judge.engine_arguments(options.judge_engine_args)
            vllm_judge.require_vllm()
        return JudgeSpec("panel")
    if options.judge in analyses.offline_judges.OFFLINE_JUDGES:
        return JudgeSpec(options.judge)  # an offline Cognition judge (analyses.run_offline_judge)
    spec = JudgeSpec.parse(options.judge or ("rule" if options.task == "codis" else "none"))
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


def _dataset_rows(options: ScoreOptions) -> list[dict[str, Any]]:
    """The config's rows without images, class labels as their names."""
    return verified_rows(options.dataset, options.task, options.revision)


def _outputs_by_id(options: ScoreOptions, rows: list[dict[str, Any]]) -> tuple[dict[Any, str], dict[str, Any]]:
    """Predictions keyed like the task needs them, checked against the dataset's ids."""
    id_column = ID_COLUMN[options.task]
    if options.oracle:
        return {row[id_column]: row["description"] for row in rows}, {"predictions": "oracle"}
    ids = OfficialIds.from_rows(options.task, rows, task_docs(options.task, rows))
    predictions = read_any_predictions(options.predictions, options.task, ids)
    refuse_unflagged_circular(options, predictions)
    harness = harness_provenance(Path(options.predictions))
    queries = (1, 2) if options.task == "codis" else ROTATIONS if options.circular else None
    keyed = {((p.item_id, p.query) if queries else p.item_id): p for p in predictions}
    if queries:
        expected = {(row[id_column], query) for row in rows for query in queries}
    else:
        expected = {row[id_column] for row in rows}
    given = {key: p.output for key, p in keyed.items()}
    tags = options.think_tags or THINK_TAGS
    replies = {key: _reply(keyed[key], tags) for key in given if key in expected}
    missing = sorted(expected - set(given), key=str)
    extra = sorted(set(given) - expected, key=str)
    if (missing or extra) and not options.allow_partial:
        parts = []
        if missing:
            parts.append(f"{len(missing)} dataset item(s) have no prediction: {_show(missing)}")
        if extra:
            parts.append(f"{len(extra)} prediction(s) match no dataset item: {_show(extra)}")
        raise CogbenchError(f"{options.predictions}: " + "; ".join(parts) + " (use --allow-partial to score the rest)")
    models = sorted({p.model for p in predictions if p.model})
    info = {
        "prompt_templates": provenance.model_templates((p.prompt_id, p.prompt_sha256) for p in predictions),
        "prompt_ids": sorted({p.prompt_id for p in predictions if p.prompt_id}),
        "predictions": str(options.predictions),
        "model": ", ".join(models) or harness.get("model_name") or Path(options.predictions).stem,
        "harness": harness,
        "missing_predictions": [_id_text(key) for key in missing],
        "unknown_predictions": [_id_text(key) for key in extra],
        # Per query, the sha256 of the prompt text the model got; None where the file does not say
        # (the authors' and VLMEvalKit's files keep no prompt).
        "rendered_prompts": {key: keyed[key].rendered_prompt_sha256 or None for key in given if key in expected},
        "replies": replies,
    }
    # What is scored is each reply's final answer (answers/reasoning.py), never its reasoning.
    return {key: reply.answer for key, (_, reply, _) in replies.items()}, info


def _reply(prediction, tags) -> tuple[str, Reply, dict[str, Any]]:
    """(output as written, its split, the split's inputs as recorded) of one prediction."""
    inputs = {
        "reasoning": prediction.reasoning,
        "finish_reason": prediction.finish_reason,
        "thinking": (prediction.generation or {}).get("thinking"),
        "reasoning_tokens": (prediction.tokens or {}).get("reasoning"),
    }
    return prediction.output, final_answer(prediction, tags), inputs


def refuse_unflagged_circular(options: ScoreOptions, predictions) -> None:
    """Rotated predictions (``eval --circular``: query 0-3) read as plain ones would keep one rotation at random."""
    if options.task != "vqa" or options.circular:
        return
    rotated = [p for p in predictions if p.query is not None]
    if rotated:
        raise UsageError(
            f"{options.predictions}: {len(rotated)} prediction(s) carry a rotation (query {rotated[0].query} of "
            f"item {rotated[0].item_id!r}): these are circular predictions (four rotations per question); "
            "score them with --circular"
        )


def _id_text(key: Any) -> str:
    return f"{key[0]}#{key[1]}" if isinstance(key, tuple) else str(key)


def _show(keys: list[Any], limit: int = 10) -> str:
    shown = ", ".join(_id_text(key) for key in keys[:limit])
    return shown + (f", ... ({len(keys) - limit} more)" if len(keys) > limit else "")


def _llm_judge(
    options: ScoreOptions, spec: JudgeSpec, base_url: str | None = None, key_variable: str | None = API_KEY_VARIABLE
) -> LLMJudge | None:
    if spec.kind == "vllm":
        return vllm_judge.VLLMJudge(  # type: ignore[return-value]
            spec.model, _cache_path(options), options.judge_parsing, options.judge_engine_args
        )
    if spec.kind != "openai":
        return None
    settings = ChatSettings(
        model=spec.model,
        base_url=base_url or options.judge_base_url,
        temperature=0.0,
        concurrency=options.judge_concurrency,
        max_attempts=options.judge_max_attempts,
        timeout_seconds=options.judge_timeout,
        backoff_seconds=options.judge_backoff,
        api_key_variable=key_variable,
    )
    if options.judge_cache:  # outside any build or output folder, or another score folder's own cache
        check_option_file(Path(options.judge_cache), "--judge-cache", shared=("score", "judge_cache.sqlite"))
    responses = batch_files.read_responses(options.read_responses) if options.read_responses else None
    return LLMJudge(
        settings,
        _cache_path(options),
        options.judge_parsing,
        bool(options.write_requests),
        responses,
        options.judge_structured_outputs,
    )


def _panel(options: ScoreOptions) -> judge_panel.Panel:
    """Each member's judge (one cache file: each member's entries keyed by its own endpoint and model)."""
    judges = {
        m.name: _llm_judge(options, JudgeSpec(m.kind, m.model), m.base_url, m.key_variable)
        for m in judge_panel.llm_members(options)
    }
    return judge_panel.Panel(judge_panel.parse_members(options.panel, options.judge_base_url, options.task), judges)


def check_judge_alive(
    options: ScoreOptions, model: str, base_url: str | None = None, key_variable: str | None = API_KEY_VARIABLE
) -> None:
    """Before the first judge request: refuse a judge past its shutdown, or one the endpoint does not list."""
    added = retirement.parse_shutdowns(options.judge_shutdowns)
    if options.judge_accept_retired:
        return
    timeout = min(options.judge_timeout, 30.0)
    url = base_url or options.judge_base_url
    listing = None if options.write_requests else model_list.list_models(url, timeout, key_variable)
    if listing is not None and key_variable is None and listing.error in ("HTTP 401", "HTTP 403"):
        raise UsageError(
            f"judge openai:{model}: {listing.url} demands a key ({listing.error}), and none is sent to it: "
            f"{API_KEY_VARIABLE} goes only to --judge-base-url's host; name the environment variable holding "
            f"this server's key after a # (--judge openai:{model}@URL#VARIABLE)"
        )
    retirement.check_judge(model, datetime.date.today(), listing, added)


def _cache_path(options: ScoreOptions) -> str:
    return options.judge_cache or os.path.join(options.out, "judge_cache.sqlite")


def _write_judge_requests(options: ScoreOptions, judge: LLMJudge, spec: JudgeSpec) -> dict[str, Any]:
    """The judge queries no cached verdict answers, as request files; returns ``{"request_files": manifest}``."""
    about = {
        "kind": "judge",
        "task": options.task,
        "dataset": options.dataset,
        "dataset_revision": dataset_revision(options.dataset, options.revision),
        "predictions": options.predictions or "oracle",
        "judge": {"model": spec.model, "cache_key": judge.stats.cache_key, "parsing": options.judge_parsing},
        "prompt_templates": provenance.judge_templates(options.task, spec.kind),
        "cache": _cache_path(options),
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
        ("--judge-cache", _cache_path(options)),
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


def run_scoring(options: ScoreOptions) -> dict[str, Any]:
    """Score one predictions file (or the oracle) and write the run folder; returns scores.json's content."""
    if not options.oracle and not options.predictions:
        raise UsageError("give --predictions FILE or --oracle")
    spec = _judge_spec(options)
    if options.circular and options.task != "vqa":
        raise UsageError("--circular applies to --task vqa")
    options.out = options.out or default_score_dir(options.task, options.predictions)
    if options.write_requests:
        check_request_folder(Path(options.write_requests), Path(options.out))
    claim_output(Path(options.out), "score", RUN_FILES, create=False, task=options.task)  # refused before any work
    if options.judge_cache:  # a cache that may not be written is refused before any request (and again on use)
        check_option_file(Path(options.judge_cache), "--judge-cache", shared=("score", "judge_cache.sqlite"))
    if spec.kind == "openai" and not options.read_responses:  # replies read from files send nothing
        check_judge_alive(options, spec.model)
    for member in judge_panel.llm_members(options):
        if member.kind == "openai":  # a vllm: member is weights on disk: it never retires
            check_judge_alive(options, member.model, member.base_url, member.key_variable)
    rows = _dataset_rows(options)
    outputs, source = _outputs_by_id(options, rows)
    # Before any item is scored: a judge model whose weights did not load stops the run here (model_checks).
    offline_model = analyses.load_offline_model(options)
    judge = _panel(options) if spec.kind == "panel" else _llm_judge(options, spec)
    try:
        claim_output(Path(options.out), "score", RUN_FILES, task=options.task)
        result = (score_vqa_circular if options.circular else SCORERS[options.task])(rows, outputs, options, judge)
        add_rendered_prompts(options.task, result.details, source.get("rendered_prompts", {}))
        attach_replies(options.task, result.details, source.get("replies", {}), options.reasoning_in_details)
        extra = analyses.run_analyses(
            options,
            rows,
            outputs,
            source.get("prompt_ids", []),
            None if spec.kind == "panel" else judge,  # the papers' further measurements take one judge
            result.details,
            result.metrics,
            result.counts,
            offline_model,
        )
        if isinstance(judge, LLMJudge) and judge.requests is not None:
            return _write_judge_requests(options, judge, spec)
        if isinstance(judge, LLMJudge) and judge.responses is not None:
            batch_files.refuse_foreign(judge.responses, judge.asked)
        judge_info: dict[str, Any] = {"kind": spec.kind}
        if isinstance(judge, judge_panel.Panel):
            judge_info = judge.summary(options.judge_parsing)
        elif judge is not None:
            judge_info.update(judge.summary())
            judge_info["parsing"] = options.judge_parsing
            if options.judge_structured_outputs:
                judge_info["structured_outputs"] = "official labels"
            if result.parsing_comparison is not None:
                judge_info["parsing_comparison"] = result.parsing_comparison
    finally:
        if judge is not None:
            judge.close()
    engines = {n: j.identity for n, j in getattr(judge, "judges", {}).items() if isinstance(j, vllm_judge.VLLMJudge)}
    categories = CODIS_CATEGORIES if options.task == "codis" else COGBENCH_CATEGORIES
    intervals, interval_settings = metric_intervals.score_intervals(
        options.task, result.details, categories, options.resamples, options.seed
    )
    for name, interval in intervals.items():
        result.metrics[name]["interval"] = interval
    for metric in result.metrics.values():
        mark_scale(metric)
    scores = {
        "format_version": SCORES_FORMAT_VERSION,
        "task": options.task,
        "dataset": options.dataset,
        "dataset_revision": dataset_revision(options.dataset, options.revision),
        "model": "Oracle" if options.oracle else source["model"],
        "predictions": source["predictions"],
        "judge": judge_info,
        "metrics": result.metrics,
        "judge_agreement": result.judge_agreement,
        "intervals": interval_settings,
        **({"circular": True} if options.circular else {}),
        **({"no_image": True} if options.no_image else {}),
        "counts": {
            **result.counts,
            "dataset_items": len(rows),
            "dataset_images": len({row["image_id"] for row in rows}),
            "missing_predictions": source.get("missing_predictions", []),
            "unknown_predictions": source.get("unknown_predictions", []),
        },
    }
    answers = answers_block(options.task, result.details, options.think_tags or THINK_TAGS)
    if answers is not None:
        scores["answers"] = answers
    scores["complete"] = is_complete(scores)
    scores["provenance"] = {
        "cogbench_version": __version__,
        "dataset": provenance.dataset_provenance(options.dataset, options.task, options.revision),
        "prompt_templates": source.get("prompt_templates", []) + provenance.judge_templates(options.task, spec.kind),
        "judge": provenance.panel_provenance(judge.members, options.judge_parsing, judge_panel.PANEL_RULE, engines)
        if isinstance(judge, judge_panel.Panel)
        else provenance.judge_provenance(spec.kind, spec.model, options.judge_base_url, options.judge_parsing)
        | (judge.identity if isinstance(judge, vllm_judge.VLLMJudge) else {})
        | ({"structured_outputs": "official labels"} if options.judge_structured_outputs else {}),
        "models": provenance.with_libraries(
            {**result.models, **({offline_model.kind: offline_model.record} if offline_model else {})}
        ),
        **({"harness": source["harness"]} if source.get("harness") else {}),
        "thresholds": provenance.thresholds(options.task),
        "answers_sha256": provenance.answers_sha256(outputs),
    }
    if extra:
        scores["analyses"] = extra
    if result.panel is not None:
        scores["panel"] = result.panel
    write_run(Path(options.out), scores, result.details)
    if result.failure_errors:
        what = "judge verdicts (CoRs)" if options.task == "description" else "judge queries"
        total = result.counts.get("cors", result.counts.get("queries", 0))
        message = (
            f"{failure_line(what, len(result.failure_errors), total, result.failure_errors)}; "
            f"{Path(options.out) / 'scores.json'} is marked partial. "
            + (
                f"Write requests for exactly the missing ones with: {missing_judge_requests_command(options)}"
                if options.read_responses
                else "Run the same command again to retry only those"
            )
        )
        if not options.allow_failures:
            raise IncompleteRunError(message + ", or pass --allow-failures to accept a partial score")
        print(f"warning: {message}", file=sys.stderr)
    return scores
