"""Issue 51, part 2: `cogbench leak-scan` over an image folder, WebDataset tar shards, Parquet with images and
Parquet of hashes, every copy and every distractor made here (nothing downloaded).

The distances are checked against Hamming distances computed here from the hex hashes (``int(a, 16) ^ int(b, 16)``);
the thresholds at their boundary with hash Parquet rows whose bits were flipped by hand.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tarfile

import imagehash
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image, ImageOps

from cogbench.cards.release import build_release
from cogbench.dataset_builders.fingerprints import FINGERPRINT_FILE
from cogbench.errors import UsageError
from cogbench.reference_eval.contamination.calibration import distractors
from cogbench.reference_eval.contamination.leak_report import as_json, as_markdown
from cogbench.reference_eval.contamination.scan import leak_scan
from cogbench.reference_eval.contamination.thresholds import THRESHOLDS

from validation_helpers import copy_samples

pytest.importorskip("faiss", reason="leak-scan needs the leak-scan extra (pip install -e '.[leak-scan]')")
pytest.importorskip("pdqhash", reason="PDQ needs the fingerprints extra (pip install -e '.[fingerprints]')")


def jpeg(image: Image.Image, quality: int = 90) -> bytes:
    buffer = io.BytesIO()
    image.convert("RGB").save(buffer, format="JPEG", quality=quality)
    return buffer.getvalue()


@pytest.fixture(scope="module")
def build(real_raw_dir, tmp_path_factory):
    raw = copy_samples(real_raw_dir, tmp_path_factory.mktemp("raw"))
    return build_release(raw, tmp_path_factory.mktemp("build") / "out").out


@pytest.fixture(scope="module")
def prints(build):
    return pq.read_table(build / FINGERPRINT_FILE).to_pylist()


@pytest.fixture(scope="module")
def corpus_files(real_raw_dir, prints):
    """Three copies of benchmark images (JPEG q40, mirrored, half size), twelve distractors, one broken file."""
    images = real_raw_dir / "cogbench-samples" / "images"
    originals = [Image.open(images / prints[i]["image_file"]).convert("RGB") for i in range(3)]
    files = {
        "a/copy-q40.jpg": jpeg(originals[0], 40),
        "a/mirrored.png": _png(ImageOps.mirror(originals[1])),
        "b/half.jpg": jpeg(originals[2].resize((originals[2].width // 2, originals[2].height // 2))),
        "b/broken.jpg": b"not an image",
    }
    files |= {f"c/other-{i:02d}.jpg": jpeg(image) for i, image in enumerate(distractors(12, seed=7))}
    return files


def _png(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def expected_hits(prints):
    return {
        prints[0]["image_id"]: "a/copy-q40.jpg",
        prints[1]["image_id"]: "a/mirrored.png",
        prints[2]["image_id"]: "b/half.jpg",
    }


def found(result) -> dict[str, list[str]]:
    return {image.image_id: [m.corpus for m in image.matches] for image in result.flagged}


def test_a_folder_scan_finds_the_three_copies_and_nothing_else(tmp_path, build, prints, corpus_files):
    for name, data in corpus_files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    result = leak_scan([tmp_path], build)
    assert found(result) == {image: [path] for image, path in expected_hits(prints).items()}
    assert (result.scanned, result.unreadable, result.unreadable_examples) == (15, 1, ["b/broken.jpg"])
    by_id = {image.image_id: image.matches[0] for image in result.flagged}
    assert by_id[prints[1]["image_id"]].resembles == "horizontal flip"
    # every family's distance is the Hamming distance of the two hex hashes, recomputed here with imagehash
    copy = Image.open(io.BytesIO(corpus_files["a/copy-q40.jpg"]))
    copy.draft("RGB", (256, 256))
    copy = copy.convert("RGB")
    copy.thumbnail((256, 256), Image.Resampling.BICUBIC, reducing_gap=None)
    mine = str(imagehash.phash(copy.convert("L")))
    assert by_id[prints[0]["image_id"]].distances["phash"] == (int(mine, 16) ^ int(prints[0]["phash"], 16)).bit_count()
    text = as_markdown(result)
    assert f"| cogbench/{prints[1]['image_id']} | `a/mirrored.png` |" in text and "horizontal flip" in text
    assert as_json(result)["flagged_images"] == 3


def test_tar_shards_and_parquet_images_give_the_same_matches(tmp_path, build, prints, corpus_files):
    shard = tmp_path / "shard-000.tar"
    with tarfile.open(shard, "w") as tar:
        for name, data in corpus_files.items():
            member = tarfile.TarInfo(name.replace("/", "_"))
            member.size = len(data)
            tar.addfile(member, io.BytesIO(data))
    rows = [{"key": name, "image": {"bytes": data, "path": name}} for name, data in corpus_files.items()]
    table = pa.Table.from_pylist(rows)
    pq.write_table(table, tmp_path / "corpus.parquet")
    result = leak_scan([shard, tmp_path / "corpus.parquet"], build)
    hits = expected_hits(prints)
    assert found(result) == {
        image: [f"shard-000.tar:{path.replace('/', '_')}", f"corpus.parquet:{path}"] for image, path in hits.items()
    }


def hash_parquet(path, rows):
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def flip_bits(hex_hash: str, count: int) -> str:
    width = len(hex_hash) * 4
    return f"{int(hex_hash, 16) ^ ((1 << count) - 1):0{width // 4}x}"


def test_a_hash_corpus_is_flagged_at_the_threshold_and_not_one_bit_beyond(tmp_path, build, prints):
    t = THRESHOLDS["phash"]
    target = prints[3]["phash"]
    rows = [
        {"key": "at-threshold", "phash": flip_bits(target, t)},
        {"key": "one-beyond", "phash": flip_bits(target, t + 1)},
        {"key": "complement", "phash": flip_bits(target, 64)},
    ]
    result = leak_scan([hash_parquet(tmp_path / "hashes.parquet", rows)], build)
    assert result.families == ["phash", "dhash", "whash", "pdq"] and result.scanned == 3
    matched = [(image.image_id, m.corpus, m.distances) for image in result.flagged for m in image.matches]
    assert (prints[3]["image_id"], "hashes.parquet:at-threshold", {"phash": t}) in matched
    assert not any(corpus.endswith("one-beyond") and image == prints[3]["image_id"] for image, corpus, _ in matched)


def test_pdq_dihedral_at_the_threshold(tmp_path, build, prints):
    t = THRESHOLDS["pdq"]
    mirrored = prints[4]["pdq_dihedral"][5]  # the horizontal flip's PDQ: a mirrored copy in the corpus
    rows = [{"key": "near", "pdq": flip_bits(mirrored, t)}, {"key": "far", "pdq": flip_bits(mirrored, t + 1)}]
    result = leak_scan([hash_parquet(tmp_path / "pdq.parquet", rows)], build)
    (image,) = [i for i in result.flagged if i.image_id == prints[4]["image_id"]]
    assert [(m.corpus, m.distances, m.resembles) for m in image.matches] == [
        ("pdq.parquet:near", {"pdq": t}, "horizontal flip")
    ]


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([{"key": "a", "phash": "xyz"}], "column phash: row 0: not 16 hex digits"),
        ([{"key": "a", "phash": "0" * 15 + "g"}], "column phash: row 0: not a hex digit"),
    ],
)
def test_a_bad_hash_corpus_is_one_usage_error(tmp_path, build, rows, message):
    with pytest.raises(UsageError, match=message):
        leak_scan([hash_parquet(tmp_path / "bad.parquet", rows)], build)


def test_what_is_not_a_corpus_is_refused_before_any_work(tmp_path, build):
    with pytest.raises(UsageError, match="no such file or folder"):
        leak_scan([tmp_path / "missing"], build)
    hash_parquet(tmp_path / "other.parquet", [{"text": "a"}])
    with pytest.raises(UsageError, match="neither an image column"):
        leak_scan([tmp_path / "other.parquet"], build)
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(UsageError, match="not a folder, a .tar shard"):
        leak_scan([tmp_path / "notes.txt"], build)


def test_the_command_exits_5_on_near_duplicates_and_0_when_clean(tmp_path, build, prints, corpus_files):
    dirty, clean = tmp_path / "dirty", tmp_path / "clean"
    dirty.mkdir()
    clean.mkdir()
    (dirty / "copy.jpg").write_bytes(corpus_files["a/copy-q40.jpg"])
    (clean / "other.jpg").write_bytes(corpus_files["c/other-00.jpg"])
    command = [sys.executable, "-m", "cogbench", "leak-scan", "--dataset", str(build)]
    shown = subprocess.run([*command, str(dirty), "--out", str(tmp_path / "r1")], capture_output=True, text=True)
    assert shown.returncode == 5, shown.stderr
    assert (
        shown.stdout.startswith("1 corpus images scanned")
        and f"cogbench/{prints[0]['image_id']}: 1 match" in shown.stdout
    )
    report = json.loads((tmp_path / "r1" / "leak-scan.json").read_text())
    assert report["matches"] == 1 and (tmp_path / "r1" / "leak-scan.html").is_file()
    from cogbench.cli import main

    assert main(["leak-scan", "--dataset", str(build), str(clean), "--out", str(tmp_path / "r2")]) == 0
    assert main(["leak-scan", "--dataset", str(build), str(tmp_path / "nothing"), "--out", str(tmp_path / "r3")]) == 2


def test_the_page_shows_both_images_in_the_site_style(tmp_path, build, prints, corpus_files):
    from cogbench.reference_eval.contamination.leak_report import as_html

    (tmp_path / "copy.jpg").write_bytes(corpus_files["a/copy-q40.jpg"])
    page = as_html(leak_scan([tmp_path], build))
    assert page.count('src="data:image/jpeg;base64,') == 2 and "--ink:#1b1b1b" in page
    assert f"cogbench/{prints[0]['image_id']}" in page and "near duplicate" in page
    assert np.isfinite(len(page))


def test_the_output_folder_is_cogbench_s_own_and_no_link_is_followed(tmp_path, build, corpus_files, capsys):
    from cogbench.cli import main

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "other.jpg").write_bytes(corpus_files["c/other-00.jpg"])
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    assert main(["leak-scan", str(corpus), "--dataset", str(build), "--out", str(foreign)]) == 2
    assert sorted(p.name for p in foreign.iterdir()) == ["notes.txt"]
    out = tmp_path / "out"
    assert main(["leak-scan", str(corpus), "--dataset", str(build), "--out", str(out)]) == 0
    outside = tmp_path / "outside.html"
    outside.write_text("untouched")
    (out / "leak-scan.html").unlink()
    (out / "leak-scan.html").symlink_to(outside)
    capsys.readouterr()
    assert main(["leak-scan", str(corpus), "--dataset", str(build), "--out", str(out)]) == 2
    assert capsys.readouterr().err.startswith("error: ") and outside.read_text() == "untouched"
