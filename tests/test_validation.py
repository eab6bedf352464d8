"""Validation of built releases, the CLI, the build gate and the chi-square helper."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from cogbench.cards.release import build_release
from cogbench.cli import main
from cogbench.validation import CHECKS, ValidationFailed, validate
from cogbench.validation.checks import chi_square_sf

from validation_helpers import copy_codis, copy_samples, edit_json


@pytest.fixture
def built_samples(real_raw_dir, tmp_path) -> Path:
    return build_release(copy_samples(real_raw_dir, tmp_path / "raw"), tmp_path / "out").out


def test_built_release_validates_through_load_dataset(built_release):
    report = validate(built_release)
    assert report.kind == "built" and report.ok, [str(f) for f in report.errors]
    assert report.stats["images"]["decoded"] > 0


def test_built_record_violating_its_schema(built_samples):
    shard = next((built_samples / "data" / "vqa").glob("*.parquet"))
    table = pq.read_table(shard)
    table = table.set_column(
        table.schema.get_field_index("question"), "question", pa.array(["", *table["question"].to_pylist()[1:]])
    )
    pq.write_table(table, shard)
    errors = validate(built_samples, expected=None).errors
    assert [(f.code, f.file, f.field) for f in errors if CHECKS[f.code][0] != "release"] == [
        ("schema.built", "vqa", "question")
    ]
    assert {f.code for f in errors if CHECKS[f.code][0] == "release"} >= {
        "files.hash_mismatch"
    }  # the shard was rewritten


def test_built_config_that_cannot_load(built_samples):
    for shard in (built_samples / "data" / "vqa").glob("*.parquet"):
        shard.write_bytes(b"not parquet")
    errors = validate(built_samples, expected=None).errors
    assert {(f.code, f.file) for f in errors if CHECKS[f.code][0] != "release"} == {("schema.unloadable", "vqa")}
    assert ("files.hash_mismatch", "data/vqa/test-00000-of-00001.parquet") in {(f.code, f.file) for f in errors}


def test_build_refuses_raw_data_with_validation_errors(real_raw_dir, tmp_path):
    root = copy_codis(real_raw_dir, tmp_path / "raw", keep=5)
    edit_json(
        root / "codis" / "data.json", lambda pairs: pairs[2]["answer"].update(answer_2=pairs[2]["answer"]["answer_1"])
    )
    with pytest.raises(ValidationFailed, match="pairs.same_answer: codis/data.json: record 002"):
        build_release(root, tmp_path / "out")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["raw"]


def test_build_refuses_an_output_that_users_could_not_load(real_raw_dir, tmp_path):
    root = copy_codis(real_raw_dir, tmp_path / "raw", keep=5)
    broken_card = lambda manifest: "---\nconfigs:\n- config_name: codis\n  data_files: nowhere/*.parquet\n---\n"  # noqa: E731
    with pytest.raises(ValidationFailed, match="schema.unloadable: codis"):
        build_release(root, tmp_path / "out", render_card=broken_card)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["raw"]


def test_codis_repeated_questions_are_info_only(real_raw_dir):
    report = validate(real_raw_dir / "codis", expected="codis-1.0")
    assert report.ok and not report.warnings
    repeated = [f for f in report.findings if f.code == "identity.repeated_question"]
    assert len(repeated) == 45 and all(f.severity == "info" for f in repeated)
    assert len(report.stats["codis_context_similarity"]["per_pair"]) == 353


def test_no_fitting_expected_counts_is_said(synthetic_raw):
    report = validate(synthetic_raw / "codis")  # folder named codis but only 4 pairs: auto picks CODIS 1.0
    assert {f.code for f in report.errors} == {"counts.mismatch"}
    renamed = synthetic_raw / "codis-subset"
    (synthetic_raw / "codis").rename(renamed)
    assert [f.code for f in validate(renamed).findings] == ["counts.not_checked"]
    assert validate(renamed, expected=None).findings == []


def test_cli_exit_codes_and_json(real_raw_dir, tmp_path, capsys):
    assert main(["validate", str(real_raw_dir / "cogbench-samples")]) == 0
    text = capsys.readouterr().out
    assert "[options]" in text and text.rstrip().endswith("OK: 0 error(s), 9 warning(s), 0 info")
    assert main(["validate", str(real_raw_dir / "cogbench-samples"), "--strict"]) == 1
    capsys.readouterr()
    root = copy_codis(real_raw_dir, tmp_path / "raw", keep=3)
    edit_json(root / "codis" / "data.json", lambda pairs: pairs[1].update(image_id="../../etc/passwd"))
    assert main(["validate", str(root), "--expected", "none", "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False
    assert [(f["code"], f["record"], f["field"]) for f in report["findings"] if f["severity"] == "error"] == [
        ("image.unsafe_id", "001", "image_id")
    ]
    assert main(["validate", str(root), "--expected", "no-such-release"]) == 2
    assert main(["validate", str(tmp_path / "missing")]) == 2


@pytest.mark.parametrize(
    "statistic, degrees", [(0.0, 3), (3.125, 3), (11.34, 3), (40.0, 3), (5.0, 1), (7.0, 2), (9.5, 4)]
)
def test_chi_square_survival_matches_scipy(statistic, degrees):
    stats = pytest.importorskip("scipy.stats")
    assert chi_square_sf(statistic, degrees) == pytest.approx(stats.chi2.sf(statistic, degrees), rel=1e-9, abs=1e-15)
