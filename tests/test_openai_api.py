"""The chat client against the real local OpenAI-compatible server: retries, failures, usage, keys."""

from __future__ import annotations

import base64
import importlib.util
import subprocess
import threading
import time

import pytest

from cogbench.errors import UsageError
from cogbench.reference_eval.backends.openai_api import ChatClient, ChatSettings, image_part, text_message

from openai_server import OpenAIServer, Reply

SECRET = "sk-test-secret-value-0123456789"


@pytest.fixture(autouse=True)
def api_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)


def settings_for(server, **overrides) -> ChatSettings:
    values = {"model": "judge-model", "base_url": server.base_url, "backoff_seconds": 0.01, "max_backoff_seconds": 0.05}
    values.update(overrides)
    return ChatSettings(**values)


def test_reply_text_usage_and_request_body(openai_server):
    server = openai_server(lambda request: Reply(text="right", prompt_tokens=7, completion_tokens=1))
    with ChatClient(settings_for(server)) as client:
        result = client.complete(text_message("hello"))
    assert result.ok and result.text == "right" and result.attempts == 1
    assert client.usage.as_dict() == {
        "prompt_tokens": 7,
        "completion_tokens": 1,
        "total_tokens": 8,
        "requests": 1,
        "rate_limited": 0,
    }
    (request,) = server.chat_requests
    assert request.body["model"] == "judge-model"
    assert request.body["temperature"] == 0.0
    assert request.headers["authorization"] == f"Bearer {SECRET}"


def test_retries_429_and_500_then_succeeds(openai_server):
    statuses = iter([429, 500, 503])

    def responder(request):
        return Reply(status=next(statuses, 200), text="ok")

    server = openai_server(responder)
    waits: list[float] = []
    with ChatClient(settings_for(server), sleep=waits.append) as client:
        result = client.complete(text_message("x"))
    assert result.text == "ok" and result.attempts == 4
    assert len(server.chat_requests) == 4
    assert len(waits) == 3
    assert waits[0] < waits[2]  # exponential growth beats the jitter (0.01*[.5,1] vs 0.04*[.5,1])


def test_gives_up_after_max_attempts_with_an_error_not_an_exception(openai_server):
    server = openai_server(lambda request: Reply(status=500))
    with ChatClient(settings_for(server, max_attempts=3)) as client:
        result = client.complete(text_message("x"))
    assert not result.ok
    assert result.error == "HTTP 500 after 3 attempts"
    assert len(server.chat_requests) == 3


def test_client_errors_are_not_retried(openai_server):
    server = openai_server(lambda request: Reply(status=400))
    with ChatClient(settings_for(server)) as client:
        result = client.complete(text_message("x"))
    assert result.error == "HTTP 400" and len(server.chat_requests) == 1


def test_slow_reply_times_out_and_is_retried(openai_server):
    calls = []

    def responder(request):
        calls.append(1)
        return Reply(text="late", delay_seconds=1.0) if len(calls) == 1 else Reply(text="fast")

    server = openai_server(responder)
    with ChatClient(settings_for(server, timeout_seconds=0.3)) as client:
        result = client.complete(text_message("x"))
    assert result.text == "fast" and result.attempts == 2


@pytest.mark.parametrize("first", ["dripping", "then fast"])
def test_a_dripping_server_is_cut_off_at_the_timeout_of_each_attempt(first, openai_server):
    """One byte every 0.4 s never trips a per-read timeout of 1.5 s; each attempt must still end at 1.5 s."""
    calls = []

    def responder(request):
        calls.append(1)
        slow = first == "dripping" or len(calls) == 1
        return Reply(text="right " * 20, drip_seconds=0.4) if slow else Reply(text="fast")

    server = openai_server(responder)
    with ChatClient(settings_for(server, timeout_seconds=1.5, max_attempts=2)) as client:
        started = time.monotonic()  # after the client is made (the first import of openai takes seconds)
        result = client.complete(text_message("x"))
        elapsed = time.monotonic() - started
    if first == "dripping":
        assert result.error == "timed out after 2 attempts" and result.attempts == 2
        assert 2 * 1.5 <= elapsed < 2 * 1.5 + 1.0, elapsed
    else:
        assert result.text == "fast" and result.attempts == 2 and 1.5 <= elapsed < 1.5 + 1.0, elapsed
    time.sleep(1.2)  # the server notices the closed connection within two bytes of it
    assert server.dripped_until_cut == (2 if first == "dripping" else 1)


def test_requests_go_through_the_proxy_the_environment_names(openai_server, monkeypatch):
    """HTTP_PROXY is honoured, as by httpx and the OpenAI SDK: the proxy gets the absolute URL
    (the endpoint's host is never looked up), with the key and the body as sent direct."""
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "http_proxy"):
        monkeypatch.delenv(name, raising=False)
    proxy = openai_server(lambda request: Reply(text="via the proxy"))
    monkeypatch.setenv("HTTP_PROXY", proxy.base_url.removesuffix("/v1"))
    settings = settings_for(proxy, base_url="http://judge.invalid:8000/v1")
    with ChatClient(settings) as client:
        result = client.complete(text_message("x"))
    assert result.text == "via the proxy"
    [request] = proxy.chat_requests
    assert request.path == "http://judge.invalid:8000/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {SECRET}" and request.prompt_text == "x"


def test_proxy_credentials_go_in_a_proxy_header_and_no_proxy_is_honoured(openai_server, monkeypatch):
    """user:password in the proxy URL becomes Proxy-Authorization (basic), never part of the request;
    a host NO_PROXY names is reached directly."""
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "http_proxy"):
        monkeypatch.delenv(name, raising=False)
    proxy = openai_server(lambda request: Reply(text="via the proxy"))
    direct = openai_server(lambda request: Reply(text="direct"))
    host_port = proxy.base_url.removeprefix("http://").removesuffix("/v1")
    monkeypatch.setenv("HTTP_PROXY", f"http://me:p%40ss@{host_port}")
    with ChatClient(settings_for(proxy, base_url="http://judge.invalid:8000/v1")) as client:
        assert client.complete(text_message("x")).text == "via the proxy"
    [request] = proxy.chat_requests
    assert request.headers["proxy-authorization"] == "Basic " + base64.b64encode(b"me:p@ss").decode()
    assert request.path == "http://judge.invalid:8000/v1/chat/completions"
    monkeypatch.setenv("NO_PROXY", "example.org,127.0.0.1")
    with ChatClient(settings_for(direct)) as client:
        assert client.complete(text_message("x")).text == "direct"
    assert len(proxy.chat_requests) == 1 and direct.chat_requests[0].path == "/v1/chat/completions"


@pytest.mark.parametrize("proxy", ["http://me:secret@proxy:notaport", "http://[::1", "ftp://proxy:21"])
def test_a_proxy_url_that_cannot_be_used_is_one_usage_line(proxy, monkeypatch):
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "http_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", proxy)
    with pytest.raises(UsageError, match="proxy") as raised:  # before any request
        ChatClient(ChatSettings(model="m", base_url="http://judge.invalid:8000/v1"))
    assert "secret" not in str(raised.value)


def test_a_socks_proxy_without_socksio_is_one_usage_line(openai_server, monkeypatch):
    if importlib.util.find_spec("socksio") is not None:
        pytest.skip("socksio is installed here")
    for name in ("NO_PROXY", "no_proxy", "HTTP_PROXY", "http_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ALL_PROXY", "socks5://127.0.0.1:9")
    server = openai_server(lambda request: Reply(text="right"))
    with pytest.raises(UsageError, match="SOCKS proxy: pip install socksio"):  # before any request
        ChatClient(settings_for(server))


def test_an_https_endpoint_is_verified_against_the_ca_bundle_the_environment_names(tmp_path, monkeypatch):
    """TLS as httpx sets it up: SSL_CERT_FILE's bundle when set (else certifi's, which rejects a self-signed server)."""
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    self_signed = ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1"]
    self_signed += ["-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)]
    subprocess.run(self_signed, check=True, capture_output=True)
    for name in ("SSL_CERT_FILE", "SSL_CERT_DIR", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    with OpenAIServer(lambda request: Reply(text="over TLS"), tls=(str(cert), str(key))) as server:
        assert server.base_url.startswith("https://127.0.0.1:")
        with ChatClient(settings_for(server, max_attempts=1)) as client:
            assert client.complete(text_message("x")).error == "connection failed after 1 attempts"
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))
        with ChatClient(settings_for(server)) as client:
            assert client.complete(text_message("x")).text == "over TLS"
        assert len(server.chat_requests) == 1  # the unverified attempt never sent its request


def test_malformed_body_and_unusable_reply_are_retried(openai_server):
    replies = iter([Reply(raw_body=b"{not json"), Reply(text="maybe"), Reply(text="right")])
    server = openai_server(lambda request: next(replies))
    with ChatClient(settings_for(server)) as client:
        result = client.complete(text_message("x"), accept=lambda text: text in ("right", "wrong"))
    assert result.text == "right" and result.attempts == 3
    assert client.usage.requests == 3


@pytest.mark.parametrize(
    "body, error",
    [
        (b"\xff\xfe not UTF-8", "malformed response body"),
        (b"[]", "reply has no message content"),
        (b'{"choices": []}', "reply has no message content"),
        (b'{"choices": [{"message": {"content": null}}]}', "reply has no message content"),
        (b'{"choices": [{"message": {"content": ["right"]}}]}', "reply has no message content"),
        # A refusal makes a reply only when it is a non-empty string (tests/test_refusals.py has one that is).
        (b'{"choices": [{"message": {"content": null, "refusal": ""}}]}', "reply has no message content"),
        (b'{"choices": [{"message": {"content": null, "refusal": 7}}]}', "reply has no message content"),
    ],
)
def test_replies_that_are_not_a_chat_completion_fail_with_a_reason(openai_server, body, error):
    server = openai_server(lambda request: Reply(raw_body=body))
    with ChatClient(settings_for(server, max_attempts=2)) as client:
        result = client.complete(text_message("x"))
    assert result.error == f"{error} after 2 attempts" and result.text is None
    assert client.usage.requests == 2 and client.usage.prompt_tokens == 0


def test_a_reply_without_usage_counts_no_tokens(openai_server):
    body = b'{"choices": [{"message": {"role": "assistant", "content": "right"}}], "usage": {"prompt_tokens": true}}'
    server = openai_server(lambda request: Reply(raw_body=body))
    with ChatClient(settings_for(server)) as client:
        result = client.complete(text_message("x"))
    assert result.text == "right" and (result.prompt_tokens, result.completion_tokens) == (0, 0)
    assert client.usage.as_dict()["total_tokens"] == 0


def test_concurrency_is_bounded(openai_server):
    lock = threading.Lock()
    state = {"now": 0, "peak": 0}

    def responder(request):
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        import time

        time.sleep(0.05)
        with lock:
            state["now"] -= 1
        return Reply(text=request.prompt_text)

    server = openai_server(responder)
    with ChatClient(settings_for(server, concurrency=3)) as client:
        results = dict(client.complete_many([text_message(str(i)) for i in range(12)]))
    assert {i: r.text for i, r in results.items()} == {i: str(i) for i in range(12)}
    assert state["peak"] == 3


def test_replies_that_arrive_while_the_caller_is_busy_come_together(openai_server):
    """``complete_batches``: a caller slower than the replies (eval's fsync) gets all that have arrived at once, each
    reply once; one that keeps up gets them one at a time."""
    server = openai_server(lambda request: Reply(text=request.prompt_text))
    with ChatClient(settings_for(server, concurrency=8)) as client:
        batches = []
        for batch in client.complete_batches([text_message(str(i)) for i in range(8)]):
            batches.append(batch)
            time.sleep(0.3)  # busy: the other seven replies arrive meanwhile
    assert len(batches) < 8 and max(len(batch) for batch in batches) > 1
    assert sorted(index for batch in batches for index, _ in batch) == list(range(8))
    assert all(result.text == str(index) for batch in batches for index, result in batch)
    # One at a time: the second request starts when the first reply is in and takes 0.3 s, so a caller that keeps up
    # has taken the first before it arrives (with no delay a loaded machine could let both land first: CI saw [2]).
    slow = openai_server(lambda request: Reply(text=request.prompt_text, delay_seconds=0.3))
    with ChatClient(settings_for(slow, concurrency=1)) as client:
        assert [len(batch) for batch in client.complete_batches([text_message("a"), text_message("b")])] == [1, 1]


def test_inline_images_reach_the_server(openai_server):
    server = openai_server(lambda request: Reply(text="a cat"))
    messages = [{"role": "user", "content": [image_part(b"\xff\xd8jpeg"), {"type": "text", "text": "What?"}]}]
    with ChatClient(settings_for(server)) as client:
        assert client.complete(messages).text == "a cat"
    part = server.chat_requests[0].messages[0]["content"][0]
    assert part["type"] == "image_url" and part["image_url"]["url"] == "data:image/jpeg;base64,/9hqcGVn"


def test_missing_key_is_a_usage_error_and_key_never_in_results(openai_server, monkeypatch):
    server = openai_server(lambda request: Reply(status=401))
    with ChatClient(settings_for(server)) as client:
        result = client.complete(text_message("x"))
    assert SECRET not in repr(result) and SECRET not in repr(client.usage)
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(UsageError, match="OPENAI_API_KEY"):
        ChatClient(settings_for(server))
