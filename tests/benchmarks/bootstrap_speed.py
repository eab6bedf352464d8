"""Clustered bootstrap of one pooled score, three ways, side by side in one run:

- ``weights``: this package (``metrics.intervals``): one multinomial count matrix, one matrix product;
- ``loop``: a resample at a time, drawing image indices and pooling in Python/numpy;
- ``scipy``: ``scipy.stats.bootstrap`` on the image indices with a vectorised pooled-ratio statistic.

The data are CODIS-shaped (353 pairs over 216 images, 5 categories) or CogBench-shaped (--images 251).
All three give the same interval up to Monte Carlo noise; the point is the time: each way runs once
to warm up, then ``--repeat`` times (min and median); ratios against ``weights``.

    .venv/bin/python tests/benchmarks/bootstrap_speed.py [--images 216] [--units 353] [--resamples 2000]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from scipy import stats

from cogbench.reference_eval.metrics import intervals
from cogbench.reference_eval.metrics.intervals import Unit

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import timed


def make_units(images: int, units: int, seed: int = 0) -> list[Unit]:
    rng = np.random.default_rng(seed)
    cluster = np.concatenate([np.arange(images), rng.integers(0, images, units - images)])
    return [Unit(f"img{c}", f"cat{c % 5}", float(rng.random() < 0.6)) for c in cluster]


def by_loop(table: intervals.ClusterTable, resamples: int, seed: int) -> list[float]:
    rng = np.random.default_rng(seed)
    n = len(table.clusters)
    values = []
    for _ in range(resamples):
        draw = rng.integers(0, n, n)
        values.append(100 * table.hits[draw, -1].sum() / table.totals[draw, -1].sum())
    return list(np.percentile(values, [2.5, 97.5]))


def by_scipy(table: intervals.ClusterTable, resamples: int, seed: int) -> list[float]:
    hits, totals = table.hits[:, -1], table.totals[:, -1]

    def pooled(index, axis=-1):
        index = index.astype(int)
        return 100 * hits[index].sum(axis) / totals[index].sum(axis)

    result = stats.bootstrap(
        (np.arange(len(hits)),),
        pooled,
        n_resamples=resamples,
        method="percentile",
        vectorized=True,
        random_state=np.random.default_rng(seed),
    )
    return [result.confidence_interval.low, result.confidence_interval.high]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--images", type=int, default=216)
    parser.add_argument("--units", type=int, default=353)
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    table = intervals.cluster_table(make_units(args.images, args.units), [f"cat{i}" for i in range(5)])
    ways = {
        "weights (this package, all 6 columns)": lambda: intervals.bootstrap_intervals(table, args.resamples, 0)[
            "overall"
        ],
        "loop (overall column only)": lambda: by_loop(table, args.resamples, 0),
        "scipy.stats.bootstrap (overall only)": lambda: by_scipy(table, args.resamples, 0),
    }
    times = {}
    for name, run in ways.items():
        times[name] = timed(run, repeats=args.repeat)
        interval = times[name].result
        print(
            f"{name:40s} {times[name].best * 1000:8.1f} ms min, {times[name].median * 1000:8.1f} ms median   "
            f"interval [{interval[0]:.2f}, {interval[1]:.2f}]"
        )
    base = times["weights (this package, all 6 columns)"].best
    for name, timing in times.items():
        print(f"{name:40s} {timing.best / base:6.1f} x the time of weights (minimums)")


if __name__ == "__main__":
    main()
