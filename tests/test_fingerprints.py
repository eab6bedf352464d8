"""Issue 51, part 1: fingerprints.parquet in every build, checked by validate, named in card and Croissant.

The hashes are pinned against the libraries' own functions called here on the image file, with the
canonical steps written out again with Pillow (not through cogbench's code), and the sha256 against
hashlib on the raw file.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys

import imagehash
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image

from cogbench.cards.publish import check_build
from cogbench.cards.release import build_release
from cogbench.dataset_builders.fingerprints import DIHEDRAL, FINGERPRINT_FILE
from cogbench.dataset_builders.output import MARKER_FILE
from cogbench.errors import UsageError
from cogbench.validation import validate
from cogbench.validation.integrity import BuildNotVerified, verify_build

from validation_helpers import copy_samples

pdqhash = pytest.importorskip("pdqhash", reason="PDQ needs the fingerprints extra (pip install -e '.[fingerprints]')")


@pytest.fixture(scope="module")
def small_build(real_raw_dir, tmp_path_factory):
    raw = copy_samples(real_raw_dir, tmp_path_factory.mktemp("raw"))
    return raw, build_release(raw, tmp_path_factory.mktemp("build") / "out").out


def canonical_by_hand(path):
    """The documented canonical form, written with Pillow directly: draft, RGB, bicubic thumbnail to 256."""
    image = Image.open(path)
    image.draft("RGB", (256, 256))
    image = image.convert("RGB")
    image.thumbnail((256, 256), Image.Resampling.BICUBIC, reducing_gap=None)
    return image


def test_each_image_has_one_row_whose_hashes_are_the_libraries_own(small_build):
    raw, build = small_build
    rows = pq.read_table(build / FINGERPRINT_FILE).to_pylist()
    images = sorted((raw / "cogbench-samples" / "images").iterdir())
    assert [(r["benchmark"], r["image_file"]) for r in rows] == [("cogbench", p.name) for p in images]
    assert all(r["configs"] == ["description", "vqa"] for r in rows)
    for row, path in zip(rows, images):
        assert row["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
        assert (row["width"], row["height"]) == Image.open(path).size
        image = canonical_by_hand(path)
        assert row["phash"] == str(imagehash.phash(image.convert("L")))
        assert row["dhash"] == str(imagehash.dhash(image.convert("L")))
        assert row["whash"] == str(imagehash.whash(image.convert("L"), image_scale=64))
        vectors, quality = pdqhash.compute_dihedral(np.asarray(image))
        assert row["pdq_dihedral"] == [np.packbits(v.astype(np.uint8)).tobytes().hex() for v in vectors]
        assert row["pdq"] == row["pdq_dihedral"][0] and row["pdq_quality"] == quality
    # one value pinned outright, so that a change of library or canonical form shows here
    assert rows[0]["phash"] == str(imagehash.phash(canonical_by_hand(images[0]).convert("L")))


def test_the_dihedral_names_follow_pdqhash_order(real_raw_dir):
    image = canonical_by_hand(sorted((real_raw_dir / "cogbench-samples" / "images").iterdir())[0])
    vectors, _ = pdqhash.compute_dihedral(np.asarray(image))
    shown = {
        "horizontal flip": Image.Transpose.FLIP_LEFT_RIGHT,
        "vertical flip": Image.Transpose.FLIP_TOP_BOTTOM,
        "rotate 180": Image.Transpose.ROTATE_180,
        "transpose": Image.Transpose.TRANSPOSE,
    }
    for name, transpose in shown.items():
        plain, _ = pdqhash.compute(np.asarray(image.transpose(transpose)))
        distances = [int((plain != vector).sum()) for vector in vectors]
        assert distances.index(min(distances)) == DIHEDRAL.index(name), (name, distances)


def test_manifest_card_and_croissant_name_the_file(small_build):
    _, build = small_build
    manifest = json.loads((build / "manifest.json").read_text())
    entry = manifest["fingerprints"]
    digest = hashlib.sha256((build / FINGERPRINT_FILE).read_bytes()).hexdigest()
    assert entry["sha256"] == digest and entry["rows"] == 5
    assert entry["families"] == ["phash", "dhash", "whash", "pdq"]
    card = (build / "README.md").read_text()
    assert "## Fingerprints" in card and "`fingerprints.parquet` holds one row per image (5 images)" in card
    croissant = json.loads((build / "croissant.json").read_text())
    (file_object,) = [d for d in croissant["distribution"] if d["@id"] == FINGERPRINT_FILE]
    assert file_object["sha256"] == digest
    (record_set,) = [r for r in croissant["recordSet"] if r["@id"] == "fingerprints"]
    assert [f["name"] for f in record_set["field"]][-3:] == ["whash", "pdq", "pdq_quality"]
    assert FINGERPRINT_FILE in json.loads((build / MARKER_FILE).read_text())["files"]


def tampered(build, tmp_path, edit):
    copy = tmp_path / "copy"
    shutil.copytree(build, copy)
    table = pq.read_table(copy / FINGERPRINT_FILE)
    pq.write_table(edit(table), copy / FINGERPRINT_FILE, compression="zstd")
    return copy


def with_phash(table, index, value):
    column = table.column("phash").to_pylist()
    column[index] = value
    return table.set_column(table.schema.get_field_index("phash"), table.schema.field("phash"), pa.array(column))


def test_a_tampered_fingerprint_file_fails_validate_and_use(small_build, tmp_path):
    _, build = small_build
    copy = tampered(build, tmp_path, lambda t: with_phash(t, 0, "0" * 16))
    codes = [f.code for f in validate(copy).errors]
    assert "files.hash_mismatch" in codes and "fingerprints.mismatch" in codes
    with pytest.raises(BuildNotVerified, match="fingerprints.parquet"):
        verify_build(copy)


def test_a_file_that_agrees_with_its_manifest_is_still_checked_against_the_images(small_build, tmp_path):
    """The manifest's sha256 rewritten to the edited file (marker too): the recomputed pHash still differs."""
    _, build = small_build
    rows = pq.read_table(build / FINGERPRINT_FILE)
    true = rows.column("phash")[1].as_py()
    flipped = f"{int(true, 16) ^ 1:016x}"  # one bit: the smallest change
    copy = tampered(build, tmp_path, lambda t: with_phash(t, 1, flipped))
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["fingerprints"]["sha256"] = hashlib.sha256((copy / FINGERPRINT_FILE).read_bytes()).hexdigest()
    manifest["fingerprints"]["bytes"] = (copy / FINGERPRINT_FILE).stat().st_size
    (copy / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    found = [f for f in validate(copy, expected=None).errors if f.code == "fingerprints.mismatch"]
    assert [(f.record, f.field) for f in found] == [(rows.column("image_id")[1].as_py(), "phash")]
    assert f"{flipped}, recomputed {true}" in found[0].message


def rehashed(copy):
    """The manifest (and so the marker's view of it) made to agree with an edited fingerprint file."""
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["fingerprints"]["sha256"] = hashlib.sha256((copy / FINGERPRINT_FILE).read_bytes()).hexdigest()
    manifest["fingerprints"]["bytes"] = (copy / FINGERPRINT_FILE).stat().st_size
    (copy / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return [(f.record, f.message) for f in validate(copy, expected=None).errors if f.code == "fingerprints.mismatch"]


def test_a_missing_or_doubled_row_is_found(small_build, tmp_path):
    _, build = small_build
    ids = pq.read_table(build / FINGERPRINT_FILE).column("image_id").to_pylist()
    dropped = tampered(build, tmp_path / "a", lambda t: t.slice(1))
    assert rehashed(dropped) == [(ids[0], "cogbench image of the shards has no row")]
    doubled = tampered(build, tmp_path / "b", lambda t: pa.concat_tables([t, t.slice(2, 1)]))
    assert rehashed(doubled) == [(ids[2], "cogbench image listed twice")]


def test_the_untouched_build_validates_clean(small_build):
    _, build = small_build
    assert list(validate(build).errors) == []


def test_publish_refuses_a_build_without_pdq(small_build):
    _, build = small_build
    manifest = json.loads((build / "manifest.json").read_text())
    manifest["repo_id"] = "org/name"
    manifest["fingerprints"]["families"] = ["phash", "dhash", "whash"]
    with pytest.raises(UsageError, match=r"has no pdq hashes .* install the `fingerprints` extra"):
        check_build(build, manifest, "org/name", manifest["dataset_version"])


def test_the_command_prints_and_exports_them(small_build, tmp_path, capsys):
    _, build = small_build
    shown = subprocess.run(
        [sys.executable, "-m", "cogbench", "fingerprints", str(build), "--format", "jsonl"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert shown.returncode == 0, shown.stderr
    rows = [json.loads(line) for line in shown.stdout.splitlines()]
    assert rows == pq.read_table(build / FINGERPRINT_FILE).to_pylist()
    (tmp_path / "not-a-build").mkdir()
    (tmp_path / "not-a-build" / "x").write_text("x")
    from cogbench.cli import main

    assert main(["fingerprints", str(tmp_path / "not-a-build")]) == 1
    assert capsys.readouterr().err.startswith("error: ")
    assert main(["fingerprints", str(build), "--format", "text"]) == 0
    lines = capsys.readouterr().out.splitlines()
    first = pq.read_table(build / FINGERPRINT_FILE).to_pylist()[0]
    assert lines[0].startswith("5 images, families phash, dhash, whash, pdq")
    assert lines[1].startswith(f"cogbench/{first['image_id']} sha256={first['sha256'][:16]} phash={first['phash']}")
