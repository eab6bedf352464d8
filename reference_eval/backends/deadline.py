"""One deadline for each whole HTTP attempt, however slowly the server answers.

httpx applies its timeout to each read: a server that drips one byte every
half second never trips a 5 s read timeout, and one request could run for
minutes. Here every socket operation (connect, TLS, send, each read of the
headers and of the body) gets at most the time left until the attempt's
deadline, so an attempt ends by ``seconds`` after it began, whatever the server
does. The deadline lives in a thread-local: the synchronous client does all of
a request's I/O on the thread that sent it.

httpx has no public hook for the network layer, so ``bound_each_attempt`` wraps
the ``httpcore`` network backend of each connection pool of the client (its
default transport and any proxy mounts); it fails loudly, not silently, if a
new httpx lays its pools out differently. ``transport_for`` gives the one of
them that a URL goes through (the proxy the environment names, if any), for
callers that send straight to it.
"""

from __future__ import annotations

import importlib
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_attempt = threading.local()


@contextmanager
def attempt_deadline(seconds: float) -> Iterator[None]:
    """Every request this thread sends inside the block ends ``seconds`` after the block began."""
    _attempt.deadline = time.monotonic() + seconds
    try:
        yield
    finally:
        _attempt.deadline = None


def _left(timeout: float | None, expired: type[Exception]) -> float | None:
    """The smaller of httpx's per-operation timeout and the time left in this attempt."""
    deadline = getattr(_attempt, "deadline", None)
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise expired("the attempt's time is up")
    return left if timeout is None else min(timeout, left)


class _Stream:
    """An httpcore ``NetworkStream`` whose every operation ends by the attempt's deadline."""

    def __init__(self, stream: Any, core: Any):
        self._stream, self._core = stream, core

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, _left(timeout, self._core.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, _left(timeout, self._core.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(self, ssl_context, server_hostname=None, timeout=None) -> _Stream:
        timeout = _left(timeout, self._core.ConnectTimeout)
        return _Stream(self._stream.start_tls(ssl_context, server_hostname, timeout), self._core)

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _Backend:
    """An httpcore ``NetworkBackend`` handing out ``_Stream``s."""

    def __init__(self, backend: Any, core: Any):
        self._backend, self._core = backend, core

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None) -> _Stream:
        timeout = _left(timeout, self._core.ConnectTimeout)
        return _Stream(self._backend.connect_tcp(host, port, timeout, local_address, socket_options), self._core)

    def connect_unix_socket(self, path, timeout=None, socket_options=None) -> _Stream:
        timeout = _left(timeout, self._core.ConnectTimeout)
        return _Stream(self._backend.connect_unix_socket(path, timeout, socket_options), self._core)

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


def bound_each_attempt(http_client: Any) -> Any:
    """Make every connection pool of an httpx client obey ``attempt_deadline``; returns the client.

    Works with the ``httpx``/``httpcore`` pair and with ``httpx2``/``httpcore2`` (what newer
    ``openai`` releases use): the timeouts raised are those of the pool's own httpcore, which
    its httpx maps to ``TimeoutException`` and openai to ``APITimeoutError``.
    """
    transports = [http_client._transport, *(t for t in http_client._mounts.values() if t is not None)]
    for transport in transports:
        pool = getattr(transport, "_pool", None)
        if pool is None or not hasattr(pool, "_network_backend"):
            raise RuntimeError(
                f"{type(transport).__module__}.{type(transport).__name__} has no httpcore pool to bound; "
                "cogbench.reference_eval.backends.deadline needs updating for this httpx"
            )
        core = importlib.import_module(type(pool).__module__.split(".")[0])
        if not isinstance(pool._network_backend, _Backend):
            pool._network_backend = _Backend(pool._network_backend or core.SyncBackend(), core)
    return http_client


def transport_for(http_client: Any, url: Any) -> Any:
    """The transport ``http_client`` sends ``url`` through: its proxy mount for that URL, else its own.

    Sending to it directly skips the client's per-request layers (auth, redirects, cookies, event
    hooks), which cost ~40% of a request's CPU and which a fixed JSON POST with its key in a
    header does not use (tests/benchmarks/judge_throughput.py).
    """
    choose = getattr(http_client, "_transport_for_url", None)
    if choose is None:
        raise RuntimeError(
            f"{type(http_client).__name__} has no _transport_for_url; "
            "cogbench.reference_eval.backends.deadline needs updating for this httpx"
        )
    return choose(url)
