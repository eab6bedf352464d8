"""The check before every pull request: what the model repo already holds for each result.

Before ``publish-results`` pushes, each result it would write (benchmark task, dataset, value) is
looked up in the model repo's ``.eval_results/*.yaml`` on main and in every open pull request
(``refs/pr/N``, read with the real ``HfApi``): ``already present`` (the same value for the same
dataset and task: skipped, never a duplicate PR), ``conflict`` (another value: both shown, nothing
pushed without ``--allow-conflict``) or ``ready``. Maintainers complain of duplicate and conflicting
PRs; the Every Eval Ever converter audits the same way (``already_present``, ``score_conflict``).
"""

from __future__ import annotations

import math
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from cogbench.errors import CogbenchError, shown

RESULTS_GLOB = ".eval_results/"
TOLERANCE = 0.005  # values are written with 2 decimals
MAX_DEPTH = 64  # a results file nests 3 deep; deeper is not one (50,000 deep took Python's stack)


class _Loader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that gives up past ``MAX_DEPTH`` levels, before Python's recursion limit."""

    depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                raise yaml.YAMLError(f"nested deeper than {MAX_DEPTH} levels")
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


@dataclass
class Found:
    where: str  # "main" or "PR #N"
    file: str
    value: float


@dataclass
class Check:
    """One result we would write, and what the repo holds for its dataset and task."""

    file: str
    task_id: str
    dataset_id: str
    value: float
    found: list[Found] = field(default_factory=list)

    @property
    def status(self) -> str:
        # not a number (.nan), or another one: a value that is not ours can never be "already present"
        if any(not math.isfinite(f.value) or abs(f.value - self.value) > TOLERANCE for f in self.found):
            return "conflict"
        return "already present" if self.found else "ready"

    def line(self) -> str:
        held = "; ".join(f"{f.where} {shown(f.file)}: {f.value}" for f in self.found)  # names others chose
        if self.status == "conflict":
            return f"  {self.task_id}: conflict: ours {self.value} | the repo holds {held}"
        if self.status == "already present":
            return f"  {self.task_id}: already present ({held}): skipped"
        return f"  {self.task_id}: ready ({self.value}; nothing on main or in open PRs)"


def _entries(api: Any, repo: str, revision: str, where: str) -> list[tuple[str, Found, dict[str, Any]]]:
    """Every result of ``.eval_results/*.yaml`` at ``revision``: (file, where and value, its dataset)."""
    files = [
        f for f in api.list_repo_files(repo, revision=revision) if f.startswith(RESULTS_GLOB) and f.endswith(".yaml")
    ]
    found = []
    with tempfile.TemporaryDirectory(prefix="cogbench-audit-") as tmp:
        for name in files:
            local = api.hf_hub_download(repo, name, revision=revision, local_dir=tmp)
            try:
                entries = yaml.load(Path(local).read_text(encoding="utf-8"), Loader=_Loader)  # a SafeLoader
            except (yaml.YAMLError, UnicodeDecodeError, RecursionError):
                continue  # not ours to judge: a broken file is the repo's, and holds no value we could match
            for entry in entries if isinstance(entries, list) else []:
                value, dataset = (entry.get("value"), entry.get("dataset")) if isinstance(entry, dict) else (None, None)
                # an entry of another shape (``dataset: [1]``, a string) names no dataset we could match
                if isinstance(value, (int, float)) and not isinstance(value, bool) and isinstance(dataset, dict):
                    found.append((name, Found(where, name, float(value)), dataset))
    return found


def audit(api: Any, model_repo: str, results: dict[str, Any]) -> list[Check]:
    """``results``: {file name: EvalResultEntry} we would write; each looked up on main and in open PRs."""
    checks = [Check(name, e.task_id, e.dataset_id, float(e.value)) for name, e in results.items()]
    try:
        places = [("main", "main")]
        places += [
            (f"refs/pr/{d.num}", f"PR #{d.num}")
            for d in api.get_repo_discussions(model_repo, discussion_type="pull_request", discussion_status="open")
        ]
        held = [hit for revision, where in places for hit in _entries(api, model_repo, revision, where)]
    except Exception as error:
        raise CogbenchError(
            f"{model_repo}: could not read what the repo holds on main and in open pull requests "
            f"({type(error).__name__}); nothing was pushed"
        ) from None
    for check in checks:
        for _name, found, dataset in held:
            same_task = dataset.get("task_id") == check.task_id and dataset.get("id") == check.dataset_id
            # a PR's ref holds main's files too: a value seen on main is not repeated for each PR
            if same_task and not any(f.file == found.file and f.value == found.value for f in check.found):
                check.found.append(found)
    return checks


def render(model_repo: str, checks: list[Check]) -> list[str]:
    return [f"before the pull request: {model_repo} on main and in its open pull requests:"] + [
        c.line() for c in checks
    ]
