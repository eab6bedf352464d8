"""Subcommands of the dataset builders: ``build`` and ``fetch-raw``."""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

DEFAULT_OUT = Path("dist") / "cogbench"


def default_raw_dir() -> Path:
    return Path(os.environ.get("COGBENCH_RAW_DIR") or "raw")


def register(subparsers: argparse._SubParsersAction) -> None:
    build = subparsers.add_parser(
        "build",
        help="build the Hub-ready dataset folder from the raw annotations",
        description="Build every config whose raw files are present into a folder that is exactly what is uploaded to the Hub.",
    )
    build.add_argument("--raw-dir", type=Path, default=None, help="raw data folder (default: $COGBENCH_RAW_DIR, then ./raw)")
    build.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"output folder (default: {DEFAULT_OUT})")
    build.add_argument("--version", dest="dataset_version", default="1.0.0", help="dataset version X.Y.Z (default: 1.0.0)")
    build.add_argument("--previous", type=Path, default=None, metavar="OLD",
                       help="the last released build: record the changes since it in the card's changelog "
                       "and refuse a version too small for them")
    build.add_argument("--repo-id", default=None, metavar="ORG/NAME", help="Hub repo the card tells users to load from")
    build.set_defaults(func=run_build)

    fetch = subparsers.add_parser(
        "fetch-raw",
        help="download the authors' public raw files (CODIS, CogBench samples), pinned and verified",
        description="Download the public raw files pinned to the authors' commits and verify their sha256. "
        "The full CogBench release is only available under its data use agreement.",
    )
    fetch.add_argument("source", nargs="?", default="all", choices=["codis", "cogbench-samples", "all", "cogbench"])
    fetch.add_argument("--dest", type=Path, default=None, help="destination folder (default: $COGBENCH_RAW_DIR, then ./raw)")
    fetch.add_argument("--base-url", default=None, help="mirror of raw.githubusercontent.com to download from")
    fetch.set_defaults(func=run_fetch)


def run_build(args: argparse.Namespace) -> int:
    from cogbench.dataset_builders.build import build_release

    raw_dir = args.raw_dir or default_raw_dir()
    started = time.perf_counter()
    result = build_release(raw_dir, args.out, version=args.dataset_version, previous=args.previous, repo_id=args.repo_id)
    seconds = time.perf_counter() - started
    print(f"built {result.out} (version {result.manifest['dataset_version']}) from {raw_dir} in {seconds:.1f}s")
    for config, entry in sorted(result.manifest["configs"].items()):
        size = sum(shard["bytes"] for shard in entry["shards"].values())
        print(f"  {config:<12} {entry['rows']:>6} rows  {len(entry['shards'])} shard(s)  {size / 1e6:8.1f} MB")
    for change in result.manifest["changelog"][0]["changes"]:
        print(f"  changelog: {change}")
    print(f'load it with: datasets.load_dataset("{result.out}", "<config>", split="test")')
    return 0


def run_fetch(args: argparse.Namespace) -> int:
    from cogbench.dataset_builders.fetch import DEFAULT_BASE_URL, FULL_COGBENCH_NOTICE, PUBLIC_SOURCES, fetch_source
    from cogbench.errors import UsageError

    if args.source == "cogbench":
        raise UsageError(FULL_COGBENCH_NOTICE)
    dest = args.dest or default_raw_dir()
    sources = PUBLIC_SOURCES if args.source == "all" else (args.source,)
    for source in sources:
        report = fetch_source(source, dest, base_url=args.base_url or DEFAULT_BASE_URL)
        print(f"{source}: {report.downloaded} downloaded, {report.kept} already present and verified -> {report.folder}")
    print(f"next: cogbench build --raw-dir {dest}")
    return 0
