"""Which runs can be told apart: Holm's correction over pairwise p-values, and the groups it leaves.

The rule the site states: for one task and metric, every pair of ranked runs gets the paired
permutation p-value over shared images that ``cogbench compare`` computes; the m pairwise p-values
are adjusted by Holm's step-down method (sorted ascending, p_(i) times m - i + 1, made non-decreasing,
capped at 1), and a pair differs significantly when its adjusted p is below alpha. A significance
group is a maximal set of runs of which no two differ significantly (a maximal clique of the
"not significantly different" graph); groups are lettered a, b, ... in the order of their best run (groups
with equally good best runs: by their runs' positions, compared in order), and each run shows the letters
of the groups it belongs to (the compact letter display): two runs that share a letter cannot be told
apart at alpha.
"""

from __future__ import annotations

from collections.abc import Sequence
from string import ascii_lowercase

RULE = (
    "Significance groups: for each pair of ranked runs, the paired permutation test over shared images "
    "(the test of `cogbench compare`); the p-values of all pairs are adjusted by Holm's step-down method, and a "
    "pair differs when its adjusted p < {alpha}. A group is a maximal set of runs of which no two differ; "
    "runs that share a letter cannot be told apart."
)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values, in the input's order: max over j <= i of min(1, (m - j + 1) p_(j))."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def _maximal_cliques(nodes: list[int], linked: dict[int, set[int]]) -> list[set[int]]:
    """Bron-Kerbosch with pivoting: every maximal set of mutually linked nodes."""
    found: list[set[int]] = []

    def extend(chosen: set[int], candidates: set[int], excluded: set[int]) -> None:
        if not candidates and not excluded:
            found.append(chosen)
            return
        pivot = max(candidates | excluded, key=lambda n: len(linked[n] & candidates))
        for node in sorted(candidates - linked[pivot]):
            extend(chosen | {node}, candidates & linked[node], excluded & linked[node])
            candidates = candidates - {node}
            excluded = excluded | {node}

    extend(set(), set(nodes), set())
    return found


def significance_groups(values: Sequence[float], differs: dict[tuple[int, int], bool]) -> list[str]:
    """Each run's letters: ``values`` (higher is better) order the groups, ``differs[(i, j)]`` (i < j) the pairs."""
    nodes = list(range(len(values)))
    linked = {i: {j for j in nodes if j != i and not differs[(min(i, j), max(i, j))]} for i in nodes}
    groups = sorted(_maximal_cliques(nodes, linked), key=lambda g: (-max(values[i] for i in g), sorted(g)))
    letters = [""] * len(values)
    for index, group in enumerate(groups):
        letter = ascii_lowercase[index] if index < 26 else f"[{index + 1}]"
        for i in group:
            letters[i] += letter
    return letters
