"""Dataset conventions: one kind of image id across configs, category filtering by name,
the card's "How to use" code run against the built folder, the 2.0.0 bump explained."""

from __future__ import annotations

import re

import pytest

from cogbench.cards.versions import released_history
from cogbench.dataset_builders.build import load_manifest
from cogbench.dataset_builders.load import filter_category, load_config
from cogbench.errors import UsageError


def test_image_ids_are_bare_in_every_config_and_codis_keeps_the_file_name(built_release):
    codis = load_config(str(built_release), "codis")
    assert codis.features["image_file"].dtype == "string"
    for row in codis.select_columns(["image_id", "image_file"]):
        assert "." not in row["image_id"] and row["image_file"].startswith(row["image_id"] + ".")
    descriptions = load_config(str(built_release), "description").select_columns(["image_id", "image_file"])
    assert all(row["image_file"].startswith(row["image_id"] + ".") for row in descriptions)
    assert not any("." in image_id for image_id in load_config(str(built_release), "vqa")["image_id"])


def test_filter_category_by_name(built_release):
    vqa = load_config(str(built_release), "vqa")
    names = vqa.features["category"].names
    mental = filter_category(vqa, "mental")
    assert 0 < len(mental) < len(vqa) and set(mental["category"]) == {names.index("mental")}
    both = filter_category(vqa, "mental", "time")
    assert len(both) == len(mental) + len(filter_category(vqa, "time"))
    with pytest.raises(UsageError, match="unknown category 'Mental'; choose from time, location"):
        filter_category(vqa, "Mental")
    assert (
        filter_category(vqa, ["mental", "time"])["question_id"] == both["question_id"]
    )  # a list too (issue 32 item 7)
    assert filter_category(vqa, ("time",), "mental")["question_id"] == both["question_id"]
    with pytest.raises(UsageError, match="unknown category 'Time'"):
        filter_category(vqa, ["mental", "Time"])


def card_python_blocks(card: str) -> list[str]:
    section = card.split("## How to use", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_card_how_to_use_code_runs_against_the_built_folder(built_release, capsys):
    card = (built_release / "README.md").read_text(encoding="utf-8")
    blocks = card_python_blocks(card)
    assert len(blocks) == 2 and "str2int" in blocks[1] and "filter_category" in card
    code = "\n".join(blocks)
    # The card loads from the Hub at a tag; here the same code reads the built folder.
    code, count = re.subn(
        r'^REPO, REVISION = "[^"]+", "v[\d.]+"$', f"REPO, REVISION = {str(built_release)!r}, None", code, flags=re.M
    )
    assert count == 1
    exec(compile(code, "card: How to use", "exec"), {})
    out = capsys.readouterr().out
    vqa = load_config(str(built_release), "vqa")
    codis = load_config(str(built_release), "codis")
    expected = f"{len(filter_category(vqa, 'mental'))} mental-state questions; {len(filter_category(codis, 'Temporal Information'))} temporal CODIS pairs"
    assert expected in out and not expected.startswith("0 ")


def test_default_version_is_2_and_its_changelog_says_why(built_release):
    manifest = load_manifest(built_release)
    assert manifest["dataset_version"] == "2.0.0"
    assert manifest["changelog"] == released_history()
    card = (built_release / "README.md").read_text(encoding="utf-8")
    assert "### v2.0.0 (MAJOR over 1.0.0)" in card and "image_file" in card.split("## Changelog", 1)[1]
