"""Subcommands for releasing a build: ``diff`` and ``publish``."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    diff = subparsers.add_parser(
        "diff",
        help="compare two built folders and propose the version bump",
        description="Compare two builds config by config by stable id: records added, removed and changed "
        "(which columns; images by sha256), counts per category, and the semantic version bump this needs.",
    )
    diff.add_argument("old", type=Path, help="the previous build (e.g. the last release)")
    diff.add_argument("new", type=Path, help="the new build")
    diff.add_argument("--json", action="store_true", help="print the diff as JSON")
    diff.set_defaults(func=run_diff)

    publish = subparsers.add_parser(
        "publish",
        help="validate a build and publish it to the Hugging Face Hub as a tagged release",
        description="Validate DIR, then upload it to the Hub in one commit (deleting shards the release no "
        "longer has), tag the commit vX.Y.Z and apply gating. The token comes from HF_TOKEN or `hf auth login`.",
    )
    publish.add_argument("folder", type=Path, metavar="DIR", help="a folder made by `cogbench build`")
    publish.add_argument("--repo-id", required=True, metavar="ORG/NAME", help="Hub dataset repo")
    publish.add_argument("--version", dest="dataset_version", required=True, metavar="X.Y.Z",
                         help="the release version; must be the version DIR was built with")
    publish.add_argument("--gated", choices=["manual", "auto"], default=None,
                         help="access requests need approval (manual) or are granted on acceptance (auto); "
                         "default: manual when the build holds CogBench data, else not gated")
    publish.add_argument("--private", action="store_true", help="make the repo private")
    publish.add_argument("--dry-run", action="store_true", help="print the plan and change nothing")
    publish.set_defaults(func=run_publish)


def run_diff(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from cogbench.dataset_builders.versions import diff_builds, format_diff

    diff = diff_builds(args.old, args.new)
    if args.json:
        data = asdict(diff) | {"bump": diff.bump, "proposed_version": diff.proposed_version}
        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        print(format_diff(diff, args.old, args.new))
    return 0


def run_publish(args: argparse.Namespace) -> int:
    from cogbench.dataset_builders.publish import publish

    publish(args.folder, args.repo_id, args.dataset_version, gated=args.gated, private=args.private, dry_run=args.dry_run)
    return 0
