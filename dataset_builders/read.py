"""The one raw reader: the authors' files -> typed records (``schemas.records``) and problems.

``read_raw`` is used by both ``validate`` and ``build``, so they can never
disagree on an input. It never stops at the first problem: every problem of
every stage (JSON, schema, text hygiene, chains of reasoning, image ids) is
returned as a ``Problem`` with file, record, field and a stable code (the
validation package gives each code its severity, see README's table); a record
with a problem is left out of the records instead of stopping the run.
Records hold the path of their image; the Parquet writer embeds its bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cogbench.dataset_builders.raw import (
    CODIS_FILE,
    COGBENCH_FILES,
    IMAGES_DIR,
    RawSources,
    UnsafeImageId,
    find_image_by_stem,
    load_json,
    relative_name,
    resolve_image,
)
from cogbench.errors import RawDataError, locate
from cogbench.schemas import RAW_SCHEMAS, iter_violations
from cogbench.schemas.cor import NONE_ENTRY, ChainOfReasoning, CorSyntaxError, parse_category, parse_cor
from cogbench.schemas.records import codis_record, description_record, question_id, vqa_record
from cogbench.schemas.text import id_problem, shown, text_problem
from cogbench.schemas.vocabulary import COGBENCH_CATEGORIES, ID_COLUMN, RAW_DESCRIPTION_KEY

# Raw fields holding ids (checked with ``id_problem``), per raw format.
ID_FIELDS = {"cogbench_description": {"", "Image Name"}, "cogbench_vqa": {"img_id"}, "codis": {"id", "image_id"}}
# Text fields whose emptiness has its own finding code (options.empty, pairs.empty).
EMPTY_CHECKED_ELSEWHERE = {
    "A",
    "B",
    "C",
    "D",
    "context.context_1",
    "context.context_2",
    "answer.answer_1",
    "answer.answer_2",
}


@dataclass(frozen=True)
class Problem:
    """One problem found while reading; ``validation`` gives its code a severity."""

    code: str
    file: str
    record: str | None
    field: str | None
    message: str

    def __str__(self) -> str:
        return f"{locate(self.file, self.record, self.field)}: {self.message}"


@dataclass(frozen=True)
class ImageRef:
    """One referenced image: where it is named, and how to get its bytes."""

    file: str
    record: str
    field: str
    name: str
    read: Callable[[], bytes]


@dataclass
class RawRead:
    """Everything read from a raw folder: records per config (file order; a record whose image
    could not be resolved has ``image_path`` None), problems, and the images to check."""

    root: Path
    shown: dict[str, str] = field(default_factory=dict)  # config -> raw file as shown in locations
    records: dict[str, list] = field(default_factory=dict)  # in file order
    images: list[ImageRef] = field(default_factory=list)
    image_folders: list[tuple[str, Path]] = field(default_factory=list)  # for the orphan check
    source_folders: dict[str, str] = field(default_factory=dict)  # benchmark -> folder name
    problems: list[Problem] = field(default_factory=list)
    _seen_images: set = field(default_factory=set, repr=False)

    def add(self, code: str, file: str, record: Any, field_name: str | None, message: str) -> None:
        self.problems.append(Problem(code, file, None if record is None else str(record), field_name, message))


def _load(path: Path, shown_as: str, read: RawRead) -> Any:
    try:
        return load_json(path, shown_as)
    except RawDataError as error:
        for problem in error.problems:
            read.add("json.invalid", shown_as, None, None, problem.removeprefix(f"{shown_as}: "))
        return None


def _strings(value: Any, path: str):
    """(field path, text) of every string inside a raw item."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, f"{path}[{index}]")


def _hygiene(read: RawRead, shown_as: str, schema_key: str, label: str, raw: dict, key: str | None = None) -> bool:
    """Text-hygiene problems of one schema-valid item; True when its text cannot even be
    hashed or stored (unencodable), so the item is left out. Other problems keep the
    record, so later checks do not report follow-on errors."""
    strings = list(_strings(raw, ""))
    if key is not None:
        strings.insert(0, ("", key))
    bad = False
    for where, text in strings:
        is_id = where in ID_FIELDS[schema_key]
        problem = id_problem(text) if is_id else text_problem(text)
        if problem is None or (problem[0] == "text.empty" and where in EMPTY_CHECKED_ELSEWHERE):
            continue
        read.add(problem[0], shown_as, label, where or None, f"{problem[1]}: {shown(text)}")
        bad = bad or problem[0] == "text.unencodable"
    return bad


def _schema_checked(read: RawRead, document: Any, schema_key: str, shown_as: str, label: Callable[[Any], str]) -> set:
    """Add the schema violations; return the keys (positions) of the records they hit."""
    bad_keys = set()
    for violation in iter_violations(document, RAW_SCHEMAS[schema_key]):
        if not violation.path:
            read.add("schema.raw", shown_as, None, None, violation.message)
            continue
        key = violation.path[0]
        bad_keys.add(key)
        read.add(
            "schema.raw",
            shown_as,
            label(key),
            ".".join(str(part) for part in violation.path[1:]) or None,
            violation.message,
        )
    return bad_keys


def _image(
    read: RawRead, shown_as: str, record: str, field_name: str, images_dir: Path, name: str, stem_only: bool
) -> Path | None:
    try:
        path = find_image_by_stem(images_dir, name) if stem_only else resolve_image(images_dir, name)
    except UnsafeImageId as error:
        read.add("image.unsafe_id", shown_as, record, field_name, str(error))
        return None
    except FileNotFoundError as error:
        read.add("image.missing", shown_as, record, field_name, str(error))
        return None
    if path not in read._seen_images:
        read._seen_images.add(path)
        read.images.append(ImageRef(shown_as, record, field_name, path.name, path.read_bytes))
    return path


def _category(read: RawRead, entries: list[str], shown_as: str, image_id: str, raw_key: str) -> list[ChainOfReasoning]:
    """``cor.parse_category``; on failure each bad entry gets its own problem (the good ones are kept)."""
    try:
        return parse_category(entries)
    except CorSyntaxError:
        pass
    chains = []
    for index, entry in enumerate(entries):
        where = f"{raw_key}[{index}]"
        if entry.strip() == NONE_ENTRY:
            read.add("cor.none_mixed", shown_as, image_id, where, "'None' must be the only entry of its category")
            continue
        try:
            chains.append(parse_cor(entry))
        except CorSyntaxError as error:
            read.add("cor.syntax", shown_as, image_id, where, f"{error}: {shown(entry, 120)}")
    return chains


def _read_description(read: RawRead, folder: Path) -> list | None:
    shown_as = relative_name(folder / COGBENCH_FILES[0], read.root)
    read.shown["description"] = shown_as
    document = _load(folder / COGBENCH_FILES[0], shown_as, read)
    if document is None:
        return None
    bad = _schema_checked(read, document, "cogbench_description", shown_as, str)
    if not isinstance(document, dict):
        return None
    records = []
    for image_id, raw in document.items():
        if image_id in bad or _hygiene(read, shown_as, "cogbench_description", image_id, raw, key=image_id):
            continue
        image_path = _image(read, shown_as, image_id, "Image Name", folder / IMAGES_DIR, raw["Image Name"], False)
        cors = {
            name: _category(read, raw[RAW_DESCRIPTION_KEY[name]], shown_as, image_id, RAW_DESCRIPTION_KEY[name])
            for name in COGBENCH_CATEGORIES
        }
        records.append(description_record(image_id, raw, image_path, cors))
    return records


def _read_list(read: RawRead, path: Path, config: str, schema_key: str, item_id: Callable[[dict], str]):
    """Load a raw JSON list, schema- and hygiene-check it: (name shown, [(label, item)] that passed)."""
    shown_as = relative_name(path, read.root)
    read.shown[config] = shown_as
    document = _load(path, shown_as, read)
    if document is None:
        return shown_as, []

    def label(position):
        item = (
            document[position]
            if isinstance(document, list) and isinstance(position, int) and position < len(document)
            else None
        )
        try:
            return item_id(item)
        except (TypeError, KeyError, UnicodeEncodeError):
            return f"item {position}"

    bad = _schema_checked(read, document, schema_key, shown_as, label)
    if not isinstance(document, list):
        return shown_as, []
    passed = []
    for position, raw in enumerate(document):
        if position not in bad and not _hygiene(read, shown_as, schema_key, label(position), raw):
            passed.append((label(position), raw))
    return shown_as, passed


def _read_vqa(read: RawRead, folder: Path, descriptions: list | None) -> None:
    item_id = lambda raw: question_id(raw["img_id"], raw["question"])  # noqa: E731
    shown_as, items = _read_list(read, folder / COGBENCH_FILES[1], "vqa", "cogbench_vqa", item_id)
    image_of = {record.image_id: record.image_path for record in descriptions or []}
    records = []
    for record_id, raw in items:
        if descriptions is not None:
            image_path = image_of.get(raw["img_id"])  # an unknown id is reported by the options check
        else:
            image_path = _image(read, shown_as, record_id, "img_id", folder / IMAGES_DIR, raw["img_id"], True)
        records.append(vqa_record(raw, image_path))
    read.records["vqa"] = records


def _read_codis(read: RawRead, folder: Path) -> None:
    shown_as, items = _read_list(read, folder / CODIS_FILE, "codis", "codis", lambda raw: raw["id"])
    records = []
    for record_id, raw in items:
        image_path = _image(read, shown_as, record_id, "image_id", folder / IMAGES_DIR, raw["image_id"], False)
        records.append(codis_record(raw, image_path))
    read.records["codis"] = records


def read_raw(sources: RawSources) -> RawRead:
    """Every config present in a raw folder (layouts of ``find_sources``), with every problem."""
    read = RawRead(root=sources.root)
    if sources.cogbench is not None:
        folder = sources.cogbench
        read.source_folders["cogbench"] = folder.resolve().name
        descriptions = None
        if (folder / COGBENCH_FILES[0]).is_file():
            descriptions = _read_description(read, folder)
            if descriptions is not None:
                read.records["description"] = descriptions
        if (folder / COGBENCH_FILES[1]).is_file():
            _read_vqa(read, folder, descriptions)
        read.image_folders.append((relative_name(folder / IMAGES_DIR, sources.root), folder / IMAGES_DIR))
    if sources.codis is not None:
        read.source_folders["codis"] = sources.codis.resolve().name
        _read_codis(read, sources.codis)
        read.image_folders.append((relative_name(sources.codis / IMAGES_DIR, sources.root), sources.codis / IMAGES_DIR))
    return read


def sorted_records(records: dict[str, list]) -> dict[str, list]:
    """Records of each config sorted by id: the row order of the built shards."""
    return {
        config: sorted(items, key=lambda record: getattr(record, ID_COLUMN[config]))
        for config, items in records.items()
    }
