"""A judged cell's judge asked once: ``sweep merge`` gives the merged run the replies its shards' judge gave.

Each shard is scored with its own verdict cache (``shards/K/score/judge_cache.sqlite``, as ``score`` keeps one).
Before the merged run is scored, every reply those caches hold for the cell's judge (the entries of the shards'
``judge.cache_key``: the same endpoint, model, sampling and parsing) is copied into the merged run's own cache
(``run/score/judge_cache.sqlite``), so the merged scoring finds every prompt the shards asked and sends none of
them again: its scores.json states ``cache_hits`` equal to ``prompts`` and no ``calls``. Two shards holding
different replies to one prompt are refused (the merged run could not equal both). Once scored, each item's
record in the merged run's details.jsonl must equal its shard's, prompts, replies and verdicts alike
(``same_details``): every verdict of the merged run is one a verified shard gave.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cogbench.errors import CogbenchError
from cogbench.reference_eval.judges.llm import VerdictCache, cached_replies

CACHE = "judge_cache.sqlite"


def cache_keys(judge: Any) -> set[str]:
    """The verdict cache keys of a scores.json ``judge`` block (a panel's members' too); none for rule or none."""
    if not isinstance(judge, dict):
        return set()
    keys = {judge["cache_key"]} if isinstance(judge.get("cache_key"), str) and judge["cache_key"] else set()
    for member in judge.get("members") or []:
        keys |= cache_keys(member)
    return keys


def judged_prompts(details: Path) -> set[str]:
    """The sha256 of every judge prompt a details.jsonl records (CODIS queries; each description's judge calls)."""
    found: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                if key == "judge_prompt_sha256" and isinstance(inner, str):
                    found.add(inner)
                elif key == "judge_replies" and isinstance(inner, list):
                    found.update(c["prompt_sha256"] for c in inner if isinstance(c, dict) and c.get("prompt_sha256"))
                else:
                    walk(inner)
        elif isinstance(value, list):
            for inner in value:
                walk(inner)

    for line in details.read_text(encoding="utf-8").split("\n"):
        if line.strip():
            walk(json.loads(line))
    return found


@dataclass
class Verdicts:
    """The replies a cell's shards got from its judge, by (cache key column, prompt sha256)."""

    replies: dict[tuple[str, str], str] = field(default_factory=dict)
    complete: bool = False  # they answer every judge prompt of the shards' details


def gathered(shards: list[tuple[Path, dict, dict]], refused) -> Verdicts:
    """Every shard's cached replies of the cell's judge, read before anything is written; a prompt answered two ways
    is refused by ``refused(first, second, what)``, the merge's refusal naming both sides (merge.both)."""
    keys = cache_keys(shards[0][2].get("judge"))
    if not keys:
        return Verdicts()
    found: dict[tuple[str, str], tuple[str, Path]] = {}
    asked: set[str] = set()
    for where, _, _ in shards:
        asked |= judged_prompts(where / "score" / "details.jsonl")
        path = where / "score" / CACHE
        if not path.is_file():
            continue  # a cache removed by hand: the merged run asks its prompts again
        for key in sorted(keys):
            for entry, reply in cached_replies(path, key).items():
                before = found.setdefault(entry, (reply, path))
                if before[0] != reply:
                    what = f"the judge gave prompt {entry[1][:16]} different replies"
                    raise refused(str(before[1]), str(path), what)
    replies = {entry: reply for entry, (reply, _) in found.items()}
    return Verdicts(replies, len(keys) == 1 and asked <= {digest for _, digest in replies})


def write_verdicts(verdicts: Verdicts, score_dir: Path) -> bool:
    """Copy the shards' replies into the merged run's cache (``score_dir``, claimed). True when they answer every
    judge prompt: the merged scoring then asks the judge nothing, not even to list its models (a judge retired
    since answers from the cache, as ``--judge-accept-retired`` allows)."""
    if not verdicts.replies:
        return False
    cache = VerdictCache(score_dir / CACHE)
    try:
        for (model, digest), reply in verdicts.replies.items():
            cache.put_digest(model, digest, reply)
    finally:
        cache.close()
    return verdicts.complete


def details_by_item(path: Path) -> dict[str, str]:
    """Each item's details.jsonl record, as canonical JSON, by item id."""
    found = {}
    for line in path.read_text(encoding="utf-8").split("\n"):
        if line.strip():
            record = json.loads(line)
            found[record["item_id"]] = json.dumps(record, sort_keys=True)
    return found


def same_details(shards: list[tuple[Path, dict, dict]], merged: Path) -> None:
    """Each item of the merged run scored as its shard scored it (its prompts, replies and verdicts); else one line,
    and the merged run's scores.json (just written) is removed, so the cell does not read as merged."""
    if not cache_keys(shards[0][2].get("judge")):
        return  # rule and none judges: the details follow from the predictions alone
    given = details_by_item(merged / "score" / "details.jsonl")
    for where, _, _ in shards:
        path = where / "score" / "details.jsonl"
        for item, record in details_by_item(path).items():
            if given.get(item) != record:
                (merged / "score" / "scores.json").unlink(missing_ok=True)
                raise CogbenchError(
                    f"{merged / 'score' / 'details.jsonl'} and {path}: item {item} judged otherwise in the merged "
                    "run than in its shard (a prompt missing from the shards' verdict caches was asked again); "
                    "the merged run is left unscored"
                )
