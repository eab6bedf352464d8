"""Typed records of each config, read from schema-checked raw files.

A reader returns the records sorted by id, or raises ``RawDataError`` listing
every problem (file, record, field). Records hold the path of their image; the
Parquet writer embeds the file's bytes unchanged.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from cogbench.dataset_builders.cor import ChainOfReasoning, CorSyntaxError, parse_category
from cogbench.dataset_builders.features import (
    CHOICE_COLUMNS,
    COGBENCH_CATEGORIES,
    RAW_DESCRIPTION_KEY,
    RAW_VQA_CATEGORY,
)
from cogbench.dataset_builders.raw import (
    CODIS_FILE,
    COGBENCH_FILES,
    IMAGES_DIR,
    UnsafeImageId,
    find_image_by_stem,
    load_json,
    relative_name,
    resolve_image,
    schema_problems,
)
from cogbench.errors import RawDataError, locate


@dataclass(frozen=True)
class DescriptionRecord:
    image_id: str
    image_file: str
    image_path: Path
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
    image_path: Path
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
    image_id: str
    image_path: Path
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
            "image": _image_cell(self.image_path),
            "question": self.question,
            "context_1": self.context_1,
            "context_2": self.context_2,
            "answer_1": self.answer_1,
            "answer_2": self.answer_2,
            "category": self.category,
        }


def _image_cell(path: Path) -> dict:
    """An Image feature value holding the original file bytes and its name."""
    return {"bytes": path.read_bytes(), "path": path.name}


def question_id(image_id: str, question: str) -> str:
    """A stable id for a CogBench question, which the raw file does not give.

    Derived from the image and the question text, so it survives reordering
    of the raw list and edits of options, answer or category (a diff shows
    those as changes), while a reworded question is a new question.
    """
    digest = hashlib.sha256(f"{image_id}\n{question}".encode("utf-8")).hexdigest()[:10]
    return f"{image_id}-{digest}"


def description_record(image_id: str, raw: dict, image_path: Path | None, cors: dict[str, list[ChainOfReasoning]]) -> DescriptionRecord:
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
        image_id=raw["image_id"],
        image_path=image_path,
        question=raw["question"],
        context_1=raw["context"]["context_1"],
        context_2=raw["context"]["context_2"],
        answer_1=raw["answer"]["answer_1"],
        answer_2=raw["answer"]["answer_2"],
        category=raw["category"],
    )


def _image_problem(shown_as: str, record: str, field: str, images_dir: Path, image_name: str, stem_only: bool):
    """Resolve an image; return (path, None) or (None, problem message)."""
    try:
        path = find_image_by_stem(images_dir, image_name) if stem_only else resolve_image(images_dir, image_name)
        return path, None
    except (UnsafeImageId, FileNotFoundError) as error:
        return None, f"{locate(shown_as, record, field)}: {error}"


def read_description(folder: Path, root: Path) -> list[DescriptionRecord]:
    path = folder / COGBENCH_FILES[0]
    shown_as = relative_name(path, root)
    document = load_json(path, shown_as)
    problems = schema_problems(document, "cogbench_description", shown_as)
    if problems:
        raise RawDataError(problems)
    records = []
    for image_id, raw in document.items():
        image_path, problem = _image_problem(shown_as, image_id, "Image Name", folder / IMAGES_DIR, raw["Image Name"], False)
        if problem:
            problems.append(problem)
        cors = {}
        for name in COGBENCH_CATEGORIES:
            raw_key = RAW_DESCRIPTION_KEY[name]
            try:
                cors[name] = parse_category(raw[raw_key])
            except CorSyntaxError as error:
                problems.append(f"{locate(shown_as, image_id, raw_key)}: {error}")
        if problem or len(cors) != len(COGBENCH_CATEGORIES):
            continue
        records.append(description_record(image_id, raw, image_path, cors))
    if problems:
        raise RawDataError(problems)
    return sorted(records, key=lambda record: record.image_id)


def read_vqa(folder: Path, root: Path, descriptions: list[DescriptionRecord] | None) -> list[VqaRecord]:
    """Read the VQA file; image ids resolve through the description file when present."""
    path = folder / COGBENCH_FILES[1]
    shown_as = relative_name(path, root)
    document = load_json(path, shown_as)
    problems = schema_problems(document, "cogbench_vqa", shown_as)
    if problems:
        raise RawDataError(problems)
    image_of = {record.image_id: record.image_path for record in descriptions or []}
    records, first_position = [], {}
    for position, raw in enumerate(document):
        record_id = question_id(raw["img_id"], raw["question"])
        label = f"{record_id} (item {position})"
        if raw["img_id"] in image_of:
            image_path = image_of[raw["img_id"]]
        else:
            if descriptions is not None:
                problems.append(f"{locate(shown_as, label, 'img_id')}: image id {raw['img_id']!r} has no description record")
                continue
            image_path, problem = _image_problem(shown_as, label, "img_id", folder / IMAGES_DIR, raw["img_id"], True)
            if problem:
                problems.append(problem)
                continue
        if record_id in first_position:
            problems.append(
                f"{locate(shown_as, label, 'question')}: same question for the same image as item {first_position[record_id]}"
            )
            continue
        first_position[record_id] = position
        records.append(vqa_record(raw, image_path))
    if problems:
        raise RawDataError(problems)
    return sorted(records, key=lambda record: record.question_id)


def read_codis(folder: Path, root: Path) -> list[CodisRecord]:
    path = folder / CODIS_FILE
    shown_as = relative_name(path, root)
    document = load_json(path, shown_as)
    problems = schema_problems(document, "codis", shown_as, id_field="id")
    if problems:
        raise RawDataError(problems)
    records, seen = [], {}
    for position, raw in enumerate(document):
        label = f"{raw['id']} (item {position})"
        image_path, problem = _image_problem(shown_as, label, "image_id", folder / IMAGES_DIR, raw["image_id"], False)
        if problem:
            problems.append(problem)
            continue
        if raw["id"] in seen:
            problems.append(f"{locate(shown_as, label, 'id')}: id already used by item {seen[raw['id']]}")
            continue
        seen[raw["id"]] = position
        records.append(codis_record(raw, image_path))
    if problems:
        raise RawDataError(problems)
    return sorted(records, key=lambda record: record.id)
