"""Reading a scored run folder for ``report`` and ``compare``: only what can be recomputed is trusted.

``details.jsonl`` is the source of truth. Every file is checked against its
JSON Schema (``scores.json``, ``run.json``, each details line against its
task's entry), item ids must be unique and cover ``counts.items``, and every
number ``scores.json`` states is recomputed from the details (the same pooling
as the intervals, ``metrics.intervals``); a run whose stored numbers disagree
was edited and is refused, with the file, line and field.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from cogbench.errors import CogbenchError, UsageError, locate
from cogbench.jsonl import text_lines
from cogbench.numbers import fixed
from cogbench.reference_eval.metrics import intervals
from cogbench.schemas.vocabulary import CODIS_CATEGORIES, COGBENCH_CATEGORIES

TOLERANCE = 0.01  # percentage points: scores.json rounds, the recomputation does not


class RunNotVerified(CogbenchError):
    """A run folder whose files are broken or disagree with each other (exit 1)."""


@dataclass
class ScoredRun:
    """A folder written by ``cogbench score`` (or ``eval``), checked: scores.json and details.jsonl."""

    folder: Path
    scores: dict[str, Any]
    details: list[dict[str, Any]]
    prompt_id: str | None  # None for official-format predictions that do not say
    run_record: dict[str, Any] | None = None  # the eval run's run.json, when there is one

    @property
    def label(self) -> str:
        return f"{self.scores['model']} ({self.folder})"


def schema(name: str) -> dict[str, Any]:
    return json.loads(resources.files("cogbench.schemas").joinpath(name).read_text(encoding="utf-8"))


def validator(rules: dict[str, Any]):
    import jsonschema

    return jsonschema.Draft202012Validator(rules)


def score_folder(path: str | Path) -> Path:
    """The folder holding scores.json: PATH itself, or PATH/score for an ``eval`` run folder."""
    path = Path(path)
    for candidate in (path, path / "score"):
        if (candidate / "scores.json").is_file():
            return candidate
    raise UsageError(
        f"{path}: no scores.json here or in {path / 'score'}; give a folder written by `cogbench score` or `eval`"
    )


def _json_value(path: Path, text: str, record: str | None = None) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise RunNotVerified(f"{locate(str(path), record)}: not valid JSON ({error.msg})") from None
    except RecursionError:
        raise RunNotVerified(f"{locate(str(path), record)}: JSON nested too deeply") from None
    except ValueError as error:  # an integer of thousands of digits
        raise RunNotVerified(f"{locate(str(path), record)}: not usable JSON ({str(error).split(';')[0]})") from None


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise RunNotVerified(f"{path}: not UTF-8 text (byte {error.start})") from None
    except OSError as error:
        raise RunNotVerified(f"{path}: cannot be read ({error.strerror})") from None


def _check_schema(value: Any, rules, path: Path, record: str | None = None) -> None:
    """``rules``: a validator (``validator(schema)``), made once per file."""
    import jsonschema

    error = jsonschema.exceptions.best_match(rules.iter_errors(value))
    if error is not None:
        field = ".".join(str(part) for part in error.absolute_path) or "(top level)"
        raise RunNotVerified(f"{locate(str(path), record, field)}: {error.message[:200]}")


def read_json_file(path: Path, schema_name: str) -> dict[str, Any]:
    """A JSON file checked against one of the project's schemas."""
    value = _json_value(path, _read_text(path))
    _check_schema(value, validator(schema(schema_name)), path)
    return value


def read_details(path: Path, task: str) -> list[dict[str, Any]]:
    """Every line of details.jsonl, each checked against its task's schema; item ids unique."""
    if not path.is_file():
        raise UsageError(f"{path}: missing; intervals and comparisons need the per-item details")
    rules = validator({**schema("details.schema.json"), "$ref": f"#/$defs/{task}"})
    details, seen = [], {}
    for number, line in text_lines(_read_text(path)):
        detail = _json_value(path, line, str(number))
        _check_schema(detail, rules, path, str(number))
        item = detail["item_id"]
        if item in seen:
            raise RunNotVerified(
                f"{locate(str(path), str(number), 'item_id')}: {item!r} is also on line {seen[item]}; "
                "each item is scored once, so the run folder was edited"
            )
        seen[item] = number
        details.append(detail)
    return details


def _stated(metric: dict[str, Any], column: str) -> float | None:
    """The number scores.json states for a column ("overall" or a category), if any."""
    if column == "overall":
        value = metric.get("overall")
        value = metric.get("overall_partial") if value is None else value
    else:
        value = (metric.get("per_category") or {}).get(column)
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def check_recomputed(folder: Path, scores: dict[str, Any], details: list[dict[str, Any]]) -> None:
    """Refuse a run whose scores.json states a number its details do not give."""
    task = scores["task"]
    items = (scores.get("counts") or {}).get("items")
    if isinstance(items, int) and items != len(details):
        raise RunNotVerified(
            f"{locate(str(folder / 'scores.json'), None, 'counts.items')}: says {items} items, "
            f"details.jsonl has {len(details)}: the run folder was edited (or an item is missing)"
        )
    categories = CODIS_CATEGORIES if task == "codis" else COGBENCH_CATEGORIES
    try:
        tables = intervals.metric_tables(task, details, categories)
    except (KeyError, TypeError, ValueError, ZeroDivisionError) as error:
        raise RunNotVerified(
            f"{folder / 'details.jsonl'}: cannot recompute the metrics ({type(error).__name__}: {error})"
        ) from None
    for name, metric in scores["metrics"].items():
        if name not in tables or not isinstance(metric, dict):
            continue
        table = tables[name]
        recomputed = dict(zip(table.columns, table.pooled()))
        for column, value in recomputed.items():
            stated = _stated(metric, column)
            if stated is None:
                continue
            if math.isnan(value) or abs(stated - value) > TOLERANCE:
                gives = "nothing" if math.isnan(value) else fixed(value)
                where = "overall" if column == "overall" else f"per_category.{column}"
                raise RunNotVerified(
                    f"{locate(str(folder / 'scores.json'), None, f'metrics.{name}.{where}')}: "
                    f"scores.json says {fixed(stated)}, details.jsonl gives {gives}: the run folder was edited"
                )


def read_run_record(folder: Path) -> dict[str, Any] | None:
    """The ``eval`` run's run.json (in the folder or its parent), checked, or None."""
    for path in (folder / "run.json", folder.parent / "run.json"):
        if path.is_file():
            return read_json_file(path, "run.schema.json")
    return None


def read_run(path: str | Path) -> ScoredRun:
    """A run folder, verified: schemas, unique items, and every stated number recomputed from details.jsonl."""
    folder = score_folder(path)
    scores = read_json_file(folder / "scores.json", "scores.schema.json")
    details = read_details(folder / "details.jsonl", scores["task"])
    return checked_run(folder, scores, details)


def checked_run(folder: Path, scores: dict[str, Any], details: list[dict[str, Any]]) -> ScoredRun:
    """The run of ``read_run`` from its scores.json and details.jsonl as read (schema-checked) already: every
    stated number recomputed, its run.json read and checked."""
    check_recomputed(folder, scores, details)
    record = read_run_record(folder)
    return ScoredRun(folder, scores, details, prompt_of(scores, record), record)


def prompt_of(scores: dict[str, Any], record: dict[str, Any] | None) -> str | None:
    """The prompt template id: recorded in scores.json, or in the ``eval`` run's run.json beside it."""
    for recorded in (scores, scores.get("provenance") or {}, record or {}):
        if recorded.get("prompt_id"):
            return recorded["prompt_id"]
    return None
