"""``cogbench leak-scan CORPUS...``: a training corpus searched for near duplicates of the benchmark's images."""

from __future__ import annotations

import argparse
from pathlib import Path

DEFAULT_OUT = Path("runs") / "leak-scan"
DEFAULT_DATASET = Path("dist") / "cogbench"


def register(subparsers: argparse._SubParsersAction) -> None:
    scan = subparsers.add_parser(
        "leak-scan",
        help="search a corpus (image folder, WebDataset tar shards, Parquet) for near duplicates of the benchmark's images",
        description="Hash every image of CORPUS as the build hashed its own (fingerprints.parquet) and report, per "
        "benchmark image, the corpus images within the calibrated thresholds: key, distance per hash family, the "
        "transform it most resembles. A Parquet file with a 'phash' column is read as hashes, without images. "
        "Exit 0: none found; 5: near duplicates found (docs/contamination.md).",
    )
    scan.add_argument(
        "corpus",
        nargs="+",
        type=Path,
        metavar="CORPUS",
        help="an image folder (searched recursively), a .tar shard, a .parquet file with an image column or hash "
        "columns, or an image file",
    )
    scan.add_argument(
        "--dataset",
        type=Path,
        default=DEFAULT_DATASET,
        metavar="BUILD",
        help=f"the build whose images are searched for, verified first (default: {DEFAULT_DATASET})",
    )
    scan.add_argument(
        "--image-column",
        default=None,
        metavar="NAME",
        help="the image column of a Parquet corpus (default: the first of image, jpg, png, webp, img, bytes "
        "holding bytes, else the first column of image bytes)",
    )
    scan.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_OUT,
        help=f"folder for leak-scan.json, leak-scan.md and leak-scan.html (default: {DEFAULT_OUT})",
    )
    scan.set_defaults(func=run_leak_scan)


def run_leak_scan(args: argparse.Namespace) -> int:
    from cogbench.dataset_builders.memory import cap_malloc_arenas
    from cogbench.dataset_builders.output import claim_output
    from cogbench.errors import EXIT_LEAKS_FOUND
    from cogbench.reference_eval.contamination.leak_report import REPORT_FILES, summary, write_report
    from cogbench.reference_eval.contamination.scan import leak_scan
    from cogbench.reference_eval.contamination.search import faiss_module

    cap_malloc_arenas()
    faiss_module()  # the extra's error before anything is read
    reads = [("--dataset", args.dataset)] + [("CORPUS", path) for path in args.corpus]
    claim_output(args.out, "leak-scan", REPORT_FILES, create=False, reads=reads)  # refused before the scan
    result = leak_scan(args.corpus, args.dataset, image_column=args.image_column)
    claim_output(args.out, "leak-scan", REPORT_FILES, reads=reads)
    write_report(args.out, result)
    print(summary(result))
    for image in result.flagged:
        closest = image.matches[0]
        shown = ", ".join(f"{name} {value}" for name, value in closest.distances.items())
        print(
            f"  {image.benchmark}/{image.image_id}: {image.found} match(es); closest {closest.corpus} ({shown}; {closest.resembles})"
        )
    print(f"report: {args.out / 'leak-scan.html'} (and leak-scan.json, leak-scan.md)")
    return EXIT_LEAKS_FOUND if result.flagged else 0
