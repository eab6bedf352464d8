"""The Python API's arguments, checked as the command line checks its options.

``cogbench.evaluate(limit=-1)`` ended in "predictions.jsonl: not valid JSON" and ``limit="3"`` in a bare
``TypeError``, where the ``eval`` command given ``--limit -1`` says ``argument --limit: -1 is not a positive
integer``.
Each argument of ``evaluate``, ``score``, ``compare``, ``verify``, ``rescore`` and ``explain`` (and each key of
their ``settings``/``scoring``/``**options``) that a command takes as an option is run through that option of
the command's own parser (``option_types.as_option``: its type and choices, by argparse), before any work:
the same conversion (``limit="3"`` is 3), the same refusal, as ``UsageError`` with the message the command
prints after ``error:``. The parsers are the commands' own (each ``cli.register``), so an option's rule is
written once.
"""

from __future__ import annotations

import argparse
import functools
import os
from collections.abc import Callable, Mapping
from typing import Any

from cogbench.errors import UsageError, echoed
from cogbench.option_types import as_option
from cogbench.reference_eval import cli as score_cli
from cogbench.reference_eval.api import cli as rescore_cli
from cogbench.reference_eval.reports import cli as reports_cli
from cogbench.reference_eval.run import cli as eval_cli
from cogbench.reference_eval.verifying import cli as verify_cli

# ``EvalSettings`` fields whose ``eval`` option has another name.
EVAL_OPTION_NAMES = {"timeout_seconds": "request_timeout"}
REGISTERS: tuple[Callable[[argparse._SubParsersAction], None], ...] = (
    score_cli.register,
    eval_cli.register,
    rescore_cli.register,
    reports_cli.register,
    verify_cli.register,
)


@functools.cache
def _parsers(registers: tuple[Callable[[argparse._SubParsersAction], None], ...]) -> dict[str, Any]:
    subparsers = argparse.ArgumentParser(prog="cogbench").add_subparsers()
    for register in registers:
        register(subparsers)
    return dict(subparsers.choices)


def options_of(command: str, registers=REGISTERS) -> dict[str, argparse.Action]:
    """The options of ``cogbench COMMAND`` (``"sweep run"``: a subcommand's) by their destination (the API's
    argument names)."""
    name, *subcommands = command.split()
    parser = _parsers(tuple(registers))[name]
    for subcommand in subcommands:
        parser = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[subcommand]
    return {action.dest: action for action in parser._actions if action.dest != "help"}


def checked(
    command: str,
    given: Mapping[str, Any],
    names: Mapping[str, str] | None = None,
    registers=REGISTERS,
) -> dict[str, Any]:
    """``given`` (argument name -> value) with each value that ``cogbench COMMAND`` takes as an option converted
    and checked as that option (``names``: an argument's option where the two names differ); the others as
    they are."""
    options = options_of(command, registers)
    checked_values = dict(given)
    for name, value in given.items():
        action = options.get((names or {}).get(name, name))
        if action is not None:
            checked_values[name] = as_option(action, value)
    return checked_values


def path_or_result(value: Any, what: str, result_type: type) -> Any:
    """A run given to ``compare``/``verify``: a ``Result`` or a path (text or ``os.PathLike``)."""
    if isinstance(value, (str, os.PathLike, result_type)):
        return value
    raise UsageError(f"{what}: expected a run folder (a path) or a Result, not {type(value).__name__} {echoed(value)}")


def flag(value: Any, name: str) -> bool:
    """A True/False argument with no option of its own (``compare(judges=...)``)."""
    if not isinstance(value, bool):
        raise UsageError(f"{name}: {echoed(value)} is not True or False")
    return value
