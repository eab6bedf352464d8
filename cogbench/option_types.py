"""Value types of command-line options, shared by every ``cli.py``: nonsense is refused in one line.

argparse turns an ``ArgumentTypeError`` into the usage error ``argument --x: MESSAGE`` (exit 2),
so a value that would give a nonsense result (a timeout of 0 or nan, a significance level of 2)
never reaches the code. Each type converts first (``int("x")`` fails the same way) and then
checks its range.

The Python API (``cogbench.evaluate``, ``score``, ``compare``...) checks its arguments by the same options:
``as_option`` runs a value through an option's own type and choices, by argparse itself, and raises
``UsageError`` with the message the command line prints after ``error:``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
from collections.abc import Callable
from typing import Any

from cogbench.errors import UsageError, echoed

# Defaults a command's option and the Python API's argument share: one constant each.
DEFAULT_SEED = 0  # of every resampling and permutation (same seed, same result)
DEFAULT_RESAMPLES = 2000  # bootstrap resamples
DEFAULT_PERMUTATIONS = 9999  # random swaps of a paired permutation test


def _checked(text: str, value: float, ok: Callable[[float], bool], what: str) -> None:
    if not ok(value):
        raise argparse.ArgumentTypeError(f"{text} is not {what}")


def positive_int(text: str) -> int:
    value = int(text)
    _checked(text, value, lambda v: v >= 1, "a positive integer")
    return value


# The most tokens `--max-new-tokens` may ask (2**20): above any model's context today, and small
# enough that every engine takes it (10**39 would overflow a server's 64-bit integer).
MAX_NEW_TOKENS = 1_048_576


def token_count(text: str) -> int:
    """Generated tokens per query: a positive integer no larger than ``MAX_NEW_TOKENS``."""
    value = int(text)
    _checked(text[:40], value, lambda v: 1 <= v <= MAX_NEW_TOKENS, f"a positive integer up to {MAX_NEW_TOKENS:,}")
    return value


# The most resamples (bootstrap, permutations) an option may ask: 50 times certify's and score's 2,000, and 10
# times compare's 9,999 permutations; more changes an interval's third decimal at most and runs for hours
# (certify --resamples 10**12 never ended).
MAX_RESAMPLES = 100_000


def resample_count(text: str) -> int:
    """Resamples of a bootstrap or random permutations of a test: a positive integer up to ``MAX_RESAMPLES``."""
    value = int(text)
    _checked(text[:40], value, lambda v: 1 <= v <= MAX_RESAMPLES, f"a positive integer up to {MAX_RESAMPLES:,}")
    return value


def non_negative_int(text: str) -> int:
    value = int(text)
    _checked(text, value, lambda v: v >= 0, "0 or a positive integer")
    return value


def port_number(text: str) -> int:
    """A TCP port: 1 to 65535, or 0 for a free one."""
    value = int(text)
    _checked(text, value, lambda v: 0 <= v <= 65535, "a port number (0 to 65535; 0: a free one)")
    return value


def finite(text: str) -> float:
    value = float(text)
    _checked(text, value, math.isfinite, "a finite number")
    return value


def positive_seconds(text: str) -> float:
    """A timeout: 0 would fail every request at once, nan or inf would never end one."""
    value = finite(text)
    _checked(text, value, lambda v: v > 0, "a positive number of seconds")
    return value


def non_negative_seconds(text: str) -> float:
    value = finite(text)
    _checked(text, value, lambda v: v >= 0, "0 or a positive number of seconds")
    return value


def significance(text: str) -> float:
    """A significance level: nan compares false with every p-value, 0 or 1 and beyond mark none or all."""
    value = finite(text)
    _checked(text, value, lambda v: 0 < v < 1, "a significance level between 0 and 1 (exclusive)")
    return value


def metric_points(text: str) -> float:
    """A difference on a metric's scale in points (0 to 100): ``compare --max-drop``."""
    value = finite(text)
    _checked(text, value, lambda v: 0 <= v <= 100, "a number of points from 0 to 100")
    return value


def share(text: str) -> float:
    """A share of a resource (vLLM's ``--gpu-memory-utilization``): above 0, at most 1."""
    value = finite(text)
    _checked(text, value, lambda v: 0 < v <= 1, "a share above 0 and at most 1")
    return value


def json_counts(text: str) -> dict[str, int]:
    """A JSON object of counts, e.g. vLLM's ``--limit-mm-per-prompt '{"image":1}'``."""
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if not isinstance(value, dict) or not all(
        isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value.values()
    ):
        raise argparse.ArgumentTypeError(f"{text!r} is not a JSON object of counts, e.g. '{{\"image\":1}}'")
    return value


class _Refused(Exception):
    """argparse's usage error, raised instead of printed and exited on."""


class _OneOption(argparse.ArgumentParser):
    def error(self, message: str):  # type: ignore[override]
        raise _Refused(message)


def as_option(action: argparse.Action, value: Any) -> Any:
    """``value``, given to the Python API where a command takes the option ``action``, converted and checked as
    the command line converts and checks what is typed there: the option's own type and choices, run by argparse
    on ``str(value)``, so ``limit="3"`` is 3 and ``limit=-1`` is ``UsageError("argument --limit: -1 is not a
    positive integer")``, the message ``eval`` prints for ``--limit -1``. None is the option left out; a flag
    takes True or False; an option given several times (``action="append"``, ``nargs="+"``) takes a list of
    values, each checked; an option without a type takes text (a path may be an ``os.PathLike``)."""
    name = "/".join(action.option_strings) or str(action.metavar or action.dest)
    if value is None:
        return None
    if action.nargs == 0:  # a flag (store_true)
        if not isinstance(value, bool):
            raise UsageError(f"argument {name}: {echoed(value)} is not True or False")
        return value
    if isinstance(action, argparse._AppendAction) or action.nargs in ("+", "*"):
        if isinstance(action.nargs, int):  # a pair per value (--think-tags): checked where it is read
            return value
        values = [value] if isinstance(value, (str, os.PathLike)) else value
        if not isinstance(values, (list, tuple)):
            raise UsageError(f"argument {name}: expected a list of values, not {type(value).__name__} {echoed(value)}")
        return tuple(_one(action, name, item) for item in values)
    return _one(action, name, value)


def _one(action: argparse.Action, name: str, value: Any) -> Any:
    if action.type is None and not isinstance(value, (str, os.PathLike)):
        raise UsageError(f"argument {name}: expected text, not {type(value).__name__} {echoed(value)}")
    text = os.fspath(value) if isinstance(value, os.PathLike) else str(value)
    if not action.option_strings:  # a positional (a run, a folder): text, and one of its choices if it has any
        if action.choices is not None and text not in action.choices:
            raise UsageError(f"argument {name}: invalid choice: {echoed(text)}")
        return text
    parser = _OneOption(prog="cogbench", add_help=False)
    parser.add_argument(*action.option_strings, dest="value", type=action.type, choices=action.choices)
    try:
        return parser.parse_args([f"{action.option_strings[-1]}={text}"]).value
    except _Refused as refused:
        raise UsageError(str(refused)) from None
