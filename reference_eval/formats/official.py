"""The benchmarks' official prediction formats, mapped to and from ``Prediction``.

This module is the one place that knows how the authors' scripts lay out
model outputs:

- CogBench description: JSONL, one ``{"filename": "x.jpg", "model_output": "..."}`` per image;
- CogBench VQA: JSONL (or a ``.json`` list of the same records, which
  ``vqa_accuracy.py`` also reads), the question's own fields (``img_id``, ``question``,
  ``choice_a``..``choice_d``, ...) plus ``response``; there is no question id,
  so a question is found by its image, text and choices;
- CODIS: one JSON list of ``{"id": "000", "output": {"output_1": "...", "output_2": "..."}}``.

Readers turn them into the project's ``Prediction`` records (query 1/2 for the
two CODIS outputs). They need an ``OfficialIds`` built from the dataset to map
file names and question texts to row ids.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cogbench.dataset_builders.writes import write_file
from cogbench.errors import UsageError, locate
from cogbench.jsonl import file_lines
from cogbench.reference_eval.formats.harness import (
    LMMS_EVAL_FORMAT,
    VLMEVALKIT_SUFFIXES,
    TaskDoc,
    is_lmms_eval_sample,
    read_lmms_eval_samples,
    read_vlmevalkit_predictions,
)
from cogbench.reference_eval.formats.predictions import (
    Prediction,
    check_utf8,
    parse_json,
    parse_json_object,
    read_predictions,
)
from cogbench.schemas.vocabulary import ANSWER_LETTERS, CHOICE_COLUMNS, COGBENCH_CATEGORIES, RAW_VQA_CATEGORY

FORMATS = ("project", "cogbench-description", "cogbench-vqa", "codis-output")
TASK_OF_FORMAT = {"cogbench-description": "description", "cogbench-vqa": "vqa", "codis-output": "codis"}


def _stem(image_name: str) -> str:
    return os.path.splitext(os.path.basename(image_name.strip()))[0]


def vqa_question_key(image_id: str, question: str, choices: Iterable[str]) -> tuple[str, ...]:
    """What identifies a VQA question in the official format: image, question and choices."""
    return (_stem(image_id), " ".join(question.split()), *(" ".join(c.split()) for c in choices))


@dataclass
class OfficialIds:
    """Row ids of the dataset, keyed the way the official formats refer to rows."""

    description_by_image: dict[str, str] = field(default_factory=dict)  # image name stem -> image_id
    vqa_by_question: dict[tuple[str, ...], str] = field(default_factory=dict)  # question key -> question_id
    lmms_eval_docs: list[TaskDoc] | None = None  # doc_id -> the exported lmms-eval task's doc

    @classmethod
    def from_rows(
        cls, task: str, rows: Iterable[dict[str, Any]], lmms_eval_docs: list[TaskDoc] | None = None
    ) -> OfficialIds:
        ids = cls(lmms_eval_docs=lmms_eval_docs)
        for row in rows:
            if task == "description":
                ids.description_by_image[_stem(row["image_id"])] = row["image_id"]
                ids.description_by_image[_stem(row["image_file"])] = row["image_id"]
            elif task == "vqa":
                key = vqa_question_key(row["image_id"], row["question"], (row[c] for c in CHOICE_COLUMNS))
                ids.vqa_by_question[key] = row["question_id"]
        return ids


def _json_lines(path: Path) -> Iterable[tuple[int, dict[str, Any]]]:
    for line_number, line in file_lines(path):
        yield line_number, parse_json_object(line, locate(str(path), f"line {line_number}"))


def _text_field(record: dict[str, Any], name: str, where: str) -> str:
    value = record.get(name)
    if not isinstance(value, str):
        raise UsageError(f"{where}: field {name}: missing or not a string")
    return value


def _unique(predictions: list[Prediction], path: Path) -> list[Prediction]:
    seen: set[tuple[str, int | None, str | None]] = set()
    for prediction in predictions:
        if prediction.key in seen:
            raise UsageError(
                f"{locate(str(path), prediction.item_id)}: more than one prediction for this item"
                + (f" (query {prediction.query})" if prediction.query is not None else "")
            )
        seen.add(prediction.key)
    return predictions


def read_cogbench_description(path: Path, ids: OfficialIds) -> list[Prediction]:
    """CogBench description JSONL -> one Prediction per image (unknown images keep their name)."""
    predictions = []
    for line_number, record in _json_lines(path):
        where = locate(str(path), f"line {line_number}")
        filename = _text_field(record, "filename", where)
        output = _text_field(record, "model_output", where)
        item_id = ids.description_by_image.get(_stem(filename), filename)
        predictions.append(Prediction(task="description", item_id=item_id, output=output))
    return _unique(predictions, path)


def _json_list(path: Path) -> list[Any]:
    records = parse_json(path.read_text(encoding="utf-8"), str(path))
    if not isinstance(records, list):
        raise UsageError(f"{path}: expected a JSON list")
    return records


def _vqa_records(path: Path) -> Iterable[tuple[str, dict[str, Any]]]:
    """(where, record) of a VQA file: JSONL, or a ``.json`` list as ``vqa_accuracy.py`` also reads."""
    if path.read_text(encoding="utf-8").lstrip().startswith("["):
        for index, record in enumerate(_json_list(path)):
            where = locate(str(path), f"#{index}")
            if not isinstance(record, dict):
                raise UsageError(f"{where}: expected a JSON object")
            yield where, record
        return
    for line_number, record in _json_lines(path):
        yield locate(str(path), f"line {line_number}"), record


def read_cogbench_vqa(path: Path, ids: OfficialIds) -> list[Prediction]:
    """CogBench VQA JSONL or JSON list -> one Prediction per question, found by image, text and choices."""
    predictions = []
    for where, record in _vqa_records(path):
        fields = [_text_field(record, name, where) for name in ("img_id", "question", *CHOICE_COLUMNS)]
        response = _text_field(record, "response", where)
        key = vqa_question_key(fields[0], fields[1], fields[2:])
        # A question the dataset does not have keeps a readable id, so the
        # mismatch error can name it.
        item_id = ids.vqa_by_question.get(key, f"{_stem(fields[0])}: {fields[1]}")
        predictions.append(Prediction(task="vqa", item_id=item_id, output=response))
    return _unique(predictions, path)


def read_codis_output(path: Path) -> list[Prediction]:
    """CODIS output JSON -> two Predictions per pair (query 1 and 2)."""
    records = _json_list(path)
    predictions = []
    for index, record in enumerate(records):
        where = locate(str(path), f"#{index}")
        if not isinstance(record, dict):
            raise UsageError(f"{where}: expected a JSON object")
        item_id = record.get("id")
        if not isinstance(item_id, str):
            raise UsageError(f"{where}: field id: missing or not a string")
        where = locate(str(path), item_id)
        outputs = record.get("output")
        if not isinstance(outputs, dict):
            raise UsageError(f"{where}: field output: missing or not an object")
        for query in (1, 2):
            name = f"output_{query}"
            if not isinstance(outputs.get(name), str):
                raise UsageError(f"{where}: field output.{name}: missing or not a string")
            predictions.append(Prediction(task="codis", item_id=item_id, query=query, output=outputs[name]))
    return _unique(predictions, path)


def detect_format(path: Path) -> str:
    """Tell the format from the first record, read whole however long: the project's, or an official one."""
    # blank lines before the first record, however many
    number, first_line = next(iter(file_lines(path)), (1, ""))
    if first_line.lstrip().startswith("["):
        records = _json_list(path)
        first = records[0] if records else None
        if isinstance(first, dict) and "response" in first and "question" in first:
            return "cogbench-vqa"  # vqa_accuracy.py reads a .json list of the JSONL's records
        return "codis-output"
    record = parse_json(first_line, locate(str(path), f"line {number}"))
    if isinstance(record, dict):
        if "task" in record and "item_id" in record:
            return "project"
        if "filename" in record and "model_output" in record:
            return "cogbench-description"
        if "response" in record and "question" in record:
            return "cogbench-vqa"
        if is_lmms_eval_sample(record):
            return LMMS_EVAL_FORMAT
    raise UsageError(
        f"{locate(str(path), 'line 1')}: not a known predictions format (expected the project's "
        "{task, item_id, output}, CogBench {filename, model_output} or {question, ..., response}, "
        "a CODIS [{id, output}] list, an lmms-eval --log_samples JSONL, or a VLMEvalKit .xlsx/.tsv)"
    )


def read_any_predictions(path: str | os.PathLike, task: str, ids: OfficialIds) -> list[Prediction]:
    """Read predictions for ``task`` in whichever supported format the file has."""
    path = Path(path)
    if not path.is_file():
        raise UsageError(f"{path}: predictions file not found (or not a file)")
    if path.suffix in VLMEVALKIT_SUFFIXES:
        return read_vlmevalkit_predictions(path, task)
    check_utf8(path)
    file_format = detect_format(path)
    if file_format == LMMS_EVAL_FORMAT:
        return read_lmms_eval_samples(path, task, ids.lmms_eval_docs)
    if file_format != "project" and TASK_OF_FORMAT[file_format] != task:
        raise UsageError(f"{path}: holds {file_format} predictions, not {task} ones")
    if file_format == "cogbench-description":
        return read_cogbench_description(path, ids)
    if file_format == "cogbench-vqa":
        return read_cogbench_vqa(path, ids)
    if file_format == "codis-output":
        return read_codis_output(path)
    predictions = read_predictions(path)
    wrong = [p for p in predictions if p.task != task]
    if wrong:
        raise UsageError(
            f"{locate(str(path), wrong[0].item_id, 'task')}: {wrong[0].task!r} prediction in a {task} scoring run"
        )
    return predictions


# --- Writers: the project's predictions out to the official formats ---------
#
# Each writer takes the dataset rows (without images) and the predictions, and
# writes the file in dataset order, atomically (a temporary file renamed into
# place), so that a killed export never leaves half a file behind.


def _write_atomically(path: Path, text: str) -> Path:
    return write_file(path, text)  # never through a link planted in the run folder


def _by_key(predictions: Iterable[Prediction]) -> dict[tuple[str, int | None], Prediction]:
    """The predictions on the images themselves (the official formats hold no image variant), by (item, query)."""
    return {(p.item_id, p.query): p for p in predictions if p.variant is None}


def _json_line(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False) + "\n"


def write_cogbench_description(path: Path, rows: Iterable[dict[str, Any]], predictions: Iterable[Prediction]) -> Path:
    """CogBench description JSONL: ``{"filename", "model_output"}`` per image that has a prediction."""
    found = _by_key(predictions)
    lines = [
        _json_line({"filename": row["image_file"], "model_output": found[(row["image_id"], None)].output})
        for row in rows
        if (row["image_id"], None) in found
    ]
    return _write_atomically(path, "".join(lines))


def write_cogbench_vqa(path: Path, rows: Iterable[dict[str, Any]], predictions: Iterable[Prediction]) -> Path:
    """CogBench VQA JSONL: the question's fields as the authors' file spells them, plus ``response``."""
    raw_category = {short: raw for raw, short in RAW_VQA_CATEGORY.items()}
    found = _by_key(predictions)
    lines = []
    for row in rows:
        prediction = found.get((row["question_id"], None))
        if prediction is None:
            continue
        record = {"question": row["question"], **{name: row[name] for name in CHOICE_COLUMNS}}
        record["answer"] = ANSWER_LETTERS[row["answer"]]
        record["img_id"] = row["image_id"]
        record["category"] = raw_category[COGBENCH_CATEGORIES[row["category"]]]
        record["response"] = prediction.output
        lines.append(_json_line(record))
    return _write_atomically(path, "".join(lines))


def write_codis_output(path: Path, rows: Iterable[dict[str, Any]], predictions: Iterable[Prediction]) -> Path:
    """CODIS output JSON: ``[{"id", "output": {"output_1", "output_2"}}]`` for pairs with both answers."""
    found = _by_key(predictions)
    records = [
        {"id": row["id"], "output": {f"output_{q}": found[(row["id"], q)].output for q in (1, 2)}}
        for row in rows
        if (row["id"], 1) in found and (row["id"], 2) in found
    ]
    return _write_atomically(path, json.dumps(records, ensure_ascii=False, indent=4) + "\n")


OFFICIAL_FILE_NAME = {
    "description": "official_cogbench_description.jsonl",
    "vqa": "official_cogbench_vqa.jsonl",
    "codis": "official_codis_output.json",
}
WRITERS = {"description": write_cogbench_description, "vqa": write_cogbench_vqa, "codis": write_codis_output}


def write_official(task: str, out_dir: Path, rows: Iterable[dict[str, Any]], predictions: Iterable[Prediction]) -> Path:
    """Export ``predictions`` of ``task`` to its official format under ``out_dir``."""
    return WRITERS[task](Path(out_dir) / OFFICIAL_FILE_NAME[task], rows, predictions)
