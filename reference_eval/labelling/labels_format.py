"""The labels format: people's labels of a sample's units, the sample itself and its blinding key, read back checked.

Three files (schemas ``labels``, ``labelling_sample``, ``labelling_key``; docs/labelling.md): a labels file (JSON
Lines, one line per unit and labeller, exported by the page of ``cogbench label``), ``sample.json`` in the page's
folder (seed, protocol, the units drawn), and the key written outside that folder (each opaque answers id's run,
model and ``answers_sha256``). A unit is keyed as a verdict is (``certifying.verdict_archive.Key``: item_id,
category, query) within one run's answers, so ``judges validate`` joins labels to any judge's verdicts of the same
answers. Every problem is one ``error:`` line naming file, line and field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cogbench.errors import UsageError, echoed, locate
from cogbench.jsonl import file_lines
from cogbench.schemas import iter_violations

LABELS_FORMAT = "cogbench labels 1"
SAMPLE_FORMAT = "cogbench labelling sample 1"
KEY_FORMAT = "cogbench labelling key 1"
LABELS_SCHEMA, SAMPLE_SCHEMA, KEY_SCHEMA = (
    "labels.schema.json",
    "labelling_sample.schema.json",
    "labelling_key.schema.json",
)
SAMPLE_FILE = "sample.json"


@dataclass(frozen=True)
class Label:
    """One line of a labels file."""

    sample: str
    unit: str
    task: str
    answers: str  # the opaque answers id; the key names its run and model
    item_id: str
    category: str
    query: str
    label: int  # 1 yes, 0 no: a verdict's coding
    labeller: str
    role: str  # "A" every unit, "B" the shared units only, "adjudicator" shared units where A and B differ
    time: str
    where: str  # file:line, for the error lines of what reads it

    @property
    def place(self) -> tuple[str, str]:
        """``where`` as (file, line), for ``locate``."""
        file, line = self.where.rsplit(":", 1)
        return file, line

    @property
    def key(self) -> tuple[str, str, str]:
        """The unit as ``verdict_archive.JudgedAnswers.units`` keys it."""
        return (self.item_id, self.category, self.query)


@dataclass(frozen=True)
class KeyEntry:
    """What one opaque answers id stands for."""

    task: str
    model: str
    answers_sha256: str
    judge: str
    run: str


def _violation(document: Any, schema: str, where: str, record: str | None = None) -> None:
    for violation in iter_violations(document, schema):
        field = ".".join(str(part) for part in violation.path) or "(top level)"
        raise UsageError(f"{locate(where, record, field)}: {violation.message[:160]}")


def read_json(path: Path, schema: str, what: str) -> dict[str, Any]:
    """A JSON file checked against its schema; one ``error:`` line when it is not one."""
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as error:
        raise UsageError(
            f"{path}: not a readable {what} ({type(error).__name__}); `cogbench label` writes it"
        ) from None
    _violation(document, schema, str(path))
    return document


def read_labels(path: Path) -> list[Label]:
    """Every line of a labels file, checked against ``labels.schema.json``; a unit labelled twice by one
    labeller is refused (the page exports each unit's last label once)."""
    labels: list[Label] = []
    seen: dict[tuple[str, str, str], int] = {}
    try:
        lines = list(file_lines(path))
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"{path}: not a readable labels file ({type(error).__name__})") from None
    if not lines:
        raise UsageError(f"{path}: no labels (an export of the page of `cogbench label` holds one line per unit)")
    for number, line in lines:
        try:
            row = json.loads(line)
        except (ValueError, RecursionError):
            raise UsageError(f"{locate(str(path), str(number))}: not valid JSON") from None
        _violation(row, LABELS_SCHEMA, str(path), str(number))
        fields = {name: row[name] for name in Label.__dataclass_fields__ if name != "where"}
        label = Label(**fields, where=f"{path}:{number}")
        twice = (label.sample, label.unit, label.labeller)
        if twice in seen:
            raise UsageError(
                f"{locate(str(path), str(number), 'unit')}: {echoed(label.unit)} labelled again by "
                f"{echoed(label.labeller)} (first on line {seen[twice]}); keep one label per unit and labeller"
            )
        seen[twice] = number
        labels.append(label)
    return labels


def read_sample(folder: Path) -> dict[str, Any]:
    """A page folder's ``sample.json``, checked."""
    return read_json(Path(folder) / SAMPLE_FILE, SAMPLE_SCHEMA, "labelling sample")


def read_key(path: Path) -> tuple[str, dict[str, KeyEntry]]:
    """(the sample's sha256, each answers id's entry) of a blinding key, checked."""
    key = read_json(path, KEY_SCHEMA, "labelling key")
    return key["sample"], {name: KeyEntry(**entry) for name, entry in key["answers"].items()}


def check_against_sample(labels: list[Label], sample: dict[str, Any], where: str) -> None:
    """Every label names a unit of ``sample`` with the same key, and a role B label a shared unit."""
    units = {unit["unit"]: unit for unit in sample["units"]}
    for label in labels:
        file, line = label.place
        if label.sample != sample["sample"]:
            raise UsageError(
                f"{locate(file, line, 'sample')}: {echoed(label.sample[:12])}... is not the sample of {where} "
                f"({sample['sample'][:12]}...); give the labels of this sample"
            )
        unit = units.get(label.unit)
        if unit is None:
            raise UsageError(f"{locate(file, line, 'unit')}: {echoed(label.unit)} is not a unit of {where}")
        for field in ("task", "answers", "item_id", "category", "query"):
            if unit[field] != getattr(label, field):
                raise UsageError(
                    f"{locate(file, line, field)}: {echoed(getattr(label, field))}, but unit {label.unit} of {where} "
                    f"has {echoed(unit[field])}"
                )
        if label.role != "A" and not unit["shared"]:
            raise UsageError(
                f"{locate(file, line, 'role')}: role {label.role} labelled {label.unit}, which is not shared in "
                f"{where} (roles B and adjudicator label only the shared units)"
            )
