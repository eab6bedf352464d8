"""Running a model on a config: queries in, a complete predictions file out.

A run folder holds:

- ``run.json``: what the run is (task, model, prompt, generation settings,
  dataset revision); a resumed run must match it, so one file never mixes
  two setups;
- ``shards/rank-N.jsonl``: what rank N generated, appended and fsynced after
  every batch; a killed run (SIGKILL included) loses at most the batch in
  flight, and a re-run skips every key already in any shard;
- ``predictions.jsonl``: all shards merged once at the end, in dataset order,
  so an interrupted-and-resumed run ends with the same lines as one that ran
  straight through (timings aside);
- the official-format export (``official_*``) for the authors' tools.

``run.json`` also notes ``batch_size_after_oom`` when the hf backend had to
split batches that ran out of memory: a resumed run starts at that size. It
describes how the run went, not what it is, so it never makes a resume mismatch;
so does ``vllm_engine``, the ``vllm:`` engine's placement options (tensor and data
parallel sizes, memory share...) of each session that generated.

Request files (``backends/batch_files``): with ``read_responses`` the answers come from Batch
API output files instead of an endpoint, into the same folder and ``run.json`` as an ``openai:``
run; ``run/request_files`` writes the requests of what the folder still lacks.

Data parallelism: under ``torchrun`` / ``accelerate launch`` each rank takes
every WORLD_SIZE-th query, writes its own shard, and rank 0 merges after a
barrier. Nothing here imports torch unless a run needs it.
"""

from __future__ import annotations

import hashlib
import re
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cogbench.dataset_builders.load import dataset_revision
from cogbench.dataset_builders.output import OUTPUT_MARKER, claim_output
from cogbench.errors import IncompleteRunError, UsageError
from cogbench.redaction import redact_text, redacted_command, split_endpoint
from cogbench.reference_eval.answers.reasoning import THINKING_SETTINGS
from cogbench.reference_eval.backends import openai_chat as openai_backend
from cogbench.reference_eval.backends import vllm_offline
from cogbench.reference_eval.backends.hub import check_hf_model
from cogbench.reference_eval.backends.openai_api import API_KEY_VARIABLE, ChatClient, ChatSettings
from cogbench.reference_eval.formats.official import write_official
from cogbench.reference_eval.formats.predictions import Prediction, PredictionWriter, read_predictions
from cogbench.reference_eval.run.completeness import failure_line
from cogbench.reference_eval.run.folder import (
    EVAL_FILES,
    check_run_record,
    done_keys,
    item_ids_record,
    merge_shards,
    note_batch_cut,
    note_engine,
    note_partial,
    recorded_oom_batch_size,
)
from cogbench.reference_eval.run.lock import RunLock
from cogbench.reference_eval.run.progress import LOG_INTERVAL_SECONDS, progress_bar
from cogbench.reference_eval.run.ranks import (
    barrier,
    distributed_rank,
    join_process_group,
    leave_process_group,
    rank_queries,
)
from cogbench.reference_eval.tasks import image_variants
from cogbench.reference_eval.tasks.queries import (
    DEFAULT_MAX_NEW_TOKENS,
    DESCRIPTION_MODES,
    THINKING_MAX_NEW_TOKENS,
    Answer,
    Query,
    build_queries,
    undecoded_images,
)
from cogbench.validation.integrity import load_verified

BACKENDS = ("hf", "openai", "vllm")


@dataclass(frozen=True)
class EvalSettings:
    task: str
    model: str  # "hf:MODEL_ID_OR_PATH", "openai:MODEL" or "vllm:MODEL_ID_OR_PATH"
    dataset: str
    out: Path
    revision: str | None = None
    mode: str = "spontaneous"  # description only
    limit: int | None = None  # first N rows of the config
    batch_size: int = 16
    max_new_tokens: int | None = None  # None: the task's default (DEFAULT_MAX_NEW_TOKENS)
    ignore_eos: bool = False
    device: str | None = None
    num_workers: int = 2
    trust_remote_code: bool = False
    base_url: str | None = None
    concurrency: int = 64  # ceiling of the adaptive limit
    max_attempts: int = 6
    timeout_seconds: float = 120.0
    allow_failures: bool = False  # merge, export and score what succeeded (labelled partial) instead of exit 3
    circular: bool = False  # vqa: every question under four rotations of its options
    no_image: bool = False  # blind baseline: the same prompts without the image
    no_context: bool = False  # codis: ask without the contexts (CODIS Section 4.2)
    image_variants: tuple[str, ...] = ()  # vqa, codis: every query again on each image variant (tasks.image_variants)
    progress_seconds: float = LOG_INTERVAL_SECONDS  # without a terminal: a progress line at most this often
    engine: vllm_offline.EngineOptions = field(default_factory=vllm_offline.EngineOptions)  # vllm: only
    write_requests: str | None = None  # openai: write the missing queries as request files here, run nothing
    shards: int = 1  # how many request files
    read_responses: tuple[str, ...] = ()  # openai: answers from Batch API output files, not from an endpoint
    # hf: an already-loaded (model, processor) pair (the Python API, a training callback): used as it is, no
    # load from disk; ``model`` then only names it. Not compared: it is what runs, not what the run is.
    loaded: tuple[Any, Any] | None = field(default=None, compare=False, repr=False)
    thinking: str = "auto"  # on/off: the chat template's enable_thinking; auto: the model's default
    structured_regex: str | None = None  # openai:, vllm:: every reply constrained to it (vLLM structured outputs)
    # Only these items of the config (a sweep's shard, reference_eval/sweeping/), in dataset order; None: every item.
    item_ids: tuple[str, ...] | None = None
    # openai:: the environment variable whose value is sent as the key (its name; a sweep's api_key_env). Not recorded.
    api_key_variable: str = API_KEY_VARIABLE

    @property
    def new_tokens(self) -> int:
        """The token budget: as given, else THINKING_MAX_NEW_TOKENS with thinking on, else the task's."""
        if self.max_new_tokens:
            return self.max_new_tokens
        return THINKING_MAX_NEW_TOKENS if self.thinking == "on" else DEFAULT_MAX_NEW_TOKENS[self.task]


@dataclass
class RunSummary:
    run_dir: Path
    total_queries: int
    resumed: int  # already done when the run started
    generated: int  # answered by this run (this rank)
    seconds: float  # generating: first query sent to last answer written
    setup_seconds: float = 0.0  # loading the model (hf) or opening the API client, before that
    rank: int = 0
    world: int = 1
    generated_tokens: int = 0
    predictions_path: Path | None = None  # set on rank 0 once merged
    official_path: Path | None = None
    failures: list[str] = field(default_factory=list)
    missing_command: str | None = None  # read responses: the command writing requests for what is missing

    def lines(self) -> list[str]:
        rate = self.generated / self.seconds if self.seconds > 0 else 0.0
        token_rate = self.generated_tokens / self.seconds if self.seconds > 0 else 0.0
        by = f" by rank {self.rank} of {self.world}" if self.world > 1 else ""
        lines = [
            f"queries: {self.total_queries} total, {self.resumed} already done, {self.generated} generated now{by}",
            f"time: {self.seconds:.1f} s generating, {rate:.2f} queries/s, {token_rate:.1f} generated tokens/s "
            f"(after {self.setup_seconds:.1f} s loading the model or opening the client)",
        ]
        if self.predictions_path:
            lines.append(f"predictions: {self.predictions_path}")
        if self.official_path:
            lines.append(f"official format: {self.official_path}")
        return lines


def parse_model_spec(spec: str) -> tuple[str, str]:
    backend, _, name = spec.partition(":")
    if backend not in BACKENDS or not name:
        raise UsageError(
            f"--model {redact_text(spec)!r}: expected hf:MODEL_ID_OR_PATH, openai:MODEL or vllm:MODEL_ID_OR_PATH"
        )
    if backend == "openai" and (split_endpoint(spec)[1] is not None or "://" in name):
        # A judge's @URL form (redaction.split_endpoint): a model's endpoint is --base-url, and its name carries no URL.
        raise UsageError(
            f"--model {redact_text(spec)!r}: give the model's endpoint as --base-url URL (--model openai:MODEL "
            "--base-url http://HOST:PORT/v1); a URL is never part of a model's name"
        )
    return backend, name


def default_run_dir(task: str, model: str, mode: str, no_context: bool = False, thinking: str = "auto") -> Path:
    """``runs/eval-TASK[-MODE]-BACKEND-MODEL[-thinking-on|off]``: the backend too, so ``hf:``, ``vllm:`` and
    ``openai:`` runs of one model never resume (and refuse) each other's folder, nor runs with thinking on, off
    and the model's own default (auto)."""
    backend, _, name = model.partition(":")
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_")[-80:]
    suffix = f"-{mode}" if task == "description" else ("-no-context" if no_context else "")
    return Path("runs") / f"eval-{task}{suffix}-{backend}-{slug}{'' if thinking == 'auto' else f'-thinking-{thinking}'}"


def _backend(settings: EvalSettings, backend: str, name: str, queries: list[Query], images, failures: list[str]):
    """What every prediction records, and a function that starts the backend.

    ``start(stack)`` loads the model (hf) or opens the API client (openai) and
    returns the iterator of answer batches; the run times starting and
    generating apart, so the `time:` line measures generation alone. Nothing
    is loaded when no queries are left, so a finished or mismatched run ends
    at once.
    """
    if backend == "hf":
        # The hf backend imports torch and transformers: loaded only when used, so
        # runs with other backends (and `cogbench score`) never import them.
        from cogbench.reference_eval.backends import hf as hf_backend

        kept = recorded_oom_batch_size(Path(settings.out))
        hf = hf_backend.HFSettings(
            model=name,
            batch_size=min(settings.batch_size, kept or settings.batch_size),
            max_new_tokens=settings.new_tokens,
            ignore_eos=settings.ignore_eos,
            device=settings.device,
            trust_remote_code=settings.trust_remote_code,
            num_workers=settings.num_workers,
            thinking=settings.thinking,
        )

        def start_hf(stack: ExitStack) -> Iterator[list[Answer]]:
            if not queries:
                return iter(())
            on_cut = lambda size: note_batch_cut(Path(settings.out), size)  # noqa: E731
            loaded = hf_backend.load_model(hf) if settings.loaded is None else hf_backend.use_loaded(*settings.loaded)
            return hf_backend.answer_queries(loaded, hf, queries, images, on_cut)

        return hf_backend.recorded_settings(hf, settings.loaded), start_hf
    if backend == "vllm":
        vllm = vllm_offline.VLLMSettings(
            model=name,
            max_new_tokens=settings.new_tokens,
            chunk_size=settings.batch_size,
            ignore_eos=settings.ignore_eos,
            thinking=settings.thinking,
            structured_regex=settings.structured_regex,
            engine=settings.engine,
        )

        def start_vllm(stack: ExitStack) -> Iterator[list[Answer]]:
            if not queries:
                return iter(())
            note_engine(Path(settings.out), vllm_offline.placement(vllm))
            return vllm_offline.answer_queries(vllm_offline.load_engine(vllm), vllm, queries, images, failures)

        return vllm_offline.recorded_settings(vllm), start_vllm
    api = chat_settings(settings, name)

    def start_openai(stack: ExitStack) -> Iterator[list[Answer]]:
        if not queries:
            return iter(())
        client = stack.enter_context(ChatClient(api))
        return openai_backend.answer_queries(client, queries, images, failures)

    return openai_backend.recorded_settings(api), start_openai


def chat_settings(settings: EvalSettings, name: str) -> ChatSettings:
    """The ``openai:`` backend's client settings: what its requests (online or in request files) carry."""
    return ChatSettings(
        model=name,
        base_url=settings.base_url,
        temperature=0.0,
        max_tokens=settings.new_tokens,
        concurrency=settings.concurrency,
        max_attempts=settings.max_attempts,
        timeout_seconds=settings.timeout_seconds,
        thinking=settings.thinking,
        structured_regex=settings.structured_regex,
        api_key_variable=settings.api_key_variable,
    )


def checked_settings(settings: EvalSettings) -> tuple[str, str]:
    backend, name = parse_model_spec(settings.model)
    if settings.thinking not in THINKING_SETTINGS:
        raise UsageError(f"--thinking {settings.thinking!r}: choose one of {', '.join(THINKING_SETTINGS)}")
    if settings.mode not in DESCRIPTION_MODES:
        raise UsageError(f"--mode {settings.mode!r}: choose one of {', '.join(DESCRIPTION_MODES)}")
    if settings.circular and settings.task != "vqa":
        raise UsageError("--circular rotates the four options of VQA questions; it applies to --task vqa")
    if settings.no_context and settings.task != "codis":
        raise UsageError("--no-context applies to --task codis")
    check_variant_settings(settings)
    if settings.structured_regex is not None and backend == "hf":
        raise UsageError("--structured-regex is vLLM's structured outputs: use --model openai:MODEL or vllm:MODEL")
    if (settings.write_requests or settings.read_responses) and backend != "openai":
        raise UsageError(
            "--write-requests and --read-responses hold chat-completions requests: use --model openai:MODEL"
        )
    return backend, name


def check_variant_settings(settings: EvalSettings) -> None:
    """The invariance probe compares answers on one image and its variants: one plain query per context."""
    if not settings.image_variants:
        return
    for name in settings.image_variants:
        if name not in image_variants.VARIANTS:
            raise UsageError(
                f"--image-variant {name!r}: not a variant; choose from {', '.join(image_variants.VARIANTS)}"
            )
    if settings.task not in image_variants.TASKS:
        raise UsageError("--image-variant compares answers to questions: it applies to --task vqa or codis")
    for flag, on in (
        ("--circular", settings.circular),
        ("--no-image", settings.no_image),
        ("--no-context", settings.no_context),
    ):
        if on:
            raise UsageError(f"--image-variant and {flag}: one probe per run (run them as two runs)")


def dataset_and_queries(settings: EvalSettings):
    """The run's (verified) dataset rows, prompt template and queries."""
    dataset = load_verified(settings.dataset, settings.task, settings.revision)
    if settings.limit is not None:
        dataset = dataset.select(range(min(settings.limit, len(dataset))))
    template, queries = build_queries(
        settings.task,
        dataset,
        settings.mode,
        settings.circular,
        not settings.no_image,
        settings.no_context,
        settings.image_variants,
    )
    if settings.item_ids is not None:
        return dataset, template, restricted(queries, settings.item_ids, settings.task)
    return dataset, template, queries


def restricted(queries: list[Query], item_ids: tuple[str, ...], task: str) -> list[Query]:
    """The queries of ``item_ids`` only (the rows, and so the images, stay the config's); an id the config lacks
    is refused rather than silently left out."""
    wanted = set(item_ids)
    unknown = sorted(wanted - {q.item_id for q in queries})
    if unknown:
        raise UsageError(
            f"item ids: {len(unknown)} not in the {task} config (first: {unknown[0]!r}); the run names items of "
            "another build"
        )
    return [q for q in queries if q.item_id in wanted]


def run_eval(settings: EvalSettings) -> RunSummary:
    """Generate every missing prediction of the run, then merge and export (rank 0)."""
    backend, name = checked_settings(settings)
    run_dir = Path(settings.out)
    if run_dir.exists() and not run_dir.is_dir():
        raise UsageError(f"--out {run_dir}: is a file, not a run folder")
    rank, world = distributed_rank()
    join_process_group(world)

    dataset, template, queries = dataset_and_queries(settings)
    if (
        settings.loaded is None
        and backend in ("hf", "vllm")
        and not {q.key for q in rank_queries(queries, rank, world)} <= done_keys(run_dir)
    ):
        check_hf_model(name, backend)  # only when there is something to generate: a finished run re-merges without it
    new_folders = [folder for folder in (run_dir, *run_dir.parents) if not folder.exists()]
    reads = [("--dataset", settings.dataset), *(("--read-responses", path) for path in settings.read_responses)]
    claim_output(run_dir, "eval", EVAL_FILES, reads=reads)
    lock = RunLock(run_dir, rank).acquire()
    summary = RunSummary(
        run_dir, total_queries=len(queries), resumed=0, generated=0, seconds=0.0, rank=rank, world=world
    )
    failures: list[str] = []
    try:
        _generate(settings, backend, name, dataset, template, queries, summary, failures)
    except BaseException:
        if new_folders and summary.generated == 0:
            lock.release(forget=True)
            _forget_failed_start(run_dir, rank, new_folders)
        raise
    finally:
        if lock.path.parent.exists():
            lock.release()
    summary.failures = failures
    barrier(world)
    leave_process_group(world)
    if failures and settings.read_responses:
        summary.missing_command = missing_requests_command(settings)
    if failures and not settings.allow_failures:
        retry = (
            f"PARTIAL ({len(queries) - len(failures)}/{len(queries)}); write requests for exactly the missing "
            f"ones with: {summary.missing_command}"
            if settings.read_responses
            else "Run the same command again to retry only those"
        )
        asked = len(rank_queries(queries, rank, world))
        some = asked > len(failures)
        raise IncompleteRunError(
            f"{failure_line('model queries', len(failures), asked, failures)}, first: {failures[0]}; "
            + (f"the other {asked - len(failures)} are saved in {run_dir}. " if some else "none was answered. ")
            + retry
            + (", or pass --allow-failures to score what there is (labelled partial)" if some else "")
        )
    if rank == 0:
        summary.predictions_path = merge_shards(run_dir, queries, allow_missing=settings.allow_failures)
        note_partial(run_dir, settings.limit is not None or settings.item_ids is not None or bool(failures))
    if rank == 0 and not settings.circular:  # the official formats hold one answer per question (no variant)
        rows = dataset.select_columns([c for c in dataset.column_names if c != "image"])
        summary.official_path = write_official(settings.task, run_dir, rows, read_predictions(summary.predictions_path))
    return summary


def _generate(settings, backend, name, dataset, template, queries, summary: RunSummary, failures: list[str]) -> None:
    """Write the rank's missing predictions to its shard, batch by batch, under the run's lock."""
    run_dir, rank, world = summary.run_dir, summary.rank, summary.world
    all_done = done_keys(run_dir)
    mine = [q for q in rank_queries(queries, rank, world) if q.key not in all_done]
    images = undecoded_images(dataset)
    generation, start = _backend(settings, backend, name, mine, images, failures)
    if settings.read_responses:  # every response is checked against all queries, even when none is left

        def start(stack: ExitStack) -> Iterator[list[Answer]]:
            ours = rank_queries(queries, rank, world)
            api = chat_settings(settings, name)
            return openai_backend.answers_from_responses(settings.read_responses, ours, mine, images, api, failures)

    check_run_record(run_dir, run_record(settings, template, generation))
    shown = _variant_images(images, settings.image_variants)
    summary.resumed = sum(1 for q in queries if q.key in all_done)
    with ExitStack() as stack, PredictionWriter(run_dir / "shards" / f"rank-{rank}.jsonl", run_dir) as writer:
        loading = time.perf_counter()
        answers = start(stack)
        summary.setup_seconds = time.perf_counter() - loading
        started = time.perf_counter()
        progress = progress_bar(
            len(mine),
            f"{settings.task} (rank {rank})" if world > 1 else settings.task,
            position=rank,
            interval=settings.progress_seconds,
            file=sys.stderr,
        )
        with progress:
            progress.set_postfix(resumed=summary.resumed, refresh=False)
            for batch in answers:
                writer.write(_prediction(settings, template, generation, answer, shown) for answer in batch)
                summary.generated += len(batch)
                summary.generated_tokens += sum(a.generated_tokens or 0 for a in batch)
                progress.update(len(batch))
                if failures:
                    progress.set_postfix(resumed=summary.resumed, failed=len(failures), refresh=False)
    summary.seconds = time.perf_counter() - started


def run_record(settings: EvalSettings, template, generation: dict[str, Any]) -> dict[str, Any]:
    """What ``run.json`` holds: what the run is, so a resumed run must be the same run."""
    return {
        "task": settings.task,
        "mode": settings.mode if settings.task == "description" else None,
        "model": settings.model,
        "prompt_id": template.id,
        "prompt_sha256": template.sha256,
        "generation": generation,
        "dataset": str(settings.dataset),
        "dataset_revision": dataset_revision(settings.dataset, settings.revision),
        # Only when set, so that run.json of plain runs stays as it was.
        **({"circular": True} if settings.circular else {}),
        **({"no_image": True} if settings.no_image else {}),
        **(
            {"image_variants": {"names": list(settings.image_variants), "pillow": image_variants.pillow_version()}}
            if settings.image_variants
            else {}
        ),
        **({"item_ids": item_ids_record(settings.item_ids)} if settings.item_ids is not None else {}),
    }


def missing_requests_command(settings: EvalSettings) -> str:
    """The ``cogbench eval`` line that writes request files for exactly the queries ``--out`` still lacks."""
    options = [
        ("--task", settings.task),
        ("--dataset", str(settings.dataset)),
        ("--revision", settings.revision),
        ("--model", settings.model),
        ("--mode", settings.mode if settings.task == "description" else None),
        ("--limit", settings.limit),
        ("--max-new-tokens", settings.max_new_tokens),
        ("--thinking", settings.thinking if settings.thinking != "auto" else None),
        ("--structured-regex", settings.structured_regex),
        ("--out", str(settings.out)),
        ("--write-requests", f"{settings.out}-missing-requests"),
        ("--image-variant", ",".join(settings.image_variants) or None),
    ]
    flags = [
        ("--circular", settings.circular),
        ("--no-image", settings.no_image),
        ("--no-context", settings.no_context),
    ]
    words = ["cogbench", "eval"]
    for option, value in options:
        words += [option, str(value)] if value is not None else []
    words += [flag for flag, on in flags if on]
    return redacted_command(words)


def _forget_failed_start(run_dir: Path, rank: int, new_folders: list[Path]) -> None:
    """A start that failed before any prediction leaves nothing: only files this run wrote, in folders it made."""
    shard = run_dir / "shards" / f"rank-{rank}.jsonl"
    for path in (run_dir / "run.json", shard, *([run_dir / OUTPUT_MARKER] if run_dir in new_folders else [])):
        if path.is_file() and (path != shard or path.stat().st_size == 0):
            path.unlink()
    for folder in (run_dir / "shards", *new_folders):
        try:
            folder.rmdir()  # only when empty
        except OSError:
            pass


def _variant_images(images, names: tuple[str, ...]):
    """``shown(query)``: the ``variant_image`` record of a variant query (its image's sha256, Pillow's version),
    each (row, variant) hashed once."""
    found: dict[tuple[int, str], dict[str, str]] = {}
    version = image_variants.pillow_version() if names else ""

    def shown(query: Query) -> dict[str, str]:
        if query.variant is None:
            return {}
        key = (query.row, query.variant)
        if key not in found:
            found[key] = {"sha256": image_variants.variant_sha256(query.variant, images[query.row]["image"])}
            found[key]["pillow"] = version
        return found[key]

    return shown


def _prediction(
    settings: EvalSettings, template, generation: dict[str, Any], answer: Answer, shown=lambda query: {}
) -> Prediction:
    return Prediction(
        variant=answer.query.variant,
        variant_image=shown(answer.query),
        task=settings.task,
        item_id=answer.query.item_id,
        query=answer.query.query,
        output=answer.output,
        model=settings.model,
        prompt_id=template.id,
        prompt_sha256=template.sha256,
        rendered_prompt_sha256=hashlib.sha256(answer.query.prompt.encode("utf-8")).hexdigest(),
        generation=generation,
        seconds=round(answer.seconds, 4),
        reasoning=answer.reasoning,
        finish_reason=answer.finish_reason,
        think_opened=answer.think_opened,
        refusal=answer.refusal,
        tokens={
            name: count
            for name, count in (("completion", answer.generated_tokens), ("reasoning", answer.reasoning_tokens))
            if count is not None
        },
    )
