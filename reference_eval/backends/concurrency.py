"""Adaptive concurrency for API requests: fast by default, polite under rate limits.

The limit on requests in flight starts at the ceiling (full speed from the first
request: 64 VQA queries at 0.5 s each take one round trip, not the three a start
at 16 doubling per round trip needs) and follows additive-increase /
multiplicative-decrease, as TCP does:

- slow start: until the first sign of overload, every clean reply raises the
  limit by one (it doubles per round trip) up to the ceiling (it matters only
  when ``start`` is set below it);
- afterwards every clean reply raises it by 1/limit (one per round trip);
- a 429, a timeout, a dropped connection or a 5xx halves it (at most once per
  ``cooldown`` seconds, so one burst of 429s is one cut); the request itself
  waits its backoff, at least the ``Retry-After`` the server asked for
  (``openai_api.ChatClient._backoff``).

``ceiling`` is ``--judge-concurrency`` / ``--concurrency``.
"""

from __future__ import annotations

import threading
import time


class AdaptiveLimit:
    """A counting gate whose size adapts; thread-safe."""

    def __init__(self, ceiling: int, start: int | None = None, cooldown: float = 0.2, clock=time.monotonic):
        self.ceiling = max(1, ceiling)
        self.limit = float(min(self.ceiling, max(1, start if start is not None else self.ceiling)))
        self.in_flight = 0
        self.overloads = 0  # congestion signals seen (429, timeouts, 5xx)
        self.peak = int(self.limit)
        self._slow_start = True
        self._cooldown = cooldown
        self._last_cut = float("-inf")
        self._clock = clock
        self._condition = threading.Condition()

    def acquire(self) -> None:
        with self._condition:
            while True:
                if self.in_flight < int(self.limit):
                    self.in_flight += 1
                    return
                self._condition.wait()

    def release(self, overloaded: bool = False) -> None:
        with self._condition:
            self.in_flight -= 1
            now = self._clock()
            if overloaded:
                self.overloads += 1
                self._slow_start = False
                if now - self._last_cut >= self._cooldown:
                    self.limit = max(1.0, self.limit / 2)
                    self._last_cut = now
            elif self._slow_start:
                self.limit = min(float(self.ceiling), self.limit + 1)
            else:
                self.limit = min(float(self.ceiling), self.limit + 1 / self.limit)
            self.peak = max(self.peak, int(self.limit))
            # Wake only as many waiters as there are free slots: with 64 threads waiting,
            # waking all of them on every reply costs more CPU than the requests themselves.
            self._condition.notify(max(0, int(self.limit) - self.in_flight))
