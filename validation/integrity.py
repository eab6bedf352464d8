"""Tamper evidence for a built folder: files, shards, manifest and card agree with each other.

Nothing here trusts one editable file alone: each shard is checked against
the manifest's sha256 and size, the manifest's rows and counts against what
the shards hold (recomputed by the same ``config_counts`` the build used), and
the card's YAML against the configs whose shards are actually on disk, so a
licence or gating decision never rests on metadata someone could edit.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from cogbench.dataset_builders.build import CARD_FILE, DEFAULT_VERSION, MANIFEST_FILE, config_counts
from cogbench.dataset_builders.fingerprints import FINGERPRINT_FILE
from cogbench.dataset_builders.load import load_config
from cogbench.dataset_builders.output import MARKER_FILE, build_command, folder_files, read_marker
from cogbench.dataset_builders.raw import find_sources, sha256_file
from cogbench.errors import CogbenchError
from cogbench.schemas.sources import expected_licence
from cogbench.schemas.vocabulary import CONFIGS, SPLIT
from cogbench.validation.findings import Finding, finding
from cogbench.validation.metadata import METADATA, check_metadata, safe_yaml

DEFAULT_BUILD = "dist/cogbench"  # `cogbench build`'s default --out (cards/cli.py DEFAULT_OUT), named in hints
SHARD_PATH = re.compile(rf"^data/([a-z_]+)/{SPLIT}-\d{{5}}-of-\d{{5}}\.parquet$")


def load_manifest_findings(folder: Path) -> tuple[dict[str, Any] | None, list[Finding]]:
    """The manifest, or None and a finding saying why it cannot be used."""
    try:
        manifest = json.loads((folder / MANIFEST_FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None, [finding("files.missing", MANIFEST_FILE, None, None, "a build always writes its manifest")]
    except (OSError, ValueError, RecursionError) as error:
        return None, [finding("manifest.invalid", MANIFEST_FILE, None, None, f"not readable JSON: {error}")]
    if not isinstance(manifest, dict) or not isinstance(manifest.get("configs"), dict):
        return None, [finding("manifest.invalid", MANIFEST_FILE, None, "configs", "no 'configs' object")]
    for config, entry in manifest["configs"].items():
        if (
            config not in CONFIGS
            or not isinstance(entry, dict)
            or not isinstance(entry.get("shards"), dict)
            or not all(isinstance(shard, dict) for shard in entry["shards"].values())
        ):
            return None, [
                finding("manifest.invalid", MANIFEST_FILE, config, "shards", "unknown config or no 'shards' object")
            ]
    return manifest, []


def configs_on_disk(folder: Path) -> list[str]:
    """Configs with at least one file under data/<config>/, whatever the manifest says."""
    data = folder / "data"
    if not data.is_dir():
        return []
    return sorted(path.name for path in data.iterdir() if path.is_dir() and any(path.rglob("*")))


def build_files(manifest: dict[str, Any]) -> set[str]:
    """Exactly the files a build writes, per its manifest."""
    shards = {path for entry in manifest["configs"].values() for path in entry["shards"]}
    listed = manifest.get("metadata_files")  # builds since 2.x; anything but a list of names lists none
    names = [n for n in listed if isinstance(n, str)] if isinstance(listed, list) else []
    metadata = {name for name in names if name in METADATA}
    prints = {FINGERPRINT_FILE} if isinstance(manifest.get("fingerprints"), dict) else set()  # builds since 0.3
    return {CARD_FILE, MANIFEST_FILE, MARKER_FILE} | shards | metadata | prints


def check_files(folder: Path, manifest: dict[str, Any]) -> list[Finding]:
    """Stray and missing files; every shard's size and sha256 against the manifest."""
    found = []
    marker = read_marker(folder)
    if marker is None:
        found.append(
            finding(
                "files.missing",
                MARKER_FILE,
                None,
                None,
                "no build marker: this folder was not written by `cogbench build`",
            )
        )
    expected = build_files(manifest)
    found += check_edited(folder, marker, expected)
    present = set(folder_files(folder))
    for name in sorted(present - expected):
        found.append(
            finding(
                "files.stray",
                name,
                None,
                None,
                "not a file the build writes (not listed in the manifest); it would not be validated",
            )
        )
    for name in sorted(set(METADATA) & expected - present):
        found.append(
            finding("files.missing", name, None, None, "the manifest lists it; the build writes it beside the card")
        )
    listed: list[tuple[str | None, str, Any]] = [
        (config, name, shard)
        for config, entry in sorted(manifest["configs"].items())
        for name, shard in sorted(entry["shards"].items())
    ]
    prints = manifest.get("fingerprints")
    if isinstance(prints, dict):
        listed.append((None, FINGERPRINT_FILE, prints))
    for config, name, shard in listed:
        if config is not None and not ((match := SHARD_PATH.match(name)) and match.group(1) == config):
            found.append(
                finding("manifest.invalid", MANIFEST_FILE, config, f"shards.{name}", "not a shard path of this config")
            )
            continue
        path = folder / name
        if name not in present or not path.is_file() or path.is_symlink():
            found.append(finding("files.missing", name, None, None, "a file listed in the manifest is missing"))
            continue
        size = path.stat().st_size
        if size != shard.get("bytes"):
            found.append(
                finding(
                    "files.size_mismatch", name, None, None, f"{size} bytes, the manifest says {shard.get('bytes')}"
                )
            )
        digest = sha256_file(path)
        if digest != shard.get("sha256"):
            found.append(
                finding(
                    "files.hash_mismatch",
                    name,
                    None,
                    None,
                    f"sha256 {digest[:16]}..., the manifest says {str(shard.get('sha256'))[:16]}...",
                )
            )
    return found


def check_edited(folder: Path, marker: dict[str, Any] | None, expected: set[str]) -> list[Finding]:
    """The manifest, card and croissant.json (of ``expected``: what the build writes) against the sha256 the
    build marker recorded of them. A marker without that sha256 (a build by an older cogbench, or a marker
    edited along with the card) vouches for nothing: an error, as `score` refuses such a build."""
    if marker is None:
        return []  # files.missing, reported by the caller
    recorded = marker.get("sha256") if isinstance(marker.get("sha256"), dict) else {}
    found = []
    for name in (MANIFEST_FILE, CARD_FILE, *METADATA):
        path = folder / name
        if name in expected and not isinstance(recorded.get(name), str):
            found.append(
                finding(
                    "files.unverified",
                    name,
                    None,
                    None,
                    f"the build marker records no sha256 of it (a build by an older cogbench, or an edited "
                    f"{MARKER_FILE}), so nothing shows it is unchanged since the build; rebuild the folder",
                )
            )
        elif name in expected and path.is_file() and sha256_file(path) != recorded[name]:
            found.append(
                finding(
                    "files.edited",
                    name,
                    None,
                    None,
                    "changed after the build (its sha256 differs from the build marker's); rebuild the folder",
                )
            )
    return found


def shard_rows(path: Path) -> int | None:
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(path).metadata.num_rows
    except Exception:  # a damaged shard: reported by the hash check and by loading
        return None


def check_manifest(folder: Path, manifest: dict[str, Any], records: dict[str, list]) -> list[Finding]:
    """Rows and counts in the manifest against the data actually in the shards."""
    found = []
    on_disk = configs_on_disk(folder)
    for config in sorted(set(on_disk) - set(manifest["configs"])):
        found.append(
            finding(
                "manifest.mismatch",
                MANIFEST_FILE,
                config,
                "configs",
                f"data/{config}/ holds shards the manifest does not list",
            )
        )
    for config, entry in sorted(manifest["configs"].items()):
        if config not in records:
            continue
        for name, shard in sorted(entry["shards"].items()):
            rows = shard_rows(folder / name) if (folder / name).is_file() else None
            if rows is not None and rows != shard.get("rows"):
                found.append(
                    finding(
                        "manifest.mismatch",
                        MANIFEST_FILE,
                        config,
                        f"shards.{name}.rows",
                        f"the shard holds {rows} rows, the manifest says {shard.get('rows')}",
                    )
                )
        actual = {"rows": len(records[config]), "counts": config_counts(config, records[config])}
        for key, value in actual.items():
            if entry.get(key) != value:
                found.append(
                    finding(
                        "manifest.mismatch",
                        MANIFEST_FILE,
                        config,
                        key,
                        f"recomputed from the shards: {json.dumps(value, sort_keys=True)[:200]}; the manifest says {json.dumps(entry.get(key), sort_keys=True)[:200]}",
                    )
                )
    return found


def card_header(folder: Path) -> dict[str, Any] | None:
    try:
        text = (folder / CARD_FILE).read_text(encoding="utf-8")
        header = safe_yaml(text.split("---")[1]) if text.startswith("---\n") else None
    except (OSError, UnicodeDecodeError, yaml.YAMLError, IndexError):
        return None
    return header if isinstance(header, dict) else None


def check_card(folder: Path, manifest: dict[str, Any]) -> list[Finding]:
    """The card's YAML: configs, split sizes, licence and gating of the data present."""
    header = card_header(folder)
    if header is None:
        return [finding("card.mismatch", CARD_FILE, None, None, "no readable YAML header")]
    found = []
    present = sorted(set(configs_on_disk(folder)) | set(manifest["configs"]))
    declared = {entry.get("config_name"): entry for entry in header.get("configs") or [] if isinstance(entry, dict)}
    if sorted(declared) != present:
        found.append(
            finding(
                "card.mismatch",
                CARD_FILE,
                None,
                "configs",
                f"declares {sorted(map(str, declared))}, the build holds {present}",
            )
        )
    for config in present:
        want = [{"split": SPLIT, "path": f"data/{config}/{SPLIT}-*.parquet"}]
        if config in declared and declared[config].get("data_files") != want:
            found.append(finding("card.mismatch", CARD_FILE, config, "data_files", f"should be {want}"))
    infos = {entry.get("config_name"): entry for entry in header.get("dataset_info") or [] if isinstance(entry, dict)}
    for config, entry in sorted(manifest["configs"].items()):
        splits = (infos.get(config) or {}).get("splits") or [{}]
        if splits[0].get("num_examples") != entry.get("rows"):
            found.append(
                finding(
                    "card.mismatch",
                    CARD_FILE,
                    config,
                    "dataset_info.splits",
                    f"num_examples {splits[0].get('num_examples')}, the manifest says {entry.get('rows')}",
                )
            )
    licence = expected_licence(present)
    if header.get("license") != licence["license"]:
        found.append(
            finding(
                "card.licence",
                CARD_FILE,
                None,
                "license",
                f"{header.get('license')!r}, the data present needs {licence['license']!r}",
            )
        )
    if licence["license_name"] and header.get("license_name") != licence["license_name"]:
        found.append(
            finding(
                "card.licence",
                CARD_FILE,
                None,
                "license_name",
                f"{header.get('license_name')!r}, the data present needs {licence['license_name']!r}",
            )
        )
    if licence["gated"]:
        prompt, fields = header.get("extra_gated_prompt"), header.get("extra_gated_fields")
        if not isinstance(prompt, str) or not prompt.strip() or not fields:
            found.append(
                finding(
                    "card.licence",
                    CARD_FILE,
                    None,
                    "extra_gated_prompt",
                    "CogBench data is present: the card must carry its data use agreement and gating form",
                )
            )
    return found


def check_release(folder: Path, records: dict[str, list]) -> list[Finding]:
    """Every tamper check of a built folder (records: what loading its shards gave)."""
    manifest, found = load_manifest_findings(folder)
    if manifest is None:
        return found
    return (
        check_files(folder, manifest)
        + check_manifest(folder, manifest, records)
        + check_card(folder, manifest)
        + check_metadata(folder, manifest)
    )


# --- before use: every command that reads a local build checks it first ----------------


class BuildNotVerified(CogbenchError):
    """A build that does not match its own marker and manifest (exit 1, as `validate` with findings)."""


def older_dataset_version(folder: Path, manifest: dict[str, Any]) -> str | None:
    """The message for a folder built as dataset version 1.x (CODIS image_id carrying '.jpg'), else None."""
    import pyarrow.parquet as pq

    for name in sorted((manifest["configs"].get("codis") or {}).get("shards", {}))[:1]:
        try:
            ids = pq.read_table(folder / name, columns=["image_id"]).column("image_id").to_pylist()
        except Exception:
            return None
        if any(isinstance(i, str) and i.endswith(".jpg") for i in ids):
            return (
                f"{folder} was built as dataset version {manifest.get('dataset_version', '1.x')} (CODIS image_id with "
                f"'.jpg'); this cogbench reads version {DEFAULT_VERSION} (bare image_id, file name in image_file): "
                f"rebuild it with `{build_command(folder)}`"
            )
    return None


def is_raw_folder(folder: Path) -> bool:
    """Whether ``folder`` holds raw annotations (``--dataset raw`` by mistake): then the hint builds from it."""
    try:
        find_sources(folder)
    except (CogbenchError, OSError):  # not a raw folder, whatever find_sources says about it
        return False
    return True


def verify_build(folder: str | Path) -> None:
    """Refuse a local build whose files no longer match what `cogbench build` wrote.

    The same checks as ``validate``'s tamper evidence, minus reading the rows: the
    marker's sha256 of manifest and card, every shard's size and sha256 against the
    manifest, and the card's YAML against the configs on disk. Hashing is the cost
    (docs/conventions.md, "What cogbench writes": about 0.06 s of CPU for CODIS's 87 MB).
    """
    folder = Path(folder)
    marker = read_marker(folder)
    if marker is None and is_raw_folder(folder):
        raise BuildNotVerified(
            f"{folder} holds raw annotations, not a build; build from them with "
            f"`cogbench build --raw-dir {folder} --out {DEFAULT_BUILD}` and give that folder instead"
        )
    if marker is None:
        raise BuildNotVerified(
            f"{folder / MARKER_FILE}: missing or unreadable: this folder was not written by "
            f"`cogbench build`, so nothing vouches for its files; build it with `{build_command(folder)}`"
        )
    manifest, found = load_manifest_findings(folder)
    older = older_dataset_version(folder, manifest) if manifest is not None else None
    if older:
        raise BuildNotVerified(older)
    if not isinstance(marker.get("sha256"), dict):
        raise BuildNotVerified(
            f"{folder}: built by an older cogbench ({marker.get('builder_version', 'unknown')}, whose "
            f"build marker records no sha256 of manifest.json and README.md); rebuild it with `{build_command(folder)}`"
        )
    if manifest is not None:
        found = check_files(folder, manifest) + check_card(folder, manifest) + check_metadata(folder, manifest)
    errors = [f for f in found if f.severity == "error"]
    if errors:
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise BuildNotVerified(
            f"{folder}: {errors[0]}{more}; the build was changed after `cogbench build` wrote it: "
            f"rebuild it (`cogbench validate {folder}` lists every finding)"
        )


def load_verified(dataset: str, config: str, revision: str | None = None):
    """``load_config``, after ``verify_build`` when ``dataset`` is a local folder (a Hub repo is pinned by revision)."""
    if Path(dataset).is_dir() and any(Path(dataset).iterdir()):  # an empty folder: load_config's usage error
        verify_build(dataset)
    return load_config(dataset, config, revision)


def verified_rows(dataset: str, config: str, revision: str | None = None) -> list[dict]:
    """A config's rows after ``load_verified``, images left out, class labels as their names: what scoring
    and ``verify --dataset`` read."""
    import datasets

    loaded = load_verified(dataset, config, revision)
    loaded = loaded.remove_columns([c for c in loaded.column_names if c == "image"])
    labels = {n: f for n, f in loaded.features.items() if isinstance(f, datasets.ClassLabel)}
    rows = loaded.to_list()
    for row in rows:
        for name, feature in labels.items():
            row[name] = feature.int2str(row[name])
    return rows
