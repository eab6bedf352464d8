"""report.md's "Judge panel" section: what a panel run's scores.json holds under ``panel`` (judges/panel.py,
metrics/panel_agreement.py), shown where the panel's number is: each member's own score, the members'
agreement and how independent their errors are. ``verify`` compares its numbers like the rest of report.md."""

from __future__ import annotations

from typing import Any

from cogbench.numbers import fixed
from cogbench.reference_eval.recording.run_kind import METRIC_LABEL

PANEL_METRICS = ("cognition", "acc_p", "acc_q")  # what a panel judges (judges/panel.py)


def _number(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else fixed(value, digits)


def render_panel(scores: dict[str, Any]) -> str:
    """The section, or "" for a run without a panel."""
    panel = scores.get("panel")
    if not panel:
        return ""
    names = [name for name in PANEL_METRICS if name in scores["metrics"]]
    lines = [
        "\n## Judge panel\n",
        f"{len(panel['members'])} members; the panel's verdict: {panel['rule']}. "
        "The numbers above are the panel's; each member's own, as that member alone would judge:\n",
        "| Judge | " + " | ".join(METRIC_LABEL[n] for n in names) + " |",
        "|---|" + "---|" * len(names),
        "| panel | " + " | ".join(_number(scores["metrics"][n]["overall"]) for n in names) + " |",
    ]
    for member in panel["members"]:
        own = panel["metrics"].get(member, {})
        lines.append(f"| `{member}` | " + " | ".join(_number((own.get(n) or {}).get("overall")) for n in names) + " |")
    agreement = panel["agreement"]
    alpha = agreement["krippendorff_alpha"]
    lines += [
        "",
        f"Agreement over {agreement['items']} judged units: Krippendorff's alpha (nominal) "
        + (_number(alpha, 3) if alpha is not None else "undefined (one verdict value only)")
        + "; Cohen's kappa of each pair (95% interval clustered by image, from 200 images on):\n",
        "| Members | kappa | 95% interval | units |",
        "|---|---|---|---|",
    ]
    for pair in agreement["pairwise_kappa"]:
        interval = pair.get("interval")
        shown = f"[{fixed(interval[0], 3)}, {fixed(interval[1], 3)}]" if interval else "n/a"
        lines.append(f"| `{pair['a']}` / `{pair['b']}` | {_number(pair['kappa'], 3)} | {shown} | {pair['items']} |")
    errors = agreement["error_correlation"]
    effective, mean_r = errors["effective_judges"], errors["mean_r"]
    lines += [
        "",
        f"Errors (a member's verdict against the {errors['against']}'s) over {errors.get('items', '-')} units: "
        f"mean pairwise correlation r = {_number(mean_r, 3)}; "
        + (
            f"{effective:g} effective independent judges of {len(panel['members'])} ({errors['formula']})"
            if effective is not None
            else "effective number of judges undefined (no pair's errors vary)"
        )
        + ".\n",
    ]
    return "\n".join(lines)
