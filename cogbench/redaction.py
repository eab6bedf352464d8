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
# A URL typed where a path goes comes back from pathlib with one slash (``http:/me:KEY@host/v1``): its user
# information is masked too.
PATH_URL_USER = re.compile(r"\b([A-Za-z][A-Za-z0-9+.-]*:/)([^/\s'\"<>@]+)@")


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
    return PATH_URL_USER.sub(rf"\1{MASK}@", URL.sub(lambda match: redact_url(match.group(0)), text))


def redacted_command(words: Iterable[str]) -> str:
    """A command line to print: each word's URLs redacted, then shell-quoted."""
    return shlex.join(redact_text(str(word)) for word in words)


# A spec's own endpoint: ``openai:MODEL@http://HOST/v1`` (judges, panel members, models) is cut at the first of
# these; what comes before is the spec's name, shown and recorded, and the URL is never part of it.
URL_MARK = ("@http://", "@https://")


def split_endpoint(value: str) -> tuple[str, str | None, str | None]:
    """``KIND:MODEL[@URL][#VARIABLE]`` as (``KIND:MODEL``, URL or None, VARIABLE or None): the one place a spec's
    URL and key variable are cut off its name, so that no name carries a credential into a file or a request."""
    spec, variable = value, None
    if "#" in spec:
        spec, _, variable = spec.rpartition("#")
    cut = min((spec.find(mark) for mark in URL_MARK if mark in spec), default=-1)
    if cut < 0:
        return spec, None, variable
    return spec[:cut], spec[cut + 1 :], variable
