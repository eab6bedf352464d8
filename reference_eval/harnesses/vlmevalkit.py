"""Export the VQA config as a VLMEvalKit custom multiple-choice TSV.

VLMEvalKit runs any TSV in ``$LMUData`` with columns ``index``, ``image``
(base64), ``question``, ``A``..``D``, ``answer`` (a letter) and ``category``
as a custom MCQ dataset named after the file: ``python run.py --data
CogBench_VQA --model MODEL``. ``question_id`` rides along (VLMEvalKit keeps
extra columns in its prediction file), so ``cogbench score`` can match the
predictions back to the dataset.
"""

from __future__ import annotations

import base64
from pathlib import Path

from cogbench.dataset_builders.writes import write_file
from cogbench.reference_eval.formats.harness import VLMEVALKIT_ID_COLUMN
from cogbench.schemas.vocabulary import ANSWER_LETTERS, CHOICE_COLUMNS

DATASET_NAME = "CogBench_VQA"
COLUMNS = ("index", "image", "question", *ANSWER_LETTERS, "answer", "category", VLMEVALKIT_ID_COLUMN)


def vqa_table(dataset):
    """The TSV's rows (a pandas DataFrame) from the loaded ``vqa`` config, in dataset order."""
    import datasets
    import pandas as pd

    rows = dataset.cast_column("image", datasets.Image(decode=False))
    answer, category = dataset.features["answer"], dataset.features["category"]
    records = []
    for index, row in enumerate(rows):
        image = row["image"]["bytes"] if row["image"]["bytes"] is not None else Path(row["image"]["path"]).read_bytes()
        records.append(
            {
                "index": index,
                "image": base64.b64encode(image).decode("ascii"),
                "question": row["question"],
                **{letter: row[column] for letter, column in zip(ANSWER_LETTERS, CHOICE_COLUMNS)},
                "answer": answer.int2str(row["answer"]),
                "category": category.int2str(row["category"]),
                VLMEVALKIT_ID_COLUMN: row["question_id"],
            }
        )
    return pd.DataFrame.from_records(records, columns=list(COLUMNS))


def export_vlmevalkit(dataset, out: Path) -> Path:
    """Write ``out/CogBench_VQA.tsv`` and return its path."""
    return write_file(out / f"{DATASET_NAME}.tsv", vqa_table(dataset).to_csv(sep="\t", index=False))
