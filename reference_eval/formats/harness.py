"""Prediction files written by the evaluation harnesses people already run.

- **lmms-eval** ``--log_samples`` JSONL (one object per sample: ``doc_id``,
  ``doc``, ``resps``, ``filtered_resps``, metric values) from the tasks that
  ``cogbench export --format lmms-eval`` writes: ``doc`` is the dataset row
  (lmms-eval leaves the image out), so it carries the row id, and for CODIS
  ``cogbench_query`` (1 or 2: which context was asked).
- **VLMEvalKit** prediction files (``.xlsx``, or ``.tsv``) of the custom-MCQ
  TSV that ``cogbench export --format vlmevalkit`` writes: the TSV's columns
  without ``image``, plus ``prediction``; rows are matched by ``question_id``.

Both become the project's ``Prediction`` records, so ``cogbench score`` gives
the reference scores of a model evaluated in either harness.
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

from cogbench.errors import CogbenchError, locate
from cogbench.reference_eval.formats.predictions import Prediction, parse_json_object
from cogbench.schemas.features import ID_COLUMN

LMMS_EVAL_FORMAT = "lmms-eval-samples"
VLMEVALKIT_FORMAT = "vlmevalkit-predictions"
VLMEVALKIT_SUFFIXES = (".xlsx", ".tsv")
# The column (of the exported TSV) that names each row's question; VLMEvalKit keeps extra columns.
VLMEVALKIT_ID_COLUMN = "question_id"
# Added to each CODIS doc by the exported utils.py: which context the sample asked.
QUERY_FIELD = "cogbench_query"


def is_lmms_eval_sample(record: Any) -> bool:
    return isinstance(record, dict) and "doc_id" in record and ("filtered_resps" in record or "resps" in record)


def _response_text(record: dict[str, Any], where: str) -> str:
    value = record.get("filtered_resps", record.get("resps"))
    while isinstance(value, list):  # [[text]] (resps) or [text] (filtered_resps)
        if not value:
            raise CogbenchError(f"{where}: field filtered_resps: empty response list")
        value = value[0]
    if not isinstance(value, str):
        raise CogbenchError(f"{where}: field filtered_resps: expected the generated text, got {type(value).__name__}")
    return value


def read_lmms_eval_samples(path: Path, task: str) -> list[Prediction]:
    """An lmms-eval ``--log_samples`` JSONL file of one exported task."""
    id_column = ID_COLUMN[task]
    predictions: list[Prediction] = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            where = locate(str(path), f"line {number}")
            record = parse_json_object(line, where)
            doc = record.get("doc")
            if not is_lmms_eval_sample(record) or not isinstance(doc, dict) or id_column not in doc:
                raise CogbenchError(
                    f"{where}: not an lmms-eval sample of a `cogbench export` {task} task "
                    f"(needs doc_id, filtered_resps and doc.{id_column})"
                )
            query = doc.get(QUERY_FIELD) if task == "codis" else None
            if task == "codis" and (isinstance(query, bool) or query not in (1, 2)):  # true == 1 in Python
                raise CogbenchError(f"{locate(str(path), f'line {number}', f'doc.{QUERY_FIELD}')}: expected 1 or 2")
            model = str(record.get("model", ""))
            predictions.append(Prediction(task=task, item_id=str(doc[id_column]), query=query,
                                          output=_response_text(record, where), model=model))
    return _unique(predictions, path)


def read_vlmevalkit_predictions(path: Path, task: str) -> list[Prediction]:
    """A VLMEvalKit prediction file (``.xlsx`` or ``.tsv``) of the exported VQA TSV."""
    import pandas as pd

    if task != "vqa":
        raise CogbenchError(f"{path}: VLMEvalKit predictions are multiple-choice answers; score them with --task vqa")
    try:
        table = pd.read_excel(path, dtype=str) if path.suffix == ".xlsx" else pd.read_csv(path, sep="\t", dtype=str)
    except (ValueError, OSError, KeyError, zipfile.BadZipFile) as error:  # a cut or non-workbook zip: BadZipFile, KeyError
        raise CogbenchError(f"{path}: cannot read it as a VLMEvalKit {path.suffix} file ({type(error).__name__}: "
                            f"{' '.join(str(error).split())[:200]})") from None
    missing = [column for column in (VLMEVALKIT_ID_COLUMN, "prediction") if column not in table.columns]
    if missing:
        raise CogbenchError(
            f"{path}: no column {', '.join(missing)} (expected VLMEvalKit's predictions of the TSV made by "
            "`cogbench export --format vlmevalkit`)"
        )
    predictions = []
    for number, row in enumerate(table.to_dict("records"), 2):  # row 1 is the header
        item_id, output = row[VLMEVALKIT_ID_COLUMN], row["prediction"]
        if not isinstance(item_id, str) or not item_id:
            raise CogbenchError(f"{locate(str(path), f'row {number}', VLMEVALKIT_ID_COLUMN)}: empty")
        predictions.append(Prediction(task="vqa", item_id=item_id, output=output if isinstance(output, str) else ""))
    return _unique(predictions, path)


def _unique(predictions: list[Prediction], path: Path) -> list[Prediction]:
    seen: set[tuple[str, int | None]] = set()
    for prediction in predictions:
        if prediction.key in seen:
            raise CogbenchError(f"{locate(str(path), prediction.item_id)}: predicted twice (query {prediction.query})")
        seen.add(prediction.key)
    return predictions

