"""The official prediction formats (formats/official.py), record by record, on small files written here.

The layouts are the authors': CogBench description JSONL ``{"filename", "model_output"}`` (read by
``cognition_gpt_eval.py``), CogBench VQA records with the keys and key order of the released
``cogbench_vqa.json`` plus ``response`` (read by ``vqa_accuracy.py``, JSONL or a ``.json`` list), and the
CODIS ``[{"id", "output": {"output_1", "output_2"}}]`` list with the 4-space indent of the authors'
``output_example.json``. Expected files and messages are written out by hand; nothing here needs the
shared data, so the mutation runner's copies of the checkout run all of it.
"""

from __future__ import annotations

import json

import pytest

from cogbench.errors import UsageError
from cogbench.reference_eval.formats.harness import TaskDoc
from cogbench.reference_eval.formats.official import (
    OfficialIds,
    detect_format,
    read_any_predictions,
    read_codis_output,
    vqa_question_key,
    write_official,
)
from cogbench.reference_eval.formats.predictions import Prediction

VQA_ROW = {
    "question_id": "q7",
    "image_id": "abc",
    "question": "What time is it?",
    "choice_a": "Noon.",
    "choice_b": "Dawn.",
    "choice_c": "Dusk.",
    "choice_d": "We do not know.",
    "answer": 2,
    "category": 0,
}
# category 0 is "time" (the first of the paper's eight), answer 2 is "C"


def write(path, *records, lines=None):
    path.write_text(lines if lines is not None else "".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def vqa_record(**changes):
    record = {
        "question": "What time is it?",
        "choice_a": "Noon.",
        "choice_b": "Dawn.",
        "choice_c": "Dusk.",
        "choice_d": "We do not know.",
        "answer": "C",
        "img_id": "abc",
        "category": "time",
        "response": "C",
    }
    return {**record, **changes}


# --- keys that find rows ------------------------------------------------------------------------------


def test_a_vqa_question_is_keyed_by_image_stem_and_whitespace_collapsed_texts():
    assert vqa_question_key(" images/abc.jpg ", "What  time\nis it? ", ["Noon. ", " Dawn.", "a  b", ""]) == (
        "abc",
        "What time is it?",
        "Noon.",
        "Dawn.",
        "a b",
        "",
    )


def test_description_ids_are_found_by_image_id_or_image_file_stem():
    ids = OfficialIds.from_rows("description", [{"image_id": "cookie_theft", "image_file": "pictures/ct_01.png"}])
    assert ids.description_by_image == {"cookie_theft": "cookie_theft", "ct_01": "cookie_theft"}
    assert ids.vqa_by_question == {} and ids.lmms_eval_docs is None


def fresh(name: str) -> str:
    """A task name as the command line gives it: a new string object, not the interned literal."""
    return "".join(list(name))


def test_task_names_read_at_run_time_find_their_keys():
    description = OfficialIds.from_rows(fresh("description"), [{"image_id": "ct", "image_file": "ct.jpg"}])
    assert description.description_by_image == {"ct": "ct"}
    vqa = OfficialIds.from_rows(fresh("vqa"), [VQA_ROW])
    assert list(vqa.vqa_by_question.values()) == ["q7"]


def test_vqa_ids_and_a_task_without_official_keys():
    ids = OfficialIds.from_rows("vqa", [VQA_ROW])
    assert ids.vqa_by_question == {("abc", "What time is it?", "Noon.", "Dawn.", "Dusk.", "We do not know."): "q7"}
    assert ids.description_by_image == {}
    codis = OfficialIds.from_rows("codis", [{"id": "000"}])
    assert codis.description_by_image == {} and codis.vqa_by_question == {}


# --- readers ------------------------------------------------------------------------------------------


def test_description_jsonl_skips_blank_lines_and_keeps_unknown_file_names(tmp_path):
    ids = OfficialIds.from_rows("description", [{"image_id": "cookie_theft", "image_file": "cookie_theft.jpg"}])
    path = write(
        tmp_path / "d.jsonl",
        lines='\n{"filename": "x/cookie_theft.jpg", "model_output": "A kitchen."}\n'
        '   \n{"filename": "other.jpg", "model_output": "A street."}\n',
    )
    got = read_any_predictions(path, "description", ids)
    assert [(p.task, p.item_id, p.query, p.output) for p in got] == [
        ("description", "cookie_theft", None, "A kitchen."),
        ("description", "other.jpg", None, "A street."),
    ]


def test_a_bad_description_line_is_named_by_its_number_counting_blank_lines(tmp_path):
    path = write(
        tmp_path / "d.jsonl",
        lines='{"filename": "a.jpg", "model_output": "x"}\n\n{"filename": "b.jpg", "model_output": 3}\n',
    )
    with pytest.raises(UsageError, match=r"^\S*d\.jsonl: record line 3: field model_output: missing or not a string$"):
        read_any_predictions(path, "description", OfficialIds())
    write(path, {"filename": "a.jpg", "model_output": "x"}, {"filename": "a.jpg", "model_output": "y"})
    with pytest.raises(UsageError, match=r"d\.jsonl: record a\.jpg: more than one prediction for this item$"):
        read_any_predictions(path, "description", OfficialIds())


def test_vqa_jsonl_and_json_list_read_the_same(tmp_path):
    ids = OfficialIds.from_rows("vqa", [VQA_ROW])
    records = [
        vqa_record(img_id="abc.jpg", question=" What time  is it?", response="B"),
        vqa_record(question="Unknown?", response="A"),
    ]
    jsonl = write(tmp_path / "v.jsonl", *records)
    listed = tmp_path / "v.json"
    listed.write_text("\n  " + json.dumps(records, indent=4), encoding="utf-8")  # leading blanks before "["
    expected = [("vqa", "q7", None, "B"), ("vqa", "abc: Unknown?", None, "A")]
    for path in (jsonl, listed):
        assert detect_format(path) == "cogbench-vqa"
        assert [(p.task, p.item_id, p.query, p.output) for p in read_any_predictions(path, "vqa", ids)] == expected


def test_bad_vqa_records_are_named(tmp_path):
    path = tmp_path / "v.json"
    path.write_text(json.dumps([vqa_record(), "C"]), encoding="utf-8")
    with pytest.raises(UsageError, match=r"v\.json: record #1: expected a JSON object$"):
        read_any_predictions(path, "vqa", OfficialIds())
    path.write_text(json.dumps([vqa_record(), vqa_record(choice_d=None)]), encoding="utf-8")
    with pytest.raises(UsageError, match=r"v\.json: record #1: field choice_d: missing or not a string$"):
        read_any_predictions(path, "vqa", OfficialIds())
    write(path, vqa_record(), vqa_record(response=["C"]))
    with pytest.raises(UsageError, match=r"v\.json: record line 2: field response: missing or not a string$"):
        read_any_predictions(path, "vqa", OfficialIds())
    write(path, vqa_record(), vqa_record(response="D"))
    with pytest.raises(UsageError, match=r"v\.json: record abc: What time is it\?: more than one prediction"):
        read_any_predictions(path, "vqa", OfficialIds())


def test_codis_list_gives_query_1_and_2_per_pair(tmp_path):
    path = tmp_path / "c.json"
    path.write_text(
        json.dumps(
            [
                {"id": "000", "output": {"output_1": "Up.", "output_2": "Down."}},
                {"id": "001", "output": {"output_2": "Left.", "output_1": "Right."}},
            ]
        )
    )
    assert detect_format(path) == "codis-output"
    got = read_any_predictions(path, "codis", OfficialIds())
    assert [(p.task, p.item_id, p.query, p.output) for p in got] == [
        ("codis", "000", 1, "Up."),
        ("codis", "000", 2, "Down."),
        ("codis", "001", 1, "Right."),
        ("codis", "001", 2, "Left."),
    ]


@pytest.mark.parametrize(
    "records, message",
    [
        (["000"], r"c\.json: record #0: expected a JSON object$"),
        ([{"output": {}}], r"c\.json: record #0: field id: missing or not a string$"),
        ([{"id": 7, "output": {}}], r"c\.json: record #0: field id: missing or not a string$"),
        ([{"id": "000", "output": "Up."}], r"c\.json: record 000: field output: missing or not an object$"),
        ([{"id": "000", "output": {"output_1": 1, "output_2": "b"}}], r"record 000: field output\.output_1: missing"),
        (
            [{"id": "000", "output": {"output_1": "a", "output_2": "b"}}] * 2,
            r"c\.json: record 000: more than one prediction for this item \(query 1\)$",
        ),
    ],
)
def test_bad_codis_records_are_named(tmp_path, records, message):
    path = tmp_path / "c.json"
    path.write_text(json.dumps(records))
    with pytest.raises(UsageError, match=message):
        read_any_predictions(path, "codis", OfficialIds())


# --- telling the format -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ('{"task": "vqa", "item_id": "q7", "output": "B"}\n', "project"),
        ('\n\n{"filename": "a.jpg", "model_output": "x"}\n', "cogbench-description"),
        (json.dumps(vqa_record()) + "\n", "cogbench-vqa"),
        ('{"doc_id": 0, "filtered_resps": ["B"]}\n', "lmms-eval-samples"),
        ("[]", "codis-output"),
        ('[{"id": "000", "output": {}}]', "codis-output"),
        ('[{"question": "Q?", "output": {}}]', "codis-output"),  # a VQA list needs "response" and "question"
        ('[{"response": "B"}]', "codis-output"),
        ('["B"]', "codis-output"),  # read as such, it fails on its first record
        (" \n" * 3000 + '[{"question": "Q?", "response": "B"}]', "cogbench-vqa"),  # 6 KiB of blank lines first
        ("\t  [\n]", "codis-output"),
    ],
)
def test_format_is_told_from_the_first_record(tmp_path, text, expected):
    path = tmp_path / "p.txt"
    path.write_text(text, encoding="utf-8")
    assert detect_format(path) == expected


@pytest.mark.parametrize(
    "text, line",
    [
        ('{"question": "Q?"}\n', 1),  # "response" missing
        ('{"response": "B"}\n', 1),
        ('{"filename": "a.jpg"}\n', 1),
        ('{"model_output": "x"}\n', 1),
        ('{"task": "vqa", "output": "B"}\n', 1),
        ('{"item_id": "q7", "output": "B"}\n', 1),
        ("\n\n3\n", 1),  # the message always names line 1
    ],
)
def test_an_unknown_format_is_one_error_listing_the_known_ones(tmp_path, text, line):
    path = tmp_path / "p.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(UsageError, match=rf"p\.jsonl: record line {line}: not a known predictions format \(expected"):
        detect_format(path)


def test_a_bad_first_line_is_named_by_its_number(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text("\n \n{not json\n", encoding="utf-8")
    with pytest.raises(UsageError, match=r"p\.jsonl: record line 3: not valid JSON"):
        detect_format(path)
    path.write_text("", encoding="utf-8")
    with pytest.raises(UsageError, match=r"p\.jsonl: record line 1: not valid JSON"):
        detect_format(path)


def test_a_codis_file_that_is_not_a_list_is_refused(tmp_path):
    path = tmp_path / "c.json"
    path.write_text('{"id": "000", "output": {"output_1": "a", "output_2": "b"}}')
    with pytest.raises(UsageError, match=r"c\.json: expected a JSON list$"):
        read_codis_output(path)


# --- reading for a task -------------------------------------------------------------------------------


def test_a_missing_file_or_a_folder_is_a_usage_error(tmp_path):
    for path in (tmp_path / "absent.jsonl", tmp_path):
        with pytest.raises(UsageError, match=r": predictions file not found \(or not a file\)$"):
            read_any_predictions(path, "vqa", OfficialIds())


def test_a_file_that_is_not_utf8_is_refused_before_its_format_is_told(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_bytes(b'{"task": "vqa", "item_id": "q7", "output": "\xff"}\n')
    with pytest.raises(UsageError, match=r"p\.jsonl: record line 1: not UTF-8 text"):
        read_any_predictions(path, "vqa", OfficialIds())


@pytest.mark.parametrize(
    "records, task, message",
    [
        ([{"filename": "a.jpg", "model_output": "x"}], "vqa", "holds cogbench-description predictions, not vqa ones"),
        ([vqa_record()], "codis", "holds cogbench-vqa predictions, not codis ones"),
        (
            [{"task": "codis", "item_id": "000", "output": "x", "query": 1}],
            "vqa",
            r"record 000: field task: 'codis' prediction in a vqa scoring run$",
        ),
        (
            [{"task": "vqa", "item_id": "q7", "output": "B"}],
            "codis",
            r"record q7: field task: 'vqa' prediction in a codis scoring run$",
        ),
        (
            [{"task": "vqa", "item_id": "q7", "output": "B"}],
            "description",
            r"record q7: field task: 'vqa' prediction in a description scoring run$",
        ),
        # the first wrong one is named
        (
            [
                {"task": "vqa", "item_id": "q7", "output": "B"},
                {"task": "codis", "item_id": "000", "output": "x", "query": 1},
                {"task": "description", "item_id": "ct", "output": "x"},
            ],
            "vqa",
            r"record 000: field task: 'codis' prediction in a vqa scoring run$",
        ),
    ],
)
def test_predictions_of_another_task_are_refused(tmp_path, records, task, message):
    with pytest.raises(UsageError, match=message):
        read_any_predictions(write(tmp_path / "p.jsonl", *records), task, OfficialIds())


def test_an_official_file_of_another_task_is_refused_for_a_task_read_at_run_time(tmp_path):
    path = write(tmp_path / "p.jsonl", {"filename": "a.jpg", "model_output": "x"})
    with pytest.raises(UsageError, match="holds cogbench-description predictions, not vqa ones"):
        read_any_predictions(path, fresh("vqa"), OfficialIds())
    assert [p.output for p in read_any_predictions(path, fresh("description"), OfficialIds())] == ["x"]


def test_the_projects_own_format_is_read_as_it_is(tmp_path):
    path = write(
        tmp_path / "p.jsonl",
        {"task": "vqa", "item_id": "q7", "output": "B"},
        {"task": "vqa", "item_id": "q8", "output": "C", "query": 2},
    )
    got = read_any_predictions(path, "vqa", OfficialIds())
    assert [(p.item_id, p.query, p.output) for p in got] == [("q7", None, "B"), ("q8", 2, "C")]


def test_lmms_eval_samples_are_read_with_the_tasks_docs(tmp_path):
    path = write(
        tmp_path / "s.jsonl",
        {"doc_id": 0, "filtered_resps": ["B"], "target": "C"},
        {"doc_id": 1, "doc": {"question_id": "q9"}, "resps": [["D"]]},
    )
    ids = OfficialIds(lmms_eval_docs=[TaskDoc(item_id="q7", query=None, target="C", prompts={})])
    got = read_any_predictions(path, "vqa", ids)
    assert [(p.task, p.item_id, p.output) for p in got] == [("vqa", "q7", "B"), ("vqa", "q9", "D")]


# --- writers ------------------------------------------------------------------------------------------


def test_description_export_keeps_dataset_order_and_skips_unanswered_images(tmp_path):
    rows = [
        {"image_id": "b", "image_file": "b.jpg"},
        {"image_id": "a", "image_file": "a.png"},
        {"image_id": "c", "image_file": "c.jpg"},
    ]
    predictions = [Prediction("description", "a", "Un café."), Prediction("description", "b", 'A "cat".')]
    path = write_official("description", tmp_path / "new" / "folder", rows, predictions)
    assert path == tmp_path / "new" / "folder" / "official_cogbench_description.jsonl"
    assert path.read_text(encoding="utf-8") == (
        '{"filename": "b.jpg", "model_output": "A \\"cat\\"."}\n{"filename": "a.png", "model_output": "Un café."}\n'
    )
    assert sorted(p.name for p in path.parent.iterdir()) == ["official_cogbench_description.jsonl"]  # no .tmp left


def test_vqa_export_spells_the_question_as_the_authors_file_plus_response(tmp_path):
    other = dict(VQA_ROW, question_id="q8", image_id="def", answer=0, category=7, question="Why?")
    predictions = [Prediction("vqa", "q7", "C. Dusk."), Prediction("vqa", "q8", "A")]
    path = write_official("vqa", tmp_path, [VQA_ROW, dict(VQA_ROW, question_id="q9"), other], predictions)
    assert path.name == "official_cogbench_vqa.jsonl"
    # key order of the released cogbench_vqa.json; category 7 is the eighth, "mental"
    assert path.read_text(encoding="utf-8") == (
        '{"question": "What time is it?", "choice_a": "Noon.", "choice_b": "Dawn.", "choice_c": "Dusk.", '
        '"choice_d": "We do not know.", "answer": "C", "img_id": "abc", "category": "time", "response": "C. Dusk."}\n'
        '{"question": "Why?", "choice_a": "Noon.", "choice_b": "Dawn.", "choice_c": "Dusk.", '
        '"choice_d": "We do not know.", "answer": "A", "img_id": "def", "category": "mental", "response": "A"}\n'
    )


def test_codis_export_is_the_authors_layout_for_pairs_with_both_answers(tmp_path):
    rows = [{"id": "000"}, {"id": "001"}, {"id": "002"}, {"id": "003"}]  # 002 and 003 lack an answer
    predictions = [
        Prediction("codis", "001", "Left.", query=2),
        Prediction("codis", "000", "Up.", query=1),
        Prediction("codis", "000", "Down.", query=2),
        Prediction("codis", "001", "Direita é.", query=1),
        Prediction("codis", "002", "Só um.", query=1),
        Prediction("codis", "003", "Only 2.", query=2),
    ]
    path = write_official("codis", tmp_path, rows, predictions)
    assert path.name == "official_codis_output.json"
    assert (
        path.read_text(encoding="utf-8")
        == """[
    {
        "id": "000",
        "output": {
            "output_1": "Up.",
            "output_2": "Down."
        }
    },
    {
        "id": "001",
        "output": {
            "output_1": "Direita é.",
            "output_2": "Left."
        }
    }
]
"""
    )
    (tmp_path / "only").mkdir()
    only_one = write_official("codis", tmp_path / "only", rows, predictions[-2:])
    assert only_one.read_text(encoding="utf-8") == "[]\n"
    assert write_official("codis", tmp_path / "only", rows, predictions[:0]).read_text() == "[]\n"  # replaced
