"""What a validation looks at, read from a raw folder or from a built release.

Both kinds of input become the builder's typed records (``records.py``) plus
the list of images to decode, so every later check is written once. Problems
that stop a record from being read at all (bad JSON, schema violations,
unparseable chains, unresolvable image ids) become findings here; such a record
is left out of the later checks instead of stopping the run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from cogbench.dataset_builders.load import load_config
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
from cogbench.errors import RawDataError
from cogbench.schemas import BUILT_SCHEMAS, RAW_SCHEMAS, iter_violations
from cogbench.schemas.cor import NONE_ENTRY, ChainOfReasoning, CorSyntaxError, parse_category, parse_cor
from cogbench.schemas.features import (
    CHOICE_COLUMNS,
    COGBENCH_CATEGORIES,
    CONFIGS,
    ID_COLUMN,
    RAW_DESCRIPTION_KEY,
)
from cogbench.schemas.records import (
    CodisRecord,
    DescriptionRecord,
    VqaRecord,
    codis_record,
    description_record,
    question_id,
    vqa_record,
)
from cogbench.validation.findings import Finding, finding


@dataclass(frozen=True)
class ImageRef:
    """One referenced image: where it is named, and how to get its bytes."""

    file: str
    record: str
    field: str
    name: str
    read: Callable[[], bytes]


@dataclass
class Contents:
    kind: str  # "raw" or "built"
    path: Path
    shown: dict[str, str] = field(default_factory=dict)  # config -> file or config name used in locations
    records: dict[str, list] = field(default_factory=dict)
    images: list[ImageRef] = field(default_factory=list)
    # images/ folders of a raw input: (name shown, folder) for the orphan check.
    image_folders: list[tuple[str, Path]] = field(default_factory=list)
    # benchmark -> source folder name ("cogbench-samples", "codis"): picks expected counts.
    source_folders: dict[str, str] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)


# ---------------------------------------------------------------- raw folders


def _load_document(path: Path, shown: str, contents: Contents) -> Any:
    try:
        return load_json(path, shown)
    except RawDataError as error:
        for problem in error.problems:
            contents.findings.append(finding("json.invalid", shown, None, None, problem.removeprefix(f"{shown}: ")))
        return None


def _schema_findings(document: Any, schema_key: str, shown: str, label: Callable[[Any], str]) -> tuple[list[Finding], set]:
    """Schema violations as findings, and the keys of the records they hit."""
    found, bad_keys = [], set()
    for violation in iter_violations(document, RAW_SCHEMAS[schema_key]):
        if not violation.path:
            found.append(finding("schema.raw", shown, None, None, violation.message))
            continue
        key = violation.path[0]
        bad_keys.add(key)
        field_name = ".".join(str(part) for part in violation.path[1:]) or None
        found.append(finding("schema.raw", shown, label(key), field_name, violation.message))
    return found, bad_keys


def _resolve(contents: Contents, shown: str, record: str, field_name: str, images_dir: Path, name: str, stem_only: bool) -> Path | None:
    try:
        return find_image_by_stem(images_dir, name) if stem_only else resolve_image(images_dir, name)
    except UnsafeImageId as error:
        contents.findings.append(finding("image.unsafe_id", shown, record, field_name, str(error)))
    except FileNotFoundError as error:
        contents.findings.append(finding("image.missing", shown, record, field_name, str(error)))
    return None


def _parse_raw_category(entries: list[str], shown: str, image_id: str, raw_key: str, contents: Contents) -> list[ChainOfReasoning]:
    """``cor.parse_category``; on failure, find each bad entry for its own finding."""
    try:
        return parse_category(entries)
    except CorSyntaxError:
        pass
    chains = []
    for index, entry in enumerate(entries):
        where = f"{raw_key}[{index}]"
        if entry.strip() == NONE_ENTRY:
            contents.findings.append(finding("cor.none_mixed", shown, image_id, where, "'None' must be the only entry of its category"))
            continue
        try:
            chains.append(parse_cor(entry))
        except CorSyntaxError as error:
            contents.findings.append(finding("cor.syntax", shown, image_id, where, f"{error}: {entry!r}"))
    return chains


def _add_image(contents: Contents, seen: set, shown: str, record: str, field_name: str, path: Path | None) -> None:
    if path is not None and path not in seen:
        seen.add(path)
        contents.images.append(ImageRef(shown, record, field_name, path.name, path.read_bytes))


def _read_raw_description(folder: Path, root: Path, contents: Contents, seen_images: set) -> list[DescriptionRecord] | None:
    path = folder / COGBENCH_FILES[0]
    shown = relative_name(path, root)
    contents.shown["description"] = shown
    document = _load_document(path, shown, contents)
    if document is None:
        return None
    problems, bad = _schema_findings(document, "cogbench_description", shown, str)
    contents.findings += problems
    if not isinstance(document, dict):
        return None
    records = []
    for image_id, raw in document.items():
        if image_id in bad:
            continue
        image_path = _resolve(contents, shown, image_id, "Image Name", folder / IMAGES_DIR, raw["Image Name"], False)
        _add_image(contents, seen_images, shown, image_id, "Image Name", image_path)
        cors = {
            name: _parse_raw_category(raw[RAW_DESCRIPTION_KEY[name]], shown, image_id, RAW_DESCRIPTION_KEY[name], contents)
            for name in COGBENCH_CATEGORIES
        }
        records.append(description_record(image_id, raw, image_path, cors))
    return records


def _checked_list(path: Path, root: Path, config: str, schema_key: str, item_id: Callable[[dict], str], contents: Contents):
    """Load a raw JSON list and schema-check it: (name shown, items that passed)."""
    shown = relative_name(path, root)
    contents.shown[config] = shown
    document = _load_document(path, shown, contents)
    if document is None:
        return shown, []

    def label(position):
        item = document[position] if isinstance(document, list) and isinstance(position, int) and position < len(document) else None
        try:
            return item_id(item)
        except (TypeError, KeyError):
            return f"item {position}"

    problems, bad = _schema_findings(document, schema_key, shown, label)
    contents.findings += problems
    if not isinstance(document, list):
        return shown, []
    return shown, [raw for position, raw in enumerate(document) if position not in bad]


def _read_raw_vqa(folder: Path, root: Path, contents: Contents, descriptions: list[DescriptionRecord] | None, seen_images: set) -> None:
    item_id = lambda raw: question_id(raw["img_id"], raw["question"])  # noqa: E731
    shown, items = _checked_list(folder / COGBENCH_FILES[1], root, "vqa", "cogbench_vqa", item_id, contents)
    image_of = {record.image_id: record.image_path for record in descriptions or []}
    records = []
    for raw in items:
        record_id = item_id(raw)
        if descriptions is not None:
            image_path = image_of.get(raw["img_id"])  # an unknown id is reported by the options check
        else:
            image_path = _resolve(contents, shown, record_id, "img_id", folder / IMAGES_DIR, raw["img_id"], True)
            _add_image(contents, seen_images, shown, record_id, "img_id", image_path)
        records.append(vqa_record(raw, image_path))
    contents.records["vqa"] = records


def _read_raw_codis(folder: Path, root: Path, contents: Contents, seen_images: set) -> None:
    shown, items = _checked_list(folder / CODIS_FILE, root, "codis", "codis", lambda raw: raw["id"], contents)
    records = []
    for raw in items:
        image_path = _resolve(contents, shown, raw["id"], "image_id", folder / IMAGES_DIR, raw["image_id"], False)
        _add_image(contents, seen_images, shown, raw["id"], "image_id", image_path)
        records.append(codis_record(raw, image_path))
    contents.records["codis"] = records


def read_raw(sources: RawSources) -> Contents:
    """Every config present in a raw folder (layouts of ``find_sources``)."""
    contents = Contents(kind="raw", path=sources.root)
    seen_images: set[Path] = set()
    if sources.cogbench is not None:
        folder = sources.cogbench
        contents.source_folders["cogbench"] = folder.resolve().name
        descriptions = None
        if (folder / COGBENCH_FILES[0]).is_file():
            descriptions = _read_raw_description(folder, sources.root, contents, seen_images)
            if descriptions is not None:
                contents.records["description"] = descriptions
        if (folder / COGBENCH_FILES[1]).is_file():
            _read_raw_vqa(folder, sources.root, contents, descriptions, seen_images)
        contents.image_folders.append((relative_name(folder / IMAGES_DIR, sources.root), folder / IMAGES_DIR))
    if sources.codis is not None:
        contents.source_folders["codis"] = sources.codis.resolve().name
        _read_raw_codis(sources.codis, sources.root, contents, seen_images)
        contents.image_folders.append((relative_name(sources.codis / IMAGES_DIR, sources.root), sources.codis / IMAGES_DIR))
    return contents


# ------------------------------------------------------------ built releases


def _built_configs(folder: Path) -> list[str]:
    """The configs a built folder declares: its manifest, else its card's YAML."""
    import json

    import yaml

    manifest = folder / "manifest.json"
    if manifest.is_file():
        return [c for c in json.loads(manifest.read_text(encoding="utf-8")).get("configs", {}) if c in CONFIGS]
    text = (folder / "README.md").read_text(encoding="utf-8")
    header = yaml.safe_load(text.split("---")[1]) if text.startswith("---") else {}
    return [entry["config_name"] for entry in header.get("configs", []) if entry.get("config_name") in CONFIGS]


def _chain_from_row(cor: dict, image_id: str, where: str, contents: Contents) -> ChainOfReasoning:
    """A stored chain, checked against a re-parse of its own text."""
    chain = ChainOfReasoning(cor["text"], tuple(cor["premises"]), cor["conclusion"])
    try:
        parsed = parse_cor(chain.text)
    except CorSyntaxError as error:
        contents.findings.append(finding("cor.syntax", contents.shown["description"], image_id, where, f"{error}: {chain.text!r}"))
        return chain
    if parsed != chain:
        contents.findings.append(finding("cor.syntax", contents.shown["description"], image_id, where, "premises/conclusion do not match the chain's text"))
    return chain


def _record_from_row(config: str, row: dict, names: dict[str, Any], contents: Contents):
    if config == "description":
        cors = {
            name: [_chain_from_row(cor, row["image_id"], f"cors.{name}[{i}]", contents) for i, cor in enumerate(row["cors"][name])]
            for name in COGBENCH_CATEGORIES
        }
        return DescriptionRecord(row["image_id"], row["image_file"], None, tuple(row["entities"]), cors, row["description"])
    if config == "vqa":
        choices = tuple(row[column] for column in CHOICE_COLUMNS)
        return VqaRecord(row["question_id"], row["image_id"], None, row["question"], choices,
                         names["answer"].int2str(row["answer"]), names["category"].int2str(row["category"]))
    return CodisRecord(row["id"], row["image_id"], row["image_file"], None, row["question"], row["context_1"], row["context_2"],
                       row["answer_1"], row["answer_2"], names["category"].int2str(row["category"]))


def read_built(folder: Path) -> Contents:
    """Every config of a built folder, loaded through ``load_dataset`` as users get it."""
    import datasets

    contents = Contents(kind="built", path=folder)
    manifest = folder / "manifest.json"
    if manifest.is_file():
        import json

        contents.source_folders = dict(json.loads(manifest.read_text(encoding="utf-8")).get("sources", {}))
    for config in _built_configs(folder):
        contents.shown[config] = config
        try:
            # Streaming reads the Parquet files on disk now, never a stale Arrow cache.
            dataset = load_config(str(folder), config, streaming=True).cast_column("image", datasets.Image(decode=False))
            rows = list(dataset)
        except Exception as error:  # any loading failure is what users would hit
            contents.findings.append(finding("schema.unloadable", config, None, None, f"{type(error).__name__}: {error}"))
            continue
        id_column = ID_COLUMN[config]
        records = []
        for position, row in enumerate(rows):
            record = row.get(id_column) or f"row {position}"
            violations = list(iter_violations(row, BUILT_SCHEMAS[config]))
            for violation in violations:
                contents.findings.append(
                    finding("schema.built", config, record, ".".join(map(str, violation.path)) or None, violation.message)
                )
            if violations:
                continue
            records.append(_record_from_row(config, row, dataset.features, contents))
            image = row["image"]
            if image.get("bytes") is not None:
                contents.images.append(ImageRef(config, record, "image", image.get("path") or row["image_id"], lambda data=image["bytes"]: data))
            else:
                contents.findings.append(finding("image.missing", config, record, "image", "no image bytes embedded"))
        contents.records[config] = records
    return contents
