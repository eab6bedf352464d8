"""The dataset card (README.md) of a built folder, rendered from templates in ``cards/``.

The YAML front matter is what the Hub and ``load_dataset`` read: ``configs``
maps each config to its Parquet files, ``dataset_info`` declares features and
split sizes, license and gating come from ``cards/metadata.yaml``. The body is
``cards/card.md`` (a ``string.Template``) filled with tables generated from the
manifest and ``features.py``: no number in the card is typed by hand, so
rendering the same manifest twice gives the same bytes.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from functools import cache
from importlib import resources
from string import Template
from typing import Any

import datasets
import yaml

from cogbench.dataset_builders.fingerprints import CANONICAL_SIDE
from cogbench.schemas.features import (
    CATEGORY_LABEL,
    COGBENCH_CATEGORIES,
    CONFIGS,
    FEATURES,
    ID_COLUMN,
    SPLIT,
)
from cogbench.schemas.sources import SOURCES, sources_of

# Shown in the card when the build was not told its Hub repo (`cogbench build --repo-id`).
PLACEHOLDER_REPO_ID = "ORG/NAME"


@cache
def _template_text(name: str) -> str:
    return resources.files("cogbench.cards").joinpath(name).read_text(encoding="utf-8")


def card_metadata() -> dict[str, Any]:
    """The hand-written card metadata (``cards/metadata.yaml``)."""
    return yaml.safe_load(_template_text("metadata.yaml"))


def sources_in(manifest: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The source benchmarks (CogBench, CODIS) that have a config in this build."""
    present = sources_of(manifest["configs"])
    return {
        name: source | asdict(present[name]) for name, source in card_metadata()["sources"].items() if name in present
    }


def needs_gating(manifest: dict[str, Any]) -> bool:
    """CogBench data may only be shared with people who accept its data use agreement."""
    return any(source["gated"] for source in sources_in(manifest).values())


def size_category(rows: int) -> str:
    """The Hub's ``size_categories`` bucket for a number of rows."""
    for limit, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")):
        if rows < limit:
            return label
    return "n>1M"


def front_matter(manifest: dict[str, Any]) -> dict[str, Any]:
    """The YAML header the Hub reads, in the order the Hub's own cards use."""
    meta = card_metadata()
    sources = sources_in(manifest)
    licenses = sorted({source["license"] for source in sources.values()})
    header: dict[str, Any] = {
        "pretty_name": meta["pretty_name"],
        "license": licenses[0] if len(licenses) == 1 else licenses,
    }
    other = [source for source in sources.values() if source["license"] == "other"]
    if other:
        header["license_name"] = other[0]["license_name"]
    header.update(
        language=meta["language"],
        task_categories=meta["task_categories"],
        tags=meta["tags"],
        size_categories=[size_category(sum(entry["rows"] for entry in manifest["configs"].values()))],
    )
    if needs_gating(manifest):
        header["extra_gated_prompt"] = _template_text("cogbench_agreement.md")
        header["extra_gated_fields"] = meta["extra_gated_fields"]
    configs, infos = [], []
    for config, entry in sorted(manifest["configs"].items()):
        configs.append(
            {"config_name": config, "data_files": [{"split": SPLIT, "path": f"data/{config}/{SPLIT}-*.parquet"}]}
        )
        infos.append(
            {
                "config_name": config,
                "features": FEATURES[config]._to_yaml_list(),
                "splits": [{"name": SPLIT, "num_bytes": entry["num_bytes"], "num_examples": entry["rows"]}],
                "download_size": sum(shard["bytes"] for shard in entry["shards"].values()),
                "dataset_size": entry["num_bytes"],
            }
        )
    header["configs"] = configs
    header["dataset_info"] = infos
    return header


def describe_feature(feature: Any) -> str:
    """A short type name for a feature, for the field tables."""
    if isinstance(feature, datasets.ClassLabel):
        return "class label: " + ", ".join(f"{i}={name}" for i, name in enumerate(feature.names))
    if isinstance(feature, datasets.Image):
        return "image"
    if isinstance(feature, datasets.Value):
        return feature.dtype
    if isinstance(feature, (datasets.List, datasets.Sequence)):
        return f"list of {describe_feature(feature.feature)}"
    if isinstance(feature, dict):
        kinds = {describe_feature(value) for value in feature.values()}
        if len(kinds) == 1 and len(feature) > 3:
            return f"{{{', '.join(feature)}}}, each a {kinds.pop()}"
        return "{" + ", ".join(f"{key}: {describe_feature(value)}" for key, value in feature.items()) + "}"
    return type(feature).__name__


def _table(header: tuple[str, ...], rows: list[tuple]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def field_tables(manifest: dict[str, Any]) -> str:
    columns = card_metadata()["columns"]
    parts = []
    for config in sorted(manifest["configs"]):
        rows = [
            (f"`{name}`", _md_cell(describe_feature(feature)), _md_cell(columns[config][name]))
            for name, feature in FEATURES[config].items()
        ]
        parts.append(
            f"## Fields of `{config}`\n\nOne row per `{ID_COLUMN[config]}`.\n\n"
            + _table(("column", "type", "meaning"), rows)
        )
    return "\n\n".join(parts)


def config_table(manifest: dict[str, Any]) -> str:
    sources = card_metadata()["sources"]
    source_of = {config: sources[name]["title"] for name, source in SOURCES.items() for config in source.configs}
    rows = []
    for config in CONFIGS:
        entry = manifest["configs"].get(config)
        if entry is not None:
            size = sum(shard["bytes"] for shard in entry["shards"].values())
            rows.append(
                (
                    f"`{config}`",
                    source_of[config],
                    f"`{SPLIT}`",
                    entry["rows"],
                    len(entry["shards"]),
                    f"{size / 1e6:.1f} MB",
                )
            )
    return _table(("config", "benchmark", "split", "rows", "shards", "download size"), rows)


def category_table() -> str:
    definitions = card_metadata()["category_definitions"]
    rows = [(f"`{name}`", CATEGORY_LABEL[name], _md_cell(definitions[name])) for name in COGBENCH_CATEGORIES]
    return _table(("category", "paper name", "definition (CogBench paper, Section 2.2)"), rows)


def _count_table(title: str, counts: dict[str, int], label: str) -> str:
    total = sum(counts.values())
    rows = [(name, count, f"{100 * count / total:.1f}%" if total else "-") for name, count in counts.items()]
    rows.append(("**total**", total, "100.0%" if total else "-"))
    return f"**{title}**\n\n" + _table((label, "count", "share"), rows)


def statistics(manifest: dict[str, Any]) -> str:
    """One block per config from the manifest's ``counts`` (which the validators also check)."""
    parts = []
    for config, entry in sorted(manifest["configs"].items()):
        counts = entry["counts"]
        totals = ", ".join(f"{value} {key}" for key, value in counts.items() if isinstance(value, int))
        block = [f"### `{config}`\n\n{totals}."]
        if config == "description":
            block.append(_count_table("chains of reasoning per category", counts["cors_per_category"], "category"))
        if "per_category" in counts:
            block.append(_count_table("rows per category", counts["per_category"], "category"))
        if "answers" in counts:
            block.append(_count_table("correct answer", counts["answers"], "answer"))
        parts.append("\n\n".join(block))
    return "\n\n".join(parts)


def checks(manifest: dict[str, Any]) -> str:
    """What the build's gate checked on the images and raw files, and how the raw files compare with the
    authors' release (``fetch.against_release``): a changed JPEG that still decodes shows only there."""
    lines = [
        "- Every image was decoded in full (Pillow's `load()`: every pixel, beyond `verify()`'s structure check) "
        "and is under 40 megapixels; a build with one that does not decode is refused.",
        "- A JPEG whose bytes changed can still decode (the damage is only wrong pixels), so each raw file read "
        "(annotations and images) was also compared by sha256 with the authors' release, as pinned in "
        "cogbench's `raw_files.json` (what `cogbench fetch-raw` downloads):",
    ]
    release = manifest.get("raw_release")
    if not release:
        return "\n".join([*lines, "  not recorded by the builder of this version."])
    for benchmark, found in sorted(release.items()):
        differing, foreign = found["differing"], found["not_in_release"]
        same = found["read"] - len(differing) - len(foreign)
        line = f"  - {benchmark}: {same} of {found['read']} files as released ({found['release']})"
        if differing:
            shown = ", ".join(f"`{name}`" for name in differing[:10]) + (" ..." if len(differing) > 10 else "")
            line += f"; **{len(differing)} differ from the release**: {shown}"
        if foreign:
            line += f"; {len(foreign)} not in the release"
        lines.append(line + ".")
    return "\n".join(lines)


def fingerprints(manifest: dict[str, Any]) -> str:
    """What ``fingerprints.parquet`` holds (``dataset_builders/fingerprints.py``): from the manifest's entry."""
    entry = manifest.get("fingerprints")
    if not isinstance(entry, dict):
        return "Not written by the builder of this version."
    families = ", ".join(FAMILY_NAMES[name] for name in entry["families"]) or "none"
    libraries = ", ".join(f"{name} {version}" for name, version in sorted(entry["libraries"].items()))
    lacking = [FAMILY_NAMES[name] for name in FAMILY_NAMES if name not in entry["families"]]
    no_pdq = (
        f" This build lacks {', '.join(lacking)} (built without the `fingerprints` extra: `imagehash`, `pdqhash`)."
        if lacking
        else ""
    )
    return (
        f"`{entry['file']}` holds one row per image ({entry['rows']} images): its benchmark, `image_id`, file name, "
        f"the configs that use it, its size, the sha256 of its bytes and its perceptual hashes ({families}; "
        f"computed with {libraries} on the image reduced to at most {CANONICAL_SIDE} px).{no_pdq} Its sha256 is in "
        "`manifest.json` and `croissant.json`. Check a training corpus for copies of these images with "
        "`cogbench leak-scan` (package `cogbench-codis`), given this folder as its `--dataset`; it finds near "
        "duplicates (re-encoded, resized, shifted, recoloured or mirrored copies; not crops or letterboxing), not re-photographed or "
        "regenerated scenes."
    )


FAMILY_NAMES = {"phash": "pHash", "dhash": "dHash", "whash": "wHash", "pdq": "PDQ with its 8 dihedral variants"}


def examples(manifest: dict[str, Any]) -> str:
    parts = []
    for config, entry in sorted(manifest["configs"].items()):
        if "example" in entry:
            text = json.dumps(entry["example"], indent=2, ensure_ascii=False)
            parts.append(f"### `{config}`\n\n```json\n{text}\n```")
    return "\n\n".join(parts)


def licensing(manifest: dict[str, Any]) -> str:
    lines = []
    for source in sources_in(manifest).values():
        configs = ", ".join(f"`{config}`" for config in source["configs"] if config in manifest["configs"])
        lines.append(f"- {source['title']} ({configs}): {source['license_text']}.")
    text = "\n".join(lines)
    if needs_gating(manifest):
        text += (
            "\n\nThis repository is gated: the Hub grants access after you accept the CogBench data use agreement.\n\n"
            + _template_text("cogbench_agreement.md").strip()
        )
    return text


def changelog(manifest: dict[str, Any]) -> str:
    entries = manifest.get("changelog") or [{"version": manifest["dataset_version"], "changes": ["first release"]}]
    parts = []
    for entry in entries:
        bump = f" ({entry['bump'].upper()} over {entry['previous_version']})" if entry.get("previous_version") else ""
        parts.append(f"### v{entry['version']}{bump}\n\n" + "\n".join(f"- {change}" for change in entry["changes"]))
    return "\n\n".join(parts)


def errata_section(manifest: dict[str, Any]) -> str:
    """The build's errata (``cards/errata.py``): each changed field, old -> new, and why; nothing when none."""
    errata = manifest.get("errata")
    if not errata:
        return ""

    def shown(value: Any) -> str:
        return _md_cell(json.dumps(value, ensure_ascii=False))

    rows = [
        (
            f"`{item['config']}`",
            f"`{item['id']}`",
            f"`{item['field']}`",
            shown(item["old"]),
            shown(item["new"]),
            _md_cell(item["reason"] or "not stated"),
        )
        for item in errata["items"]
    ]
    return (
        f"\n\n### Errata of v{errata['new_version']} (over v{errata['old_version']})\n\n"
        f"{len({(i['config'], i['id']) for i in errata['items']})} record(s) corrected; scores on the two versions "
        "differ by these items (`cogbench rescore` re-scores stored answers on this version, "
        "`cogbench explain` names the items).\n\n" + _table(("config", "id", "field", "old", "new", "why"), rows)
    )


def render_card(manifest: dict[str, Any]) -> str:
    header = yaml.safe_dump(front_matter(manifest), sort_keys=False, allow_unicode=True, width=1000)
    repo_id = manifest.get("repo_id") or PLACEHOLDER_REPO_ID
    gating_note = (
        "\nThe repository is gated: accept the CogBench data use agreement on its Hub page, then log in "
        "(`hf auth login`) before loading.\n"
        if needs_gating(manifest)
        else ""
    )
    body = Template(_template_text("card.md")).substitute(
        pretty_name=card_metadata()["pretty_name"],
        version=manifest["dataset_version"],
        builder_version=manifest["builder_version"],
        repo_id=repo_id,
        config_table=config_table(manifest),
        category_table=category_table(),
        field_tables=field_tables(manifest),
        statistics=statistics(manifest),
        checks=checks(manifest),
        examples=examples(manifest),
        fingerprints=fingerprints(manifest),
        gating_note=gating_note,
        licensing=licensing(manifest),
        changelog=changelog(manifest) + errata_section(manifest),
    )
    return f"---\n{header}---\n\n{body}"
