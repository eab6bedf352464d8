"""The ``cogbench`` command: one subcommand per job, each defined beside its code.

Every package named in ``COMMAND_MODULES`` exposes ``register(subparsers)``,
which adds its subcommands and sets ``func`` on them. Those modules import
heavy libraries (torch, transformers) only inside the functions that run a
command, so ``cogbench build`` works without the ``eval`` extra.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from cogbench import __version__
from cogbench.errors import CogbenchError

COMMAND_MODULES = (
    "cogbench.dataset_builders.cli",
    "cogbench.cards.cli",
    "cogbench.validation.cli",
    "cogbench.reference_eval.cli",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cogbench",
        description="Build, validate and score the CogBench and CODIS benchmarks.",
    )
    parser.add_argument("--version", action="version", version=f"cogbench {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except CogbenchError as error:
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
