"""``cogbench rescore RUN --dataset NEW_BUILD``: an eval run's stored answers scored on a corrected build,
no model called.

The new run folder continues RUN on the new build, as ``eval`` would have left it: ``run.json`` (RUN's, with
the new dataset and revision), ``shards/rank-0.jsonl`` and ``predictions.jsonl`` (RUN's answers to the
queries the new build asks with the same prompt text about the same image; an item whose question, context
or image changed was asked something else, so its answer is not carried), and ``score/``, scored by RUN's judge. The judge's cache
starts as a copy of RUN's, so only prompts that changed (an item whose gold changed) reach the judge. The
queries left without an answer (new items, changed prompts) are what ``eval`` on the new folder generates;
with ``write_requests`` they are written as request files, by ``eval --write-requests``' own code, and the
score is labelled PARTIAL until they are answered.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cogbench.dataset_builders.load import dataset_revision
from cogbench.dataset_builders.output import check_apart, claim_output
from cogbench.dataset_builders.writes import write_file
from cogbench.errors import UsageError
from cogbench.reference_eval.api.arguments import checked
from cogbench.reference_eval.api.evaluation import Result, read_result
from cogbench.reference_eval.api.image_changes import changed_images
from cogbench.reference_eval.formats.predictions import read_predictions
from cogbench.reference_eval.recording.run_files import RUN_FILES
from cogbench.reference_eval.recording.run_reader import read_run
from cogbench.reference_eval.run.folder import EVAL_FILES, PARTIAL_NOTE, merge_shards, write_run_json
from cogbench.reference_eval.run.request_files import check_request_folder, write_eval_requests
from cogbench.reference_eval.run.runner import EvalSettings, dataset_and_queries, missing_requests_command
from cogbench.reference_eval.scoring.pipeline import ScoreOptions, run_scoring
from cogbench.reference_eval.tasks.prompts import CODIS_NO_CONTEXT
from cogbench.reference_eval.verifying.verify import verify as verify_target

# The judges a rescore can repeat: one judge named by the run's provenance (a panel or an offline
# Cognition judge is scored again with `cogbench score`, which takes their options).
REPEATABLE_JUDGES = ("rule", "none", "openai", "vllm")


@dataclass
class Rescored:
    """What ``rescore`` did: the new scoring, and which answers it carried, dropped or still lacks."""

    result: Result
    carried: int  # RUN's answers scored again
    changed_prompt: list[str] = field(default_factory=list)  # items asked other text now: answer not carried
    changed_image: list[str] = field(default_factory=list)  # items shown another image now: answer not carried
    images: str = ""  # how the images were compared, or why they could not be
    images_compared: bool = True
    dropped: list[str] = field(default_factory=list)  # RUN's items the new build no longer holds
    missing: list[str] = field(default_factory=list)  # queries of the new build without an answer
    requests: dict[str, Any] | None = None  # the request files' manifest (write_requests)
    next_command: str | None = None  # the `cogbench eval` line that answers the missing queries


def settings_from_record(record: dict[str, Any], dataset: str, revision: str | None, out: Path) -> EvalSettings:
    """The ``eval`` settings whose run.json is ``record`` (what the model was asked and how), on ``dataset``."""
    generation = record.get("generation") or {}
    return EvalSettings(
        task=record["task"],
        model=record["model"],
        dataset=dataset,
        out=out,
        revision=revision,
        mode=record.get("mode") or "spontaneous",
        max_new_tokens=generation.get("max_new_tokens"),
        thinking=generation.get("thinking", "auto"),
        structured_regex=generation.get("structured_regex"),
        circular=bool(record.get("circular")),
        no_image=bool(record.get("no_image")),
        image_variants=tuple((record.get("image_variants") or {}).get("names") or ()),
        no_context=record.get("prompt_id") == CODIS_NO_CONTEXT.id,
    )


def next_command(settings: EvalSettings) -> str:
    """The ``cogbench eval`` line that answers the queries ``settings.out`` lacks: request files for an
    ``openai:`` model (``eval --write-requests``), else ``eval`` itself, which generates only those."""
    command = missing_requests_command(settings)
    if settings.model.startswith("openai:"):
        return command
    return re.sub(r" --write-requests ('[^']*'|\S+)", "", command)


def _judge_of(scores: dict[str, Any]) -> tuple[str, str]:
    """(the --judge value, its parsing) that scored RUN, from its provenance."""
    judge = scores["provenance"].get("judge") or {}
    kind = judge.get("kind")
    if kind not in REPEATABLE_JUDGES:
        raise UsageError(
            f"rescore repeats one judge ({', '.join(REPEATABLE_JUDGES)}); this run was judged by {kind!r}: "
            "score its predictions.jsonl against the new build with `cogbench score`, naming that judge"
        )
    return (f"{kind}:{judge['model']}" if kind in ("openai", "vllm") else kind), judge.get("parsing") or "tolerant"


def _eval_folder(run: str | Path) -> tuple[Path, dict[str, Any]]:
    """RUN's eval folder and its run.json; RUN verified first (``verify``: scores, details, its answers)."""
    scored = read_run(run)
    folder = scored.folder.parent if scored.folder.name == "score" else scored.folder
    if scored.run_record is None or not (folder / "predictions.jsonl").is_file():
        raise UsageError(
            f"rescore {run}: not an eval run folder (run.json and predictions.jsonl beside score/); for a score "
            "folder, score its predictions file against the new build with `cogbench score`"
        )
    found = verify_target(str(folder))
    if found.differences:
        raise UsageError(
            f"rescore {run}: the run does not verify ({found.differences[0].line()}); "
            f"rescore reads only a run whose stored answers made its numbers (`cogbench verify {folder}` lists all)"
        )
    return folder, scored.run_record


def rescore(
    run: str | Path,
    dataset: str,
    out: str | Path,
    *,
    revision: str | None = None,
    judge_base_url: str | None = None,
    judge_cache: str | None = None,
    write_requests: str | None = None,
    shards: int = 1,
) -> Rescored:
    """Score RUN's stored answers against ``dataset`` (a corrected build) into the eval folder ``out``; each
    argument checked as ``cogbench rescore``'s option (api/arguments.py)."""
    given = {"run": run, "dataset": dataset, "out": out, "revision": revision, "judge_base_url": judge_base_url}
    given |= {"judge_cache": judge_cache, "write_requests": write_requests, "shards": shards}
    run, dataset, out, revision, judge_base_url, judge_cache, write_requests, shards = checked(
        "rescore", given
    ).values()
    reads = [("RUN", run), ("--dataset", dataset)]
    check_apart(out, "--out", reads)  # RUN --out RUN would replace the run it reads
    if write_requests is not None:
        check_apart(write_requests, "--write-requests", reads)
    old_dir, record = _eval_folder(run)
    reads.append(("RUN", old_dir))  # RUN named by its score folder: the eval folder around it is read too
    old_scores = json.loads((old_dir / "score" / "scores.json").read_text(encoding="utf-8"))
    judge, parsing = _judge_of(old_scores)
    out = Path(out)
    settings = settings_from_record(record, dataset, revision, out)
    if write_requests is not None:
        check_request_folder(Path(write_requests), out)
    claim_output(out, "eval", EVAL_FILES, create=False, reads=reads)  # refused before any work
    loaded, _, queries = dataset_and_queries(settings)  # the new build, verified
    images = changed_images(record, str(dataset), revision, loaded)
    claim_output(out, "eval", EVAL_FILES, reads=reads)
    asked = {query.key: hashlib.sha256(query.prompt.encode("utf-8")).hexdigest() for query in queries}
    stored = read_predictions(old_dir / "predictions.jsonl")
    same_text = [p for p in stored if asked.get(p.key) == p.rendered_prompt_sha256]
    kept = [p for p in same_text if p.item_id not in images.changed]
    changed = sorted({p.item_id for p in stored if p.key in asked and asked[p.key] != p.rendered_prompt_sha256})
    changed_image = sorted({p.item_id for p in same_text if p.item_id in images.changed})
    known = {query.item_id for query in queries}
    dropped = sorted({p.item_id for p in stored if p.item_id not in known})
    answered = {p.key for p in kept}
    missing = [query for query in queries if query.key not in answered]
    new_record = dict(record, dataset=str(dataset), dataset_revision=dataset_revision(dataset, revision))
    new_record[PARTIAL_NOTE] = bool(missing)
    write_run_json(out / "run.json", new_record)
    write_file(out / "shards" / "rank-0.jsonl", "".join(p.to_json() + "\n" for p in kept))
    predictions = merge_shards(out, queries, allow_missing=True)
    score_dir = out / "score"
    claim_output(score_dir, "score", RUN_FILES, task=settings.task)
    old_cache = old_dir / "score" / "judge_cache.sqlite"
    if judge_cache is None and old_cache.is_file() and not (score_dir / "judge_cache.sqlite").exists():
        # RUN's verdicts: a prompt the new build leaves unchanged is not asked again.
        shutil.copyfile(old_cache, score_dir / "judge_cache.sqlite")
    tags = (old_scores.get("answers") or {}).get("think_tags")
    options = ScoreOptions(
        task=settings.task,
        dataset=str(dataset),
        predictions=str(predictions),
        revision=revision,
        judge=judge,
        judge_base_url=judge_base_url,
        judge_parsing=parsing,
        judge_cache=judge_cache,
        out=str(score_dir),
        allow_partial=bool(missing),
        circular=settings.circular,
        no_image=settings.no_image,
        image_variants=settings.image_variants,
        think_tags=tuple(tuple(pair) for pair in tags) if tags else None,  # type: ignore[misc]
        thinking=(old_scores.get("answers") or {}).get("thinking", "auto"),  # score --thinking, as RUN stated it
    )
    run_scoring(options)
    rescored = Rescored(
        read_result(score_dir),
        len(kept),
        changed_prompt=changed,
        changed_image=changed_image,
        images=images.how,
        images_compared=images.compared,
        dropped=dropped,
        missing=[query.name for query in missing],
    )
    if missing:
        if write_requests is not None:
            rescored.requests = write_eval_requests(
                dataclasses.replace(settings, write_requests=write_requests, shards=shards)
            )
        else:
            rescored.next_command = next_command(settings)
    return rescored
