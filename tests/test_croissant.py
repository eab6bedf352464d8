"""croissant.json of a real build: mlcroissant loads every config and its records equal load_dataset's."""

from __future__ import annotations

import hashlib
import json
import shutil

import datasets
import mlcroissant as mlc

from cogbench.dataset_builders.croissant import CROISSANT_FILE, NOT_DESCRIBED
from cogbench.dataset_builders.load import load_config
from cogbench.dataset_builders.output import MARKER_FILE
from cogbench.validation import validate


def plain(value):
    """mlcroissant's values as load_dataset gives them: text as str, images as (size, pixels)."""
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, list):
        return [plain(item) for item in value]
    if hasattr(value, "tobytes"):
        return (value.size, value.convert("RGB").tobytes())
    return value


def test_croissant_records_equal_load_dataset_for_every_config(built_release):
    path = built_release / CROISSANT_FILE
    manifest = json.loads((built_release / "manifest.json").read_text())
    assert manifest["metadata_files"] == [CROISSANT_FILE, "eval.yaml", "metadata.json"]
    marker = json.loads((built_release / MARKER_FILE).read_text())
    assert marker["sha256"][CROISSANT_FILE] == hashlib.sha256(path.read_bytes()).hexdigest()
    metadata = json.loads(path.read_text())
    shards = {entry["contentUrl"]: entry["sha256"] for entry in metadata["distribution"] if "sha256" in entry}
    assert shards == {
        name: hashlib.sha256((built_release / name).read_bytes()).hexdigest()
        for name in [p.relative_to(built_release).as_posix() for p in built_release.glob("data/*/*.parquet")]
        + ["fingerprints.parquet"]
    }
    assert "rai:dataCollection" in metadata and "Pinterest" in metadata["rai:dataCollection"]
    assert "song2025cogbench" in metadata["citeAs"] and "luo2024codis" in metadata["citeAs"]

    dataset = mlc.Dataset(jsonld=str(path))
    assert not dataset.metadata.issues.errors
    for config in sorted(manifest["configs"]):
        expected = load_config(str(built_release), config)
        records = list(dataset.records(config))
        assert len(records) == len(expected) == manifest["configs"][config]["rows"]
        described = [name for name in expected.column_names if name not in NOT_DESCRIBED.get(config, {})]
        for record, row in zip(records, expected):
            got = {key.split("/", 1)[1]: plain(value) for key, value in record.items()}
            assert got == {name: plain(row[name]) for name in described}, config
        for name, feature in expected.features.items():
            if isinstance(feature, datasets.ClassLabel):  # the class names, by index
                names = {
                    r[f"{config}_{name}/index"]: plain(r[f"{config}_{name}/name"])
                    for r in dataset.records(f"{config}_{name}")
                }
                assert names == dict(enumerate(feature.names))
    # the fingerprints' record set: its scalar columns as pyarrow reads them
    import pyarrow.parquet as pq

    prints = pq.read_table(built_release / "fingerprints.parquet").to_pylist()
    records = [{k.split("/", 1)[1]: plain(v) for k, v in r.items()} for r in dataset.records("fingerprints")]
    assert records == [{name: row[name] for name in records[0]} for row in prints]
    assert "pdq" in records[0] and "pdq_dihedral" not in records[0]


def test_validate_finds_an_edited_croissant_file(built_release, tmp_path):
    folder = shutil.copytree(built_release, tmp_path / "build")
    metadata = json.loads((folder / CROISSANT_FILE).read_text())
    metadata["license"] = ["https://creativecommons.org/publicdomain/zero/1.0/"]
    (folder / CROISSANT_FILE).write_text(json.dumps(metadata, indent=2))
    codes = {finding.code for finding in validate(folder).findings}
    assert {"croissant.mismatch", "files.edited"} <= codes
    (folder / CROISSANT_FILE).unlink()
    assert "files.missing" in {finding.code for finding in validate(folder).findings}


def test_croissant_licence_is_per_config(built_release):
    metadata = json.loads((built_release / CROISSANT_FILE).read_text())
    licences = {entry["@id"]: entry["license"] for entry in metadata["distribution"] if entry["@type"] == "cr:FileSet"}
    assert licences["codis-shards"] == "https://www.apache.org/licenses/LICENSE-2.0"
    assert licences["vqa-shards"] == licences["description-shards"]
    assert licences["vqa-shards"].startswith("CogBench data use agreement")
