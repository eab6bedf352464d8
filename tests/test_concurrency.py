"""Adaptive concurrency: grows while replies are clean, halves on overload, never above the ceiling;
against a real local server that answers 429 above a few requests in flight, everything gets through."""

from __future__ import annotations

import threading
import time

from cogbench.reference_eval.backends.concurrency import AdaptiveLimit
from cogbench.reference_eval.backends.openai_api import ChatClient, ChatSettings, text_message

from openai_server import Reply


def test_slow_start_then_halving_then_additive_growth():
    limit = AdaptiveLimit(ceiling=64, start=16, cooldown=0.0)
    for _ in range(16):
        limit.acquire()
    for _ in range(16):
        limit.release()
    assert limit.limit == 32  # slow start: one more per clean reply
    limit.acquire()
    limit.release(overloaded=True)
    assert limit.limit == 16 and limit.overloads == 1
    for _ in range(16):
        limit.acquire()
        limit.release()
    assert 16.9 < limit.limit < 17.1  # additive: about one per round trip
    for _ in range(3000):
        limit.acquire()
        limit.release()
    assert limit.limit == 64  # the ceiling


def test_one_burst_of_429s_is_one_cut():
    limit = AdaptiveLimit(ceiling=64, start=32, cooldown=60.0)
    for _ in range(10):
        limit.acquire()
    for _ in range(10):
        limit.release(overloaded=True)
    assert limit.limit == 16


def counting_responder(seconds: float, rate_limit: int | None = None):
    """A responder that answers after ``seconds``, 429 above ``rate_limit`` in flight; and its peak in flight."""
    in_flight, lock, peak = [0], threading.Lock(), [0]

    def responder(request):
        with lock:
            in_flight[0] += 1
            peak[0] = max(peak[0], in_flight[0])
            over = rate_limit is not None and in_flight[0] > rate_limit
        try:
            if over:
                return Reply(status=429, headers={"Retry-After": "0.05"})
            time.sleep(seconds)
            return Reply(text="ok")
        finally:
            with lock:
                in_flight[0] -= 1

    return responder, peak


def test_rate_limited_server_gets_every_request_through(openai_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "local")
    responder, _peak = counting_responder(0.02, rate_limit=3)

    server = openai_server(responder)
    settings = ChatSettings(model="m", base_url=server.base_url, backoff_seconds=0.05, max_attempts=8)
    with ChatClient(settings) as client:
        results = dict(client.complete_many([text_message(f"q{i}") for i in range(80)]))
        assert all(result.ok for result in results.values()) and len(results) == 80
        usage = client.usage.as_dict()
        assert usage["rate_limited"] > 0 and usage["requests"] == 80 + usage["rate_limited"]
        assert client.limit.limit < 16  # it backed off from the start value


def test_the_limit_starts_at_the_ceiling_so_a_small_task_runs_in_one_round_trip(openai_server, monkeypatch):
    assert AdaptiveLimit(ceiling=64).limit == 64 and AdaptiveLimit(ceiling=8, start=100).limit == 8
    monkeypatch.setenv("OPENAI_API_KEY", "local")
    responder, peak = counting_responder(1.0)
    server = openai_server(responder)
    with ChatClient(ChatSettings(model="m", base_url=server.base_url, concurrency=64)) as client:
        results = dict(client.complete_many([text_message(f"q{i}") for i in range(64)]))
    assert len(results) == 64 and all(r.ok for r in results.values())
    assert peak[0] == 64  # all 64 in flight at once (a start at 16 peaked at 32)


def test_requests_are_built_lazily_a_bounded_window_ahead_of_the_replies(openai_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "local")
    server = openai_server(lambda request: Reply(text="ok", delay_seconds=0.005))
    built = [0]

    def conversations():
        for i in range(120):
            built[0] += 1
            yield text_message(f"q{i}")

    seen = []
    with ChatClient(ChatSettings(model="m", base_url=server.base_url, concurrency=4)) as client:
        for index, _result in client.complete_many(conversations()):
            seen.append(index)
            assert built[0] <= len(seen) + 8  # never more than 2 x the ceiling built ahead of the replies
    assert sorted(seen) == list(range(120))
