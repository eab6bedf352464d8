"""Typed records of each config: one dataclass per row, built from one raw item.

The constructors take a schema-valid raw item (the authors' field names) and
return the typed record; both the builder's readers and the validators use
them, so a record is made from raw data in exactly one way. ``to_row`` gives
the row as the config's ``datasets.Features`` store it (images embedded).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from cogbench.schemas.cor import ChainOfReasoning
from cogbench.schemas.vocabulary import CHOICE_COLUMNS, COGBENCH_CATEGORIES, RAW_VQA_CATEGORY


@dataclass(frozen=True)
class DescriptionRecord:
    image_id: str
    image_file: str
    image_path: Path | None  # None: the reader reported the image missing, and the build stops
    entities: tuple[str, ...]
    cors: dict[str, list[ChainOfReasoning]]
    description: str

    def to_row(self) -> dict:
        return {
            "image_id": self.image_id,
            "image_file": self.image_file,
            "image": _image_cell(self.image_path),
            "entities": list(self.entities),
            "cors": {name: [cor.to_row() for cor in self.cors[name]] for name in COGBENCH_CATEGORIES},
            "description": self.description,
        }


@dataclass(frozen=True)
class VqaRecord:
    question_id: str
    image_id: str
    image_path: Path | None  # None: the reader reported the image missing, and the build stops
    question: str
    choices: tuple[str, str, str, str]
    answer: str
    category: str

    def to_row(self) -> dict:
        row = {
            "question_id": self.question_id,
            "image_id": self.image_id,
            "image": _image_cell(self.image_path),
            "question": self.question,
        }
        row.update(zip(CHOICE_COLUMNS, self.choices))
        row.update(answer=self.answer, category=self.category)
        return row


@dataclass(frozen=True)
class CodisRecord:
    id: str
    image_id: str  # bare, like description's and vqa's; the raw file's name is image_file
    image_file: str
    image_path: Path | None  # None: the reader reported the image missing, and the build stops
    question: str
    context_1: str
    context_2: str
    answer_1: str
    answer_2: str
    category: str

    def to_row(self) -> dict:
        return {
            "id": self.id,
            "image_id": self.image_id,
            "image_file": self.image_file,
            "image": _image_cell(self.image_path),
            "question": self.question,
            "context_1": self.context_1,
            "context_2": self.context_2,
            "answer_1": self.answer_1,
            "answer_2": self.answer_2,
            "category": self.category,
        }


def _image_cell(path: Path | None) -> dict:
    """An Image feature value holding the original file bytes and its name."""
    if path is None:
        raise ValueError("a record without its image is never written: the reader reports it and the build stops")
    return {"bytes": path.read_bytes(), "path": path.name}


def question_id(image_id: str, question: str) -> str:
    """A stable id for a CogBench question, which the raw file does not give.

    Derived from the image and the question text, so it survives reordering
    of the raw list and edits of options, answer or category (a diff shows
    those as changes), while a reworded question is a new question.
    """
    digest = hashlib.sha256(f"{image_id}\n{question}".encode()).hexdigest()[:10]
    return f"{image_id}-{digest}"


def description_record(
    image_id: str, raw: dict, image_path: Path | None, cors: dict[str, list[ChainOfReasoning]]
) -> DescriptionRecord:
    """The typed record of one schema-valid entry of the raw description file."""
    return DescriptionRecord(
        image_id=image_id,
        image_file=raw["Image Name"],
        image_path=image_path,
        entities=tuple(raw["Entities"]),
        cors=cors,
        description="\n".join(raw["Description"]),
    )


def vqa_record(raw: dict, image_path: Path | None) -> VqaRecord:
    """The typed record of one schema-valid item of the raw VQA file."""
    return VqaRecord(
        question_id=question_id(raw["img_id"], raw["question"]),
        image_id=raw["img_id"],
        image_path=image_path,
        question=raw["question"],
        choices=tuple(raw[column] for column in CHOICE_COLUMNS),
        answer=raw["answer"],
        category=RAW_VQA_CATEGORY[raw["category"]],
    )


def codis_record(raw: dict, image_path: Path | None) -> CodisRecord:
    """The typed record of one schema-valid item of CODIS data.json."""
    return CodisRecord(
        id=raw["id"],
        image_id=Path(raw["image_id"]).stem,  # CODIS names the file ("a87ff679a2.jpg"); ids are bare
        image_file=raw["image_id"],
        image_path=image_path,
        question=raw["question"],
        context_1=raw["context"]["context_1"],
        context_2=raw["context"]["context_2"],
        answer_1=raw["answer"]["answer_1"],
        answer_2=raw["answer"]["answer_2"],
        category=raw["category"],
    )
