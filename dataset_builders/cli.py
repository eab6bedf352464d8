"""Subcommand of the dataset builders: ``fetch-raw`` (``build`` is a release command, in ``cards.cli``)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from cogbench.dataset_builders.raw import default_raw_dir
from cogbench.errors import UsageError

__all__ = ["default_raw_dir", "register"]


def register(subparsers: argparse._SubParsersAction) -> None:
    fetch = subparsers.add_parser(
        "fetch-raw",
        help="download the authors' public raw files (CODIS, CogBench samples), pinned and verified",
        description="Download the public raw files pinned to the authors' commits and verify their sha256. "
        "The full CogBench release is only available under its data use agreement.",
    )
    fetch.add_argument(
        "source",
        nargs="?",
        default="all",
        choices=["codis", "cogbench-samples", "all", "cogbench"],
        metavar="SOURCE",
        help="what to download: codis, cogbench-samples or all (cogbench: says how to get the full release)",
    )
    fetch.add_argument(
        "--dest", type=Path, default=None, help="destination folder (default: $COGBENCH_RAW_DIR, then ./raw)"
    )
    fetch.add_argument(
        "--base-url",
        default=None,
        help="mirror of raw.githubusercontent.com to download from "
        "(default: $COGBENCH_RAW_BASE_URL, then https://raw.githubusercontent.com)",
    )
    fetch.set_defaults(func=run_fetch)


def run_fetch(args: argparse.Namespace) -> int:
    from cogbench.dataset_builders.fetch import DEFAULT_BASE_URL, FULL_COGBENCH_NOTICE, PUBLIC_SOURCES, fetch_source

    dest = args.dest or default_raw_dir()
    if args.source == "cogbench":
        raise UsageError(FULL_COGBENCH_NOTICE.format(raw=dest))
    sources = PUBLIC_SOURCES if args.source == "all" else (args.source,)
    for source in sources:
        report = fetch_source(
            source, dest, base_url=args.base_url or os.environ.get("COGBENCH_RAW_BASE_URL") or DEFAULT_BASE_URL
        )
        print(
            f"{source}: {report.downloaded} downloaded, {report.kept} already present and verified -> {report.folder}"
        )
    print(f"next: cogbench build --raw-dir {dest}")
    return 0
