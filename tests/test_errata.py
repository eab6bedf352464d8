"""Errata (issue 41, item 3): `diff --errata` writes the changed fields of two real builds, `build --errata`
carries them into the manifest and the card after checking them against what it changed, and an edited
errata block is caught like any edit of the build."""

from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path

import pytest
from conftest import needs_real_data

from cogbench.cli import main
from cogbench.dataset_builders.build import load_manifest
from cogbench.validation.integrity import BuildNotVerified, verify_build

from release_helpers import copy_real_raw
from validation_helpers import edit_json

pytestmark = needs_real_data

OLD_ANSWER = "Taking off my clothes."  # CODIS 000's answer_2 in the authors' data.json
NEW_ANSWER = "Taking my clothes off."


def fix_one_answer(data: list[dict]) -> None:
    pair = next(pair for pair in data if pair["id"] == "000")
    assert pair["answer"]["answer_2"] == OLD_ANSWER
    pair["answer"]["answer_2"] = NEW_ANSWER


@pytest.fixture(scope="module")
def two_builds(real_raw_dir, built_release, tmp_path_factory) -> tuple[Path, Path, Path]:
    """(old build: the session's build of the real data at 2.0.0, read only; raw copy with CODIS 000's second answer
    changed; a build of it at 3.0.0)."""
    root = tmp_path_factory.mktemp("errata")
    raw = copy_real_raw(real_raw_dir, root / "raw")
    edit_json(raw / "codis" / "data.json", fix_one_answer)
    assert main(["build", "--raw-dir", str(raw), "--out", str(root / "draft"), "--version", "3.0.0"]) == 0
    return built_release, raw, root / "draft"


def test_diff_writes_the_changed_field_with_old_and_new_value_and_reason(two_builds, tmp_path, capsys):
    old, _, draft = two_builds
    notes = tmp_path / "notes.yaml"
    notes.write_text("'000': the second answer restated as the annotators' guideline asks\n")
    capsys.readouterr()
    assert main(["diff", str(old), str(draft), "--errata", str(tmp_path / "errata.json"), "--reasons", str(notes)]) == 0
    out = capsys.readouterr().out
    assert "codis: 1 record(s) changed: 000 (answer_2)" in out
    assert f"errata: 1 changed field(s) written to {tmp_path / 'errata.json'}" in out
    assert f"--previous {old} --errata {tmp_path / 'errata.json'}" in out
    errata = json.loads((tmp_path / "errata.json").read_text())
    assert errata == {
        "errata_format": 1,
        "old_version": "2.0.0",
        "new_version": "3.0.0",
        "items": [
            {
                "config": "codis",
                "id": "000",
                "field": "answer_2",
                "old": OLD_ANSWER,
                "new": NEW_ANSWER,
                "reason": "the second answer restated as the annotators' guideline asks",
            }
        ],
    }


def test_build_carries_the_errata_into_manifest_and_card_and_an_edit_is_caught(
    two_builds, tmp_path, capsys, monkeypatch
):
    old, raw, draft = two_builds
    out, errata = tmp_path / "new", tmp_path / "errata.json"
    shutil.copytree(draft, out)  # what `build --raw-dir RAW --out NEW --version 3.0.0` writes, built once
    verify_build(out)
    capsys.readouterr()
    # No COGBENCH_RAW_DIR: the hint names the raw folder `out` was built from, recorded in its build marker, not
    # the default one (./raw, absent here), and runs as printed (issue 48 item 9a).
    monkeypatch.delenv("COGBENCH_RAW_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    assert main(["diff", str(old), str(out), "--errata", str(errata)]) == 0
    hint = re.search(r"carry them into the build: `(cogbench build [^`]+)`", capsys.readouterr().out).group(1)
    assert shlex.split(hint)[2:4] == ["--raw-dir", str(raw)]
    assert main(shlex.split(hint)[1:]) == 0  # runs as printed: the same build again, with its errata
    assert "errata: 1 corrected field(s), on the card" in capsys.readouterr().out
    manifest = load_manifest(out)
    assert manifest["errata"]["items"] == [
        {"config": "codis", "id": "000", "field": "answer_2", "old": OLD_ANSWER, "new": NEW_ANSWER, "reason": None}
    ]
    card = (out / "README.md").read_text()
    assert "### Errata of v3.0.0 (over v2.0.0)" in card
    assert f'| `codis` | `000` | `answer_2` | "{OLD_ANSWER}" | "{NEW_ANSWER}" | not stated |' in card
    assert main(["validate", str(out)]) == 0
    verify_build(out)
    edit_json(out / "manifest.json", lambda m: m["errata"]["items"][0].update(new="Putting on my clothes."))
    with pytest.raises(BuildNotVerified, match=r"manifest.json.*changed after the build"):
        verify_build(out)


def test_build_refuses_errata_that_are_not_what_it_changed(two_builds, tmp_path, capsys):
    old, raw, draft = two_builds
    errata = tmp_path / "errata.json"
    assert main(["diff", str(old), str(draft), "--errata", str(errata)]) == 0
    edit_json(errata, lambda e: e["items"][0].update(new="Something else."))
    command = ["build", "--raw-dir", str(raw), "--out", str(tmp_path / "new"), "--version", "3.0.0"]
    capsys.readouterr()
    assert main([*command, "--previous", str(old), "--errata", str(errata)]) == 2
    err = capsys.readouterr().err
    assert "codis 000 field answer_2 changed from 'Taking off my clothes.' to 'Taking my clothes off.'" in err
    assert "the errata file says 'Taking off my clothes.' -> 'Something else.'" in err
    assert not (tmp_path / "new").exists()
    # An entry for a field the build did not change is refused too.
    edit_json(errata, lambda e: e["items"].append(dict(e["items"][0], id="001", new=NEW_ANSWER)))
    edit_json(errata, lambda e: e["items"][0].update(new=NEW_ANSWER))
    assert main([*command, "--previous", str(old), "--errata", str(errata)]) == 2
    assert "lists codis 001 field answer_2, which this build does not change" in capsys.readouterr().err


def test_errata_options_refused_in_one_line(two_builds, tmp_path, capsys):
    old, raw, draft = two_builds
    bad = tmp_path / "errata.json"
    bad.write_text(json.dumps({"errata_format": 1, "old_version": "2.0.0", "new_version": "3.0.0", "items": [{}]}))
    build = ["build", "--raw-dir", str(raw), "--out", str(tmp_path / "new"), "--version", "3.0.0"]
    assert main([*build, "--errata", str(bad)]) == 2
    assert "give it with --previous OLD" in capsys.readouterr().err
    assert main([*build, "--previous", str(old), "--errata", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"--errata {bad}: items.0: 'config' is a required property" in err and "Traceback" not in err
    assert main(["diff", str(old), str(draft), "--reasons", str(bad)]) == 2
    assert "give --errata FILE too" in capsys.readouterr().err
    (tmp_path / "notes.yaml").write_text("- a list, not a mapping\n")
    diff = ["diff", str(old), str(draft), "--errata", str(tmp_path / "e.json")]
    assert main([*diff, "--reasons", str(tmp_path / "notes.yaml")]) == 2
    assert "a mapping of item id to reason" in capsys.readouterr().err
    assert main(["diff", str(old), str(draft), "--errata", str(old / "errata.json")]) == 2
    assert "inside" in capsys.readouterr().err and not (old / "errata.json").exists()
