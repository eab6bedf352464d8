"""``cogbench.explain``: the Python face of ``cogbench explain`` (the command prints what this returns).

It lives here, not in ``reference_eval/api``, because ``api/`` sits below ``explaining/`` (ARCHITECTURE.md);
``cogbench/__init__`` names it lazily beside the rest of the API.
"""

from __future__ import annotations

from os import PathLike
from typing import Any

from cogbench.errors import UsageError
from cogbench.reference_eval.api.arguments import checked
from cogbench.reference_eval.explaining import cli as explain_cli
from cogbench.reference_eval.explaining.explain import Explanation, explain_runs
from cogbench.reference_eval.explaining.explain_inputs import read_scorings
from cogbench.reference_eval.explaining.explain_text import as_json
from cogbench.reference_eval.explaining.published_gap import published_gap


def explain(
    a: str | PathLike[str],
    b: str | PathLike[str] | None = None,
    *,
    task: str | None = None,
    published: str | None = None,
) -> dict[str, Any]:
    """Why B's numbers differ from A's, stage by stage and item by item, as ``cogbench explain --json`` prints.

    ``a`` and ``b`` are run folders, details datasets (local, or ``ORG/NAME[@REVISION]`` on the configured
    Hub) or ``.eval_results`` files, each verified before use; ``task`` picks one where both hold several.
    With ``published=MODEL`` and no ``b``: the run beside that model's row of the papers' tables.
    Errors are ``cogbench.errors.UsageError`` (bad input) or ``CogbenchError``, never ``SystemExit``; each
    argument is checked as ``cogbench explain``'s option (api/arguments.py).
    """
    runs = (a,) if b is None else (a, b)
    given = {"runs": runs, "task": task, "published": published}
    runs, task, published = checked("explain", given, registers=(explain_cli.register,)).values()
    a, b = runs if len(runs) == 2 else (runs[0], None)
    if published is not None:
        if b is not None:
            raise UsageError("explain --published: give one run, not two")
        [(run, _)] = read_scorings([str(a)], task)
        return published_gap(run, published)
    if b is None:
        raise UsageError("explain: give two runs, RUN_A and RUN_B, or --published MODEL")
    return as_json(explanation(a, b, task))


def explanation(a: str | PathLike[str], b: str | PathLike[str], task: str | None = None) -> Explanation:
    """The decomposition itself (``explain``'s JSON and the command's Markdown are made from it)."""
    [(run_a, shown_a), (run_b, shown_b)] = read_scorings([str(a), str(b)], task)
    return explain_runs(run_a, run_b, (shown_a, shown_b))
