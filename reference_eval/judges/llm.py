"""The LLM judge: prompts in, replies out, each reply cached on disk.

The cache is an sqlite file keyed by the judge (``judge_key``: endpoint, model,
sampling settings and parsing mode, everything that decides a verdict) and the
sha256 of the exact prompt, so a re-run, or a run resumed after a crash, sends
no prompt twice, and a judge pointed elsewhere never gets another's verdicts. Only usable replies are stored (the caller's ``accept`` said yes);
failures are not, so a later run tries them again. Each reply is committed as
soon as it arrives.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from cogbench.dataset_builders.writes import refuse_link
from cogbench.errors import UsageError
from cogbench.redaction import redact_url
from cogbench.reference_eval.backends.batch_files import Request, Response, request
from cogbench.reference_eval.backends.openai_api import (
    API_KEY_VARIABLE,
    ChatClient,
    ChatSettings,
    chat_body,
    text_message,
)
from cogbench.reference_eval.judges.constraints import constraint


@dataclass(frozen=True)
class JudgeSpec:
    """What ``--judge`` asked for: ``rule``, ``none``, or ``openai``/``vllm`` with a model; an ``openai:`` judge
    with its endpoint and the environment variable of its key (judges/panel.openai_member: never in its name)."""

    kind: str
    model: str | None = None
    base_url: str | None = None  # None: --judge-base-url's (OpenAI's without one)
    key_variable: str | None = API_KEY_VARIABLE

    @classmethod
    def parse(cls, value: str) -> JudgeSpec:
        if value in ("rule", "none"):
            return cls(value)
        for kind in ("openai", "vllm"):  # vllm: judges/vllm_judge.py, in this process
            if value.startswith(f"{kind}:") and len(value) > len(kind) + 1:
                return cls(kind, value[len(kind) + 1 :])
        raise UsageError(f"--judge {value!r}: expected rule, none, openai:MODEL or vllm:PATH_OR_ID")


@dataclass(frozen=True)
class JudgeReply:
    text: str | None
    error: str | None = None
    cached: bool = False
    unusable_text: str | None = None  # a reply that did not parse, kept to read it the other way


@dataclass
class JudgeStats:
    """What the judge cost this run, for scores.json."""

    model: str
    cache_key: str = ""
    prompts: int = 0
    cache_hits: int = 0
    failures: int = 0
    failure_messages: list[str] = field(default_factory=list)

    def as_dict(self, usage: dict[str, int]) -> dict[str, object]:
        return {
            "model": self.model,
            "prompts": self.prompts,
            "cache_hits": self.cache_hits,  # verdicts this run took from the cache, all made by this judge:
            "cache_key": self.cache_key,  # judge_key, the sha256 of what decides a verdict (provenance names it)
            "calls": usage.get("requests", 0),  # HTTP requests, retries included
            "failures": self.failures,
            "failure_examples": self.failure_messages[:10],
            "usage": usage,
        }


class _NoProgress:
    """What a run off a terminal shows: nothing (tqdm would be disabled there anyway)."""

    def __enter__(self) -> _NoProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def set_postfix(self, **values: object) -> None:
        return None

    def update(self, count: int = 1) -> None:
        return None


def judge_progress(total: int, cached: int, model: str) -> Any:
    """On stderr, and only on a terminal: done/total, cache hits, failures, rate. tqdm (~0.1 s to import,
    most of a judged run's start) is imported only then."""
    if not sys.stderr.isatty():
        return _NoProgress()
    from tqdm.auto import tqdm

    return tqdm(total=total, initial=cached, unit="prompt", desc=f"judge {model}", file=sys.stderr, dynamic_ncols=True)


def prompt_sha256(prompt: str) -> str:
    """The key of a judge prompt in the cache (and in details.jsonl beside its reply)."""
    return hashlib.sha256(prompt.encode("utf-8")).hexdigest()


class VerdictCache:
    """sqlite store of judge replies, keyed by (model, sha256 of the prompt).

    Replies are written in batches at most ``COMMIT_EVERY_SECONDS`` apart (and on
    ``flush`` and ``close``): a commit per reply cost about 1.4 ms each, and even an
    insert per reply, on the thread that collects replies, gave up the GIL to 64
    request threads and waited to get it back (0.45 s of a 706-query CODIS judge
    run, profiled). A killed run keeps every reply but those of its last fraction
    of a second, which the re-run sends again.
    """

    COMMIT_EVERY_SECONDS = 0.25

    def __init__(self, path: str | Path):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        for name in (str(path), *(f"{path}-{suffix}" for suffix in ("wal", "shm", "journal"))):
            refuse_link(Path(name))  # sqlite opens them by name, following links
        self._db = sqlite3.connect(str(path))
        try:
            # WAL: a commit per reply without an fsync each; a killed process still keeps every commit.
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS replies ("
                " model TEXT NOT NULL, prompt_sha256 TEXT NOT NULL, reply TEXT NOT NULL, created REAL NOT NULL,"
                " PRIMARY KEY (model, prompt_sha256))"
            )
            self._db.execute("SELECT model, prompt_sha256, reply, created FROM replies LIMIT 1").fetchall()
            self._db.commit()
        except sqlite3.DatabaseError as error:  # not SQLite, damaged, or another program's table
            self._db.close()
            raise UsageError(
                f"{path}: not a usable judge cache, an SQLite file ({error}); give another --judge-cache or remove it"
            ) from None
        self._last_commit = time.monotonic()
        self._pending: dict[tuple[str, str], tuple[str, str, str, float]] = {}  # not yet written

    @staticmethod
    def _digest(prompt: str) -> str:
        return prompt_sha256(prompt)

    def get(self, model: str, prompt: str) -> str | None:
        digest = self._digest(prompt)
        if (model, digest) in self._pending:
            return self._pending[(model, digest)][2]
        row = self._db.execute(
            "SELECT reply FROM replies WHERE model = ? AND prompt_sha256 = ?", (model, digest)
        ).fetchone()
        return row[0] if row else None

    def put(self, model: str, prompt: str, reply: str) -> None:
        self.put_digest(model, self._digest(prompt), reply)

    def put_digest(self, model: str, digest: str, reply: str) -> None:
        """``put`` by the prompt's sha256: a reply copied from another cache of the same judge (``cached_replies``)."""
        self._pending[(model, digest)] = (model, digest, reply, time.time())
        if time.monotonic() - self._last_commit >= self.COMMIT_EVERY_SECONDS:
            self.flush()

    def flush(self) -> None:
        if self._pending:
            self._db.executemany("INSERT OR REPLACE INTO replies VALUES (?, ?, ?, ?)", list(self._pending.values()))
            self._pending.clear()
        self._db.commit()
        self._last_commit = time.monotonic()

    def close(self) -> None:
        self.flush()
        self._db.close()


def cached_replies(path: Path, cache_key: str) -> dict[tuple[str, str], str]:
    """Every reply a verdict cache holds for the judges of ``cache_key`` (``judge_key``; the cache's model column is
    ``MODEL#CACHE_KEY``), by (that column, prompt sha256); read only, the file left as it is."""
    for name in (str(path), *(f"{path}-{suffix}" for suffix in ("wal", "shm", "journal"))):
        refuse_link(Path(name))
    try:
        db = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True)
        try:
            rows = db.execute("SELECT model, prompt_sha256, reply FROM replies").fetchall()
        finally:
            db.close()
    except sqlite3.DatabaseError as error:
        raise UsageError(f"{path}: not a usable judge cache, an SQLite file ({error})") from None
    return {(model, digest): reply for model, digest, reply in rows if model.endswith(f"#{cache_key}")}


def judge_key(settings: ChatSettings, parsing: str, structured: bool = False) -> str:
    """What decides a verdict besides the prompt, as one digest: the cache answers only for the same judge."""
    decided: dict[str, object] = {
        # As printed (credentials masked): a printed command's masked URL keys the same verdicts.
        "endpoint": redact_url(settings.base_url or "https://api.openai.com/v1").rstrip("/"),
        "model": settings.model,
        "temperature": settings.temperature,
        "max_tokens": settings.max_tokens,
        "parsing": parsing,
    }
    if structured:  # only then: the keys of judges that send no constraint stay as they were
        decided["structured_outputs"] = "official labels"
    return hashlib.sha256(json.dumps(decided, sort_keys=True).encode("utf-8")).hexdigest()[:16]


NOT_SENT = "not judged yet: written to the request file"


def judge_request(settings: ChatSettings, prompt: str, structured: bool = False) -> Request:
    """The request file line of one judge prompt: ``judge#PROMPT_SHA@BODY_HASH`` (one per distinct prompt);
    ``structured``: the body carries the prompt's structured-output constraint (judges/constraints.py)."""
    name = f"judge#{prompt_sha256(prompt)[:16]}"
    return request(name, chat_body(settings, text_message(prompt), constraint(prompt) if structured else None))


class LLMJudge:
    """A chat model behind a verdict cache; ``ask`` answers a batch of prompts.

    The cache file is opened on the first ``ask``, so making a judge writes nothing. Instead of the
    endpoint, the judge can collect its uncached prompts as request files (``collect``: they are then
    failures of this run) or take replies from Batch API output (``responses``, from
    ``batch_files.read_responses``); ``asked`` holds the custom_id of every prompt asked, to refuse
    responses that answer none of them.
    """

    def __init__(
        self,
        settings: ChatSettings,
        cache_path: str | Path,
        parsing: str = "tolerant",
        collect: bool = False,
        responses: dict[str, Response] | None = None,
        structured: bool = False,
    ):
        self.client = ChatClient(settings, sends=not collect and responses is None)  # files only: no key needed
        self._cache_path = cache_path
        self._cache: VerdictCache | None = None
        self.structured = structured  # each request carries its prompt's structured_outputs (vLLM servers)
        self.key = f"{settings.model}#{judge_key(settings, parsing, structured)}"
        self.stats = JudgeStats(model=settings.model, cache_key=judge_key(settings, parsing, structured))
        self.requests: dict[str, Request] | None = {} if collect else None
        self.responses = responses
        self.asked: set[str] = set()

    @property
    def cache(self) -> VerdictCache:
        if self._cache is None:
            self._cache = VerdictCache(self._cache_path)
        return self._cache

    def ask(self, prompts: Sequence[str], accept: Callable[[str, str], bool]) -> list[JudgeReply]:
        """One reply per prompt; identical prompts are sent once, cached ones not at all.

        ``accept(prompt, reply)`` says whether a reply is usable (parses);
        unusable ones are retried, then reported as failures.
        """
        model = self.client.settings.model
        key = self.key
        replies: dict[str, JudgeReply] = {}
        to_send: list[str] = []
        for prompt in dict.fromkeys(prompts):
            hit = self.cache.get(key, prompt)
            if hit is not None and accept(prompt, hit):
                replies[prompt] = JudgeReply(hit, cached=True)
            else:
                to_send.append(prompt)
        if self.requests is not None or self.responses is not None:
            for prompt in dict.fromkeys(prompts):
                self.asked.add(judge_request(self.client.settings, prompt, self.structured).custom_id)
            replies.update({prompt: self._from_files(prompt, accept) for prompt in to_send})
            self.stats.failure_messages += [error for p in to_send if (error := replies[p].error)]
            to_send = []
        checks = [partial(accept, prompt) for prompt in to_send]
        cached, failed = len(replies), 0
        with judge_progress(len(replies) + len(to_send), cached, model) as progress:
            progress.set_postfix(cached=cached, failed=0)
            rules = [constraint(p) for p in to_send] if self.structured else None
            messages = [text_message(p) for p in to_send]
            for index, result in self.client.complete_many(messages, accept_each=checks, constraints=rules):
                prompt = to_send[index]
                if result.error is None:  # result.ok
                    assert result.text is not None  # a reply without an error has its text
                    self.cache.put(key, prompt, result.text)
                else:
                    failed += 1
                    self.stats.failure_messages.append(result.error)
                replies[prompt] = JudgeReply(result.text, result.error, unusable_text=result.unusable_text)
                progress.set_postfix(cached=cached, failed=failed, refresh=False)
                progress.update(1)
        self.cache.flush()
        answered = [replies[prompt] for prompt in prompts]
        self.stats.prompts += len(prompts)
        self.stats.cache_hits += sum(reply.cached for reply in answered)
        self.stats.failures += sum(reply.error is not None for reply in answered)
        return answered

    def _from_files(self, prompt: str, accept: Callable[[str, str], bool]) -> JudgeReply:
        """Collect the prompt's request, or take its reply from the responses read (cached when usable)."""
        line = judge_request(self.client.settings, prompt, self.structured)
        if self.requests is not None:
            self.requests[line.custom_id] = line
            return JudgeReply(None, NOT_SENT)
        assert self.responses is not None  # reading responses: requests are not being collected
        response = self.responses.get(line.custom_id)
        if response is None or response.error or response.text is None:
            return JudgeReply(None, response.error if response and response.error else "no response in the files read")
        if not accept(prompt, response.text):
            return JudgeReply(None, f"unusable reply ({response.where})", unusable_text=response.text)
        self.cache.put(self.key, prompt, response.text)
        return JudgeReply(response.text)

    def summary(self) -> dict[str, object]:
        return self.stats.as_dict(self.client.usage.as_dict())

    def close(self) -> None:
        self.client.close()
        if self._cache is not None:
            self._cache.close()
