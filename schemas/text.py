"""Text hygiene: the one definition of blank, unencodable and look-alike text.

Raw text is stored as the authors wrote it; these rules decide what is an
error (``text_problem``, ``id_problem``) and how two texts are compared
(``comparison_key``: NFC, zero-width and other format characters removed,
case folded, whitespace collapsed), so "Café" in NFC and NFD, "id" and
"id\u200b", or "x" and "x " count as the same text everywhere.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

# Longest id accepted: ids become file names, URLs and table keys.
MAX_ID_CHARS = 200
# Deepest JSON nesting of any raw format (description: object > entry > list > string).
MAX_JSON_DEPTH = 16
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def visible(text: str) -> str:
    """The text without format characters (zero-width spaces, joiners, BOM, bidi marks)."""
    return "".join(char for char in text if unicodedata.category(char) != "Cf")


def comparison_key(text: str) -> str:
    """How two texts are compared for duplicates: Unicode form, invisibles, case, spaces."""
    return " ".join(unicodedata.normalize("NFC", visible(text)).casefold().split())


def text_problem(text: str) -> tuple[str, str] | None:
    """(code, message) when a text field cannot be used; None when it is fine."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return "text.unencodable", f"cannot be encoded as UTF-8 ({error.reason} at character {error.start})"
    if not text.strip():
        return "text.empty", "empty or only whitespace"
    if not visible(text).strip():
        return "text.empty", "only invisible characters (zero-width or format characters)"
    if _CONTROL.search(text):
        return "text.control", "holds a control character (NUL or similar)"
    return None


def id_problem(text: str) -> tuple[str, str] | None:
    """(code, message) for an id that is unusable as a key: text problems, plus length,
    surrounding spaces and invisible characters."""
    problem = text_problem(text)
    if problem:
        return problem
    if len(text) > MAX_ID_CHARS:
        return "text.bad_id", f"{len(text)} characters, at most {MAX_ID_CHARS}"
    if text != text.strip():
        return "text.bad_id", "surrounding whitespace"
    if visible(text) != text or unicodedata.normalize("NFC", text) != text:
        return "text.bad_id", "invisible characters or a non-NFC Unicode form"
    return None


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT_CHARACTER = "\ufffd"


def replace_lone_surrogates(text: str) -> str:
    """Text from the network made storable: each lone surrogate (U+D800-U+DFFF, what some servers
    send for broken UTF-8 as a ``"\\ud800"`` escape) becomes U+FFFD, as a UTF-8 decoder does with
    bytes it cannot read. Everything else is kept as sent (docs/scoring.md, "Odd bytes in replies")."""
    return _LONE_SURROGATE.sub(REPLACEMENT_CHARACTER, text)


def shown(text: str, limit: int = 60) -> str:
    """A text safe to print in one line of a message: cut, and quoted by ``repr``, which
    escapes control characters and lone surrogates."""
    return repr(text[:limit] + "..." if len(text) > limit else text)


def json_depth(document: Any) -> int:
    """Nesting depth of a loaded JSON document, without recursion."""
    deepest, stack = 0, [(document, 1)]
    while stack:
        value, depth = stack.pop()
        deepest = max(deepest, depth)
        if depth > MAX_JSON_DEPTH:
            break
        if isinstance(value, dict):
            stack.extend((item, depth + 1) for item in value.values())
        elif isinstance(value, list):
            stack.extend((item, depth + 1) for item in value)
    return deepest
