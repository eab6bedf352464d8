"""Chat completions against any OpenAI-compatible endpoint, with the project's rules.

Used by the LLM judge of ``cogbench score`` and by the OpenAI model backend of
``cogbench eval``. The rules, in one place:

- the API key comes from an environment variable only (``OPENAI_API_KEY``, or the one the settings
  name: a judge panel's member on another host has its own, or none) and is never logged, printed,
  stored or put into an error message;
- requests run concurrently, at most ``concurrency`` at a time, fewer while
  the server signals overload (``concurrency.AdaptiveLimit``);
- each attempt ends ``timeout_seconds`` after it began, however slowly the
  server sends (``deadline``: httpcore's own timeout bounds each read only);
- 429, 5xx, timeouts and dropped connections are retried with exponential
  backoff plus jitter (the ``Retry-After`` header is honoured when longer);
  other errors (400, 401, 404...) fail at once, since repeating cannot help;
- token usage is summed over the run;
- a reply is its ``content`` plus, from a model that reasons, a separate ``reasoning_content``
  (DeepSeek, vLLM's ``--reasoning-parser``) or ``reasoning`` (OpenRouter) field, why it stopped
  (``finish_reason``), its ``reasoning_tokens`` and a ``refusal``; ``content: null`` beside a reasoning
  or a refusal is a reply (``openai_replies.reply_parts``);
- a reply's lone surrogates become U+FFFD (``schemas.text.replace_lone_surrogates``),
  so every answer can be stored.

A request that still fails after its retries gives a ``ChatResult`` with
``error`` set instead of raising, so one bad item never sinks a run: callers
record it as a failure and go on.

Requests are plain HTTP/1.1 through ``httpcore`` (the engine under httpx, and so under the
OpenAI SDK; ``connections`` sets it up with the environment's proxy and CA bundle as httpx
would): one POST of ``chat_body`` to ``BASE_URL/chat/completions`` with a bearer key, the reply
read as JSON. Not the SDK, nor httpx: importing ``openai`` (its hundreds of pydantic types) cost
more than all the judging it did, ~0.5 s on idle cores, against a 0.9 s bound for the 706 CODIS
judge queries (tests/benchmarks/judge_throughput.py, docs/scoring.md "Fast by default"); its typed
``chat.completions.create`` cost ~1.4 ms of CPU per request, ``httpx.Client.post`` ~0.7 ms,
httpcore ~0.36 ms. ``httpcore`` is imported inside functions, so commands that never call an API
do not load it.
"""

from __future__ import annotations

import json
import os
import queue
import random
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import islice
from typing import Any
from urllib.parse import urlparse

from cogbench import __version__
from cogbench.errors import UsageError, echoed
from cogbench.redaction import redact_url
from cogbench.reference_eval.backends.concurrency import AdaptiveLimit
from cogbench.reference_eval.backends.connections import (
    ReplyTooLarge,
    check_ascii,
    max_reply_bytes,
    proxy_config,
    read_capped,
    single_connection,
    tls_context,
)
from cogbench.reference_eval.backends.deadline import attempt_deadline
from cogbench.reference_eval.backends.openai_replies import reply_parts, token_counts

API_KEY_VARIABLE = "OPENAI_API_KEY"
OPENAI_BASE_URL = "https://api.openai.com/v1"


@dataclass(frozen=True)
class ChatSettings:
    """Where and how to send chat completions."""

    model: str
    base_url: str | None = None  # None: the official OpenAI API
    temperature: float = 0.0
    max_tokens: int | None = None
    concurrency: int = 64  # ceiling of the adaptive limit (backends/concurrency.py)
    max_attempts: int = 6  # first try plus five retries
    backoff_seconds: float = 1.0  # first wait; doubles each retry
    max_backoff_seconds: float = 60.0
    timeout_seconds: float = 120.0  # each whole attempt: connect, send, headers and body
    # "on"/"off": the body carries ``chat_template_kwargs: {"enable_thinking": ...}``, which vLLM and
    # SGLang servers pass to the chat template; "auto" sends nothing, so the OpenAI API never sees it.
    thinking: str = "auto"
    # A regex every reply must match: the body's ``structured_outputs: {"regex": ...}``, vLLM's
    # structured-outputs field (``vllm serve`` and ``run-batch``); None sends nothing.
    structured_regex: str | None = None
    # The environment variable whose value is sent as the bearer key (its name, never the key); None sends
    # no Authorization header at all (a panel member on a host no key was given for: judges/panel.py).
    api_key_variable: str | None = API_KEY_VARIABLE


@dataclass
class TokenUsage:
    """Token counts summed over a run; safe to add to from several threads."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    requests: int = 0  # HTTP requests sent, retries included
    rate_limited: int = 0  # of which answered 429
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, prompt_tokens: int, completion_tokens: int) -> None:
        with self._lock:
            self.prompt_tokens += prompt_tokens
            self.completion_tokens += completion_tokens

    def count_request(self) -> None:
        with self._lock:
            self.requests += 1

    def count_rate_limited(self) -> None:
        with self._lock:
            self.rate_limited += 1

    def as_dict(self) -> dict[str, int]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
            "requests": self.requests,
            "rate_limited": self.rate_limited,
        }


@dataclass(frozen=True)
class ChatResult:
    """The reply to one conversation: ``text`` on success, else ``error`` (one line)."""

    text: str | None
    error: str | None = None
    attempts: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    unusable_text: str | None = None  # the last reply that ``accept`` refused, if that was the failure
    reasoning: str = ""  # a reasoning model's separate reasoning field, if any
    finish_reason: str = ""  # "stop", "length"...; "" when the server gave none
    reasoning_tokens: int | None = None  # usage.completion_tokens_details.reasoning_tokens, where reported
    note: str = ""  # what of the reply was ignored (a reasoning field of the wrong type)
    refusal: str = ""  # message.refusal: the model's refusal text, "" when it gave none

    @property
    def ok(self) -> bool:
        return self.error is None


Messages = list[dict[str, Any]]


def text_message(prompt: str) -> Messages:
    """A one-turn user conversation holding only text."""
    return [{"role": "user", "content": prompt}]


def image_part(jpeg_or_png_bytes: bytes, mime_type: str = "image/jpeg") -> dict[str, Any]:
    """An inline image content part (base64 data URL), as vision chat models take it."""
    import base64

    encoded = base64.b64encode(jpeg_or_png_bytes).decode("ascii")
    return {"type": "image_url", "image_url": {"url": f"data:{mime_type};base64,{encoded}"}}


def chat_body(settings: ChatSettings, messages: Messages, constraint: dict[str, Any] | None = None) -> dict[str, Any]:
    """The exact chat-completions body sent for ``messages``; request files (batch_files) write the same.
    ``constraint``: this request's own ``structured_outputs`` (a judge prompt's labels), instead of the settings'."""
    body: dict[str, Any] = {"model": settings.model, "messages": messages, "temperature": settings.temperature}
    if settings.max_tokens is not None:
        body["max_tokens"] = settings.max_tokens
    if settings.thinking in ("on", "off"):
        body["chat_template_kwargs"] = {"enable_thinking": settings.thinking == "on"}
    if settings.structured_regex is not None:
        body["structured_outputs"] = {"regex": settings.structured_regex}
    if constraint is not None:
        body["structured_outputs"] = constraint
    return body


def api_key_from_environment(variable: str = API_KEY_VARIABLE) -> str:
    key = os.environ.get(variable, "")
    if not key:
        raise UsageError(
            f"set {variable} in the environment to call an OpenAI-compatible API "
            "(any non-empty value for a local server that needs no key)"
        )
    return key


def key_headers(variable: str | None) -> list[tuple[bytes, bytes]]:
    """The Authorization header with ``variable``'s key, or none when no key goes to this endpoint."""
    return [(b"Authorization", f"Bearer {api_key_from_environment(variable)}".encode())] if variable else []


class ChatClient:
    """Sends conversations to one model; use ``complete_many`` for concurrency.

    ``accept`` (optional) looks at a reply's text and returns False when the
    reply is unusable (e.g. a judge verdict that does not parse); such replies
    are retried like a 5xx and reported as an error when attempts run out.
    """

    def __init__(self, settings: ChatSettings, sleep: Callable[[float], None] = time.sleep, sends: bool = True):
        check_base_url(settings.base_url)
        self.settings = settings
        self.usage = TokenUsage()
        self.limit = AdaptiveLimit(settings.concurrency)
        self._sleep = sleep
        self._url = (settings.base_url or OPENAI_BASE_URL).rstrip("/") + "/chat/completions"
        self._cap = max_reply_bytes()  # read now: a bad COGBENCH_MAX_REPLY_BYTES is a usage error before any work
        # Read now, so a missing key is a usage error before any work; kept only in request headers. A client
        # that never sends (a judge writing or reading request files) asks for no key.
        self._headers = [
            *(key_headers(settings.api_key_variable) if sends else []),
            (b"Content-Type", b"application/json"),
            (b"Accept", b"application/json"),
            (b"User-Agent", f"cogbench/{__version__}".encode()),
        ]
        # Loaded once and shared (none for a plain-http endpoint, a local server: requests go only
        # to this URL, and redirects are not followed).
        self._tls = tls_context(self._url)
        self._proxy = proxy_config(self._url)  # the environment's, read once
        # httpcore's per-operation timeouts; ``attempt_deadline`` bounds the whole attempt.
        seconds = settings.timeout_seconds
        self._timeout = {"timeout": {"connect": seconds, "read": seconds, "write": seconds, "pool": seconds}}
        # One single-connection pool per request in flight, lent out and given back (``_borrow``):
        # one shared pool of 64 connections spent most of a judge run's CPU in its lock, which
        # every request takes twice and which walks every connection each time.
        self._idle: list[Any] = []
        self._every: list[Any] = []
        self._lend = threading.Lock()

    def _borrow(self) -> Any:
        """An idle connection, or a new one; at most one per request in flight ever exists."""
        with self._lend:
            if self._idle:
                return self._idle.pop()
        # No retries below ours: ours count every attempt and apply one policy to transport
        # errors and unusable replies alike.
        connection = single_connection(self._tls, self._proxy)
        with self._lend:
            self._every.append(connection)
        return connection

    def _give_back(self, connection: Any) -> None:
        with self._lend:
            self._idle.append(connection)

    def _post(self, body: bytes) -> tuple[int, Any, bytes]:
        """One POST of ``body``, ended by ``timeout_seconds`` after it began: (status, headers, content).

        At most ``self._cap`` bytes of the body are read (``connections.read_capped``)."""
        connection = self._borrow()
        try:
            with (
                attempt_deadline(self.settings.timeout_seconds),
                connection.stream(
                    "POST", self._url, headers=self._headers, content=body, extensions=self._timeout
                ) as response,
            ):
                content = read_capped(response, self._cap)
        finally:
            self._give_back(connection)
        return response.status, response.headers, content

    def close(self) -> None:
        with self._lend:
            every, self._every, self._idle = self._every, [], []
        for connection in every:
            connection.close()

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def complete(
        self, messages: Messages, accept: Callable[[str], bool] | None = None, constraint: dict[str, Any] | None = None
    ) -> ChatResult:
        """One conversation, retried per the module's rules; never raises for API failures."""
        import httpcore

        settings = self.settings
        last_error = "no attempt made"
        unusable: str | None = None
        prompt_tokens = completion_tokens = 0
        body = json.dumps(chat_body(settings, messages, constraint)).encode()
        for attempt in range(1, settings.max_attempts + 1):
            retry_after: float | None = None
            overloaded = False
            self.usage.count_request()
            self.limit.acquire()
            try:
                status, headers, content = self._post(body)
                if status >= 400:
                    raise _StatusError(status, headers)
                reply = json.loads(content)
                used_prompt, used_completion = token_counts(reply)
                prompt_tokens += used_prompt
                completion_tokens += used_completion
                self.usage.add(used_prompt, used_completion)
                parts = reply_parts(reply)
                if parts is None:
                    last_error = "reply has no message content"
                elif accept is not None and not accept(parts.text):
                    last_error = f"unusable reply: {_shorten(parts.text)}"
                    unusable = parts.text
                else:
                    return ChatResult(
                        parts.text,
                        None,
                        attempt,
                        prompt_tokens,
                        completion_tokens,
                        reasoning=parts.reasoning,
                        finish_reason=parts.finish_reason,
                        reasoning_tokens=parts.reasoning_tokens,
                        note=parts.note,
                        refusal=parts.refusal,
                    )
            except ReplyTooLarge as error:  # a broken or hostile server: asking again cannot help
                return ChatResult(None, str(error), attempt, prompt_tokens, completion_tokens)
            except _StatusError as error:
                last_error = f"HTTP {error.status_code}"
                if error.status_code in (401, 403) and settings.api_key_variable is None:
                    last_error += " (no key is sent to this host: name its key's variable, openai:MODEL@URL#VARIABLE)"
                if not _retryable_status(error.status_code):
                    return ChatResult(None, last_error, attempt, prompt_tokens, completion_tokens)
                overloaded = True
                retry_after = _retry_after_seconds(error.headers)
                if error.status_code == 429:
                    self.usage.count_rate_limited()
            except httpcore.TimeoutException:
                last_error, overloaded = "timed out", True
            except (
                httpcore.NetworkError,
                httpcore.ProtocolError,
                httpcore.ProxyError,
            ):  # refused, reset, dropped mid-reply
                last_error, overloaded = "connection failed", True
            except ValueError:  # a 200 whose body is not JSON (or not UTF-8)
                last_error = "malformed response body"
            finally:
                self.limit.release(overloaded)
            if attempt < settings.max_attempts:
                self._sleep(self._backoff(attempt, retry_after))
        return ChatResult(
            None,
            f"{last_error} after {settings.max_attempts} attempts",
            settings.max_attempts,
            prompt_tokens,
            completion_tokens,
            unusable if last_error.startswith("unusable reply") else None,
        )

    def complete_many(
        self,
        conversations: Iterable[Messages],
        accept: Callable[[str], bool] | None = None,
        accept_each: Sequence[Callable[[str], bool] | None] | None = None,
        constraints: Sequence[dict[str, Any] | None] | None = None,
    ) -> Iterator[tuple[int, ChatResult]]:
        """Yield ``(index, result)`` as replies arrive, at most ``self.limit`` (adaptive) in flight.

        ``accept`` applies to every reply; ``accept_each`` gives one check per
        conversation instead; ``constraints`` one ``structured_outputs`` each (``chat_body``). Results come in completion order so the caller
        can store each at once (a killed run keeps everything already answered).
        ``conversations`` is read lazily, at most ``window`` ahead of the replies
        (twice the ceiling): a generator that builds each request (an image as
        base64) keeps memory flat however many queries there are.
        """
        for batch in self.complete_batches(conversations, accept, accept_each, constraints):
            yield from batch

    def complete_batches(
        self,
        conversations: Iterable[Messages],
        accept: Callable[[str], bool] | None = None,
        accept_each: Sequence[Callable[[str], bool] | None] | None = None,
        constraints: Sequence[dict[str, Any] | None] | None = None,
    ) -> Iterator[list[tuple[int, ChatResult]]]:
        """``complete_many``'s results, each time as all that have arrived: one when the caller keeps up, more when
        replies come faster than it stores them (``eval`` then fsyncs them together: one fsync, not one each)."""
        window = 2 * max(1, self.settings.concurrency)
        items = iter(enumerate(conversations))
        # Each finished request puts itself on ``finished``: O(1) per reply, where waiting on the
        # whole window (``concurrent.futures.wait``) walked every pending future for each reply.
        finished: queue.SimpleQueue[Future] = queue.SimpleQueue()
        with ThreadPoolExecutor(max_workers=max(1, self.settings.concurrency), thread_name_prefix="chat") as pool:
            pending: dict[Future, int] = {}

            def fill() -> None:
                for index, messages in islice(items, window - len(pending)):
                    check = accept_each[index] if accept_each is not None else accept
                    rule = constraints[index] if constraints is not None else None
                    future = pool.submit(self.complete, messages, check, rule)
                    pending[future] = index
                    future.add_done_callback(finished.put)

            fill()
            while pending:
                ready = [finished.get()]
                while not finished.empty():
                    ready.append(finished.get())
                yield [(pending.pop(future), future.result()) for future in ready]
                fill()

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        settings = self.settings
        exponential = min(settings.max_backoff_seconds, settings.backoff_seconds * 2 ** (attempt - 1))
        wait = exponential * (0.5 + random.random() / 2)  # jitter: 50-100% of the step
        if retry_after is not None:
            wait = max(wait, min(retry_after, settings.max_backoff_seconds))
        return wait


class _StatusError(Exception):
    """An HTTP error status (4xx, 5xx): its code and headers, never the request (which holds the key)."""

    def __init__(self, status_code: int, headers: list[tuple[bytes, bytes]]):
        super().__init__(status_code)
        self.status_code, self.headers = status_code, headers


def _retryable_status(status: int) -> bool:
    return status in {429, 408} or status >= 500


def _retry_after_seconds(headers: list[tuple[bytes, bytes]]) -> float | None:
    """The ``Retry-After`` a response asked for, in seconds (the delay form; an HTTP date is ignored)."""
    for name, value in headers:
        if name.lower() == b"retry-after":
            try:
                return float(value)
            except ValueError:
                return None
    return None


def check_base_url(base_url: str | None) -> None:
    """A base URL with its scheme and an ASCII host, or a usage error naming it (credentials masked)."""
    if base_url is not None and urlparse(base_url).scheme not in ("http", "https"):
        raise UsageError(
            f"base URL {echoed(redact_url(base_url))}: expected http://HOST:PORT/v1 or https://... (with the scheme)"
        )
    if base_url is not None:
        check_ascii(base_url, "base URL")


def _shorten(text: str, limit: int = 80) -> str:
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= limit else one_line[: limit - 3] + "..."
