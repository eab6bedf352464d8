"""A real local HTTP server that speaks the OpenAI chat-completions API: ``cogbench demo server``, and the tests'.

``cogbench demo server --reply right`` answers every chat completion with one text, a stand-in judge or
model that shows the path of a run offline (not a judge's quality). The tests give it a *responder*
instead: a callable that gets the parsed request (and how many came before it) and returns a ``Reply``,
which says what goes over the wire: a normal completion, an HTTP error status (429, 500), a delay before
answering, a reply dripped a byte at a time, or raw bytes that are not valid JSON. Every request is
recorded, so a test can check what the client really sent (retries, the prompt, inline image parts).
Standard library only: it runs on the core install.

Usage::

    def responder(request):
        return Reply(text="right")

    with OpenAIServer(responder) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="test")
"""

from __future__ import annotations

import json
import ssl
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from cogbench.dataset_builders.output import check_option_file
from cogbench.dataset_builders.writes import write_file
from cogbench.errors import UsageError


@dataclass
class Reply:
    """What the server answers to one request."""

    text: str = ""
    status: int = 200
    delay_seconds: float = 0.0
    raw_body: bytes | None = None  # sent as is, e.g. malformed JSON
    prompt_tokens: int = 10
    completion_tokens: int = 2
    headers: dict[str, str] = field(default_factory=dict)
    drop_connection: bool = False  # close the connection without answering, as a dying server does
    drip_seconds: float = 0.0  # send the whole response (status line, headers, body) one byte per this many seconds
    # A reasoning model's reply shapes (tests/test_thinking_openai.py replays each provider's documented
    # one): the whole ``message`` object instead of {"role", "content": text}, the choice's finish
    # reason, and ``usage.completion_tokens_details``.
    message: dict[str, Any] | None = None
    finish_reason: str = "stop"
    completion_details: dict[str, Any] | None = None
    # A refusal as OpenAI sends one (https://platform.openai.com/docs/guides/structured-outputs#refusals):
    # ``message.refusal`` the text, ``content`` null unless ``text`` is given too.
    refusal: str | None = None


def _message(reply: Reply) -> dict[str, Any]:
    if reply.message is not None:
        return reply.message
    if reply.refusal is not None:
        return {"role": "assistant", "content": reply.text or None, "refusal": reply.refusal}
    return {"role": "assistant", "content": reply.text}


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]  # names lower-cased
    body: dict[str, Any]

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.body.get("messages", [])

    @property
    def prompt_text(self) -> str:
        """All text parts of all messages, joined: what a judge prompt test looks at."""
        parts = []
        for message in self.messages:
            content = message.get("content")
            if isinstance(content, str):
                parts.append(content)
            elif isinstance(content, list):
                parts.extend(part.get("text", "") for part in content if part.get("type") == "text")
        return "\n".join(parts)


Responder = Callable[[RecordedRequest], Reply]


def completion_body(model: str, reply: Reply) -> bytes:
    """A chat.completion object as the OpenAI API returns it."""
    body = {
        "id": "chatcmpl-local",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": _message(reply),
                "finish_reason": reply.finish_reason,
            }
        ],
        "usage": {
            "prompt_tokens": reply.prompt_tokens,
            "completion_tokens": reply.completion_tokens,
            "total_tokens": reply.prompt_tokens + reply.completion_tokens,
            **({"completion_tokens_details": reply.completion_details} if reply.completion_details else {}),
        },
    }
    return json.dumps(body).encode("utf-8")


class _QuietOnHangUp(ThreadingHTTPServer):
    """A client that hangs up (a bound attempt giving up, a process exiting) is not the server's error:
    socketserver would print its traceback to stderr, into the very output a test reads."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            super().handle_error(request, client_address)


class OpenAIServer:
    """Serves ``POST /v1/chat/completions`` on 127.0.0.1 at a free port, in a thread."""

    def __init__(
        self,
        responder: Responder,
        record: bool = True,
        tls: tuple[str, str] | None = None,
        models: list[str | dict[str, Any]] | bytes | None = None,
        api_key: str | None = None,
        port: int = 0,
    ):
        """``tls``: (certificate file, key file) to serve ``https://`` instead of ``http://``.

        ``models``: what ``GET /v1/models`` lists (ids, or whole entries with an ``id``); None: no such
        route (404), as a minimal server has none; bytes: the body of its answer (200), sent as is.

        ``api_key``: every request without ``Authorization: Bearer API_KEY`` is answered 401, as ``vllm serve
        --api-key`` answers it (recorded all the same); None: no key is demanded.

        ``port``: on 127.0.0.1 (0: a free one); one already taken raises ``OSError``.
        """
        self.responder = responder
        self.models = models
        self.api_key = api_key
        self.scheme = "https" if tls else "http"
        self.record = record  # False: keep no request (benchmarks send thousands of images)
        self.requests: list[RecordedRequest] = []
        self.dripped_until_cut = 0  # dripping replies the client cut off
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # TCP_NODELAY, as real servers set it: otherwise headers and body, written apart,
            # meet the client's delayed ACK and every reply waits ~40 ms.
            disable_nagle_algorithm = True

            def log_message(self, *args: object) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:
                request = RecordedRequest(self.path, {k.lower(): v for k, v in self.headers.items()}, {})
                if server.record:
                    with server._lock:
                        server.requests.append(request)
                if self._refused(request):
                    return
                if server.models is None or not self.path.rstrip("/").endswith("/models"):
                    self._send(404, b'{"error": {"message": "not found"}}', {})
                    return
                if isinstance(server.models, bytes):  # a broken or hostile server's list
                    self._send(200, server.models, {})
                    self.close_connection = True  # a client that stops reading it resets the connection
                    return
                entries = [{"id": m} if isinstance(m, str) else m for m in server.models]
                data = [{"object": "model", "created": 0, "owned_by": "local", **entry} for entry in entries]
                self._send(200, json.dumps({"object": "list", "data": data}).encode("utf-8"), {})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    body = {}
                request = RecordedRequest(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                if server.record:
                    with server._lock:
                        server.requests.append(request)
                if self._refused(request):
                    return
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, b'{"error": {"message": "not found"}}', {})
                    return
                reply = server.responder(request)
                self._drip = reply.drip_seconds
                if reply.delay_seconds:
                    time.sleep(reply.delay_seconds)
                if reply.drop_connection:
                    self.close_connection = True
                    return
                if reply.raw_body is not None:
                    payload = reply.raw_body
                elif reply.status != 200:
                    payload = json.dumps(
                        {"error": {"message": f"status {reply.status} on demand", "type": "test"}}
                    ).encode("utf-8")
                else:
                    payload = completion_body(body.get("model", ""), reply)
                self._send(reply.status, payload, reply.headers)

            def _refused(self, request: RecordedRequest) -> bool:
                """Answer 401 to a request without the demanded key."""
                if server.api_key is None or request.headers.get("authorization") == f"Bearer {server.api_key}":
                    return False
                self._send(401, b'{"error": {"message": "invalid api key", "type": "auth"}}', {})
                return True

            def _send(self, status: int, payload: bytes, headers: dict[str, str]) -> None:
                if drip := getattr(self, "_drip", 0.0):
                    self._send_dripping(status, payload, drip)
                    return
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                try:
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):  # the client timed out and left
                    pass

            def _send_dripping(self, status: int, payload: bytes, drip: float) -> None:
                """A server that never stalls long enough to trip a per-read timeout, yet never finishes in time."""
                head = (
                    f"HTTP/1.1 {status} OK\r\nContent-Type: application/json\r\nContent-Length: {len(payload)}\r\n\r\n"
                ).encode("ascii")
                try:
                    for byte in head + payload:
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        time.sleep(drip)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up: what a bound attempt does
                    server.dripped_until_cut += 1
                self.close_connection = True

        # A listen backlog like real servers' (socketserver's default is 5): a client that opens
        # 64 connections at once otherwise has some of them reset.
        self._httpd = _QuietOnHangUp(("127.0.0.1", port), Handler, bind_and_activate=False)
        self._httpd.request_queue_size = 1024
        try:
            self._httpd.server_bind()
        except OSError:
            self._httpd.server_close()
            raise
        if tls:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*tls)
            self._httpd.socket = context.wrap_socket(self._httpd.socket, server_side=True)
        self._httpd.server_activate()
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"{self.scheme}://{host}:{port}/v1"

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.path.rstrip("/").endswith("/chat/completions")]

    def start(self) -> OpenAIServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def serve(reply: str, port: int = 0, url_file: str | None = None) -> None:
    """``cogbench demo server``: answer every chat completion with ``reply`` until interrupted (Ctrl-C), on 127.0.0.1
    at ``port`` (0: a free one); ``url_file`` gets the base URL once serving, for a script to wait on."""
    if url_file:
        check_option_file(Path(url_file), "--url-file")
        if not Path(url_file).parent.is_dir():
            raise UsageError(
                f"--url-file {url_file}: no folder {Path(url_file).parent}; give a file in a folder that exists"
            )
    try:
        server = OpenAIServer(lambda request: Reply(text=reply), record=False, port=port)
    except OSError as error:  # a port already taken is one line: never a server that is not ours
        raise UsageError(
            f"--port {port}: cannot listen on 127.0.0.1:{port} ({error.strerror}); leave --port out for a free one"
        ) from None
    with server:
        if url_file:
            write_file(Path(url_file), server.base_url + "\n")
        print(f"serving {server.base_url}", flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:  # the way to stop it
            pass
