"""``cogbench compare A B --gate --max-drop X``: a regression gate for CI (issue 50, item 6).

The gate reads the comparison ``compare.compare_runs`` made: the overall row of one metric (the task's
headline metric unless told otherwise) with its paired t interval over the images. ``compare`` states
A - B; the gate turns it round to B - A (B the candidate, A the baseline). It FAILS when the upper end of
the interval of B - A lies below -X: B is worse than A by more than X points with the interval's
confidence (95%, two-sided; so at least 97.5% one-sided). A drop whose interval reaches above -X passes:
noise, or a drop these sizes cannot tell from X.

``cogbench.compare(a, b, gate=True, max_drop=X)`` (api/evaluation.py) checks its gate arguments here
(``check_gate_options``) and adds the decision under ``"gate"`` (``with_gate``), as ``compare --gate`` records
it in ``--json``; the command calls that function and prints ``Gate(**result["gate"]).line()``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from cogbench.errors import UsageError
from cogbench.numbers import fixed
from cogbench.reference_eval.metrics.small_sample import LEVEL

# The one metric a gate reads per task unless --gate-metric names another: the papers' headline numbers.
HEADLINE_METRIC = {"codis": "acc_p", "vqa": "accuracy", "description": "cognition"}


@dataclass(frozen=True)
class Gate:
    """One gate decision: B - A on ``metric`` overall, its interval, the bar, and whether B passed."""

    metric: str
    difference: float  # B - A, points
    interval: tuple[float, float]  # of B - A, points
    max_drop: float
    level: float
    passed: bool

    def line(self) -> str:
        """The one line ``compare --gate`` prints."""
        low, high = self.interval
        verdict = "PASS" if self.passed else "FAIL"
        why = "reaches above" if self.passed else "lies below"
        return (
            f"gate {verdict}: {self.metric} overall B - A = {fixed(self.difference, 2, sign=True)} points, "
            f"{round(100 * self.level)}% CI [{fixed(low, 2, sign=True)}, {fixed(high, 2, sign=True)}]; its upper "
            f"end {why} {fixed(0.0 - self.max_drop, 2)} (--max-drop {self.max_drop:g})"
        )


def gate(result: dict[str, Any], max_drop: float, metric: str | None = None) -> Gate:
    """The gate over a ``compare_runs`` result; refuses (exit 2) a metric it lacks or one without an interval."""
    name = metric or HEADLINE_METRIC.get(result["task"])
    if name not in result["metrics"]:
        known = ", ".join(sorted(result["metrics"]))
        raise UsageError(f"compare --gate-metric {name}: not a metric of these {result['task']} runs ({known})")
    overall = result["metrics"][name][-1]
    if overall["difference"] is None or overall["interval"] is None:
        raise UsageError(
            f"compare --gate: {name} overall has no interval ({overall.get('clusters', 0)} image(s) with items on "
            "both sides; the paired interval needs 2 or more); the gate cannot decide"
        )
    low, high = overall["interval"]  # of A - B
    interval = (0.0 - high, 0.0 - low)  # of B - A (0.0 - x: no "-0.00" where A and B agree)
    return Gate(
        metric=name,
        difference=0.0 - overall["difference"],
        interval=interval,
        max_drop=max_drop,
        level=LEVEL,
        passed=not interval[1] < -max_drop,
    )


def check_gate_options(gate: bool, max_drop: float | None, metric: str | None, judges: bool) -> None:
    """The gate's options together (each already its option's type): ``--max-drop`` and ``--gate-metric`` only with
    ``--gate``, which needs ``--max-drop`` and does not apply to ``--judges``."""
    if not gate and (max_drop is not None or metric):
        raise UsageError(f"{'--max-drop' if max_drop is not None else '--gate-metric'} applies to compare --gate")
    if gate and (max_drop is None or judges):
        raise UsageError("compare --gate: give --max-drop X" if not judges else "--gate does not apply to --judges")


def with_gate(result: dict[str, Any], max_drop: float, metric: str | None = None) -> dict[str, Any]:
    """``result`` (a ``compare_runs`` result) with the gate's decision under ``"gate"``: metric, difference (B - A),
    interval, max_drop, level, passed."""
    return {**result, "gate": asdict(gate(result, max_drop, metric))}
