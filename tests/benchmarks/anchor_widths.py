"""How many labelled units give what interval: the expected width of the 95% BCa interval of kappa and AC1
(``metrics.human_agreement.intervals_of``, as ``judges validate`` and certify's human anchor compute them),
simulated with known truth; docs/reanchoring.md's table (not in the default run).

The draws are tests/test_human_agreement_coverage.py's: each image its own chance of a right answer (Beta
around the prevalence, concentration 5), two labelled units per image, the people's label wrong 3% of the
time, a judge with sensitivity 0.95 and specificity 0.85. A cell is the mean width (high - low) over the
draws, and the share of draws whose interval holds the truth.

    .venv/bin/python tests/benchmarks/anchor_widths.py --draws 300
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import test_human_agreement_coverage as simulation
from test_human_agreement_coverage import draws, population

from cogbench.reference_eval.metrics import human_agreement as ha

IMAGES = (40, 80, 150, 300, 600)
PREVALENCES = (0.5, 0.8, 0.95)
PER_IMAGE = 2
PEOPLE_ERROR, SENSITIVITY, SPECIFICITY = 0.03, 0.95, 0.85


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=300)
    parser.add_argument("--resamples", type=int, default=1000)
    args = parser.parse_args()
    simulation.REPLICATES = args.draws
    started = time.monotonic()
    print("| units (images) | prevalence | kappa (truth) | kappa width | held | AC1 (truth) | AC1 width | held |")
    print("|---|---|---|---|---|---|---|---|")
    for images in IMAGES:
        for prevalence in PREVALENCES:
            rng = np.random.default_rng([images, int(100 * prevalence)])
            counts = draws(rng, images, PER_IMAGE, prevalence, PEOPLE_ERROR, SENSITIVITY, SPECIFICITY)
            truth = population(prevalence, PEOPLE_ERROR, SENSITIVITY, SPECIFICITY)
            _, bounds = ha.intervals_of(counts, args.resamples, seed=0)
            cells = []
            for name in ("kappa", "ac1"):
                s = ha.STATISTICS.index(name)
                low, high = bounds[:, s, 0], bounds[:, s, 1]
                held = np.nanmean((low <= truth[name]) & (truth[name] <= high))
                cells += [f"{truth[name]:.2f}", f"{np.nanmean(high - low):.3f}", f"{100 * held:.1f}%"]
            print(f"| {PER_IMAGE * images} ({images}) | {prevalence} | " + " | ".join(cells) + " |", flush=True)
    print(f"\n{args.draws} draws a row, {args.resamples} resamples; {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
