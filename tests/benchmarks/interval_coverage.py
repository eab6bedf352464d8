"""Coverage of cogbench's 95% intervals, simulated with known truth (not part of the default test run).

Each simulated run draws G images; image g has its own success probability
p_g ~ Beta with mean p and intra-image correlation ICC (ICC = 1 / (a + b + 1)),
and its units (questions, CODIS pairs, entities) are Bernoulli(p_g). Sizes
follow the real data: VQA 2577 questions / 251 images (about 10 per image),
CODIS 353 pairs / 216 images (1-2 pairs, two queries each), Description 2670
entities / 251 images. The truth of each metric is its population value
(accuracy, Acc_q, recognition: p; Acc_p: E[p_g^2] = ICC p (1 - p) + p^2).
A cell is the share of runs whose interval holds the truth.

    .venv/bin/python tests/benchmarks/interval_coverage.py --runs 1000
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from cogbench.reference_eval.metrics.small_sample import korn_graubard

SIZES = (5, 10, 30, 251)
ICCS = (0.0, 0.2, 0.5)
TRUTH = {"accuracy": 0.6, "acc_q": 0.5, "recognition": 0.45}


def image_probabilities(rng, groups: int, p: float, icc: float) -> np.ndarray:
    if icc == 0:
        return np.full(groups, p)
    strength = 1.0 / icc - 1.0
    return rng.beta(p * strength, (1 - p) * strength, groups)


def simulate(rng, metric: str, groups: int, icc: float) -> tuple[np.ndarray, np.ndarray, float]:
    """(per-image hits, per-image units, truth) of one simulated run."""
    p = TRUTH.get(metric, TRUTH["acc_q"])
    probabilities = image_probabilities(rng, groups, p, icc)
    if metric == "accuracy":
        units = 1 + rng.poisson(9.3, groups)
    elif metric == "recognition":
        units = 1 + rng.poisson(9.6, groups)
    else:  # CODIS: 1-2 pairs per image, two queries per pair
        pairs = 1 + rng.binomial(1, 0.63, groups)
        right = [rng.random((n, 2)) < q for q, n in zip(probabilities, pairs)]
        if metric == "acc_p":
            return (
                np.array([r.all(axis=1).sum() for r in right], float),
                pairs.astype(float),
                icc * p * (1 - p) + p * p,
            )
        return np.array([r.sum() for r in right], float), 2.0 * pairs, p
    return rng.binomial(units, probabilities).astype(float), units.astype(float), p


def coverage(metric: str, groups: int, icc: float, runs: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    held = 0
    for _ in range(runs):
        hits, units, truth = simulate(rng, metric, groups, icc)
        low, high = korn_graubard(hits, units)
        held += low <= 100 * truth <= high
    return 100.0 * held / runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    started = time.perf_counter()
    metrics = ("accuracy", "acc_p", "acc_q", "recognition")
    print(f"coverage (%) of the nominal 95% interval, {args.runs} simulated runs per cell; target 93-98.5")
    print("metric        ICC  " + "  ".join(f"{g:>4} img" for g in SIZES))
    misses = 0
    for metric in metrics:
        for icc in ICCS:
            cells = [coverage(metric, g, icc, args.runs, args.seed + g) for g in SIZES]
            misses += sum(not 93.0 <= c <= 98.5 for c in cells)
            print(f"{metric:<12} {icc:4.1f}  " + "  ".join(f"{c:8.1f}" for c in cells))
    print(f"cells outside 93-98.5: {misses}; {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
