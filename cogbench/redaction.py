"""Credentials never printed: URLs and command lines as cogbench shows them to people.

A base URL may carry a key (``https://user:KEY@host/v1``, ``...?api-key=KEY``); a command line, an
error or a record that repeats it would put the key in a terminal log, a CI log or a shared file.
Everything cogbench prints of a URL goes through ``redact_url``; a URL without credentials comes
back unchanged, character for character (judge cache keys hash it).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable
from urllib.parse import urlsplit

MASK = "***"
# Query parameters holding a credential by their name (api-key, access_token, X-Amz-Signature, sig, ...).
SECRET_PARAMETER = re.compile(r"key|token|secret|pass|sig|auth|cred|session", re.IGNORECASE)
URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>]+")


def redact_url(url: str) -> str:
    """``url`` with its user information and credential-named query values replaced by ``***``."""
    try:
        parts = urlsplit(url)
    except ValueError:  # unparseable (a broken IPv6 host): nothing after the scheme is shown
        return f"{url.partition('://')[0]}://{MASK}"
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{MASK}@{netloc.rpartition('@')[2]}"
    query = "&".join(_redact_parameter(pair) for pair in parts.query.split("&")) if parts.query else parts.query
    if netloc == parts.netloc and query == parts.query:
        return url
    return parts._replace(netloc=netloc, query=query).geturl()


def _redact_parameter(pair: str) -> str:
    name, equals, value = pair.partition("=")
    return f"{name}={MASK}" if equals and value and SECRET_PARAMETER.search(name) else pair


def redact_text(text: str) -> str:
    """Every URL inside ``text`` (a message, an exception's words) redacted."""
    return URL.sub(lambda match: redact_url(match.group(0)), text)


def redacted_command(words: Iterable[str]) -> str:
    """A command line to print: each word's URLs redacted, then shell-quoted."""
    return shlex.join(redact_text(str(word)) for word in words)
