"""``GET {base_url}/models``: which models an OpenAI-compatible endpoint serves.

Asked once before a judge run sends its first request, so that a judge the endpoint no
longer serves (a retired OpenAI model, a ``vllm serve`` started with another model) is
refused in one line instead of failing thousands of requests (``judges/retirement``).
The request goes the way chat requests go (``connections``: the environment's proxy and
CA bundle, the key from ``OPENAI_API_KEY`` or the variable named, in the header only, or no key where
none goes to this endpoint), bounded by one deadline.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from cogbench import __version__
from cogbench.redaction import redact_url
from cogbench.reference_eval.backends.connections import (
    ReplyTooLarge,
    max_reply_bytes,
    proxy_config,
    read_capped,
    single_connection,
    tls_context,
)
from cogbench.reference_eval.backends.deadline import attempt_deadline
from cogbench.reference_eval.backends.openai_api import API_KEY_VARIABLE, OPENAI_BASE_URL, check_base_url, key_headers

# Statuses by which a server says it has no model list at all (a minimal server): nothing to check against.
NO_LIST_STATUSES = {404, 405, 501}


@dataclass(frozen=True)
class ModelList:
    """The endpoint's answer: ``models`` (each entry as the server gave it, with its ``id``), or why there is none.

    ``unsupported`` is True when the server has no ``/models`` route (404, 405, 501); ``error`` is one line
    naming what failed otherwise (unreachable, 401, a body that is not a model list).
    """

    url: str  # credentials masked (redaction.redact_url)
    models: list[dict[str, Any]]
    error: str | None = None
    unsupported: bool = False

    def entry(self, model: str) -> dict[str, Any] | None:
        return next((m for m in self.models if m.get("id") == model), None)


def list_models(
    base_url: str | None, timeout_seconds: float = 30.0, key_variable: str | None = API_KEY_VARIABLE
) -> ModelList:
    """One GET of ``BASE_URL/models``, with ``key_variable``'s key (None: no key); never raises for a network or
    HTTP failure (``error`` says it)."""
    import httpcore

    check_base_url(base_url)  # a URL without its scheme is the user's mistake, said before any request
    url = (base_url or OPENAI_BASE_URL).rstrip("/") + "/models"
    shown = redact_url(url)  # what every message names: credentials in the URL masked
    headers = [
        *key_headers(key_variable),
        (b"Accept", b"application/json"),
        (b"User-Agent", f"cogbench/{__version__}".encode()),
    ]
    cap = max_reply_bytes()  # a model list is read as a chat reply is: up to the cap, never whole
    seconds = timeout_seconds
    timeouts = {"timeout": {"connect": seconds, "read": seconds, "write": seconds, "pool": seconds}}
    connection = single_connection(tls_context(url), proxy_config(url))
    try:
        with (
            attempt_deadline(seconds),
            connection.stream("GET", url, headers=headers, extensions=timeouts) as response,
        ):
            content = read_capped(response, cap) if response.status < 400 else b""
    except httpcore.TimeoutException:
        return ModelList(shown, [], f"no answer within {seconds:g} s")
    except ReplyTooLarge as error:
        return ModelList(shown, [], str(error))
    except (httpcore.NetworkError, httpcore.ProtocolError, httpcore.ProxyError):
        return ModelList(shown, [], "connection failed")
    finally:
        connection.close()
    if response.status in NO_LIST_STATUSES:
        return ModelList(shown, [], f"HTTP {response.status}", unsupported=True)
    if response.status >= 400:
        return ModelList(shown, [], f"HTTP {response.status}")
    try:
        data = json.loads(content)["data"]
        models = [entry for entry in data if isinstance(entry, dict) and isinstance(entry.get("id"), str)]
    except (ValueError, KeyError, TypeError, RecursionError):  # RecursionError: JSON nested too deeply
        return ModelList(shown, [], "the answer is not a model list (JSON with a data array)")
    return ModelList(shown, models)
