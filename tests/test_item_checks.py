"""``item_checks.item_problems`` on hand-written details lines: what each derived field must be.

Every expected verdict, parsed answer and flag below is worked out by hand from the rules the
module cites (CODIS: the last line without its "Answer:" label, nearer its own ground truth;
VQA: the authors' first character, an explicit letter or one quoted option; Recognition:
similarity above 0.6), never from the code under test. Fast (no run folder, no model): the
mutation run of ``verifying/item_checks.py`` uses this file.
"""

from __future__ import annotations

import copy
import json

from cogbench.reference_eval.verifying.item_checks import item_problems


def codis_pair(**edits) -> dict:
    """A consistent pair: query 1 answers "up" (its truth), query 2 "down" (its truth)."""
    detail = {
        "item_id": "p1",
        "outputs_differ": True,
        "queries": [
            {"query": 1, "output": "I look.\nAnswer: up", "answer": "up", "final_answer": "up"},
            {"query": 2, "output": "I look again.\ndown", "answer": "down", "final_answer": "down"},
        ],
    }
    for query in detail["queries"]:
        query.update(right=True, rule_right=True)
    for (index, field), value in edits.items():
        if index is None:
            detail[field] = value
        else:
            detail["queries"][index][field] = value
    return detail


def edit(detail: dict, index: int | None, field: str, value) -> dict:
    detail = copy.deepcopy(detail)
    (detail if index is None else detail["queries"][index])[field] = value
    return detail


def test_a_consistent_codis_pair_has_no_problem_under_every_judge():
    for kind in ("rule", "openai", "vllm"):
        assert item_problems("codis", [codis_pair()], kind) == {}
    # listed in either order: the pair's queries are read by their number
    reversed_pair = codis_pair()
    reversed_pair["queries"].reverse()
    assert item_problems("codis", [reversed_pair], "rule") == {}


def test_codis_derived_fields_that_their_outputs_contradict_are_named():
    pair = codis_pair()
    assert item_problems("codis", [edit(pair, None, "outputs_differ", False)], "rule") == {
        "p1": ["outputs_differ is False, its outputs give the opposite"]
    }
    same = edit(edit(pair, 1, "output", "Hm.\nAnswer: UP!"), 1, "final_answer", "UP!")
    same["queries"][1]["rule_right"] = same["queries"][1]["right"] = False  # "up" is nearer query 1's truth
    assert item_problems("codis", [same], "rule") == {"p1": ["outputs_differ is True, its outputs give the opposite"]}
    assert item_problems("codis", [edit(pair, 0, "final_answer", "down")], "rule") == {
        "p1": ["query 1: final_answer 'down' is not what its output parses to"]
    }
    assert item_problems("codis", [edit(pair, 1, "rule_right", False)], "openai") == {
        "p1": ["query 2: rule_right is False, the rule judge says True"]
    }
    # the rule judge's own verdict is checked only when the rule judge gave the scores
    flipped = edit(pair, 0, "right", False)
    assert item_problems("codis", [flipped], "rule") == {
        "p1": ["query 1: verdict right=False, the rule judge says True"]
    }
    assert item_problems("codis", [flipped], "openai") == {}
    assert item_problems("codis", [flipped], "vllm") == {}
    # both answers wrong (each output gives the other query's truth): the rule judge says False twice
    swapped = edit(edit(pair, 0, "answer", "down"), 1, "answer", "up")
    assert item_problems("codis", [swapped], "rule") == {
        "p1": [
            "query 1: rule_right is True, the rule judge says False",
            "query 1: verdict right=True, the rule judge says False",
            "query 2: rule_right is True, the rule judge says False",
            "query 2: verdict right=True, the rule judge says False",
        ]
    }


def test_codis_fields_without_what_derives_them_are_not_checked():
    pair = codis_pair()
    no_output = edit(edit(edit(pair, 0, "output", None), 0, "final_answer", "sideways"), None, "outputs_differ", False)
    no_output["queries"][0]["rule_right"] = False
    assert item_problems("codis", [no_output], "rule") == {}
    # query 1 kept no output: query 2 is still checked
    second = edit(edit(pair, 0, "output", None), 1, "final_answer", "up")
    assert item_problems("codis", [second], "rule") == {
        "p1": ["query 2: final_answer 'up' is not what its output parses to"]
    }
    # no ground truth for query 2: the final answer is still checked, the rule verdicts are not
    no_answer = edit(edit(edit(pair, 1, "answer", None), 0, "final_answer", "u p"), 0, "rule_right", False)
    assert item_problems("codis", [no_answer], "rule") == {
        "p1": ["query 1: final_answer 'u p' is not what its output parses to"]
    }
    both = edit(no_answer, 1, "final_answer", "d own")
    assert item_problems("codis", [both], "rule") == {
        "p1": [
            "query 1: final_answer 'u p' is not what its output parses to",
            "query 2: final_answer 'd own' is not what its output parses to",
        ]
    }
    no_fields = codis_pair()
    for query in no_fields["queries"]:
        del query["final_answer"], query["rule_right"]
    assert item_problems("codis", [no_fields], "rule") == {}


def test_codis_llm_verdicts_are_read_from_their_stored_replies_in_the_runs_parsing_mode():
    pair = edit(edit(codis_pair(), 0, "judge_reply", "Wrong."), 1, "judge_reply", "**Right**")
    expected = {"p1": ["query 1: verdict right=True, its judge reply 'Wrong.' reads False"]}
    assert item_problems("codis", [pair], "openai") == expected
    assert item_problems("codis", [pair], "vllm", "tolerant") == expected
    assert item_problems("codis", [pair], "rule") == {}  # the rule judge keeps no reply to read
    no_reply = edit(codis_pair(), 1, "judge_reply", None)
    assert item_problems("codis", [no_reply], "openai") == {
        "p1": ["query 2: verdict right=True, the judge gave no reply"]
    }
    # "Not right": tolerant reads no verdict (a negation), official reads right ('right' in the reply)
    negated = edit(codis_pair(), 0, "judge_reply", "Not right")
    assert item_problems("codis", [negated], "openai", "official") == {}
    assert item_problems("codis", [negated], "openai", "tolerant") == {
        "p1": ["query 1: verdict right=True, its judge reply 'Not right' reads None"]
    }
    none_right = edit(negated, 0, "right", None)
    assert item_problems("codis", [none_right], "openai", "tolerant") == {}


def vqa_item(**fields) -> dict:
    """Answer B ("a dog"), answered "B. a dog": both extractions give B."""
    detail = {
        "item_id": "v1",
        "answer": "B",
        "response": "B. a dog",
        "choices": ["a cat", "a dog", "a bird", "a fish"],
        "extracted": "B",
        "extracted_official": "B",
        "correct": True,
        "correct_official": True,
    }
    return {**detail, **fields}


def test_vqa_letters_and_flags_follow_from_the_response():
    assert item_problems("vqa", [vqa_item()], "rule") == {}
    # "a dog" quotes option B; its first character "a" is no option letter
    quoted = vqa_item(response="a dog", extracted_official=None, correct_official=False)
    assert item_problems("vqa", [quoted], "rule") == {}
    assert item_problems("vqa", [vqa_item(extracted="C")], "rule") == {
        "v1": [
            "extracted 'C' is not what the response and its choices give",
            "correct is True, but extracted 'C' vs answer 'B'",
        ]
    }
    assert item_problems("vqa", [vqa_item(extracted_official="A", correct_official=False)], "rule") == {
        "v1": ["extracted_official 'A' is not what the response parses to"]
    }
    assert item_problems("vqa", [vqa_item(correct=False)], "rule") == {
        "v1": ["correct is False, but extracted 'B' vs answer 'B'"]
    }
    assert item_problems("vqa", [vqa_item(correct_official=False)], "rule") == {
        "v1": ["correct_official is False, but extracted_official 'B' vs answer 'B'"]
    }
    wrong = vqa_item(response="C", extracted="C", extracted_official="C", correct=True, correct_official=False)
    assert item_problems("vqa", [wrong], "rule") == {"v1": ["correct is True, but extracted 'C' vs answer 'B'"]}


def test_vqa_checks_only_what_the_line_keeps():
    # no choices kept: the robust letter is not re-derived, the official one and the flags are
    assert item_problems("vqa", [{**vqa_item(extracted="D", correct=False), "choices": None}], "rule") == {}
    # no response kept: no letter is re-derived, the flags still follow from the letters
    no_response = vqa_item(response=None, extracted="D", extracted_official="D", correct=True)
    assert item_problems("vqa", [no_response], "rule") == {
        "v1": [
            "correct is True, but extracted 'D' vs answer 'B'",
            "correct_official is True, but extracted_official 'D' vs answer 'B'",
        ]
    }
    no_letters = vqa_item()
    del no_letters["extracted"], no_letters["extracted_official"]
    no_letters.update(response=None, correct=False, correct_official=False)
    assert item_problems("vqa", [no_letters], "rule") == {}
    # a circular run's rotations, and a line without its answer, are not re-derived here
    assert item_problems("vqa", [vqa_item(extracted="C", rotations=[])], "rule") == {}
    assert item_problems("vqa", [vqa_item(extracted="C", answer=None)], "rule") == {}


def description_item(matches, recognized, annotated=None, cognition=(), replies=None) -> dict:
    detail = {
        "item_id": "d1",
        "recognition": {"annotated": len(matches) if annotated is None else annotated, "recognized": recognized},
        "cognition": list(cognition),
    }
    if matches is not None:
        detail["recognition"]["matches"] = matches
    if replies is not None:
        detail["judge_replies"] = replies
    return detail


def test_recognition_flags_follow_from_the_similarity_and_the_counts_from_the_matches():
    matches = [
        {"entity": "dog", "similarity": 0.7, "recognized": True},
        {"entity": "kite", "similarity": 0.5, "recognized": False},
        {"entity": "sun", "similarity": 0.6, "recognized": True},  # at the threshold: not re-derivable
        {"entity": "cat", "similarity": 0.6000005, "recognized": False},  # within the 6 decimals kept
        {"entity": "cow", "similarity": 0.5999995, "recognized": True},  # within them, below
        {"entity": "hat", "similarity": 1, "recognized": True},
        {"entity": "car", "similarity": None, "recognized": False},
    ]
    assert item_problems("description", [description_item(matches, 4)], "rule") == {}
    flipped = copy.deepcopy(matches)
    flipped[0]["recognized"], flipped[1]["recognized"] = False, True
    flipped.append({"entity": "cup", "similarity": 0.600002, "recognized": False})
    assert item_problems("description", [description_item(flipped, 4, annotated=7)], "openai") == {
        "d1": [
            "recognition.annotated is 7, 8 entities are listed",
            "entity 'dog': recognized False, its similarity 0.7 vs the threshold 0.6 says otherwise",
            "entity 'kite': recognized True, its similarity 0.5 vs the threshold 0.6 says otherwise",
            "entity 'cup': recognized False, its similarity 0.600002 vs the threshold 0.6 says otherwise",
        ]
    }
    assert item_problems("description", [description_item(matches, 5)], "rule") == {
        "d1": ["recognition.recognized is 5, its matches say otherwise"]
    }
    assert item_problems("description", [description_item(None, 9, annotated=2)], "rule") == {}


def test_cognition_verdicts_are_read_from_their_figures_reply_by_position():
    cognition = [
        {"figure": 8, "category": "Location", "index": 0, "verdict": 1},
        {"figure": 9, "category": "Event", "index": 0, "verdict": 1},
        {"figure": 8, "category": "Time", "index": 1, "verdict": 0},
    ]
    replies = [{"figure": 8, "reply": "1. [1] 2. [0]"}]  # Figure 9's call is not kept: not checked
    item = description_item([], 0, cognition=cognition, replies=replies)
    assert item_problems("description", [item], "openai") == {}
    turned = copy.deepcopy(item)
    turned["judge_replies"][0]["reply"] = "1. [0] 2. [1]"
    expected = {
        "d1": [
            "CoR Location 0: verdict 1, its Figure 8 judge reply reads 0",
            "CoR Time 1: verdict 0, its Figure 8 judge reply reads 1",
        ]
    }
    assert item_problems("description", [turned], "vllm") == expected
    assert item_problems("description", [turned], "rule") == {}  # no LLM judge: no reply to read
    silent = copy.deepcopy(item)
    silent["judge_replies"] = [{"figure": 9, "reply": None}]
    assert item_problems("description", [silent], "openai") == {
        "d1": ["CoR Event 0: verdict 1, its Figure 9 judge call got no reply"]
    }
    # unreadable in the official mode (the authors' parser wants "1. [1]"), readable when tolerant
    loose = copy.deepcopy(item)
    loose["judge_replies"][0]["reply"] = "1: (1)\n2: (0)"
    assert item_problems("description", [loose], "openai", "tolerant") == {}
    assert item_problems("description", [loose], "openai", "official") == {
        "d1": [
            "CoR Location 0: verdict 1, its Figure 8 judge reply reads None",
            "CoR Time 1: verdict 0, its Figure 8 judge reply reads None",
        ]
    }


def test_only_items_with_problems_are_listed_each_under_its_own_id():
    good, bad = vqa_item(), vqa_item(item_id="v2", correct=False)
    assert item_problems("vqa", [good, bad, good], "rule") == {
        "v2": ["correct is False, but extracted 'B' vs answer 'B'"]
    }


def test_the_task_and_the_counts_are_compared_by_value_as_read_from_json():
    """verify passes scores.json's task and details.jsonl's counts as json.loads makes them: new
    objects, never the module's constants (and counts past CPython's small-int cache, 256)."""
    task = json.loads('"codis"')
    assert item_problems(task, [edit(codis_pair(), None, "outputs_differ", False)], "rule") == {
        "p1": ["outputs_differ is False, its outputs give the opposite"]
    }
    flipped = edit(codis_pair(), 0, "right", False)
    assert item_problems(task, [flipped], json.loads('"rule"')) == {
        "p1": ["query 1: verdict right=False, the rule judge says True"]
    }
    matches = [{"entity": f"e{n}", "similarity": 0.9, "recognized": True} for n in range(300)]
    line = json.loads(json.dumps(description_item(matches, 300)))
    assert item_problems("description", [line], "rule") == {}


def test_a_vqa_line_read_from_json_is_compared_by_value():
    line = json.loads(json.dumps(vqa_item()))  # its letters are new strings, as details.jsonl gives them
    assert item_problems(json.loads('"vqa"'), [line], "rule") == {}


def test_a_letter_or_count_below_the_derived_one_is_named_too():
    # "A" sorts before the robust letter B, 2 is below the 3 recognized matches
    assert item_problems("vqa", [vqa_item(extracted="A", correct=False)], "rule") == {
        "v1": ["extracted 'A' is not what the response and its choices give"]
    }
    matches = [{"entity": e, "similarity": 0.9, "recognized": True} for e in ("dog", "cat", "hat")]
    assert item_problems("description", [description_item(matches, 2)], "rule") == {
        "d1": ["recognition.recognized is 2, its matches say otherwise"]
    }


def test_more_entities_stated_than_listed_and_a_verdict_past_the_small_ints_are_compared_by_value():
    matches = [{"entity": "dog", "similarity": 0.9, "recognized": True}]
    assert item_problems("description", [description_item(matches, 1, annotated=2)], "rule") == {
        "d1": ["recognition.annotated is 2, 1 entities are listed"]
    }
    # the authors' parser (official mode) reads any number in brackets: "[300]" is 300, as the line says
    cognition = [
        {"figure": 8, "category": "Location", "index": 0, "verdict": 300},
        {"figure": 8, "category": "Time", "index": 1, "verdict": 0},
    ]
    item = description_item([], 0, cognition=cognition, replies=[{"figure": 8, "reply": "1. [300] 2. [0]"}])
    assert item_problems("description", [json.loads(json.dumps(item))], "openai", "official") == {}


def test_a_recognized_flag_written_as_a_json_integer_is_read_by_value():
    matches = [
        {"entity": "dog", "similarity": 0.9, "recognized": 1},
        {"entity": "cat", "similarity": 0.1, "recognized": 0},
    ]
    assert item_problems("description", [description_item(matches, 1)], "rule") == {}
