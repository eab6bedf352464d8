"""What a validation looks at, read from a raw folder or from a built release.

Both kinds of input become the builder's typed records (``records.py``) plus
the list of images to decode, so every later check is written once. A raw
folder is read by the one raw reader the build uses (``dataset_builders.read``);
its problems (bad JSON, schema violations, text hygiene, unparseable chains,
unresolvable image ids) become findings here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cogbench.dataset_builders.build import MANIFEST_FILE
from cogbench.dataset_builders.load import stream_rows
from cogbench.dataset_builders.raw import RawSources
from cogbench.dataset_builders.read import ImageRef, RawRead
from cogbench.dataset_builders.read import read_raw as read_raw_records
from cogbench.schemas import BUILT_SCHEMAS, iter_violations
from cogbench.schemas.cor import ChainOfReasoning, CorSyntaxError, parse_cor
from cogbench.schemas.records import CodisRecord, DescriptionRecord, VqaRecord
from cogbench.schemas.vocabulary import CHOICE_COLUMNS, COGBENCH_CATEGORIES, CONFIGS, ID_COLUMN
from cogbench.validation.findings import Finding, finding
from cogbench.validation.images import MAX_PIXELS, ImageChecker
from cogbench.validation.integrity import card_header


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
    # a built folder's manifest "expected_counts": shipped file names or "manifest" (counts.choose_expected).
    declared_expected: Any = None
    # a built folder's images, checked while its rows streamed past: (findings, stats).
    image_results: tuple[list[Finding], dict] | None = None


# ---------------------------------------------------------------- raw folders


def read_raw(sources: RawSources) -> Contents:
    """A raw folder through the one raw reader (``dataset_builders.read``), its problems as findings."""
    return contents_of(read_raw_records(sources))


def contents_of(read: RawRead) -> Contents:
    contents = Contents(
        kind="raw",
        path=read.root,
        shown=dict(read.shown),
        records=dict(read.records),
        images=list(read.images),
        image_folders=list(read.image_folders),
        source_folders=dict(read.source_folders),
    )
    contents.findings = [finding(p.code, p.file, p.record, p.field, p.message) for p in read.problems]
    return contents


# ------------------------------------------------------------ built releases


def _manifest_data(folder: Path) -> dict[str, Any] | None:
    """The manifest as far as it parses: None without one, {} when it is unreadable
    (``integrity.py`` reports why)."""
    path = folder / MANIFEST_FILE
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def _built_configs(folder: Path, manifest: dict[str, Any] | None) -> list[str]:
    """The configs a built folder declares: its manifest, else its card's YAML."""
    if manifest is not None:
        configs = manifest.get("configs")
        return [c for c in configs if c in CONFIGS] if isinstance(configs, dict) else []
    entries = (card_header(folder) or {}).get("configs")
    if not isinstance(entries, list):
        return []
    return [
        entry["config_name"] for entry in entries if isinstance(entry, dict) and entry.get("config_name") in CONFIGS
    ]


def _chain_from_row(cor: dict, image_id: str, where: str, contents: Contents) -> ChainOfReasoning:
    """A stored chain, checked against a re-parse of its own text."""
    chain = ChainOfReasoning(cor["text"], tuple(cor["premises"]), cor["conclusion"])
    try:
        parsed = parse_cor(chain.text)
    except CorSyntaxError as error:
        contents.findings.append(
            finding("cor.syntax", contents.shown["description"], image_id, where, f"{error}: {chain.text!r}")
        )
        return chain
    if parsed != chain:
        contents.findings.append(
            finding(
                "cor.syntax",
                contents.shown["description"],
                image_id,
                where,
                "premises/conclusion do not match the chain's text",
            )
        )
    return chain


def _record_from_row(config: str, row: dict, names: dict[str, Any], contents: Contents):
    if config == "description":
        cors = {
            name: [
                _chain_from_row(cor, row["image_id"], f"cors.{name}[{i}]", contents)
                for i, cor in enumerate(row["cors"][name])
            ]
            for name in COGBENCH_CATEGORIES
        }
        return DescriptionRecord(
            row["image_id"], row["image_file"], None, tuple(row["entities"]), cors, row["description"]
        )
    if config == "vqa":
        choices = tuple(row[column] for column in CHOICE_COLUMNS)
        return VqaRecord(
            row["question_id"],
            row["image_id"],
            None,
            row["question"],
            choices,
            names["answer"].int2str(row["answer"]),
            names["category"].int2str(row["category"]),
        )
    return CodisRecord(
        row["id"],
        row["image_id"],
        row["image_file"],
        None,
        row["question"],
        row["context_1"],
        row["context_2"],
        row["answer_1"],
        row["answer_2"],
        names["category"].int2str(row["category"]),
    )


def read_built(folder: Path, max_pixels: int = MAX_PIXELS) -> Contents:
    """Every config of a built folder, its files and features resolved by ``datasets`` as users get them.

    Rows stream past once: records keep no image bytes, and each embedded image is
    checked as it passes (``ImageChecker``), so memory does not grow with the data.
    """
    contents = Contents(kind="built", path=folder)
    checker = ImageChecker(max_pixels)
    manifest = _manifest_data(folder)
    if manifest:
        sources = manifest.get("sources")
        contents.source_folders = dict(sources) if isinstance(sources, dict) else {}
        contents.declared_expected = manifest.get("expected_counts")
    for config in _built_configs(folder, manifest):
        contents.shown[config] = config
        records = []
        try:
            # The Parquet files on disk now (never a stale Arrow cache), a few rows at a time.
            features, rows = stream_rows(str(folder), config)
            for position, row in enumerate(rows):
                _add_row(config, position, row, features, contents, records, checker)
        except Exception as error:  # any loading failure is what users would hit
            contents.findings.append(
                finding("schema.unloadable", config, None, None, f"{type(error).__name__}: {error}")
            )
            continue
        contents.records[config] = records
    contents.image_results = checker.finish()
    return contents


def _add_row(
    config: str, position: int, row: dict, features, contents: Contents, records: list, checker: ImageChecker
) -> None:
    record = row.get(ID_COLUMN[config]) or f"row {position}"
    violations = list(iter_violations(row, BUILT_SCHEMAS[config]))
    for violation in violations:
        contents.findings.append(
            finding("schema.built", config, record, ".".join(map(str, violation.path)) or None, violation.message)
        )
    if violations:
        return
    records.append(_record_from_row(config, row, features, contents))
    image = row["image"]
    if image.get("bytes") is not None:
        # The bytes go to the checker now; the ref must not keep them (it outlives the row).
        checker.add(ImageRef(config, record, "image", image.get("path") or row["image_id"], bytes), image["bytes"])
    else:
        contents.findings.append(finding("image.missing", config, record, "image", "no image bytes embedded"))
