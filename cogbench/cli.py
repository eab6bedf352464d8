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
import difflib
import errno
import functools
import importlib
import os
import shlex
import sys
from pathlib import Path

import cogbench
from cogbench.errors import EXIT_CODES, EXIT_USAGE, CogbenchError, UsageError
from cogbench.redaction import redact_text

COMMAND_MODULES = (
    "cogbench.dataset_builders.cli",
    "cogbench.cards.cli",
    "cogbench.validation.cli",
    "cogbench.reference_eval.cli",
    "cogbench.reference_eval.run.cli",
    "cogbench.reference_eval.api.cli",
    "cogbench.reference_eval.reports.cli",
    "cogbench.reference_eval.publishing.cli",
    "cogbench.reference_eval.verifying.cli",
    "cogbench.reference_eval.harnesses.cli",
    "cogbench.reference_eval.certifying.cli",
    "cogbench.reference_eval.labelling.cli",
    "cogbench.reference_eval.explaining.cli",
    "cogbench.reference_eval.sweeping.cli",
    "cogbench.reference_eval.demo.cli",
    "cogbench.reference_eval.contamination.cli",
)

# The modules of the `eval` extra (pyproject.toml), by import name: a command that needs one on the
# core install says so in one line (tests/test_core_install.py checks this list against pyproject).
EVAL_EXTRA_MODULES = (
    "torch",
    "transformers",
    "sentence_transformers",
    "spacy",
    "httpcore",
    "accelerate",
    "openpyxl",
    "filelock",
    "scipy",
    "matplotlib",
    "pycocoevalcap",
    "rouge_score",
    "bert_score",
    "krippendorff",  # a judge panel's alpha (judges/panel.py, metrics/panel_agreement.py)
    "markdown_it",  # report.html's Markdown sections (the judge certificate), rendered as HTML
)

# What an interrupt (Ctrl-C) keeps, said in its one line: the same command goes on from there.
RESUME = {
    "eval": "what was generated is saved; run the same command again to resume where it stopped",
    "score": "judge verdicts so far are cached; run the same command again to resume without asking them again",
    "fetch-raw": "files already verified are kept; run the same command again to fetch the rest",
    "sweep": "each shard keeps what it answered; run the same command again to resume item by item",
}

EXIT_CODES_HELP = "exit codes: " + "; ".join(f"{code} {meaning}" for code, meaning in EXIT_CODES.items())


class VersionAction(argparse.Action):
    """``--version``: the version is read (``importlib.metadata``) only when asked for."""

    def __call__(self, parser, namespace, values, option_string=None):  # type: ignore[no-untyped-def]
        print(f"cogbench {cogbench.__version__}")  # stdout, as argparse's own version action
        parser.exit()


class Parser(argparse.ArgumentParser):
    """argparse's parser, whose usage errors (which repeat the value typed) mask a URL's credentials, as every
    ``error:`` line does (cogbench/redaction.py)."""

    def error(self, message: str):  # type: ignore[override]
        super().error(redact_text(message))


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="cogbench",
        description="Build, validate and score the CogBench and CODIS benchmarks.",
        epilog=EXIT_CODES_HELP,
    )
    parser.add_argument("--version", action=VersionAction, nargs=0, help="show the version and exit")
    subparsers = parser.add_subparsers(
        dest="command",
        required=True,
        metavar="COMMAND",
        parser_class=functools.partial(Parser, epilog=EXIT_CODES_HELP),
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


def refuse_unknown_options(parser: argparse.ArgumentParser, argv: list[str]) -> None:
    """Name an unknown option (``--datset``) before argparse reports only the required one it hides."""
    if any(arg in ("-h", "--help", "--version") for arg in argv):
        return  # help shows the real usage (required options unbracketed)
    actions = [a for p in _all_parsers(parser) for a in p._actions if not isinstance(a, argparse._SubParsersAction)]
    actions += [group for p in _all_parsers(parser) for group in p._mutually_exclusive_groups]
    saved = [action.required for action in actions]
    try:
        for action in actions:
            action.required = False
        namespace, extras = parser.parse_known_args(argv)
    finally:
        for action, required in zip(actions, saved):
            action.required = required
    unknown = [arg for arg in extras if arg.startswith("-") and arg != "-"]
    if not unknown:
        return
    command = _subparser(parser, getattr(namespace, "command", None)) or parser
    known = [option for action in command._actions for option in action.option_strings]
    close = difflib.get_close_matches(unknown[0].split("=", 1)[0], known, n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    command.error(f"unrecognized option{'s' if len(unknown) > 1 else ''}: {' '.join(unknown)}{hint}")


def _subparser(parser: argparse.ArgumentParser, name: str | None) -> argparse.ArgumentParser | None:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices.get(name)
    return None


def _all_parsers(parser: argparse.ArgumentParser):
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for subparser in action.choices.values():
                yield from _all_parsers(subparser)


def eval_extra_command() -> str:
    """The pip command that adds the `eval` extra to this very install (a source checkout: editable)."""
    source = Path(__file__).resolve().parents[1]
    python = shlex.quote(sys.executable)
    if (source / "pyproject.toml").is_file() and (source / "reference_eval").is_dir():
        return f"{python} -m pip install -e {shlex.quote(f'{source}[eval]')}"
    return f"{python} -m pip install 'cogbench-codis[eval]'"


def missing_extra(command: str, error: ModuleNotFoundError) -> UsageError | None:
    """The one-line error for a module of the `eval` extra missing on the core install (None: another module)."""
    module = (error.name or "").partition(".")[0]
    if module not in EVAL_EXTRA_MODULES:
        return None
    return UsageError(
        f"`cogbench {command}` needs the eval extra (module {module!r} is not installed); "
        f"install it with `{eval_extra_command()}`"
    )


# A reader that stopped early (`cogbench explain A B | head -1`): the exit code a shell shows for a tool
# that the pipe stopped (128 + SIGPIPE), the output left unwritten and no traceback.
EXIT_BROKEN_PIPE = 141


def main(argv: list[str] | None = None) -> int:
    """Run one command; every line it prints goes through here, so a closed pipe is met here, once."""
    try:
        try:
            return run_command(argv)
        finally:
            sys.stdout.flush()  # met here, not in Python's own flush at exit, which would print "Exception ignored"
    except BrokenPipeError:
        try:  # what is still buffered goes nowhere, so the flush at exit stays quiet too
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):  # a stdout with no file descriptor (captured in a test): nothing to redirect
            pass
        return EXIT_BROKEN_PIPE


def run_command(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["--version"]:  # what argparse would print, without registering every command first
        print(f"cogbench {cogbench.__version__}")
        return 0
    parser = build_parser()
    refuse_unknown_options(parser, argv)
    args = parser.parse_args(argv)
    try:
        refuse_inapplicable(args, typed_options(parser, argv))
        try:
            return int(args.func(args) or 0)
        except ModuleNotFoundError as error:
            extra = missing_extra(args.command, error)
            if extra is None:
                raise
            raise extra from None
    except CogbenchError as error:
        # Any URL the message repeats (a path or option typed as a URL, a server's words) with its credentials masked.
        print(f"error: {redact_text(str(error))}", file=sys.stderr)
        return error.exit_code
    except OSError as error:
        if error.errno != errno.ENAMETOOLONG:
            raise
        # Any path the user named (an --out, a predictions file whose name makes the default --out).
        print(
            f"error: {redact_text(str(error.filename))}: name too long for the file system; choose a shorter one",
            file=sys.stderr,
        )
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"interrupted: {RESUME.get(args.command, 'run the same command again')}", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
