"""How far a judge panel's members agree, and how independent their errors are.

- Krippendorff's alpha (nominal; the ``krippendorff`` package): alpha = 1 - D_o / D_e over every
  member's verdict on every item, a member's missing verdict left out (Krippendorff 2011,
  "Computing Krippendorff's Alpha-Reliability"). None where the members gave one value throughout.
- Cohen's kappa of each pair of members (``agreement.kappa_with_intervals``: the same kappa and
  image-clustered interval as ``compare --judges``), over the items both judged.
- Error correlation: a member errs on an item where its verdict is not the reference's (the panel's
  own majority unless another reference is given). The Pearson correlation of two members' error
  indicators (phi) over the items every member and the reference judged, averaged over the pairs
  whose indicators vary (r), gives the effective number of independent judges
  ``n_eff = n / (1 + (n - 1) * r)`` (Kish's design effect for n equally correlated raters): n
  members with independent errors count as n, members that err together count as one. A negative r
  counts as 0: n judges are at most n independent ones (the formula would give 9.6 of 3 at r = -0.34).
  Against the panel's own majority, errors are pushed apart (a three-member majority is never
  outvoted by two members at once), so r there leans negative; a reference that is not the panel
  avoids that.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

from cogbench.errors import UsageError
from cogbench.reference_eval.metrics import agreement, intervals

N_EFF_FORMULA = "n / (1 + (n - 1) * max(0, mean pairwise correlation of errors))"


@dataclass(frozen=True)
class PanelItem:
    """One judged unit: its image (cluster), category, each member's verdict (None: none) and the reference's."""

    cluster: str
    category: str
    verdicts: tuple[Any, ...]
    reference: Any


def require_krippendorff() -> None:
    """A panel's alpha needs the ``krippendorff`` package (the eval extra): say so before any member judges."""
    try:
        import krippendorff  # noqa: F401
    except ImportError:
        raise UsageError(
            "a judge panel needs the krippendorff package for its agreement (pip install 'cogbench-codis[eval]' "
            "or pip install krippendorff); nothing was judged"
        ) from None


def krippendorff_alpha(rows: Sequence[Sequence[Any]]) -> float | None:
    """Nominal alpha of ``rows[member][item]`` (None: missing); None where it is undefined (one value only, or no
    item with two members' verdicts)."""
    import krippendorff

    values = sorted({v for row in rows for v in row if v is not None})
    if len(values) < 2 or not any(sum(v is not None for v in item) >= 2 for item in zip(*rows)):
        return None
    code = {value: float(i) for i, value in enumerate(values)}
    data = np.array([[np.nan if v is None else code[v] for v in row] for row in rows], dtype=float)
    return round(float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")), 4)


def error_correlation(errors: np.ndarray) -> tuple[list[float | None], float | None]:
    """Per pair of rows of ``errors`` (members x items, 0/1): Pearson's r (None where a row is constant); their mean."""
    pairs: list[float | None] = []
    for a, b in combinations(range(errors.shape[0]), 2):
        if errors[a].std() == 0 or errors[b].std() == 0:
            pairs.append(None)
        else:
            pairs.append(float(np.corrcoef(errors[a], errors[b])[0, 1]))
    defined = [r for r in pairs if r is not None]
    return pairs, (float(np.mean(defined)) if defined else None)


def effective_judges(members: int, mean_r: float | None) -> float | None:
    """``N_EFF_FORMULA``: between 1 (errors always together) and ``members`` (independent, or apart); None where r
    is unknown."""
    if mean_r is None:
        return None
    return round(members / (1.0 + (members - 1) * max(0.0, mean_r)), 4)


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def panel_agreement(
    names: Sequence[str],
    items: Sequence[PanelItem],
    categories: Sequence[str],
    against: str,
    resamples: int = intervals.DEFAULT_RESAMPLES,
    seed: int = intervals.DEFAULT_SEED,
) -> dict[str, Any]:
    """scores.json's ``panel.agreement``: alpha, each pair's kappa, the error correlation and n_eff."""
    columns = [[item.verdicts[m] for item in items] for m in range(len(names))]
    kappas = []
    for a, b in combinations(range(len(names)), 2):
        pairs = [
            agreement.VerdictPair(i.cluster, i.category, int(i.verdicts[a]), int(i.verdicts[b]))
            for i in items
            if i.verdicts[a] is not None and i.verdicts[b] is not None
        ]
        if not pairs:  # a member with no verdict at all (every request failed): no pair to compare, kappa undefined
            undefined: dict[str, Any] = {"a": names[a], "b": names[b], "kappa": None, "interval": None, "items": 0}
            kappas.append({**undefined, "per_category": dict.fromkeys(categories)})
            continue
        table = agreement.confusion_table(pairs, categories)
        found = agreement.kappa_with_intervals(table, resamples, seed)
        kappas.append(
            {
                "a": names[a],
                "b": names[b],
                "kappa": found["overall"]["kappa"],
                "interval": found["overall"]["interval"],
                "items": found["overall"]["items"],
                "per_category": {c: found[c]["kappa"] for c in categories},
            }
        )
    full = [i for i in items if i.reference is not None and all(v is not None for v in i.verdicts)]
    errors = np.array([[float(i.verdicts[m] != i.reference) for i in full] for m in range(len(names))])
    pairs_r, mean_r = error_correlation(errors) if full else ([None] * len(kappas), None)
    return {
        "items": len(items),
        "krippendorff_alpha": krippendorff_alpha(columns),
        "pairwise_kappa": kappas,
        "error_correlation": {
            "against": against,
            "items": len(full),
            "error_rates": [_round(float(row.mean()) * 100) if len(full) else None for row in errors],
            "pairs": [{"a": k["a"], "b": k["b"], "r": _round(r)} for k, r in zip(kappas, pairs_r)],
            "mean_r": _round(mean_r),
            "effective_judges": effective_judges(len(names), mean_r),
            "formula": N_EFF_FORMULA,
        },
    }
