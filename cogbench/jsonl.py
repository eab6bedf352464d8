"""JSON Lines read one way: one record per ``"\\n"``, whatever its strings hold.

cogbench writes text as text (``ensure_ascii=False``), so a model's answer may put U+2028, U+2029 or
U+0085 into details.jsonl, predictions.jsonl or an EEE record's rows unescaped, as JSON allows.
``str.splitlines()`` (and a text file opened with Python's default newline handling, which also
splits at a lone ``"\\r"``) cuts a record there, and every command after ``score`` would refuse the
run's own output as "not valid JSON". Every JSONL reader of the package takes its lines from here.
"""

from __future__ import annotations

import os
from collections.abc import Iterator


def text_lines(text: str) -> Iterator[tuple[int, str]]:
    """(1-based line number, line) of each non-blank line of ``text``, split at ``"\\n"`` only."""
    for number, line in enumerate(text.split("\n"), 1):
        if line.strip():
            yield number, line


def file_lines(path: str | os.PathLike, skip_torn_tail: bool = False) -> Iterator[tuple[int, str]]:
    """(1-based line number, line) of each non-blank line of a UTF-8 file, read as it streams, split at
    ``"\\n"`` only. ``skip_torn_tail`` stops before a last line without its newline: what a killed writer
    leaves in a file that another process may still be appending to."""
    with open(path, encoding="utf-8", newline="\n") as handle:
        for number, line in enumerate(handle, 1):
            if skip_torn_tail and not line.endswith("\n"):
                return
            if line.strip():
                yield number, line
