"""Refuse a judge that is gone, in one line, before its first request.

The papers' judges are retired: ``gpt-4-turbo`` (the CogBench Cognition judge) and
``gpt-4-turbo-preview`` (the CODIS judge) were shut down on 2026-10-23, ``gpt-4o``
follows on 2027-01-14. A run sent to them fails every request, one retry schedule at a
time. ``check_judge`` reads the dated table below (plus dates the user adds, and any
shutdown date the endpoint's own model list gives) against today's date, and the
endpoint's model list (``backends/model_list``), and refuses with what to do instead.
"""

from __future__ import annotations

import datetime as dt
import difflib
from dataclasses import dataclass
from typing import Any

from cogbench.errors import UsageError, shown
from cogbench.reference_eval.backends.model_list import ModelList

OPENAI_DEPRECATIONS = "OpenAI's deprecations page, https://platform.openai.com/docs/deprecations"


@dataclass(frozen=True)
class Shutdown:
    """A model id, the day it stops answering, what it judged here, and where the date comes from."""

    model: str
    date: dt.date
    role: str
    source: str


KNOWN_SHUTDOWNS = (
    Shutdown(
        "gpt-4-turbo",
        dt.date(2026, 10, 23),
        "the CogBench Cognition judge (authors' eval/cognition_gpt_eval.py)",
        OPENAI_DEPRECATIONS,
    ),
    Shutdown(
        "gpt-4-turbo-preview", dt.date(2026, 10, 23), "the CODIS judge (authors' data/eval.py)", OPENAI_DEPRECATIONS
    ),
    Shutdown("gpt-4o", dt.date(2027, 1, 14), "a common replacement judge", OPENAI_DEPRECATIONS),
)

# The papers' own judges, each retired (KNOWN_SHUTDOWNS): what a certified judge takes the place of.
PAPER_JUDGES = {"description": "gpt-4-turbo", "codis": "gpt-4-turbo-preview"}
PAPER_TASK_NAMES = {"description": "CogBench Cognition", "codis": "CODIS"}


def paper_judge_text(task: str) -> str:
    """``the papers' CODIS judge `gpt-4-turbo-preview` (its role, shut down 2026-10-23)``: what a judge replaces."""
    model = PAPER_JUDGES[task]
    shutdown = next((s for s in KNOWN_SHUTDOWNS if s.model == model), None)
    about = f" ({shutdown.role}, shut down {shutdown.date.isoformat()})" if shutdown else ""
    return f"the papers' {PAPER_TASK_NAMES[task]} judge `{model}`{about}"


INSTEAD = (
    "judge with a pinned open-weight model instead (`vllm serve MODEL --revision REV`, then --judge openai:MODEL "
    "--judge-base-url http://HOST:PORT/v1; docs/judges.md) and certify it against the official verdicts with "
    "`cogbench judges certify`; --judge-accept-retired sends the requests anyway"
)

# Fields of a model-list entry read as its shutdown date: an ISO date, or Unix seconds.
LISTED_DATE_FIELDS = ("shutdown_date", "shutdown_at")


def parse_shutdowns(values: tuple[str, ...] | list[str]) -> dict[str, dt.date]:
    """``--judge-shutdown MODEL=YYYY-MM-DD`` values as a table; one usage line for a value that is not one."""
    table = {}
    for value in values:
        model, _, day = value.partition("=")
        try:
            table[model.strip()] = dt.date.fromisoformat(day.strip())
        except ValueError:
            model = ""
        if not model.strip():
            raise UsageError(f"--judge-shutdown {value!r}: expected MODEL=YYYY-MM-DD, e.g. gpt-4o=2027-01-14")
    return table


def listed_shutdown(entry: dict[str, Any] | None) -> dt.date | None:
    """The shutdown date an endpoint's model-list entry carries, if any (unreadable values are ignored)."""
    for name in LISTED_DATE_FIELDS:
        value = (entry or {}).get(name)
        try:
            if isinstance(value, str):
                return dt.date.fromisoformat(value[:10])
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return dt.datetime.fromtimestamp(value, dt.timezone.utc).date()
        except (ValueError, OverflowError, OSError):
            continue
    return None


def shutdown_of(model: str, added: dict[str, dt.date], listing: ModelList | None) -> tuple[dt.date, str] | None:
    """The earliest known shutdown date of ``model`` and where it comes from, or None."""
    known = [(s.date, f"{s.role}; {s.source}") for s in KNOWN_SHUTDOWNS if s.model == model]
    if model in added:
        known = [(added[model], "--judge-shutdown")]  # the user's date replaces the table's
    listed = listed_shutdown(listing.entry(model)) if listing is not None else None
    if listing is not None and listed is not None:
        known.append((listed, f"the endpoint's model list, {listing.url}"))
    return min(known) if known else None


def check_judge(
    model: str,
    today: dt.date,
    listing: ModelList | None,
    added: dict[str, dt.date] | None = None,
) -> None:
    """Raise ``UsageError`` (one line) for a judge that is past its shutdown or that the endpoint does not serve.

    ``listing`` is None where no endpoint is asked (request files). An endpoint with no model list at all
    (a minimal server: 404, 405, 501) is not checked there; the dates still are.
    """
    shutdown = shutdown_of(model, added or {}, listing)
    if shutdown is not None and shutdown[0] <= today:
        raise UsageError(f"judge {model} was shut down on {shutdown[0].isoformat()} ({shutdown[1]}); {INSTEAD}")
    if listing is None or listing.unsupported:
        return
    if listing.error is not None:
        raise UsageError(
            f"cannot check judge {model}: GET {listing.url}: {listing.error}; {unreachable_advice(listing)}"
        )
    if listing.entry(model) is None:
        served = sorted(m["id"] for m in listing.models)
        names = [shown(name, 60) for name in served]  # ids the server chose: escaped, shortened
        listed = ", ".join(names[:8]) + (f", ... ({len(names) - 8} more)" if len(names) > 8 else "")
        raise UsageError(
            f"{listing.url} does not serve judge {model} (it serves: {listed or 'none'}); {unlisted_advice(model, served)}"
        )


def unreachable_advice(listing: ModelList) -> str:
    """What to do when the model list could not be read: a server that is down is not a retired judge."""
    if listing.error in ("HTTP 401", "HTTP 403"):
        return "check the key sent to it (OPENAI_API_KEY, or the variable a judge spec names after #)"
    if listing.error == "connection failed" or (listing.error or "").startswith("no answer within"):
        return f"is the server running at {listing.url.removesuffix('/models')}?"
    return f"is {listing.url.removesuffix('/models')} an OpenAI-compatible endpoint? --judge-accept-retired skips this check"


def unlisted_advice(model: str, served: list[str]) -> str:
    """What to do about a judge the endpoint does not list: a misspelt name, another model served, or a retired judge."""
    if any(shutdown.model == model for shutdown in KNOWN_SHUTDOWNS):
        return INSTEAD  # a papers' judge no longer served: the retired judge's way out
    lowered = {name.lower(): name for name in served}  # case apart: QWEN/QWEN3-8B is Qwen/Qwen3-8B misspelt
    close = difflib.get_close_matches(model.lower(), list(lowered), n=1)
    if close:
        return f"did you mean {shown(lowered[close[0]], 60)}?"
    return "name one of the models it serves (--judge openai:MODEL), or the endpoint that serves this one"
