"""The ``cogbench`` command: one subcommand per job, each defined beside its code.

Every package named in ``COMMAND_MODULES`` exposes ``register(subparsers)``,
which adds its subcommands and sets ``func`` on them. Those modules import
heavy libraries (torch, transformers) only inside the functions that run a
command, so ``cogbench build`` works without the ``eval`` extra.

Conventions every subcommand gets from here: each option's default is shown
in ``--help``, the exit-code table is every help's epilog, and an option a
command declares in ``only_for`` (``set_defaults(only_for={dest: (attr, values)})``)
is refused when typed while ``attr`` (e.g. ``task``, or ``model``'s ``hf:``/``openai:``
prefix) is not one of ``values``.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import sys

from cogbench import __version__
from cogbench.errors import EXIT_CODES, CogbenchError, UsageError

COMMAND_MODULES = (
    "cogbench.dataset_builders.cli",
    "cogbench.cards.cli",
    "cogbench.validation.cli",
    "cogbench.reference_eval.cli",
    "cogbench.reference_eval.harnesses.cli",
)

EXIT_CODES_HELP = "exit codes: " + "; ".join(f"{code} {meaning}" for code, meaning in EXIT_CODES.items())


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cogbench",
        description="Build, validate and score the CogBench and CODIS benchmarks.",
        epilog=EXIT_CODES_HELP,
    )
    parser.add_argument("--version", action="version", version=f"cogbench {__version__}")
    subparsers = parser.add_subparsers(
        dest="command",
        required=True,
        metavar="COMMAND",
        parser_class=functools.partial(argparse.ArgumentParser, epilog=EXIT_CODES_HELP),
    )
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).register(subparsers)
    for subparser in subparsers.choices.values():
        show_defaults(subparser)
    return parser


def show_defaults(parser: argparse.ArgumentParser) -> None:
    """Append ``(default: X)`` to every option whose help does not already say its default."""
    for action in parser._actions:
        if (
            action.default is None
            or action.default is False
            or action.default is argparse.SUPPRESS
            or isinstance(action, argparse._SubParsersAction)
        ):
            continue
        text = (action.help or "").rstrip()
        if "default" not in text.lower():
            action.help = f"{text} (default: %(default)s)".lstrip()


def typed_options(parser: argparse.ArgumentParser, argv: list[str]) -> set[str]:
    """The ``dest`` of every option the user typed, as opposed to one filled in by its default."""
    # Only options: a positional with nargs="?" would check the SUPPRESS string against its
    # choices (argparse) and fail the call, as `cogbench fetch-raw` with no SOURCE once did.
    actions = [action for p in _all_parsers(parser) for action in p._actions if action.option_strings]
    saved = [action.default for action in actions]
    try:
        for action in actions:
            action.default = argparse.SUPPRESS
        namespace, _ = parser.parse_known_args(argv)
    finally:
        for action, default in zip(actions, saved):
            action.default = default
    options = {action.dest for action in actions}
    return set(vars(namespace)) & options


def refuse_inapplicable(args: argparse.Namespace, typed: set[str]) -> None:
    """Refuse an option that the command's ``only_for`` says does not apply to this call."""
    for dest, (attr, values) in getattr(args, "only_for", {}).items():
        value = str(getattr(args, attr, ""))
        if dest not in typed or value.split(":", 1)[0] in values:
            continue
        if attr == "model":
            wanted = " or ".join(f"{prefix}: models" for prefix in values)
        else:
            wanted = f"--{attr} " + " or ".join(values)
        given = f", not to --{attr} {value}" if getattr(args, attr, None) is not None else f" (no --{attr} given)"
        raise UsageError(f"--{dest.replace('_', '-')} applies only to {wanted}{given}")


def _all_parsers(parser: argparse.ArgumentParser):
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for subparser in action.choices.values():
                yield from _all_parsers(subparser)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        refuse_inapplicable(args, typed_options(parser, argv))
        return int(args.func(args) or 0)
    except CogbenchError as error:
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
