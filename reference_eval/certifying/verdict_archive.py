"""One model's verdicts by one judge, from a run folder or from a Parquet archive of verdicts.

The archive lets anyone who kept the official judge's verdicts (``gpt-4-turbo`` and
``gpt-4-turbo-preview`` are shut down, so they cannot be made again) contribute them
without their run folders. Its format (docs/judges.md), one row per judged unit:

| column | type | what |
|---|---|---|
| ``task`` | string | ``codis`` or ``description`` |
| ``model`` | string | the model whose answers were judged |
| ``answers_sha256`` | string | ``provenance.answers_sha256`` of those answers (pairs them with a candidate's run) |
| ``item_id`` | string | the dataset item |
| ``query`` | string | codis: the query number (``1``, ``2``); description: the CoR's index in its category |
| ``image_id`` | string | the image (the interval's cluster) |
| ``category`` | string | the item's (codis) or the CoR's (description) category |
| ``verdict`` | int64, null | 1 right, 0 wrong (2 where the authors' parsing sums two labels); null: no verdict |
| ``judge`` | string | who judged, e.g. ``openai:gpt-4-turbo-preview, official parsing`` |

``cogbench judges archive`` writes it from run folders.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cogbench.dataset_builders.writes import write_with
from cogbench.errors import UsageError, echoed, locate, shown
from cogbench.reference_eval.recording.run_reader import ScoredRun, read_run
from cogbench.reference_eval.reports.judge_agreement import _answers_id, judge_label, verdicts

COLUMNS = ("task", "model", "answers_sha256", "item_id", "query", "image_id", "category", "verdict", "judge")
TASKS = ("codis", "description")
VERDICTS = (0, 1, 2)  # wrong, right, and 2 where the authors' parsing sums two labels

Key = tuple[str, str, str]  # (item_id, category, query)


@dataclass
class JudgedAnswers:
    """One model's answers as one judge saw them: per unit (image, category, verdict or None)."""

    task: str
    model: str
    answers: str  # provenance.answers_sha256
    judge: str
    where: str  # the run folder or archive file it came from
    units: dict[Key, tuple[str, str, int | None]]


def from_run(run: ScoredRun) -> JudgedAnswers:
    """A verified run folder's verdicts (``compare --judges`` reads the same)."""
    units: dict[Key, tuple[str, str, int | None]] = {}
    for key, (image, category, verdict) in verdicts(run).items():
        item, query = key[0], key[-1]
        units[(str(item), category, str(query))] = (str(image), category, verdict)
    task = run.scores["task"]
    return JudgedAnswers(task, run.scores["model"], _answers_id(run), judge_label(run), str(run.folder), units)


def _field(path: Path, number: int, row: dict[str, Any], name: str) -> Any:
    value = row.get(name)
    if name == "verdict":
        if value is not None and (isinstance(value, bool) or value not in VERDICTS):
            raise UsageError(
                f"{locate(str(path), str(number), name)}: {echoed(value)} is not a verdict (0, 1, 2 or null)"
            )
        return value
    if not isinstance(value, str) or not value:
        raise UsageError(f"{locate(str(path), str(number), name)}: {echoed(value)} is not a non-empty string")
    if name == "task" and value not in TASKS:
        raise UsageError(f"{locate(str(path), str(number), name)}: {echoed(value)}: expected one of {', '.join(TASKS)}")
    return value


def read_archive(path: Path) -> list[JudgedAnswers]:
    """The archive's rows grouped by (task, answers, judge); one ``error:`` line naming file, row and field."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowException) as error:
        raise UsageError(f"{path}: not a Parquet verdict archive ({' '.join(str(error).split())[:200]})") from None
    missing = [c for c in COLUMNS if c not in table.column_names]
    if missing:
        raise UsageError(f"{path}: the verdict archive lacks column(s) {', '.join(missing)} (docs/judges.md)")
    groups: dict[tuple[str, str, str], JudgedAnswers] = {}
    for number, row in enumerate(table.select(list(COLUMNS)).to_pylist(), start=1):
        task, model, answers, item, query, image, category, verdict, judge = (
            _field(path, number, row, name) for name in COLUMNS
        )
        group = groups.setdefault((task, answers, judge), JudgedAnswers(task, model, answers, judge, str(path), {}))
        if group.model != model:
            raise UsageError(
                f"{locate(str(path), str(number), 'model')}: {echoed(model)}, but {shown(answers[:12])} is "
                f"{echoed(group.model)}"
            )
        if (item, category, query) in group.units:
            given = "/".join(shown(part, 40) for part in (item, category, query))
            raise UsageError(f"{locate(str(path), str(number), 'query')}: {given} is given twice")
        group.units[(item, category, query)] = (image, category, verdict)
    if not groups:
        raise UsageError(f"{path}: the verdict archive holds no rows")
    return list(groups.values())


def read_verdicts(source: str) -> list[JudgedAnswers]:
    """A ``.parquet`` archive, or a run folder (verified as every command verifies one)."""
    path = Path(source)
    if path.suffix == ".parquet":
        if not path.is_file():
            raise UsageError(f"{path}: no such verdict archive")
        return read_archive(path)
    return [from_run(read_run(path))]


def archive_rows(judged: JudgedAnswers) -> list[dict[str, Any]]:
    """The archive's rows for one model's verdicts (sorted, so the same verdicts give the same file)."""
    return [
        {
            "task": judged.task,
            "model": judged.model,
            "answers_sha256": judged.answers,
            "item_id": item,
            "query": query,
            "image_id": image,
            "category": category,
            "verdict": verdict,
            "judge": judged.judge,
        }
        for (item, category, query), (image, _, verdict) in sorted(judged.units.items())
    ]


def write_archive(judged: list[JudgedAnswers], path: Path) -> int:
    """Write the archive of ``judged`` to ``path`` (atomically); returns its number of rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([(c, pa.int64() if c == "verdict" else pa.string()) for c in COLUMNS])
    rows = [row for answers in judged for row in archive_rows(answers)]
    table = pa.Table.from_pylist(rows, schema=schema)
    write_with(path, lambda handle: pq.write_table(table, handle))
    return len(rows)
