"""Raw input that must not pass: blank and invisible text, broken chains, look-alike
duplicates, unencodable text, hostile ids and absurd nesting.

Each case damages a copy of the real data, then runs ``validate`` and ``build``
on it as a user would: exit 1, the finding's code and location, no traceback,
no output folder or staging folder left behind.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from cogbench.cli import main
from cogbench.schemas.cor import CorSyntaxError, parse_cor
from cogbench.schemas.records import question_id

from validation_helpers import copy_codis, copy_samples, edit_json, read_json

CODIS = "codis/data.json"
DESC = "cogbench-samples/cogbench_description.json"
VQA = "cogbench-samples/cogbench_vqa.json"
ZWSP = "\u200b"


def _vqa(position, **changes):
    def mutate(root):
        items = read_json(root / VQA)
        edit_json(root / VQA, lambda d: d[position].update(changes))
        item = items[position] | changes
        return f"record {question_id(item['img_id'], item['question'])}"

    return mutate


def _desc(image, key, value):
    def mutate(root):
        edit_json(root / DESC, lambda d: d[image].update({key: value}))
        return f"record {image}"

    return mutate


def _pair(position, **changes):
    def mutate(root):
        edit_json(root / CODIS, lambda d: d[position].update(changes))
        return f"record {changes.get('id', f'{position:03d}')}"

    return mutate


def _extra_pair(source, **changes):
    """A copy of pair ``source`` appended with some fields changed: a look-alike duplicate."""

    def mutate(root):
        edit_json(root / CODIS, lambda d: d.append(d[source] | changes))
        return f"record {changes.get('id', f'{source:03d}')}"

    return mutate


def _raw_text(file, old, new):
    """Edit the raw JSON text (for escapes json.dumps cannot write, such as lone surrogates)."""

    def mutate(root):
        path = root / file
        text = path.read_text(encoding="utf-8")
        assert old in text
        path.write_text(text.replace(old, new, 1), encoding="utf-8")

    return mutate


def _deep(root):
    (root / CODIS).write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")


def _nfd_question(root):
    """Pair 5 asked again on its image with its contexts, the question in NFD with a zero-width space."""

    def edit(pairs):
        pairs[5]["question"] = "Is this a café?"
        pairs.append(pairs[5] | {"id": "900", "question": unicodedata.normalize("NFD", "Is this a ca" + ZWSP + "fé? ")})

    edit_json(root / CODIS, edit)
    return "record 900"


CASES = {
    # kind, mutate, code, file, field
    "whitespace-only question": ("samples", _vqa(3, question="   "), "text.empty", VQA, "question"),
    "whitespace-only entity": (
        "samples",
        _desc("cookie_theft", "Entities", ["woman", " "]),
        "text.empty",
        DESC,
        "Entities[1]",
    ),
    "invisible-only description": (
        "samples",
        _desc("cookie_theft", "Description", [ZWSP + " " + ZWSP]),
        "text.empty",
        DESC,
        "Description[0]",
    ),
    "whitespace-only codis id": ("codis", _pair(2, id="  "), "text.empty", CODIS, "id"),
    "invisible-only codis question": ("codis", _pair(4, question=ZWSP * 3), "text.empty", CODIS, "question"),
    "dangling + in a chain": (
        "samples",
        _desc("cookie_theft", "Next Moment Event Reasoning", ["A stool. + -> The boy falls."]),
        "cor.syntax",
        DESC,
        "Next Moment Event Reasoning[0]",
    ),
    "leading + in a chain": (
        "samples",
        _desc("cookie_theft", "Next Moment Event Reasoning", ["+ A stool. -> The boy falls."]),
        "cor.syntax",
        DESC,
        "Next Moment Event Reasoning[0]",
    ),
    "doubled + in a chain": (
        "samples",
        _desc("cookie_theft", "Next Moment Event Reasoning", ["A stool. + + It tilts. -> The boy falls."]),
        "cor.syntax",
        DESC,
        "Next Moment Event Reasoning[0]",
    ),
    "invisible premise": (
        "samples",
        _desc("cookie_theft", "Next Moment Event Reasoning", [f"A stool. + {ZWSP} -> The boy falls."]),
        "cor.syntax",
        DESC,
        "Next Moment Event Reasoning[0]",
    ),
    "NFD look-alike id": ("codis", _extra_pair(0, id=unicodedata.normalize("NFD", "00é")), "text.bad_id", CODIS, "id"),
    "zero-width look-alike id": ("codis", _extra_pair(0, id="000" + ZWSP), "identity.duplicate_id", CODIS, "id"),
    "trailing-space look-alike id": ("codis", _extra_pair(1, id="001 "), "identity.duplicate_id", CODIS, "id"),
    "NFD look-alike question": ("codis", _nfd_question, "identity.duplicate_question", CODIS, "question"),
    "lone surrogate in a question": (
        "codis",
        _raw_text(CODIS, '"Am I taking off', '"Am I \\ud800 taking off'),
        "text.unencodable",
        CODIS,
        "question",
    ),
    "NUL in an image id": ("codis", _pair(3, image_id="a\u0000.jpg"), "text.control", CODIS, "image_id"),
    "5000-character image id": ("codis", _pair(3, image_id="x" * 5000 + ".jpg"), "text.bad_id", CODIS, "image_id"),
    "100,000-deep nesting": ("codis", _deep, "json.invalid", CODIS, None),
}


def _copy(kind: str, real: Path, tmp: Path) -> Path:
    return copy_codis(real, tmp / "raw", keep=12) if kind == "codis" else copy_samples(real, tmp / "raw")


@pytest.mark.parametrize("name", sorted(CASES))
def test_damaged_text_is_an_error_in_validate_and_build(name, real_raw_dir, tmp_path, capsys):
    kind, mutate, code, file, field = CASES[name]
    root = _copy(kind, real_raw_dir, tmp_path)
    record = mutate(root)
    assert main(["validate", str(root), "--expected", "none", "--format", "json"]) == 1
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    findings = [f for f in json.loads(out)["findings"] if f["code"] == code and f["file"] == file]
    assert findings, f"{code} at {file} missing: {out[:2000]}"
    if field is not None:
        assert any(f["field"] == field for f in findings), findings
    if record is not None and code != "identity.duplicate_id":
        assert any(f"record {f['record']}" == record for f in findings), findings
    assert main(["build", "--raw-dir", str(root), "--out", str(tmp_path / "out")]) == 1
    out, err = capsys.readouterr()
    assert err.startswith("error: ") and f"error {code}: {file}" in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["raw"]  # no output, no staging


def test_an_empty_entity_fails_validate_and_build_alike_without_follow_on_errors(real_raw_dir, tmp_path, capsys):
    root = copy_samples(real_raw_dir, tmp_path / "raw")
    _desc("cookie_theft", "Entities", ["woman", ""])(root)
    assert main(["validate", str(root), "--expected", "none", "--format", "json"]) == 1
    errors = [f for f in json.loads(capsys.readouterr().out)["findings"] if f["severity"] == "error"]
    assert [(f["code"], f["record"], f["field"]) for f in errors] == [("text.empty", "cookie_theft", "Entities[1]")]
    assert main(["build", "--raw-dir", str(root), "--out", str(tmp_path / "out")]) == 1
    assert capsys.readouterr().err.startswith("error: 1 validation error(s) in the raw data")


def test_build_lists_problems_of_every_stage_in_one_run(real_raw_dir, tmp_path, capsys):
    root = copy_samples(real_raw_dir, copy_codis(real_raw_dir, tmp_path / "raw", keep=12))
    edit_json(root / CODIS, lambda d: d[0].pop("question"))  # schema
    edit_json(root / CODIS, lambda d: d[1].update(image_id="missing.jpg"))  # images
    edit_json(root / CODIS, lambda d: d[2]["answer"].update(answer_2=d[2]["answer"]["answer_1"]))  # pairs
    _desc("cookie_theft", "Location Reasoning", ["A. -> B. -> C."])(root)  # chains of reasoning
    _vqa(0, choice_b="It's 2:25 pm.")(root)  # options
    assert main(["build", "--raw-dir", str(root), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    for code in ("schema.raw", "image.missing", "pairs.same_answer", "cor.syntax", "options.duplicate"):
        assert f"error {code}:" in err, err
    assert "Traceback" not in err and not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "chain", ["A + -> B", "+ A -> B", "A + + B -> C", f"A + {ZWSP} -> B", f"{ZWSP} -> B", f"A -> {ZWSP}"]
)
def test_the_cor_grammar_rejects_empty_premises_anywhere(chain):
    with pytest.raises(CorSyntaxError):
        parse_cor(chain)


@pytest.mark.parametrize("chain", ["C++ is used. -> It is code.", "2+2 is 4. + It is math. -> A sum."])
def test_the_cor_grammar_keeps_plus_inside_text(chain):
    assert parse_cor(chain).conclusion


def test_lone_surrogates_become_the_replacement_character_and_nothing_else_changes():
    from cogbench.schemas.text import replace_lone_surrogates

    text = "a\ud800b \udfff\udbff c\U0001f600 \ufffd caf\u00e9"
    assert replace_lone_surrogates(text) == "a\ufffdb \ufffd\ufffd c\U0001f600 \ufffd caf\u00e9"
    replace_lone_surrogates(text).encode("utf-8")  # storable
