"""Fault injection: one fault per test in a copy of the real data, each caught
with the right code and location; the clean copies pass."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image

from cogbench.schemas.records import question_id
from cogbench.validation import validate

from validation_helpers import copy_codis, copy_samples, edit_json, read_json, replace_file

CODIS = "codis/data.json"
DESC = "cogbench-samples/cogbench_description.json"
VQA = "cogbench-samples/cogbench_vqa.json"
CLEAN_IMAGE = "9331ecd8bebe04fe51c65a8385db52e0"  # a samples image with no warnings
KEEP = 12  # CODIS pairs kept in the small copy: 000-011 and their images


def _qid(root: Path, position: int) -> str:
    item = read_json(root / VQA)[position]
    return question_id(item["img_id"], item["question"])


def _set_pair(position, **changes):
    def mutate(root):
        def edit(pairs):
            for key, value in changes.items():
                if key.startswith("context_"):
                    pairs[position]["context"][key] = value(pairs[position]) if callable(value) else value
                elif key.startswith("answer_"):
                    pairs[position]["answer"][key] = value(pairs[position]) if callable(value) else value
                else:
                    pairs[position][key] = value

        edit_json(root / CODIS, edit)
        return f"{position:03d}"

    return mutate


def _set_vqa(position, **changes):
    def mutate(root):
        edit_json(
            root / VQA,
            lambda items: items[position].update(
                {k: v(items[position]) if callable(v) else v for k, v in changes.items()}
            ),
        )
        return _qid(root, position)

    return mutate


def _set_cors(image, key, entries):
    def mutate(root):
        edit_json(root / DESC, lambda d: d[image].update({key: entries(d[image]) if callable(entries) else entries}))
        return image

    return mutate


def _image_of_pair(root: Path, position: int) -> Path:
    return root / "codis" / "images" / read_json(root / CODIS)[position]["image_id"]


def _truncate_image(root):
    path = _image_of_pair(root, 0)
    replace_file(path, path.read_bytes()[:2000])
    return "000"


def _bomb_image(root):
    buffer = io.BytesIO()
    Image.new("1", (8000, 6000)).save(buffer, format="PNG")  # 48 MP in a few kB
    replace_file(_image_of_pair(root, 1), buffer.getvalue())
    return "001"


def _orphan_image(root):
    (root / "codis" / "images" / "extra.jpg").write_bytes(_image_of_pair(root, 0).read_bytes()[:100])


def _duplicate_image(root):
    (root / "codis" / "images" / "copy.jpg").write_bytes(_image_of_pair(root, 0).read_bytes())
    return _set_pair(9, image_id="copy.jpg")(root)


def _repeat_pair(root):
    edit_json(root / CODIS, lambda pairs: pairs.append(dict(pairs[0], id="999")))
    return "999"


def _duplicate_key(root):
    path = root / DESC
    text = path.read_text(encoding="utf-8")
    first, second = list(read_json(path))[:2]
    path.write_text(text.replace(f'"{second}":', f'"{first}":'), encoding="utf-8")


def _duplicate_chain(root):
    return _set_cors("cookie_theft", "Event Reasoning", lambda r: r["Event Reasoning"] + r["Event Reasoning"][:1])(root)


def _all_answers_a(root):
    edit_json(root / VQA, lambda items: [item.update(answer="A") for item in items])


def _drop_question(root):
    edit_json(root / VQA, lambda items: items.pop())


# name: (copy, mutate -> record, code, file, field)
FAULTS = {
    "invalid json": ("codis", lambda r: (r / CODIS).write_text('[{"id": "000",') and None, "json.invalid", CODIS, None),
    "duplicate json key": ("samples", _duplicate_key, "json.invalid", DESC, None),
    "missing field": (
        "codis",
        lambda r: edit_json(r / CODIS, lambda d: d[1]["context"].pop("context_2")) or "001",
        "schema.raw",
        CODIS,
        "context.context_2",
    ),
    "unknown category": ("codis", _set_pair(2, category="Weather"), "schema.raw", CODIS, "category"),
    "answer letter E": ("samples", _set_vqa(3, answer="E"), "schema.raw", VQA, "answer"),
    "chained cor": (
        "samples",
        _set_cors("cookie_theft", "Event Reasoning", ["A boy climbs. -> A stool tips. -> He falls."]),
        "cor.syntax",
        DESC,
        "Event Reasoning[0]",
    ),
    "cor without arrow": (
        "samples",
        _set_cors("cookie_theft", "Location Reasoning", ["There is a sink, so it is a kitchen."]),
        "cor.syntax",
        DESC,
        "Location Reasoning[0]",
    ),
    "cor without premise": (
        "samples",
        _set_cors("cookie_theft", "Mental State Reasoning", [" -> The boy is excited."]),
        "cor.syntax",
        DESC,
        "Mental State Reasoning[0]",
    ),
    "cor without conclusion": (
        "samples",
        _set_cors("cookie_theft", "Character Reasoning", ["The boy stands on a stool. -> "]),
        "cor.syntax",
        DESC,
        "Character Reasoning[0]",
    ),
    "None beside a chain": (
        "samples",
        _set_cors("cookie_theft", "Special Time Reasoning", ["A clock shows 3. -> It is afternoon.", "None"]),
        "cor.none_mixed",
        DESC,
        "Special Time Reasoning[1]",
    ),
    "conclusion repeats premise": (
        "samples",
        _set_cors(
            "cookie_theft", "Next Moment Event Reasoning", ["The stool tips. + The boy leans. -> the stool tips"]
        ),
        "cor.conclusion_is_premise",
        DESC,
        "cors.next_event[0]",
    ),
    "premise twice in a chain": (
        "samples",
        _set_cors(
            "cookie_theft", "Next Moment Event Reasoning", ["The stool tips. + The stool tips. -> The boy falls."]
        ),
        "cor.duplicate_premise",
        DESC,
        "cors.next_event[0]",
    ),
    "conclusion in two chains": (
        "samples",
        _set_cors(
            CLEAN_IMAGE,
            "Special Time Reasoning",
            lambda r: ["A clock shows noon. -> " + r["Event Reasoning"][0].split("->")[1].strip()],
        ),
        "cor.duplicate_conclusion",
        DESC,
        "cors.event[0]",
    ),
    "chain twice in an image": ("samples", _duplicate_chain, "cor.duplicate_chain", DESC, None),
    "empty option": ("samples", _set_vqa(0, choice_c="  "), "options.empty", VQA, "choice_c"),
    "equal options": (
        "samples",
        _set_vqa(1, choice_b=lambda q: q["choice_a"].upper() + " !"),
        "options.duplicate",
        VQA,
        "choice_a/choice_b",
    ),
    "near-duplicate options": (
        "samples",
        _set_vqa(
            7,
            choice_a="The boy stands on a wobbly stool in the kitchen.",
            choice_d="The boy stands on a wobbly stool in the kitchens.",
        ),
        "options.near_duplicate",
        VQA,
        "choice_a/choice_d",
    ),
    "question on undescribed image": ("samples", _set_vqa(4, img_id="nowhere"), "options.unknown_image", VQA, "img_id"),
    "correct option far longer": (
        "samples",
        lambda r: _set_vqa(5, **{f"choice_{read_json(r / VQA)[5]['answer'].lower()}": "x" * 400})(r),
        "options.length_outlier",
        VQA,
        None,
    ),
    "answers all A": ("samples", _all_answers_a, "options.answer_skew", VQA, "answer"),
    "empty context": ("codis", _set_pair(6, answer_1=""), "pairs.empty", CODIS, "answer_1"),
    "same contexts": (
        "codis",
        _set_pair(3, context_2=lambda p: p["context"]["context_1"].upper() + ".."),
        "pairs.same_context",
        CODIS,
        "context",
    ),
    "same answers": (
        "codis",
        _set_pair(4, answer_2=lambda p: "  " + p["answer"]["answer_1"].lower()),
        "pairs.same_answer",
        CODIS,
        "answer",
    ),
    "image id with no file": ("codis", _set_pair(7, image_id="nothere.jpg"), "image.missing", CODIS, "image_id"),
    "image id escaping": ("codis", _set_pair(8, image_id="../data.json"), "image.unsafe_id", CODIS, "image_id"),
    "absolute image id": ("codis", _set_pair(10, image_id="/etc/hostname"), "image.unsafe_id", CODIS, "image_id"),
    "description image missing": (
        "samples",
        _set_cors("cookie_theft", "Image Name", "gone.jpg"),
        "image.missing",
        DESC,
        "Image Name",
    ),
    "truncated image": ("codis", _truncate_image, "image.undecodable", CODIS, "image_id"),
    "decompression bomb": ("codis", _bomb_image, "image.too_large", CODIS, "image_id"),
    "orphan image": ("codis", _orphan_image, "image.orphan", "codis/images/extra.jpg", None),
    "duplicate image bytes": ("codis", _duplicate_image, "image.duplicate", CODIS, "image_id"),
    "duplicate id": ("codis", lambda r: _set_pair(11, id="000")(r) and "000", "identity.duplicate_id", CODIS, "id"),
    "same pair twice": ("codis", _repeat_pair, "identity.duplicate_question", CODIS, "question"),
    "question count off": ("samples-counts", _drop_question, "counts.mismatch", VQA, "questions"),
    "config missing": ("samples-counts", lambda r: (r / VQA).unlink(), "counts.config_missing", "vqa", None),
}


def _copy(kind: str, real_raw_dir: Path, tmp_path: Path) -> Path:
    root = tmp_path / "raw"
    if kind == "codis":
        return copy_codis(real_raw_dir, root, keep=KEEP)
    return copy_samples(real_raw_dir, root)


def _expected(kind: str):
    return "auto" if kind == "samples-counts" else None


@pytest.mark.parametrize("kind", ["codis", "samples"])
def test_clean_copy_passes(kind, real_raw_dir, tmp_path):
    report = validate(_copy(kind, real_raw_dir, tmp_path), expected=None)
    assert report.ok, [str(f) for f in report.errors]


def test_clean_full_copy_passes_with_published_counts(real_raw_dir, tmp_path):
    root = copy_samples(real_raw_dir, copy_codis(real_raw_dir, tmp_path / "raw"))
    report = validate(root)
    assert report.ok, [str(f) for f in report.errors]
    assert report.stats["expected_counts"] == ["codis-1.0.json", "cogbench-samples.json"]
    assert report.stats["images"]["decoded"] == 216 + 5


def test_at_least_25_faults_cover_every_code():
    from cogbench.validation import CHECKS

    covered = {code for _, _, code, _, _ in FAULTS.values()}
    untested = (
        set(CHECKS)
        - covered
        - {"schema.built", "schema.unloadable", "identity.repeated_question", "counts.not_checked"}
        - {"image.not_released"}
    )
    # those four are tested in test_validation.py, image.not_released in test_bounded_inputs.py (a changed JPEG
    # that still decodes); the release family and text hygiene in test_release_integrity.py / test_text_hygiene.py
    untested -= {code for code, (family, _, _) in CHECKS.items() if family == "release" or code.startswith("text.")}
    assert len(FAULTS) >= 25 and not untested, untested


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_fault_is_caught_with_code_and_location(name, real_raw_dir, tmp_path):
    kind, mutate, code, file, field = FAULTS[name]
    root = _copy(kind, real_raw_dir, tmp_path)
    record = mutate(root)
    report = validate(root, expected=_expected(kind))
    matches = [f for f in report.findings if f.code == code and f.file == file]
    assert matches, f"{code} at {file} not found in {[str(f) for f in report.findings]}"
    if record is not None:
        matches = [f for f in matches if f.record == record]
        assert matches, f"{code} not located at record {record}: {[str(f) for f in report.findings if f.code == code]}"
    if field is not None:
        assert any(f.field == field for f in matches), [str(f) for f in matches]
    assert report.ok == (matches[0].severity != "error" and not report.errors)


def test_codis_category_count_off_is_caught(real_raw_dir, tmp_path):
    root = copy_codis(real_raw_dir, tmp_path / "raw")
    edit_json(root / CODIS, lambda pairs: pairs[0].update(category="Attributes"))
    report = validate(root, expected="codis-1.0")
    fields = {f.field for f in report.errors if f.code == "counts.mismatch"}
    assert fields == {"per_category.Location and Orientation", "per_category.Attributes"}
