"""Release subcommands: ``build`` (raw data -> validated release folder), ``diff`` and ``publish``."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from cogbench.dataset_builders.cli import default_raw_dir
from cogbench.schemas.vocabulary import DEFAULT_VERSION

DEFAULT_OUT = Path("dist") / "cogbench"


def register(subparsers: argparse._SubParsersAction) -> None:
    build = subparsers.add_parser(
        "build",
        help="build the Hub-ready dataset folder from the raw annotations",
        description="Build every config whose raw files are present into a folder that is exactly what is uploaded to the Hub.",
    )
    build.add_argument(
        "--raw-dir", type=Path, default=None, help="raw data folder (default: $COGBENCH_RAW_DIR, then ./raw)"
    )
    build.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"output folder (default: {DEFAULT_OUT})")
    build.add_argument("--version", dest="dataset_version", default=DEFAULT_VERSION, help="dataset version X.Y.Z")
    build.add_argument(
        "--previous",
        type=Path,
        default=None,
        metavar="OLD",
        help="the last released build: record the changes since it in the card's changelog "
        "and refuse a version too small for them (default: none, a first release)",
    )
    build.add_argument(
        "--repo-id",
        default=None,
        metavar="ORG/NAME",
        help="Hub repo the card tells users to load from (default: a placeholder in the card)",
    )
    build.add_argument(
        "--errata",
        type=Path,
        default=None,
        metavar="FILE",
        help="the records corrected since --previous, as `cogbench diff OLD NEW --errata FILE` wrote them: "
        "checked against what this build changed, carried into the manifest and shown on the card (default: none)",
    )
    build.set_defaults(func=run_build)

    diff = subparsers.add_parser(
        "diff",
        help="compare two built folders and propose the version bump",
        description="Compare two builds config by config by stable id: records added, removed and changed "
        "(which columns; images by sha256), counts per category, and the semantic version bump this needs.",
    )
    diff.add_argument("old", type=Path, metavar="OLD", help="the previous build (e.g. the last release)")
    diff.add_argument("new", type=Path, metavar="NEW", help="the new build")
    diff.add_argument("--json", action="store_true", help="print the diff as JSON (default: text)")
    diff.add_argument(
        "--errata",
        type=Path,
        default=None,
        metavar="FILE",
        help="also write the errata: every changed field of a record both builds hold, old and new value and "
        "reason, as JSON, for `build --previous OLD --errata FILE` (default: none written)",
    )
    diff.add_argument(
        "--reasons",
        type=Path,
        default=None,
        metavar="NOTES",
        help="the maintainer's notes for --errata: a JSON or YAML mapping of item id to why it changed "
        "(default: none, each reason 'not stated')",
    )
    diff.set_defaults(func=run_diff)

    publish = subparsers.add_parser(
        "publish",
        help="validate a build and publish it to the Hugging Face Hub as a tagged release",
        description="Validate DIR, then upload it to the Hub in one commit (deleting shards the release no "
        "longer has), tag the commit vX.Y.Z and apply gating. The token comes from HF_TOKEN or `hf auth login`.",
    )
    publish.add_argument("folder", type=Path, metavar="DIR", help="a folder made by `cogbench build`")
    publish.add_argument("--repo-id", required=True, metavar="ORG/NAME", help="Hub dataset repo")
    publish.add_argument(
        "--version",
        dest="dataset_version",
        required=True,
        metavar="X.Y.Z",
        help="the release version; must be the version DIR was built with",
    )
    publish.add_argument(
        "--gated",
        choices=["manual", "auto"],
        default=None,
        help="access requests need approval (manual) or are granted on acceptance (auto); "
        "default: manual when the build holds CogBench data, else not gated",
    )
    publish.add_argument("--private", action="store_true", help="make the repo private")
    publish.add_argument("--dry-run", action="store_true", help="print the plan and change nothing")
    publish.add_argument(
        "--expected",
        default="auto",
        help="expected-counts file the release must match (a path or a shipped name such as codis-1.0), "
        "'none' to skip; default 'auto': what the build's manifest declares",
    )
    publish.set_defaults(func=run_publish)

    prints = subparsers.add_parser(
        "fingerprints",
        help="print a build's per-image fingerprints (sha256, pHash, dHash, wHash, PDQ)",
        description="Verify BUILD, then print fingerprints.parquet: one line per image (text), or every column "
        "as JSON Lines or CSV to export them. `cogbench leak-scan` searches a corpus for these images.",
    )
    prints.add_argument("build", type=Path, metavar="BUILD", help="a folder made by `cogbench build`")
    prints.add_argument(
        "--format", choices=["text", "jsonl", "csv"], default="text", help="what to print (default: text)"
    )
    prints.set_defaults(func=run_fingerprints)


def run_build(args: argparse.Namespace) -> int:
    from cogbench.cards.release import build_release
    from cogbench.dataset_builders.memory import cap_malloc_arenas

    cap_malloc_arenas()
    raw_dir = args.raw_dir or default_raw_dir()
    started = time.perf_counter()
    result = build_release(
        raw_dir,
        args.out,
        version=args.dataset_version,
        previous=args.previous,
        repo_id=args.repo_id,
        errata=args.errata,
    )
    seconds = time.perf_counter() - started
    print(f"built {result.out} (version {result.manifest['dataset_version']}) from {raw_dir} in {seconds:.1f}s")
    for config, entry in sorted(result.manifest["configs"].items()):
        size = sum(shard["bytes"] for shard in entry["shards"].values())
        print(f"  {config:<12} {entry['rows']:>6} rows  {len(entry['shards'])} shard(s)  {size / 1e6:8.1f} MB")
    for change in result.manifest["changelog"][0]["changes"]:
        print(f"  changelog: {change}")
    if "errata" in result.manifest:
        print(f"  errata: {len(result.manifest['errata']['items'])} corrected field(s), on the card")
    for benchmark, found in sorted(result.manifest.get("raw_release", {}).items()):
        if found["differing"]:  # decodable, so no check refused it: the card says it, and so does this line
            print(
                f"  note: {len(found['differing'])} {benchmark} raw file(s) differ from the authors' release "
                f"({', '.join(found['differing'][:3])}{' ...' if len(found['differing']) > 3 else ''}); "
                "the card lists them"
            )
    print(f'load it with: datasets.load_dataset("{result.out}", "<config>", split="test")')
    print(f"next: cogbench validate {result.out}")
    version = result.manifest["dataset_version"]
    if args.repo_id:
        print(f"publish: cogbench publish {result.out} --repo-id {args.repo_id} --version {version} --dry-run")
    else:
        again = f"cogbench build --raw-dir {raw_dir} --out {result.out} --version {version}"
        again += f" --previous {args.previous}" if args.previous else ""
        again += f" --errata {args.errata}" if args.errata else ""
        print(
            "to publish it, build again naming the Hub repo the card tells users to load from "
            f"(a template: put your repo for ORG/NAME): {again} --repo-id ORG/NAME"
        )
    return 0


def run_diff(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from cogbench.cards.errata import check_reasons, errata_of, read_reasons, write_errata
    from cogbench.cards.versions import diff_builds, format_diff
    from cogbench.dataset_builders.memory import cap_malloc_arenas
    from cogbench.dataset_builders.output import check_option_file
    from cogbench.errors import UsageError

    cap_malloc_arenas()
    if args.reasons is not None and args.errata is None:
        raise UsageError(f"--reasons {args.reasons}: the reasons go into the errata file; give --errata FILE too")
    reasons = read_reasons(args.reasons)  # a bad notes file is refused before the builds are read
    if args.errata is not None:
        check_option_file(args.errata, "--errata")
    diff = diff_builds(args.old, args.new)
    errata = None
    if args.errata is not None:
        errata = errata_of(args.old, args.new, diff, reasons)
        check_reasons(reasons, errata, args.reasons)  # before anything is printed or written
    if args.json:
        data = asdict(diff) | {
            "bump": diff.bump,
            "minimum_version": diff.minimum_version,
            "proposed_version": diff.proposed_version,
        }
        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        print(format_diff(diff, args.old, args.new))
    if errata is not None:
        write_errata(args.errata, errata)
        unexplained = sorted({item["id"] for item in errata["items"] if item["reason"] is None})
        print(
            f"errata: {len(errata['items'])} changed field(s) written to {args.errata}"
            + (f" ({len(unexplained)} record(s) without a reason: {', '.join(unexplained[:5])})" if unexplained else "")
            + f"; carry them into the build: `{errata_build_command(args.old, args.new, args.errata, diff)}`",
            file=sys.stderr if args.json else sys.stdout,
        )
    return 0


def errata_build_command(old: Path, new: Path, errata: Path, diff) -> str:
    """The build of ``new`` again, with its errata since ``old`` (the raw folder: the default one)."""
    from cogbench.dataset_builders.build import load_manifest
    from cogbench.dataset_builders.output import build_command

    repo_id = load_manifest(new).get("repo_id")
    options = ["--version", diff.proposed_version, "--previous", str(old), "--errata", str(errata)]
    return build_command(new, *options, *(("--repo-id", repo_id) if repo_id else ()))


def run_publish(args: argparse.Namespace) -> int:
    from cogbench.cards.publish import publish
    from cogbench.dataset_builders.memory import cap_malloc_arenas

    cap_malloc_arenas()
    expected = None if args.expected.lower() == "none" else args.expected
    publish(
        args.folder,
        args.repo_id,
        args.dataset_version,
        gated=args.gated,
        private=args.private,
        dry_run=args.dry_run,
        expected=expected,
    )
    return 0


def run_fingerprints(args: argparse.Namespace) -> int:
    import csv

    from cogbench.validation.fingerprint_checks import verified_fingerprints

    entry, rows = verified_fingerprints(args.build)
    if args.format == "jsonl":
        for row in rows:
            print(json.dumps(row, ensure_ascii=False))
    elif args.format == "csv":
        writer = csv.DictWriter(sys.stdout, fieldnames=list(rows[0]) if rows else [], lineterminator="\n")
        writer.writeheader()
        writer.writerows({k: ";".join(v) if isinstance(v, list) else v for k, v in row.items()} for row in rows)
    else:
        families = entry["families"]
        print(f"{len(rows)} images, families {', '.join(families)} ({args.build})")
        for row in rows:
            hashes = " ".join(f"{name}={row[name]}" for name in families)
            print(f"{row['benchmark']}/{row['image_id']} sha256={row['sha256'][:16]} {hashes}")
    return 0
