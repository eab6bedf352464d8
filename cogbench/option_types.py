"""Value types of command-line options, shared by every ``cli.py``: nonsense is refused in one line.

argparse turns an ``ArgumentTypeError`` into the usage error ``argument --x: MESSAGE`` (exit 2),
so a value that would give a nonsense result (a timeout of 0 or nan, a significance level of 2)
never reaches the code. Each type converts first (``int("x")`` fails the same way) and then
checks its range.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable


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
