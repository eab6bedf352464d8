"""Read the raw annotation files into typed records (``schemas.records``).

A reader returns the records sorted by id, or raises ``RawDataError`` listing
every problem (file, record, field). Records hold the path of their image; the
Parquet writer embeds the file's bytes unchanged.
"""

from __future__ import annotations

from pathlib import Path

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
from cogbench.schemas.cor import CorSyntaxError, parse_category
from cogbench.schemas.features import COGBENCH_CATEGORIES, RAW_DESCRIPTION_KEY
from cogbench.schemas.records import (
    CodisRecord,
    DescriptionRecord,
    VqaRecord,
    codis_record,
    description_record,
    question_id,
    vqa_record,
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
