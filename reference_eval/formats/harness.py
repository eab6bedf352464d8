"""Prediction files written by the evaluation harnesses people already run.

- **lmms-eval** ``--log_samples`` JSONL from the tasks that ``cogbench export
  --format lmms-eval`` writes. As lmms-eval 0.4-0.7 save them, a line has
  ``doc_id`` (the index of the doc in the task's docs, in order), ``target``,
  ``input`` (the prompt), ``filtered_resps``, ``doc_hash`` and the metric
  values, but no ``doc``: its evaluation tracker drops it. ``doc_id`` is mapped
  to the task's doc (``TaskDoc``, made from the dataset by the caller) and the
  line's ``target`` and ``input`` must equal that doc's, so samples of another
  build or dataset version are refused at the first line that differs. Lines
  that still carry ``doc`` (older writers, hand-made files) are read by the row
  id in it; for CODIS ``cogbench_query`` (1 or 2) says which context was asked.
  ``results.json`` beside the samples gives the run's task config (``harness_provenance``).
- **VLMEvalKit** prediction files (``.xlsx``, or ``.tsv``) of the custom-MCQ
  TSV that ``cogbench export --format vlmevalkit`` writes: the TSV's columns
  without ``image``, plus ``prediction``; rows are matched by ``question_id``.

Both become the project's ``Prediction`` records, so ``cogbench score`` gives
the reference scores of a model evaluated in either harness.
"""

from __future__ import annotations

import hashlib
import json
import re
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from cogbench.errors import CogbenchError, locate
from cogbench.jsonl import file_lines
from cogbench.reference_eval.formats.predictions import Prediction, parse_json_object
from cogbench.schemas.vocabulary import ID_COLUMN

LMMS_EVAL_FORMAT = "lmms-eval-samples"
VLMEVALKIT_FORMAT = "vlmevalkit-predictions"
VLMEVALKIT_SUFFIXES = (".xlsx", ".tsv")
# The column (of the exported TSV) that names each row's question; VLMEvalKit keeps extra columns.
VLMEVALKIT_ID_COLUMN = "question_id"
# Added to each CODIS doc by the exported utils.py: which context the sample asked.
QUERY_FIELD = "cogbench_query"
# lmms-eval 0.7's sample writer str()s every response (``utils.sanitize_list``): a reply whose content was
# null (a thinking model's reasoning only, in ``reasoning_content``, which lmms-eval never reads) is
# written as this text, while the task's own process_results got None (no answer). Read as no answer too.
LMMS_EVAL_NULL_REPLY = "None"


@dataclass(frozen=True)
class TaskDoc:
    """One doc of an exported lmms-eval task, as lmms-eval numbers them (``doc_id`` = its index)."""

    item_id: str
    query: int | None  # CODIS: which context (1, 2); else None
    target: str  # doc_to_target
    prompts: dict[str, tuple[str, str]]  # every doc_to_text this doc may have had -> (template id, sha256)


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
    return "" if value == LMMS_EVAL_NULL_REPLY else value


def read_lmms_eval_samples(path: Path, task: str, docs: list[TaskDoc] | None = None) -> list[Prediction]:
    """An lmms-eval ``--log_samples`` JSONL file of one exported task; ``docs``: the task's docs, in order."""
    predictions: list[Prediction] = []
    for number, line in file_lines(path):
        at = partial(locate, str(path), f"line {number}")
        where = at()
        record = parse_json_object(line, where)
        if not is_lmms_eval_sample(record):
            raise CogbenchError(f"{where}: not an lmms-eval sample (needs doc_id and filtered_resps)")
        output = _response_text(record, where)
        # The prompt text lmms-eval gave the model (``input``), hashed like `eval`'s own queries.
        given = record.get("input")
        rendered = hashlib.sha256(given.encode("utf-8")).hexdigest() if isinstance(given, str) else ""
        if isinstance(record.get("doc"), dict):
            item_id, query = _id_from_doc(record["doc"], task, at)
            prompt = ("", "")
        else:
            doc = _doc_of(record, docs, task, at)
            _check(record, "target", doc.target, at)
            if "input" in record and record["input"] not in doc.prompts:
                raise CogbenchError(
                    f"{at('input')}: not the prompt of doc {record['doc_id']} ({doc.item_id}) in this "
                    "dataset (samples of another build, dataset version or cogbench version?)"
                )
            item_id, query = doc.item_id, doc.query
            prompt = doc.prompts.get(record["input"], ("", "")) if "input" in record else ("", "")
        predictions.append(
            Prediction(
                task=task,
                item_id=item_id,
                query=query,
                output=output,
                model=str(record.get("model", "")),
                prompt_id=prompt[0],
                prompt_sha256=prompt[1],
                rendered_prompt_sha256=rendered,
            )
        )
    return _unique(predictions, path)


def _id_from_doc(doc: dict[str, Any], task: str, at: Callable[..., str]) -> tuple[str, int | None]:
    """Row id (and CODIS query) of a line that still carries its ``doc``."""
    id_column = ID_COLUMN[task]
    if id_column not in doc:
        raise CogbenchError(f"{at(f'doc.{id_column}')}: missing (not a `cogbench export` {task} task's sample)")
    query = doc.get(QUERY_FIELD) if task == "codis" else None
    if task == "codis" and (isinstance(query, bool) or query not in (1, 2)):  # true == 1 in Python
        raise CogbenchError(f"{at(f'doc.{QUERY_FIELD}')}: expected 1 or 2")
    return str(doc[id_column]), query


def _doc_of(record: dict[str, Any], docs: list[TaskDoc] | None, task: str, at: Callable[..., str]) -> TaskDoc:
    doc_id = record["doc_id"]
    if docs is None:
        raise CogbenchError(
            f"{at('doc')}: missing; an lmms-eval sample without doc cannot be read here (needs the {task} task's docs)"
        )
    if isinstance(doc_id, bool) or not isinstance(doc_id, int) or not 0 <= doc_id < len(docs):
        raise CogbenchError(
            f"{at('doc_id')}: {doc_id!r} is not a doc of the {task} task of this dataset "
            f"(0..{len(docs) - 1}; samples of another build or dataset version?)"
        )
    return docs[doc_id]


def _check(record: dict[str, Any], name: str, expected: str, at: Callable[..., str]) -> None:
    if name in record and record[name] != expected:
        raise CogbenchError(
            f"{at(name)}: {_short(record[name])} differs from doc {record['doc_id']}'s "
            f"{_short(expected)} in this dataset (samples of another build or dataset version?)"
        )


SECRET_WORDS = ("key", "token", "secret", "password")


def _without_secrets(model_args: Any) -> Any:
    """lmms-eval's ``model_args`` (``"a=1,b=2"`` or a dict) without credential-like entries
    (a key, token, secret or password by name, or a URL with a user or password in it)."""

    def secret(name: str, value: str) -> bool:
        return any(word in name.lower() for word in SECRET_WORDS) or re.search(r"://[^/]*@", value) is not None

    if isinstance(model_args, dict):
        return {k: v for k, v in model_args.items() if not secret(str(k), str(v))}
    if isinstance(model_args, str):
        return ",".join(part for part in model_args.split(",") if not secret(*part.partition("=")[::2]))
    return None


def _short(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + '..."'


def harness_provenance(samples: Path) -> dict[str, Any]:
    """lmms-eval's own record of the run, from the ``results.json`` written beside ``samples``.

    lmms-eval names them ``{DATE}_samples_{TASK}.jsonl`` and ``{DATE}_results.json``;
    empty when there is none (a renamed or copied samples file).
    """
    date, marker, task = samples.stem.partition("_samples_")
    results = samples.with_name(f"{date}_results.json")
    if not marker or not results.is_file():
        return {}
    try:
        data = json.loads(results.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError, OSError) as error:
        raise CogbenchError(f"{results}: not lmms-eval's results JSON ({error})") from None
    if not isinstance(data, dict):
        raise CogbenchError(f"{results}: not lmms-eval's results JSON (expected an object)")
    config = data.get("configs", {}).get(task, {}) if isinstance(data.get("configs"), dict) else {}
    run = data["config"] if isinstance(data.get("config"), dict) else {}
    keep = ("dataset_path", "dataset_name", "dataset_kwargs", "test_split", "generation_kwargs", "metadata")
    return {
        "harness": "lmms-eval",
        "results": str(results),
        "lmms_eval_version": data.get("lmms_eval_version"),
        "task": task,
        "task_config": {key: config[key] for key in keep if isinstance(config, dict) and key in config},
        "model": run.get("model"),
        "model_args": _without_secrets(run.get("model_args")),
        "model_name": data.get("model_name"),
        "task_hash": (data.get("task_hashes") or {}).get(task),
        "results_metrics": (data.get("results") or {}).get(task),
    }


def read_vlmevalkit_predictions(path: Path, task: str) -> list[Prediction]:
    """A VLMEvalKit prediction file (``.xlsx`` or ``.tsv``) of the exported VQA TSV."""
    import pandas as pd

    if task != "vqa":
        raise CogbenchError(f"{path}: VLMEvalKit predictions are multiple-choice answers; score them with --task vqa")
    try:
        table = pd.read_excel(path, dtype=str) if path.suffix == ".xlsx" else pd.read_csv(path, sep="\t", dtype=str)
    except (
        ValueError,
        OSError,
        KeyError,
        zipfile.BadZipFile,
    ) as error:  # a cut or non-workbook zip: BadZipFile, KeyError
        raise CogbenchError(
            f"{path}: cannot read it as a VLMEvalKit {path.suffix} file ({type(error).__name__}: "
            f"{' '.join(str(error).split())[:200]})"
        ) from None
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
    seen: set[tuple[str, int | None, str | None]] = set()
    for prediction in predictions:
        if prediction.key in seen:
            raise CogbenchError(
                f"{locate(str(path), prediction.item_id)}: predicted twice{'' if prediction.query is None else f' (query {prediction.query})'}"
            )
        seen.add(prediction.key)
    return predictions
