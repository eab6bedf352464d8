"""The real local OpenAI-compatible server of the tests: ``cogbench demo server``'s (one copy, in the package:
``cogbench.reference_eval.demo.stand_in_server``), and the tests' helpers around it.

The test supplies a *responder*: a callable that gets the parsed request body
(and how many requests came before it) and returns a ``Reply``. The reply says
what goes over the wire: a normal completion, an HTTP error status (429, 500),
a delay before answering, a reply dripped a byte at a time, or raw bytes that
are not valid JSON. Every request is recorded, so a test can check what the
client really sent (retries, the prompt, inline image parts).

Usage::

    def responder(request):
        return Reply(text="right")

    with OpenAIServer(responder) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="test")

or the ``openai_server`` pytest fixture from ``tests/conftest.py``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from cogbench.reference_eval.demo.stand_in_server import (  # noqa: F401 (re-exported for the tests)
    OpenAIServer,
    RecordedRequest,
    Reply,
    Responder,
    completion_body,
)


def request_lines(folder) -> list[dict[str, Any]]:
    """Every line of a folder's request files (``cogbench ... --write-requests``), shard by shard."""
    return [json.loads(line) for path in sorted(folder.glob("requests-*.jsonl")) for line in path.open()]


def answer_as_engine(server: OpenAIServer, requests: list[dict[str, Any]], path):
    """Post each request line's body to ``server``, as a batch engine does; write Batch API output lines."""
    import urllib.request

    with path.open("w") as handle:
        for number, line in enumerate(requests):
            assert line["method"] == "POST" and line["url"] == "/v1/chat/completions"
            http = urllib.request.Request(
                server.base_url + "/chat/completions",
                data=json.dumps(line["body"]).encode(),
                headers={"Content-Type": "application/json", "Authorization": "Bearer x"},
            )
            body = json.loads(urllib.request.urlopen(http).read())
            response = {"status_code": 200, "request_id": f"req-{number}", "body": body}
            handle.write(json.dumps({"id": f"b-{number}", "custom_id": line["custom_id"], "response": response}) + "\n")
    return path


def openai_server_fixture():
    """Pytest fixture body: yields ``start(responder) -> OpenAIServer``; stops them all after."""
    started: list[OpenAIServer] = []

    def start(
        responder: Responder, models: list[str | dict[str, Any]] | bytes | None = None, api_key: str | None = None
    ) -> OpenAIServer:
        server = OpenAIServer(responder, models=models, api_key=api_key).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def numbered_verdicts(verdict, separator: str = " "):
    """A responder for the Figure 8/9 judge: ``N. [verdict(N)]`` for every key point the prompt lists."""

    def responder(request):
        count = int(re.search(r"Your answers to the (\d+) <", request.prompt_text).group(1))
        return Reply(text=separator.join(f"{n}. [{verdict(n)}]" for n in range(1, count + 1)))

    return responder
