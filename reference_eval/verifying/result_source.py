"""Where ``verify`` may download an ``.eval_results`` file's details from: the Hub configured here, only.

The file is anyone's text, and its ``source.url`` may name any host; huggingface_hub sends the user's
token (``HF_TOKEN``, the stored login) to whatever endpoint it is given. So the details are fetched
from the endpoint the user configured (``HF_ENDPOINT``, else huggingface_hub's default) and a
``source.url`` on another host is refused in one line, before any request.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

from cogbench.errors import UsageError
from cogbench.redaction import redact_url

# The details dataset, or (publish-results --results-source eee) the EEE record in it at a commit.
SOURCE_URL = re.compile(
    r"^(https?://[^/]+)/datasets/([^/]+/[^/]+?)(?:/tree/([^/]+)|/blob/([^/]+)/(eee/data/\S+\.json))?/?$"
)
DEFAULT_PORTS = {"http": 80, "https": 443}


def configured_endpoint() -> str:
    from huggingface_hub import constants

    return constants.ENDPOINT.rstrip("/")


def _origin(url: str) -> tuple[str, str | None, int | None] | None:
    """(scheme, host, port) of ``url``, the part that decides who receives a request; None if unparseable."""
    try:
        parts = urlsplit(url)
        return parts.scheme.lower(), parts.hostname, parts.port or DEFAULT_PORTS.get(parts.scheme.lower())
    except ValueError:
        return None


def details_source(file: Path, url: str) -> tuple[str, str | None, str | None]:
    """(repo id, revision, EEE record path or None) of the details dataset ``url`` names, when it is on
    the configured Hub; a record path stays inside the dataset."""
    match = SOURCE_URL.match(url)
    if not match:
        raise UsageError(f"{file}: no source.url naming a details dataset; give --details")
    endpoint = configured_endpoint()
    origin = _origin(match.group(1))
    if origin is None or origin != _origin(endpoint):
        shown = f"{origin[0]}://{origin[1]}{f':{origin[2]}' if origin[2] else ''}" if origin else redact_url(url)
        raise UsageError(
            f"{file}: source.url is on {shown}, not on the Hub configured here ({redact_url(endpoint)}); "
            "refusing to download from it (your Hub token would go there): give --details, or set HF_ENDPOINT "
            "to that Hub if you trust it"
        )
    record = match.group(5)
    if record and ".." in record.split("/"):
        raise UsageError(f"{file}: source.url names a path outside the details dataset")
    return match.group(2), match.group(3) or match.group(4), record
