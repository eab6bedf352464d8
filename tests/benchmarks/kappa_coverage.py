"""Coverage of ``compare --judges``' 95% kappa interval, simulated with known truth (not in the default run).

Each simulated scoring draws G images; image g has its own share of right
answers p_g ~ Beta (mean 0.6, intra-image correlation ICC) and its own agreement
rate q_g ~ Beta (mean 0.85, the same ICC). Judge A's verdict is Bernoulli(p_g);
judge B copies it with probability q_g, else draws its own Bernoulli(p_g). Sizes
follow the real data: CODIS 706 queries on 216 images (2-6 per image), CogBench
CoRs on 251 images (about 10 per image), and the public samples' 5 images. The
truth is the kappa of the pooled population (one million images). A cell is the
share of runs whose interval (``metrics.agreement.kappa_with_intervals``: the
image-clustered percentile bootstrap) holds the truth.

    .venv/bin/python tests/benchmarks/kappa_coverage.py --runs 400
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from cogbench.reference_eval.metrics import agreement

SIZES = {
    "samples (5 images)": (5, 10),
    "30 images": (30, 10),
    "100 images": (100, 5),
    "CODIS (216 images)": (216, 3.3),
    "CogBench (251 images)": (251, 10),
}
ICCS = (0.0, 0.2, 0.5)


def draw(rng, groups: int, per_image: float, icc: float) -> list[agreement.VerdictPair]:
    def beta(mean: float) -> np.ndarray:
        if icc == 0:
            return np.full(groups, mean)
        strength = 1.0 / icc - 1.0
        return rng.beta(mean * strength, (1 - mean) * strength, groups)

    p, q = beta(0.6), beta(0.85)
    sizes = np.maximum(1, rng.poisson(per_image, groups))
    pairs = []
    for g in range(groups):
        a = rng.random(sizes[g]) < p[g]
        copy = rng.random(sizes[g]) < q[g]
        b = np.where(copy, a, rng.random(sizes[g]) < p[g])
        pairs += [agreement.VerdictPair(str(g), "c", int(x), int(y)) for x, y in zip(a, b)]
    return pairs


def truth(rng, icc: float) -> float:
    """Population kappa from the expected confusion shares over a million images."""
    groups = 1_000_000
    if icc == 0:
        p, q = np.full(groups, 0.6), np.full(groups, 0.85)
    else:
        strength = 1.0 / icc - 1.0
        p = rng.beta(0.6 * strength, 0.4 * strength, groups)
        q = rng.beta(0.85 * strength, 0.15 * strength, groups)
    n11 = np.mean(p * (q + (1 - q) * p))
    n00 = np.mean((1 - p) * (q + (1 - q) * (1 - p)))
    n10 = np.mean(p * (1 - q) * (1 - p))
    counts = np.array([[n00, n10], [n10, n11]])  # rows A (0, 1), columns B; off-diagonals equal by symmetry
    return float(agreement.kappa_from_counts(counts))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=400)
    parser.add_argument("--resamples", type=int, default=1000)
    args = parser.parse_args()
    rng = np.random.default_rng(7)
    started = time.perf_counter()
    print(f"coverage of the 95% kappa interval over {args.runs} simulated scorings ({args.resamples} resamples each)")
    print("| size | " + " | ".join(f"ICC {icc}" for icc in ICCS) + " |")
    print("|---|" + "---|" * len(ICCS))
    truths = {icc: truth(rng, icc) for icc in ICCS}
    for name, (groups, per_image) in SIZES.items():
        cells = []
        for icc in ICCS:
            held = undefined = 0
            for run in range(args.runs):
                table = agreement.confusion_table(draw(rng, groups, per_image, icc), ["c"])
                # min_images=0: measured below agreement.MIN_IMAGES too, where cogbench gives no interval
                overall = agreement.kappa_with_intervals(table, args.resamples, seed=run, min_images=0)["overall"]
                interval = overall["interval"]
                if interval is None:
                    undefined += 1
                elif interval[0] <= truths[icc] <= interval[1]:
                    held += 1
            cells.append(f"{100 * held / args.runs:.1f}%" + (f" ({undefined} n/a)" if undefined else ""))
        print(f"| {name} | " + " | ".join(cells) + " |")
    print(
        f"truth (population kappa): {', '.join(f'ICC {k}: {v:.3f}' for k, v in truths.items())}; "
        f"{time.perf_counter() - started:.0f} s"
    )


if __name__ == "__main__":
    main()
