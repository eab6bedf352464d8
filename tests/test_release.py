"""Cards, versions and diffs of built releases (publishing: test_publish.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import REPO_ROOT, needs_real_data
from huggingface_hub import DatasetCard

from cogbench.cards.card import card_metadata, render_card
from cogbench.cards.release import build_release
from cogbench.cards.versions import bump_version, diff_builds, released_history
from cogbench.cli import main
from cogbench.dataset_builders.build import load_manifest
from cogbench.errors import UsageError
from cogbench.schemas.features import COGBENCH_CATEGORIES, FEATURES

from release_helpers import copy_real_raw
from validation_helpers import edit_json

EXAMPLE_CARD = REPO_ROOT / "cards" / "examples" / "README.md"


def test_card_yaml_matches_the_manifest(built_release):
    manifest = load_manifest(built_release)
    card = DatasetCard.load(built_release / "README.md")
    data = card.data.to_dict()
    assert [c["config_name"] for c in data["configs"]] == sorted(manifest["configs"])
    for info in data["dataset_info"]:
        entry = manifest["configs"][info["config_name"]]
        assert info["splits"] == [{"name": "test", "num_bytes": entry["num_bytes"], "num_examples": entry["rows"]}]
        assert info["download_size"] == sum(shard["bytes"] for shard in entry["shards"].values())
        assert [f["name"] for f in info["features"]] == list(FEATURES[info["config_name"]])
    assert data["license"] == ["apache-2.0", "other"]
    assert data["license_name"] == "cogbench-data-use-agreement"
    assert "non-commercial research and educational purposes" in data["extra_gated_prompt"]
    assert data["extra_gated_fields"]["Affiliation"] == "text"
    assert data["size_categories"] == ["n<1K"]
    assert f'"v{manifest["dataset_version"]}"' in card.text and "revision=REVISION" in card.text
    for config, entry in manifest["configs"].items():
        assert f"| `{config}` |" in card.text and f"| {entry['rows']} |" in card.text


@needs_real_data
def test_committed_example_card_is_the_card_of_the_real_build(built_release):
    """cards/examples/README.md must be regenerated when the card or data change:
    cogbench build --raw-dir ../shared/data --out /tmp/x && cp /tmp/x/README.md cards/examples/README.md"""
    assert (built_release / "README.md").read_text() == EXAMPLE_CARD.read_text(), (
        "cards/examples/README.md is stale; regenerate it"
    )


@needs_real_data
def test_card_statistics_come_from_the_manifest(built_release):
    manifest = load_manifest(built_release)
    manifest["configs"]["vqa"]["counts"]["per_category"]["time"] = 999
    assert "| time | 999 |" in render_card(manifest)
    assert "| time | 999 |" not in (built_release / "README.md").read_text()


def test_every_column_and_category_has_a_meaning():
    meta = card_metadata()
    assert {config: set(columns) for config, columns in meta["columns"].items()} == {
        config: set(features) for config, features in FEATURES.items()
    }
    assert set(meta["category_definitions"]) == set(COGBENCH_CATEGORIES)


def test_codis_only_release_is_apache_and_not_gated(built_release):
    manifest = load_manifest(built_release)
    manifest["configs"] = {"codis": manifest["configs"]["codis"]}
    card = DatasetCard(render_card(manifest))
    assert card.data.license == "apache-2.0"
    assert card.data.to_dict().get("extra_gated_prompt") is None
    assert "gated" not in card.text


def test_bump_version():
    assert [bump_version("1.4.2", b) for b in ("patch", "minor", "major")] == ["1.4.3", "1.5.0", "2.0.0"]


# --- diffs on mutated copies of the real data ---------------------------------


@pytest.fixture
def raw_copy(real_raw_dir, tmp_path) -> Path:
    return copy_real_raw(real_raw_dir, tmp_path / "raw")


def test_identical_builds_need_only_a_patch(raw_copy, built_release, tmp_path):
    new = build_release(raw_copy, tmp_path / "new", version="2.0.1").out
    diff = diff_builds(built_release, new)
    assert diff.bump == "patch" and diff.proposed_version == "2.0.1"
    assert diff.summary() == ["no record changed (card or metadata only)"]


def test_added_question_is_minor(raw_copy, built_release, tmp_path):
    def add(data):
        data.append(dict(data[0], question="Which season is it?", category="time"))

    edit_json(raw_copy / "cogbench-samples" / "cogbench_vqa.json", add)
    diff = diff_builds(built_release, build_release(raw_copy, tmp_path / "new", version="2.1.0").out)
    vqa = next(d for d in diff.configs if d.config == "vqa")
    assert len(vqa.added) == 1 and not vqa.removed and not vqa.changed
    assert vqa.category_counts == {"time": (3, 4)}
    assert (diff.bump, diff.proposed_version) == ("minor", "2.1.0")


def test_removed_and_changed_records_are_major(raw_copy, built_release, tmp_path):
    def edit(data):
        pairs = {pair["id"]: pair for pair in data}
        pairs["010"]["answer"]["answer_2"] = "Something else."
        assert pairs["011"]["category"] != "Attributes"
        pairs["011"]["category"] = "Attributes"
        data.remove(pairs["005"])

    edit_json(raw_copy / "codis" / "data.json", edit)
    diff = diff_builds(built_release, build_release(raw_copy, tmp_path / "new", version="3.0.0").out)
    codis = next(d for d in diff.configs if d.config == "codis")
    assert codis.removed == ["005"]
    assert codis.changed == {"010": ["answer_2"], "011": ["category"]}
    assert codis.category_counts["Attributes"][1] - codis.category_counts["Attributes"][0] == 1
    assert diff.bump == "major"
    assert "codis: 1 record(s) removed: 005" in diff.summary()


def test_replaced_image_bytes_are_a_change(raw_copy, built_release, tmp_path):
    image = raw_copy / "cogbench-samples" / "images" / "cookie_theft.jpg"
    image.write_bytes(image.read_bytes() + b"\0")  # same name, different bytes
    diff = diff_builds(built_release, build_release(raw_copy, tmp_path / "new", version="3.0.0").out)
    changed = {d.config: d.changed for d in diff.configs}
    assert changed["description"] == {"cookie_theft": ["image"]}
    assert all(columns == ["image"] for columns in changed["vqa"].values()) and len(changed["vqa"]) > 0


def test_removed_config_is_major(raw_copy, built_release, tmp_path):
    shutil.rmtree(raw_copy / "codis")
    diff = diff_builds(built_release, build_release(raw_copy, tmp_path / "new", version="3.0.0").out)
    assert diff.bump == "major"
    assert "codis: config removed (had 353 rows)" in diff.summary()


def test_build_with_previous_writes_changelog_and_refuses_too_small_version(raw_copy, built_release, tmp_path, capsys):
    edit_json(raw_copy / "codis" / "data.json", lambda data: data.pop(0))
    out = tmp_path / "v2"
    argv = ["build", "--raw-dir", str(raw_copy), "--out", str(out), "--previous", str(built_release)]
    assert main([*argv, "--version", "2.1.0"]) == 2
    err = capsys.readouterr().err
    assert "version 2.1.0 is too small" in err and "MAJOR" in err and "--version 3.0.0" in err
    assert not out.exists()

    assert main([*argv, "--version", "3.0.0"]) == 0
    changelog = load_manifest(out)["changelog"]
    assert changelog[0] == {
        "version": "3.0.0",
        "previous_version": "2.0.0",
        "bump": "major",
        "changes": ["codis: 1 record(s) removed: 000", "codis: counts per category: Location and Orientation 84 -> 83"],
    }
    assert changelog[1:] == released_history()  # carried from the previous build (2.0.0, then 1.0.0)
    card = (out / "README.md").read_text()
    assert "### v3.0.0 (MAJOR over 2.0.0)\n\n- codis: 1 record(s) removed: 000" in card
    assert card.index("### v3.0.0") < card.index("### v2.0.0")

    # A patch on top keeps the whole history.
    third = build_release(raw_copy, tmp_path / "v3", version="3.0.1", previous=out).manifest
    assert [entry["version"] for entry in third["changelog"]] == ["3.0.1", "3.0.0", "2.0.0", "1.0.0"]


def test_cli_diff_text_and_json(raw_copy, built_release, tmp_path, capsys):
    edit_json(raw_copy / "cogbench-samples" / "cogbench_vqa.json", lambda data: data[0].update(answer="B"))
    new = build_release(raw_copy, tmp_path / "new", version="2.0.1").out
    assert main(["diff", str(built_release), str(new)]) == 0
    out = capsys.readouterr().out
    assert "vqa: 1 record(s) changed: " in out and "(answer)" in out
    assert "required bump: MAJOR (v2.0.0 -> at least v3.0.0) -> proposed version 3.0.0" in out
    assert f"warning: {new} is labelled v2.0.1, too small; rebuild it: `cogbench build " in out
    assert f"--out {new} --previous {built_release} --version 3.0.0`" in out  # the whole command (issue 32)
    assert main(["diff", str(built_release), str(new), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["bump"] == "major" and data["proposed_version"] == "3.0.0" and data["minimum_version"] == "3.0.0"


def test_diff_never_proposes_a_version_below_the_new_build(raw_copy, tmp_path, capsys):
    """Issue 24.5: a 2.0.0 build over 1.0.0 with a record added needs MINOR (>= 1.1.0), not a step back to 1.1.0."""
    old = build_release(raw_copy, tmp_path / "old", version="1.0.0").out
    edit_json(
        raw_copy / "cogbench-samples" / "cogbench_vqa.json",
        lambda data: data.append(dict(data[0], question="Which season?")),
    )
    new = build_release(raw_copy, tmp_path / "new", version="2.0.0").out
    assert main(["diff", str(old), str(new)]) == 0
    out = capsys.readouterr().out
    assert (
        f"required bump: MINOR (v1.0.0 -> at least v1.1.0); {new} is v2.0.0, which meets it: proposed version 2.0.0"
        in out
    )
    assert "1.1.0 ->" not in out and "warning" not in out
    assert main(["diff", str(old), str(new), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["bump"], data["minimum_version"], data["proposed_version"]) == ("minor", "1.1.0", "2.0.0")


def test_diff_of_a_folder_that_is_not_a_build(built_release, tmp_path, capsys):
    assert main(["diff", str(built_release), str(tmp_path)]) == 2
    assert "is not a cogbench build" in capsys.readouterr().err


def test_build_refuses_a_previous_that_is_not_a_build(raw_copy, tmp_path):
    with pytest.raises(Exception, match="not a cogbench build"):
        build_release(raw_copy, tmp_path / "out", previous=tmp_path)
    assert not (tmp_path / "out").exists()


def test_version_must_grow_even_without_changes(raw_copy, built_release, tmp_path):
    with pytest.raises(UsageError, match="--version 2.0.1"):
        build_release(raw_copy, tmp_path / "out", version="2.0.0", previous=built_release)


def test_build_with_a_missing_previous_fails_before_reading_the_raw_data(tmp_path, capsys):
    """Issue 32 item 7: the wrong --previous is named at once (raw data that does not exist is not even looked at)."""
    argv = ["build", "--raw-dir", str(tmp_path / "no-raw"), "--out", str(tmp_path / "new"), "--previous"]
    assert main([*argv, str(tmp_path / "nope")]) == 2
    assert capsys.readouterr().err == (
        f"error: --previous {tmp_path / 'nope'}: not a cogbench build (no manifest.json); give the last release's build\n"
    )
    assert not (tmp_path / "new").exists()
