"""Errors the command line turns into a one-line message and an exit code."""

from __future__ import annotations

# The exit codes of every `cogbench` command (docs/conventions.md, "Command-line conventions"; shown in every --help).
EXIT_OK = 0
EXIT_FAILURES = 1  # findings (validate errors) or a failed job
EXIT_USAGE = 2  # the command was called wrongly; argparse's own errors exit 2 too
EXIT_QUERIES_FAILED = 3  # some judge or model queries still failed after their retries
EXIT_GATE_FAILED = 4  # `compare --gate`: B is worse than A by more than --max-drop with the interval's confidence
EXIT_LEAKS_FOUND = 5  # `leak-scan`: the corpus holds near duplicates of benchmark images
EXIT_CODES = {
    EXIT_OK: "success",
    EXIT_FAILURES: "findings or failures (validate found errors, a job failed)",
    EXIT_USAGE: "usage error (bad option, missing file or folder, option that does not apply)",
    EXIT_QUERIES_FAILED: "some judge or model queries failed after their retries; run the same command again",
    EXIT_GATE_FAILED: "compare --gate failed: B is worse than A by more than --max-drop at the interval's confidence",
    EXIT_LEAKS_FOUND: "leak-scan found near duplicates of benchmark images in the corpus",
}


class CogbenchError(Exception):
    """An expected failure: shown to the user as ``error: <message>``, no traceback."""

    exit_code = EXIT_FAILURES


class UsageError(CogbenchError):
    """The command was called wrongly (a missing file, a bad option value)."""

    exit_code = EXIT_USAGE


class RawDataError(CogbenchError):
    """Raw annotations that cannot be built; says where, so the author can fix it.

    ``problems`` holds every problem found, not just the first, each already
    formatted as ``file: record <id>: field <name>: message``.
    """

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        shown = "\n  ".join(self.problems[:50])
        more = f"\n  ... and {len(self.problems) - 50} more" if len(self.problems) > 50 else ""
        super().__init__(f"{len(self.problems)} problem(s) in the raw data:\n  {shown}{more}")


def locate(file: str, record: str | None = None, field: str | None = None) -> str:
    """Format a location the way every error and finding in the project does."""
    parts = [str(file)]
    if record is not None:
        parts.append(f"record {record}")
    if field is not None:
        parts.append(f"field {field}")
    return ": ".join(parts)


class IncompleteRunError(CogbenchError):
    """Some judge or model queries still failed after their retries (exit 3).

    What did succeed is saved (and cached), so running the same command again
    sends only what failed; ``--allow-failures`` accepts a partial result.
    """

    exit_code = 3


def echoed(value: object, limit: int = 80) -> str:
    """``repr(value)`` cut to about ``limit`` characters, for a user's value repeated in an error or a
    failure line: a 5 MB custom_id must not become a 5 MB message."""
    shown = repr(value)
    if len(shown) <= limit:
        return shown
    return f"{shown[: limit - 3]}... ({len(str(value)):,} characters)"


def shown(value: object, limit: int = 80) -> str:
    """Text that others chose (a model id a server lists, a file name in someone's pull request, a model name
    in a verdict archive) as cogbench prints it: itself when it is printable and at most ``limit`` characters,
    else ``echoed``: quoted, escaped (a newline or an ANSI escape cannot forge a line or a colour) and cut."""
    text = str(value)
    if text.isprintable() and len(text) <= limit:
        return text
    return echoed(text, limit)
