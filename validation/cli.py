"""``cogbench validate PATH``: the release gate on the command line."""

from __future__ import annotations

import argparse


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "validate",
        help="check a raw-data folder or a built release",
        description="Run every integrity check on a raw-data folder or a built dataset folder. "
        "Exit 0: no errors (warnings allowed unless --strict); 1: errors; 2: usage error.",
    )
    parser.add_argument(
        "path", metavar="PATH", help="raw-data folder (codis/, cogbench/ or cogbench-samples/) or a built folder"
    )
    parser.add_argument(
        "--expected",
        default="auto",
        help="expected-counts file (a path or a shipped name such as codis-1.0), 'none' to skip, "
        "default 'auto': the shipped file(s) that fit the source folders",
    )
    parser.add_argument("--format", choices=("text", "json"), default="text", help="report as text or JSON")
    parser.add_argument("--strict", action="store_true", help="fail on warnings too")
    parser.add_argument(
        "--verbose", action="store_true", help="list info findings (by-design notes) instead of counting them"
    )
    parser.set_defaults(func=run_validate)


def run_validate(args: argparse.Namespace) -> int:
    from cogbench.dataset_builders.memory import cap_malloc_arenas
    from cogbench.validation import validate

    cap_malloc_arenas()
    expected = None if args.expected.lower() == "none" else args.expected
    report = validate(args.path, expected=expected, strict=args.strict)
    print(report.to_json() if args.format == "json" else report.to_text(verbose=args.verbose))
    return 0 if report.ok else 1
