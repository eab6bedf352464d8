"""One deadline for each whole HTTP attempt, however slowly the server answers.

httpcore (like httpx above it) applies its timeout to each read: a server that
drips one byte every half second never trips a 5 s read timeout, and one
request could run for minutes. Here every socket operation (connect, TLS, send,
each read of the headers and of the body) gets at most the time left until the
attempt's deadline, so an attempt ends by ``seconds`` after it began, whatever
the server does. The deadline lives in a thread-local: a synchronous connection
does all of a request's I/O on the thread that sent it. ``bounded_backend`` is
the network backend to give an ``httpcore`` pool (its public ``network_backend``).
"""

from __future__ import annotations

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
    """The smaller of httpcore's per-operation timeout and the time left in this attempt."""
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


def bounded_backend() -> Any:
    """httpcore's synchronous network backend, every operation bounded by ``attempt_deadline``.

    httpcore is imported here, not at the top: commands that never call an API do not load it.
    """
    import httpcore

    return _Backend(httpcore.SyncBackend(), httpcore)
