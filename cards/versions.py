"""Dataset versions: what changed between two builds, and which version bump it needs.

Semantic versioning of the dataset (not of the package):

- MAJOR: records removed, records changed (their meaning may have changed, so
  scores are not comparable), a config removed, or a config's schema changed;
- MINOR: records or configs added;
- PATCH: only the card or metadata changed.

Records are matched by their stable id (``ID_COLUMN`` in features.py); images
are compared by the sha256 of their bytes.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from cogbench.dataset_builders.build import SEMVER, load_manifest
from cogbench.dataset_builders.output import build_command
from cogbench.errors import UsageError

BUMPS = ("patch", "minor", "major")
# How many ids a one-line summary names before it says "and N more".
SHOWN_IDS = 5


@dataclass
class ConfigDiff:
    """How one config differs between two builds."""

    config: str
    old_rows: int | None  # None: the config is new
    new_rows: int | None  # None: the config was removed
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: dict[str, list[str]] = field(default_factory=dict)  # id -> changed columns
    schema_changed: bool = False
    category_counts: dict[str, tuple[int, int]] = field(default_factory=dict)  # only those that changed

    @property
    def bump(self) -> str | None:
        if self.new_rows is None or self.removed or self.changed or self.schema_changed:
            return "major"
        if self.old_rows is None or self.added:
            return "minor"
        return None

    def summary(self) -> list[str]:
        """One line per kind of change, for the terminal and the changelog."""
        if self.old_rows is None:
            return [f"{self.config}: new config ({self.new_rows} rows)"]
        if self.new_rows is None:
            return [f"{self.config}: config removed (had {self.old_rows} rows)"]
        lines = []
        if self.schema_changed:
            lines.append(f"{self.config}: schema changed (columns or their types)")
        if self.added:
            lines.append(f"{self.config}: {len(self.added)} record(s) added: {_some(self.added)}")
        if self.removed:
            lines.append(f"{self.config}: {len(self.removed)} record(s) removed: {_some(self.removed)}")
        if self.changed:
            shown = [f"{record_id} ({', '.join(columns)})" for record_id, columns in self.changed.items()]
            lines.append(f"{self.config}: {len(self.changed)} record(s) changed: {_some(shown)}")
        if self.category_counts:
            counts = ", ".join(f"{name} {old} -> {new}" for name, (old, new) in self.category_counts.items())
            lines.append(f"{self.config}: counts per category: {counts}")
        return lines


@dataclass
class ReleaseDiff:
    old_version: str
    new_version: str
    configs: list[ConfigDiff]

    @property
    def bump(self) -> str:
        """The smallest bump these changes allow; PATCH when no record changed."""
        levels = [diff.bump for diff in self.configs if diff.bump]
        return max(levels, key=BUMPS.index) if levels else "patch"

    @property
    def minimum_version(self) -> str:
        """The smallest version these changes allow: the old version raised by ``bump``."""
        return bump_version(self.old_version, self.bump)

    @property
    def proposed_version(self) -> str:
        """The new build's own version when it is already high enough, else ``minimum_version``.

        A build at 2.0.0 over 1.0.0 with records added needs MINOR (at least 1.1.0): proposing
        1.1.0, below the version it already has, would send the user backwards.
        """
        if parse_version(self.new_version) >= parse_version(self.minimum_version):
            return self.new_version
        return self.minimum_version

    def summary(self) -> list[str]:
        lines = [line for diff in self.configs for line in diff.summary()]
        return lines or ["no record changed (card or metadata only)"]


def _some(ids: list[str]) -> str:
    more = f" and {len(ids) - SHOWN_IDS} more" if len(ids) > SHOWN_IDS else ""
    return ", ".join(ids[:SHOWN_IDS]) + more


def parse_version(version: str) -> tuple[int, int, int]:
    match = SEMVER.match(version)
    if not match:
        raise UsageError(f"version {version!r} is not MAJOR.MINOR.PATCH (for example 1.0.0)")
    return tuple(int(part) for part in match.groups())


def bump_version(version: str, bump: str) -> str:
    major, minor, patch = parse_version(version)
    if bump == "major":
        return f"{major + 1}.0.0"
    if bump == "minor":
        return f"{major}.{minor + 1}.0"
    return f"{major}.{minor}.{patch + 1}"


def check_version(diff: ReleaseDiff, version: str) -> None:
    """Refuse a version that is not above the old one or too small for the change."""
    if parse_version(version) < parse_version(diff.minimum_version):
        reasons = (
            "; ".join(line for d in diff.configs if d.bump == diff.bump for line in d.summary()) or diff.summary()[0]
        )
        raise UsageError(
            f"version {version} is too small: the changes since {diff.old_version} need a {diff.bump.upper()} bump "
            f"({reasons}); run the same command with --version {diff.minimum_version} (or higher)"
        )


def read_config_rows(folder: Path, manifest: dict[str, Any], config: str) -> tuple[dict[str, dict[str, str]], Any]:
    """Rows of one config keyed by id, each value replaced by its sha256; and the config's features.

    Streams each shard a row group at a time and keeps only digests, so memory stays flat in the
    size of the data (an image is read once to hash it, then dropped; tests/benchmarks/build_memory.py).
    """
    import datasets
    import pyarrow.parquet as pq

    entry = manifest["configs"][config]
    id_column = entry["id_column"]
    rows, features = {}, None
    for shard in sorted(entry["shards"]):
        # One row group at a time (at most 100 rows, 8 MB of images: build.py). Not iter_batches:
        # its read-ahead buffers the whole file (557 MB peak on CODIS x4 against 203 MB this way).
        parquet = pq.ParquetFile(folder / shard, pre_buffer=False)
        features = datasets.Features.from_arrow_schema(parquet.schema_arrow)
        for group in range(parquet.metadata.num_row_groups):
            for row in parquet.read_row_group(group).to_pylist():
                rows[row[id_column]] = {name: _digest(value) for name, value in row.items()}
    return rows, features


def _digest(value: Any) -> str:
    """sha256 of a cell: image bytes as they are, anything else as canonical JSON."""
    if isinstance(value, dict) and isinstance(value.get("bytes"), (bytes, type(None))) and "path" in value:
        return hashlib.sha256(value["bytes"] or b"").hexdigest()
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()


def _category_counts(entry: dict[str, Any]) -> dict[str, int]:
    counts = entry["counts"]
    return counts.get("per_category") or counts.get("cors_per_category") or {}


def diff_config(config: str, old: Path, old_manifest: dict, new: Path, new_manifest: dict) -> ConfigDiff:
    old_entry = old_manifest["configs"].get(config)
    new_entry = new_manifest["configs"].get(config)
    diff = ConfigDiff(config, old_entry and old_entry["rows"], new_entry and new_entry["rows"])
    if old_entry is None or new_entry is None:
        return diff
    old_rows, old_features = read_config_rows(old, old_manifest, config)
    new_rows, new_features = read_config_rows(new, new_manifest, config)
    diff.schema_changed = old_features != new_features
    diff.added = sorted(new_rows.keys() - old_rows.keys())
    diff.removed = sorted(old_rows.keys() - new_rows.keys())
    for record_id in sorted(old_rows.keys() & new_rows.keys()):
        before, after = old_rows[record_id], new_rows[record_id]
        columns = [name for name in after if before.get(name) != after[name]]
        columns += [name for name in before if name not in after]
        if columns:
            diff.changed[record_id] = columns
    old_counts, new_counts = _category_counts(old_entry), _category_counts(new_entry)
    for name in dict.fromkeys([*old_counts, *new_counts]):
        if old_counts.get(name, 0) != new_counts.get(name, 0):
            diff.category_counts[name] = (old_counts.get(name, 0), new_counts.get(name, 0))
    return diff


def diff_builds(old: str | Path, new: str | Path, new_manifest: dict[str, Any] | None = None) -> ReleaseDiff:
    """Compare two built folders config by config (``new_manifest`` for a build in progress)."""
    old, new = Path(old), Path(new)
    old_manifest = load_manifest(old)
    new_manifest = new_manifest or load_manifest(new)
    configs = sorted(set(old_manifest["configs"]) | set(new_manifest["configs"]))
    return ReleaseDiff(
        old_version=old_manifest["dataset_version"],
        new_version=new_manifest["dataset_version"],
        configs=[diff_config(config, old, old_manifest, new, new_manifest) for config in configs],
    )


def format_diff(diff: ReleaseDiff, old: Path, new: Path) -> str:
    lines = [f"{old} (v{diff.old_version}) -> {new} (v{diff.new_version})"]
    for config_diff in diff.configs:
        if config_diff.summary():
            lines += [f"  {line}" for line in config_diff.summary()]
        else:
            lines.append(f"  {config_diff.config}: unchanged ({config_diff.new_rows} rows)")
    if not any(d.summary() for d in diff.configs) and diff.old_version == diff.new_version:
        lines.append("no record changed and the versions are equal: these are the same release")
        return "\n".join(lines)
    needed = f"required bump: {diff.bump.upper()} (v{diff.old_version} -> at least v{diff.minimum_version})"
    if diff.proposed_version == diff.new_version:
        lines.append(f"{needed}; {new} is v{diff.new_version}, which meets it: proposed version {diff.new_version}")
    else:
        lines.append(f"{needed} -> proposed version {diff.proposed_version}")
        repo_id = load_manifest(new).get("repo_id")
        repo_option = ("--repo-id", repo_id) if repo_id else ()
        lines.append(
            f"warning: {new} is labelled v{diff.new_version}, too small; rebuild it: "
            f"`{build_command(new, '--previous', str(old), '--version', diff.proposed_version, *repo_option)}`"
        )
    return "\n".join(lines)


def changelog_entries(manifest: dict[str, Any], previous: str | Path | None, staging: Path) -> list[dict[str, Any]]:
    """The changelog of the build in ``staging``: a new entry on top of the previous build's."""
    if previous is None:
        return history_entries(manifest["dataset_version"])
    diff = diff_builds(previous, staging, new_manifest=manifest)
    check_version(diff, manifest["dataset_version"])
    entry = {
        "version": manifest["dataset_version"],
        "previous_version": diff.old_version,
        "bump": diff.bump,
        "changes": diff.summary(),
    }
    return [entry, *load_manifest(previous).get("changelog", [])]


def released_history() -> list[dict[str, Any]]:
    """The released versions and why each was needed (cards/changelog.yaml), newest first."""
    return yaml.safe_load(resources.files("cogbench.cards").joinpath("changelog.yaml").read_text(encoding="utf-8"))


def history_entries(version: str) -> list[dict[str, Any]]:
    """The changelog of a build made without ``--previous``: the shipped history up to ``version``."""
    known = [entry for entry in released_history() if parse_version(entry["version"]) <= parse_version(version)]
    if known and known[0]["version"] == version:
        return known
    if not known:
        return [{"version": version, "changes": ["first release"]}]
    note = f"built without --previous: the changes since v{known[0]['version']} are not listed"
    return [{"version": version, "changes": [note]}, *known]
