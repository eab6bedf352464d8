"""``verify``'s comparisons on a hand-made VQA run: every value recomputed from four items by hand.

Four answers on three images: location a (right) and c (right), event b (wrong) and d (right), so
accuracy is 3/4 = 75.0 (location 100.0, event 50.0); the authors' first-letter reading gets a and b
right, so 50.0 (50.0 and 50.0). The intervals are the ones ``cogbench score`` writes
(``intervals.score_intervals``): what is tested here is that verify recomputes and compares them.
No run folder, no build (the end-to-end runs are tests/test_verify*.py): the mutation run of
``verifying/verify.py`` starts with this file (then tests/test_verify_folders.py, on one real run).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cogbench.errors import CogbenchError, UsageError
from cogbench.reference_eval.metrics import intervals
from cogbench.reference_eval.publishing.hub_results import results_notes
from cogbench.reference_eval.verifying.verify import (
    check_results_file,
    check_scores,
    compare_text,
    read_results_file,
    verify,
)
from cogbench.reference_eval.verifying.verify_result import TaskData, Verification
from cogbench.schemas.features import COGBENCH_CATEGORIES

#  item, image, category, answer, extracted, extracted_official
ANSWERS = [("a", "i1", "location", "A", "A", "A"), ("b", "i1", "event", "B", "C", "B")]
ANSWERS += [("c", "i2", "location", "C", "C", "D"), ("d", "i3", "event", "D", "D", None)]
SCORES_PATH = Path("run/scores.json")


def details() -> list[dict]:
    lines = []
    for item, image, category, answer, robust, official in ANSWERS:
        line = {"item_id": item, "image_id": image, "category": category, "answer": answer}
        line.update(extracted=robust, extracted_official=official)
        line.update(correct=robust == answer, correct_official=official == answer)
        lines.append(line)
    return lines


def scores() -> dict:
    fresh, settings = intervals.score_intervals("vqa", details(), COGBENCH_CATEGORIES)

    def per_category(values: dict) -> dict:
        return {c: values.get(c) for c in COGBENCH_CATEGORIES}

    return {
        "task": "vqa",
        "judge": {"kind": "rule"},
        "metrics": {
            "accuracy": {
                "overall": 75.0,
                "per_category": per_category({"location": 100.0, "event": 50.0}),
                "interval": fresh["accuracy"],
            },
            "accuracy_official": {
                "overall": 50.0,
                "per_category": per_category({"location": 50.0, "event": 50.0}),
                "interval": fresh["accuracy_official"],
            },
        },
        "intervals": settings,
        "counts": {"dataset_images": 3},
        "provenance": {"cogbench_version": "9.9"},
    }


def checked(lines: list[dict], stated: dict) -> Verification:
    result = Verification()
    check_scores(TaskData("run/details.jsonl", lines, stated, SCORES_PATH, None), result)
    return result


def shown(result: Verification) -> list[str]:
    return [d.line() for d in result.differences]


def test_the_hand_worked_run_is_equal_number_by_number():
    result = checked(details(), scores())
    assert shown(result) == [] and result.stated == {}
    # per metric: 8 categories and overall, and both bounds of the 3 intervals that exist (overall,
    # location, event): 9 + 6; two metrics
    assert result.equal == 2 * (9 + 6)


def test_an_edited_value_or_interval_bound_is_named():
    stated = scores()
    stated["metrics"]["accuracy"]["overall"] = 74.0
    stated["metrics"]["accuracy_official"]["per_category"]["event"] = 25.0
    low, high = stated["metrics"]["accuracy"]["interval"]["per_category"]["location"]
    stated["metrics"]["accuracy"]["interval"]["per_category"]["location"] = [low + 0.5, high]
    stated["metrics"]["accuracy_official"]["interval"]["overall"][1] += 0.0005  # within the 4 decimals kept
    result = checked(details(), stated)
    assert shown(result) == [  # per metric: each category, then overall
        f"run/scores.json: metrics.accuracy.interval.per_category.location (low): says {low + 0.5:.4f}, "
        f"the details give {low:.4f}",
        "run/scores.json: metrics.accuracy.overall: says 74.0000, the details give 75.0000",
        "run/scores.json: metrics.accuracy_official.per_category.event: says 25.0000, the details give 50.0000",
    ]
    assert result.equal == 2 * (9 + 6) - 3


def test_an_interval_where_nothing_counts_and_a_missing_one_are_differences():
    stated = scores()
    stated["metrics"]["accuracy"]["interval"]["per_category"]["time"] = [0.0, 100.0]
    del stated["metrics"]["accuracy_official"]["interval"]["per_category"]["event"]
    assert shown(checked(details(), stated)) == [
        "run/scores.json: metrics.accuracy.interval.per_category.time (low): says 0.0000, the details give nothing",
        "run/scores.json: metrics.accuracy.interval.per_category.time (high): says 100.0000, the details give nothing",
        "run/scores.json: metrics.accuracy_official.interval.per_category.event (low): says None, the details "
        f"give {scores()['metrics']['accuracy_official']['interval']['per_category']['event'][0]:.4f}",
        "run/scores.json: metrics.accuracy_official.interval.per_category.event (high): says None, the details "
        f"give {scores()['metrics']['accuracy_official']['interval']['per_category']['event'][1]:.4f}",
    ]


def test_an_item_that_contradicts_itself_explains_the_numbers_it_moves():
    lines = details()
    lines[1]["correct"] = True  # b: extracted C, answer B; accuracy becomes 4/4 = 100.0, event 2/2 = 100.0
    result = checked(lines, scores())
    differences = shown(result)
    assert differences[0] == "run/details.jsonl: item b: correct is True, but extracted 'C' vs answer 'B'"
    assert (
        "run/scores.json: metrics.accuracy.overall: says 75.0000, the details give 100.0000 (items: b)" in differences
    )
    assert (
        "run/scores.json: metrics.accuracy.per_category.event: says 50.0000, the details give 100.0000 (items: b)"
        in differences
    )
    assert not [line for line in differences if "location" in line or "accuracy_official" in line]


def test_a_partial_runs_value_is_overall_partial_and_a_metric_without_items_is_only_stated():
    stated = scores()
    accuracy = stated["metrics"]["accuracy"]
    accuracy.update(partial=True, overall=None, overall_partial=75.0)
    stated["metrics"]["accuracy_circular"] = {"overall": 10.0}
    result = checked(details(), stated)
    assert shown(result) == []
    assert result.equal == 2 * (9 + 6) + 1  # overall is null, as a partial run's must be
    assert list(result.stated) == ["metrics.accuracy_circular (no per-item record to recompute it from)"]
    accuracy["overall"] = 75.0
    assert shown(checked(details(), stated)) == [
        "run/scores.json: metrics.accuracy.overall: says 75.0000, the details give nothing"
    ]
    accuracy["overall"] = None
    del stated["metrics"]["accuracy_official"]
    result = checked(details(), stated)
    assert result.equal == 9 + 6 + 1
    # a metric the details give but scores.json does not state is not listed as stated
    assert list(result.stated) == ["metrics.accuracy_circular (no per-item record to recompute it from)"]


def test_a_texts_numbers_are_compared_one_by_one_and_a_changed_count_is_one_difference():
    result = Verification()
    compare_text("report.md", "a -1.5 b 2 c 3.25", "a -1.5 b 7 c 3.25", result)
    assert (result.equal, [d.line() for d in result.differences]) == (
        2,
        ["report.md: number 2: says 2, the details give 7"],
    )
    result = Verification()
    compare_text("report.md", "1 2 3", "1 2", result)
    assert (result.equal, [d.line() for d in result.differences]) == (
        0,
        ["report.md: says 3 numbers, the details give 2 (text edited)"],
    )
    result = Verification()
    compare_text("report.md", "1 2", "1 2 3", result)  # a number deleted from the text
    assert (result.equal, [d.line() for d in result.differences]) == (
        0,
        ["report.md: says 2 numbers, the details give 3 (text edited)"],
    )
    result = Verification()
    many = " ".join(map(str, range(300)))  # 300 numbers: counts past CPython's cached small ints
    compare_text("report.md", many, many, result)
    assert (result.equal, result.differences) == (300, [])


def write(path: Path, text: str | bytes) -> Path:
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b"value: \xff\n", "not readable YAML (UnicodeDecodeError)"),
        ("[\n", "not readable YAML (ParserError)"),
        ("[" * 5000, "not readable YAML (nested too deeply)"),
        ("{}\n", "not a list of results (hub-docs eval_results.yaml)"),
        ("[]\n", "not a list of results (hub-docs eval_results.yaml)"),
        ("- value: 1\n- 3\n", "entry 1: not a mapping (hub-docs eval_results.yaml)"),
        ("- dataset: [1]\n", "entry 0: field dataset: not a mapping"),
        ("- {}\n- source: x\n", "entry 1: field source: not a mapping"),
        ("- value: true\n", "entry 0: field value: True is not a number"),
        ("- value: '75'\n", "entry 0: field value: '75' is not a number"),
    ],
)
def test_a_results_file_of_another_shape_is_one_line(tmp_path, text, message):
    path = write(tmp_path / "r.yaml", text)
    with pytest.raises(CogbenchError) as raised:
        read_results_file(path)
    assert str(raised.value) == f"{path}: {message}"


def test_a_results_file_of_the_documented_shape_is_read(tmp_path):
    path = write(
        tmp_path / "r.yaml", "- value: 75\n  dataset: {task_id: cogbench_vqa_acc}\n- value: null\n  source: {}\n"
    )
    assert read_results_file(path) == [
        {"value": 75, "dataset": {"task_id": "cogbench_vqa_acc"}},
        {"value": None, "source": {}},
    ]


def result_entry(value, notes=None) -> dict:
    return {
        "dataset": {"task_id": "cogbench_vqa_acc"},
        "value": value,
        "notes": notes or results_notes(scores(), "accuracy"),
    }


def test_each_result_is_the_details_value_to_two_decimals_with_its_notes():
    data = {"vqa": TaskData("d", details(), scores(), SCORES_PATH, None)}
    result = Verification()
    # a value written to 2 decimals may be half its last digit off: 75.005 and 74.995 both round to 75.00
    entries = [result_entry(75.0), result_entry(75.004), result_entry(75.005), result_entry(74.995)]
    check_results_file(Path("r.yaml"), entries, data, result)
    # per entry: its value and the notes' 6 numbers (95% CI [low, high] over 3 images; 3 images; cogbench 9.9)
    assert result.differences == [] and result.equal == 4 * (1 + 6)
    result = Verification()
    notes = results_notes(scores(), "accuracy").replace("3 images;", "4 images;")
    check_results_file(Path("r.yaml"), [result_entry(75.0), result_entry(75.01, notes)], data, result)
    assert [d.line() for d in result.differences] == [
        "r.yaml: entry 1: value: says 75.0100, the details give 75.0000",
        "r.yaml: entry 1: notes: number 5: says 4, the details give 3",
    ]
    lines = details()
    lines[1]["correct"] = True
    result = Verification()
    check_results_file(
        Path("r.yaml"), [result_entry(75.0)], {"vqa": TaskData("d", lines, scores(), SCORES_PATH, None)}, result
    )
    assert [d.line() for d in result.differences] == [
        "r.yaml: entry 0: value: says 75.0000, the details give 100.0000 (items: b)"
    ]


def test_a_result_for_no_cogbench_task_or_a_task_the_details_lack_is_refused():
    data = {"vqa": TaskData("d", details(), scores(), SCORES_PATH, None)}
    with pytest.raises(UsageError, match=r"^r.yaml: entry 1: task_id 'mmlu' is not a cogbench task$"):
        check_results_file(Path("r.yaml"), [result_entry(75.0), {"dataset": {"task_id": "mmlu"}}], data, Verification())
    with pytest.raises(UsageError, match=r"^r.yaml: entry 0: task_id None is not a cogbench task$"):
        check_results_file(Path("r.yaml"), [{}], data, Verification())
    codis = {"dataset": {"task_id": "codis_acc_p"}, "value": 1.0}
    with pytest.raises(UsageError, match=r"^r.yaml: entry 0: the details hold no codis run$"):
        check_results_file(Path("r.yaml"), [codis], data, Verification())


def test_verify_reads_each_results_file_of_a_folder_and_refuses_what_is_not_a_target(tmp_path):
    folder = tmp_path / ".eval_results"
    folder.mkdir()
    write(folder / "b.yaml", "[]\n")
    write(folder / "a.yaml", json.dumps([result_entry(75.0)]))
    empty = tmp_path / "empty"
    empty.mkdir()
    # a.yaml is read first (it is well-formed), then its details: a folder that is not a details dataset
    with pytest.raises(UsageError) as raised:
        verify(str(folder), details=str(empty))
    assert (
        str(raised.value) == f"{empty}: no data/<task>/test.parquet: not a details dataset written by publish-results"
    )
    write(folder / "a.yaml", "{}\n")
    with pytest.raises(CogbenchError, match=r"a\.yaml: not a list of results"):
        verify(str(folder), details=str(empty))
    with pytest.raises(UsageError) as raised:
        verify(str(tmp_path / "nothing-here"))
    assert str(raised.value) == (
        f"{tmp_path / 'nothing-here'}: no such file or folder (give a run folder, a details dataset or an .eval_results file)"
    )
    other = tmp_path / "results"
    other.mkdir()
    write(other / "a.yaml", "[]\n")  # a folder not named .eval_results, holding no scores.json: no run folder
    with pytest.raises(UsageError) as raised:
        verify(str(other))
    assert str(raised.value) == (
        f"{other}: no scores.json here or in {other / 'score'}; give a folder written by `cogbench score` or `eval`"
    )


def test_a_missing_org_name_whose_first_part_is_a_folder_here_is_a_mistyped_local_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs").mkdir()
    with pytest.raises(UsageError) as raised:
        verify("runs/a")
    assert str(raised.value) == "runs/a: no such file or folder (runs/ is a folder here, so it is read as a local path)"
    results = write(tmp_path / "r.yaml", json.dumps([result_entry(75.0)]))
    with pytest.raises(UsageError) as raised:
        verify(str(results), details="runs/a/b")
    assert str(raised.value) == (
        "runs/a/b: no such file or folder (runs/ is a folder here, so it is read as a local path)"
    )


def test_a_results_files_details_are_found_from_its_first_entrys_source(tmp_path):
    """publish-results gives every entry one source; the first entry's is the one followed."""
    entries = [result_entry(75.0), result_entry(75.0)]
    entries[0]["source"] = {"url": "https://elsewhere.example/datasets/me/details"}
    path = write(tmp_path / "r.yaml", json.dumps(entries))
    with pytest.raises(UsageError) as raised:
        verify(str(path))
    assert str(raised.value).startswith(f"{path}: source.url is on https://elsewhere.example:443, not on the Hub")


def test_details_that_cannot_be_downloaded_are_one_line():
    """A Hub repo id as the target: with the Hub unreachable (the tests run offline), one error line."""
    with pytest.raises(CogbenchError) as raised:
        verify("nobody/no-details", revision="v1")
    message = str(raised.value)
    assert (
        message.startswith("cannot download the details nobody/no-details@v1 from the Hub at ") and "\n" not in message
    )
    assert message.endswith("and there is no local folder nobody/no-details either")


def test_each_category_names_only_its_own_items_and_a_metric_without_items_stops_nothing():
    lines = details()
    lines[0]["correct"] = False  # a (location): extracted A, answer A
    lines[1]["correct"] = True  # b (event): extracted C, answer B
    stated = scores()
    # a metric the details cannot give listed first: the ones after it are still compared
    stated["metrics"] = {"accuracy_circular": {"overall": 1.0}, **stated["metrics"]}
    differences = shown(checked(lines, stated))
    assert (
        "run/scores.json: metrics.accuracy.per_category.location: says 100.0000, the details give 50.0000 (items: a)"
        in differences
    )
    assert (
        "run/scores.json: metrics.accuracy.per_category.event: says 50.0000, the details give 100.0000 (items: b)"
        in differences
    )


def test_a_category_names_no_item_of_another_whatever_its_name_sorts_after():
    """time sorts after overall (t > o): its column still names only its own items, here none."""
    lines = details()
    lines[1]["correct"] = True  # b (event) contradicts itself
    stated = scores()
    stated["metrics"]["accuracy_official"]["per_category"]["time"] = 10.0  # no item is of time
    assert (
        "run/scores.json: metrics.accuracy_official.per_category.time: says 10.0000, the details give nothing"
        in shown(checked(lines, stated))
    )


def test_a_description_items_cors_name_it_under_their_categories():
    """Two images, one entity each (recognised) and one time CoR each, judged 1 from its reply."""
    lines = [
        {
            "item_id": image,
            "recognition": {"annotated": 1, "recognized": 1},
            "cognition": [{"figure": 8, "category": "time", "index": 0, "verdict": 1}],
            "judge_replies": [{"figure": 8, "reply": "1. [1]"}],
        }
        for image in ("i1", "i2")
    ]
    fresh, _ = intervals.score_intervals("description", lines, COGBENCH_CATEGORIES)
    stated = {
        "task": "description",
        "judge": {"kind": "openai", "parsing": "tolerant"},
        "metrics": {
            "cognition": {
                "overall": 100.0,
                "per_category": {c: 100.0 if c == "time" else None for c in COGBENCH_CATEGORIES},
                "interval": fresh["cognition"],
            }
        },
    }
    assert shown(checked(lines, stated)) == []
    lines[0]["cognition"][0]["verdict"] = 0  # i1's verdict edited: its reply still reads 1; 1 of 2 now
    differences = shown(checked(lines, stated))
    assert differences[0] == "run/details.jsonl: item i1: CoR time 0: verdict 0, its Figure 8 judge reply reads 1"
    assert (
        "run/scores.json: metrics.cognition.per_category.time: says 100.0000, the details give 50.0000 (items: i1)"
        in differences
    )
    lines[0]["category"] = "time"  # a stray field of the Description line, naming its CoR's category too
    assert shown(checked(lines, stated)) == differences
