"""The rule that splits a reply into its final answer and its reasoning (``answers/reasoning.py``; docs/scoring.md,
"Replies that reason"), one hand-written reply per rule (issues 39 and 48 item 3). Light imports: the mutation
run of ``reasoning.py`` uses this file (mutation.toml)."""

from __future__ import annotations

import json
import tracemalloc
from dataclasses import FrozenInstanceError, replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cogbench.errors import UsageError
from cogbench.reference_eval.answers.reasoning import (
    THINK_TAGS,
    final_answer,
    parse_tags,
    prompt_opens_think,
    split_reply,
    stated_thinking,
    thinking_state,
)
from cogbench.reference_eval.formats.predictions import Prediction
from cogbench.reference_eval.metrics import vqa

HARMONY_RAW = "<|channel|>analysis<|message|>Answer: A? A fits.<|end|><|start|>assistant<|channel|>final<|message|>"

# (content, separate reasoning, finish reason, thinking) -> (answer, status): one row per rule.
RULES = [
    ("B", None, None, None, "B", "answered"),  # no tag, no field: the text as given
    (" B ", None, "stop", None, " B ", "answered"),  # ... unstripped, as the authors' parsing reads it
    ("<think>A, surely A</think>\n\nB", None, "stop", None, "B", "answered"),  # rule 1
    ("◁think▷A◁/think▷B", None, None, None, "B", "answered"),  # Kimi-VL's tags
    ("<think>a<think>b</think>c</think> D", None, None, None, "D", "answered"),  # nested: the last close ends all
    ("<think>a</think>x<think>b</think>C", None, None, None, "C", "answered"),  # several blocks
    ("A, surely A</think>B", None, None, "on", "B", "answered"),  # the template opened the block
    ("B", "I think A", "stop", None, "B", "answered"),  # separate field (reasoning_content)
    (None, "I think A", "stop", None, "", "empty"),  # content null, reasoning only
    ("<think>A is likely", None, "stop", None, "", "unclosed"),  # rule 2: never closed, stopped normally
    ("<think>A is likely", None, None, None, "", "unclosed"),  # ... or no finish reason recorded
    ("<think>A is likely", None, "length", None, "", "truncated"),  # ... at the token limit
    ("<think>a</think>B<think>c", None, "stop", None, "", "unclosed"),  # re-opened, never closed
    ("<think>a</think><think>b", None, "stop", None, "", "unclosed"),  # ... right where the block closed
    ("", "so far A", "length", None, "", "truncated"),  # rule 3: the limit, no answer
    ("A is likely, so", None, "length", "on", "", "truncated"),  # rule 3: thinking on, block never closed
    ("Answer: A, hmm", None, "stop", "on", "", "unclosed"),  # thinking on: untagged text is the open block
    ("Answer: A, hmm", None, None, "on", "", "unclosed"),
    ("B", "I think A", "stop", "on", "B", "answered"),  # ... unless a reasoning field took the reasoning
    ("A, surely A</think>B", None, "stop", None, "B", "answered"),  # R1-style: the template opened the block
    ("A, surely A</think>B", None, "stop", "auto", "B", "answered"),
    ("Answer: A. Or is it", None, "length", None, "", "unscored"),  # rule 4: cut, thinking unknown: not read
    ("Answer: A. Or is it", None, "length", "auto", "", "unscored"),
    ("Answer: A. Or is it", None, "length", "on", "", "truncated"),
    ("The answer is B because", None, "length", "off", "The answer is B because", "cut"),  # rule 5
    ("The answer is B because", "so B", "length", None, "The answer is B because", "cut"),  # a field took it
    ("<think>x</think>B, since", None, "length", None, "B, since", "cut"),
    ("<THINK>Answer: A</THINK>B", None, "stop", None, "B", "answered"),  # tags in any case
    ("<Think>Answer: A</think>\nB", None, "stop", None, "B", "answered"),
    ("◁THINK▷A◁/Think▷B", None, None, None, "B", "answered"),
    ("<Thinking>A", None, "length", "off", "", "truncated"),
    (HARMONY_RAW + "B", None, "stop", None, "B", "answered"),  # gpt-oss harmony served raw
    (HARMONY_RAW + "B<|return|>", None, "stop", None, "B", "answered"),
    ("<|channel|>analysis<|message|>Answer: A", None, "length", None, "", "truncated"),
    ("<|channel|>analysis<|message|>Answer: A<|end|>", None, "stop", None, "", "unclosed"),
    ("<think>A</think>   ", None, "stop", None, "", "empty"),  # rule 6
    (" \n ", None, "stop", None, "", "empty"),
    ("◁think▷a◁/think▷x<think>b</think>D", None, "stop", None, "D", "answered"),  # the last tag, whichever pair
    ("B", 42, None, None, "B", "answered"),  # a reasoning field of the wrong type: ignored, noted
]


@pytest.mark.parametrize(("content", "reasoning", "finish", "thinking", "answer", "status"), RULES)
def test_each_rule(content, reasoning, finish, thinking, answer, status):
    reply = split_reply(content, reasoning, finish, thinking)
    assert (reply.answer, reply.status) == (answer, status)
    assert ("ignored" in reply.note) == (reasoning == 42)


# The chat template's generation prompt, where the backend saw it (``think_opened``), decides over the setting.
OPENED = [
    ("Answer: A. Or is it", "length", "auto", True, "", "truncated"),  # the template opened the block
    ("Answer: A. Or is it", "length", "auto", False, "Answer: A. Or is it", "cut"),  # it did not: the text is answer
    ("B", "stop", "on", False, "B", "answered"),  # thinking on, a template without the switch
    ("Answer: A", "stop", "off", True, "", "unclosed"),
    ("A</think>B", "length", None, True, "B", "cut"),
]


@pytest.mark.parametrize(("content", "finish", "thinking", "opened", "answer", "status"), OPENED)
def test_a_known_template_decides_where_the_reply_begins(content, finish, thinking, opened, answer, status):
    reply = split_reply(content, None, finish, thinking, opened=opened)
    assert (reply.answer, reply.status) == (answer, status)


@pytest.mark.parametrize(
    ("prompt", "opens"),
    [
        ("<|im_start|>assistant\n<think>\n", True),  # Qwen3-Thinking, Qwen3 with enable_thinking
        ("<｜Assistant｜><think>\n", True),  # DeepSeek-R1
        ("<|im_start|>assistant\n<THINK>", True),
        ("<|im_start|>assistant\n<think>\n\n</think>\n\n", False),  # Qwen3 with enable_thinking false
        ("<|im_start|>assistant\n", False),
        ("<|start|>assistant", False),  # gpt-oss: the model writes its channels itself
    ],
)
def test_a_generation_prompt_that_ends_in_an_open_block(prompt, opens):
    assert prompt_opens_think(prompt) is opens


def test_think_tags_are_configurable_and_checked():
    assert parse_tags([["<a>", "<b>"]]) == (("<a>", "<b>"),)  # any two different tags, in either order
    assert parse_tags([["<b>", "<a>"]]) == (("<b>", "<a>"),)
    with pytest.raises(UsageError, match="--think-tags"):
        parse_tags([["<x>", "<x>"]])
    # Overlapping tags: the one that starts last ends the reasoning (or leaves it open).
    assert split_reply("[xabcdE", tags=parse_tags([["[", "ab"], ["{", "bcd"]])).answer == "E"
    assert split_reply("<a>B", tags=parse_tags([["<a", "a>"]])).answer == "B"
    assert split_reply("<t>B", tags=parse_tags([["<t", "<t>"]])).answer == "B"  # a closing tag where one opens
    # Two starting at one place: the longer, whichever is listed first.
    for pairs in ([["<t>", "ab"], ["<u>", "abc"]], [["<u>", "abc"], ["<t>", "ab"]]):
        assert split_reply("xabcY", tags=parse_tags(pairs)).answer == "Y"
    with pytest.raises(UsageError, match="--think-tags"):
        parse_tags([["<y>", "".join(["<y", ">"])]])  # equal, not the same object (as argparse gives them)
    tags = parse_tags([["[R]", "[/R]"]])
    assert split_reply("[R]A[/R]B", tags=tags).answer == "B"
    assert split_reply("<think>A</think>B", tags=tags).answer == "<think>A</think>B"
    assert parse_tags(None) == THINK_TAGS
    with pytest.raises(UsageError, match="--think-tags"):
        parse_tags([["", "</think>"]])


LETTERS = st.sampled_from("ABCD")
NOISE = st.text(st.characters(blacklist_characters="<>◁▷"), max_size=40)


@settings(max_examples=300, deadline=None)
@given(
    reasoning=st.lists(st.one_of(LETTERS, NOISE, LETTERS.map(lambda x: f"Answer: {x}")), max_size=8),
    final=LETTERS,
    tags=st.sampled_from(THINK_TAGS),
    field=st.booleans(),
)
def test_the_scored_letter_comes_from_the_final_answer_only(reasoning, final, tags, field):
    """Whatever letters or "Answer: X" the reasoning holds, inline or in a field, the letter is the final one."""
    thought = " ".join(reasoning)
    content = f"Answer: {final}" if field else f"{tags[0]}{thought}{tags[1]}\nAnswer: {final}"
    reply = split_reply(content, thought if field else None, "stop")
    choices = ["w", "x", "y", "z"]
    assert vqa.extract_robust(reply.answer, choices) == final
    assert reply.answer == f"Answer: {final}"
    assert thought in reply.reasoning


def test_ten_megabytes_of_reasoning_keep_memory_flat():
    thought = "hmm, maybe A. " * (10 * 2**20 // 14)
    content = f"<think>{thought}</think>B"
    tracemalloc.start()
    reply = split_reply(content, None, "stop")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert reply.answer == "B"
    assert peak < 3 * len(content)  # the reasoning copied at most twice, never per character


@pytest.mark.parametrize(
    ("thinking", "opened", "state"),
    [
        ("on", None, "on"),
        ("off", None, "off"),
        ("auto", None, "auto"),
        (None, None, "auto"),
        ("auto", True, "on"),
        ("on", False, "off"),  # the template is the fact: a template without the switch never opened a block
        ("off", True, "on"),
    ],
)
def test_the_template_decides_over_the_setting(thinking, opened, state):
    assert thinking_state(thinking, opened) == state


@pytest.mark.parametrize(
    ("recorded", "stated", "used"),
    [
        ("on", "auto", "on"),
        ("on", "off", "on"),  # the record wins (score refuses the pair before: scoring/pipeline.py)
        ("auto", "off", "off"),  # score --thinking stands for a file that states nothing
        (None, "on", "on"),
        (None, "auto", None),
        ("auto", None, "auto"),
        (7, "auto", None),  # not a setting
    ],
)
def test_score_thinking_stands_for_a_prediction_that_records_none(recorded, stated, used):
    assert stated_thinking(recorded, stated) == used


def test_a_prediction_is_split_by_its_own_record():
    cut = Prediction(task="vqa", item_id="q", output="Answer: A, or", finish_reason="length")
    assert final_answer(cut).status == "unscored"
    assert final_answer(cut, thinking="off").answer == "Answer: A, or"
    assert final_answer(replace(cut, generation={"thinking": "on"}), thinking="off").status == "truncated"
    assert final_answer(replace(cut, think_opened=False)).status == "cut"
    assert final_answer(replace(cut, reasoning="A?", output="B")).answer == "B"
    tags = parse_tags([["[R]", "[/R]"]])
    assert final_answer(replace(cut, output="[r]A[/R]B", finish_reason="stop"), tags).answer == "B"


def test_a_reply_is_not_changed_once_split():
    with pytest.raises(FrozenInstanceError):
        split_reply("B").answer = "A"  # type: ignore[misc]


def test_what_is_kept_beside_the_answer():
    # Nothing after the block at the limit: the block is the reasoning, the reply's trailing space not
    assert split_reply("<think>x</think> ", None, "length").reasoning == "<think>x</think>"
    assert split_reply("  ", "so far", "length", "off").reasoning == "so far\n  "
    reply = split_reply("<think>A?</think>B", "from the field", "stop")
    assert (reply.reasoning, reply.no_answer, reply.truncated) == ("from the field\n<think>A?</think>", False, False)
    unread = split_reply("Answer: A, or", None, "length")
    assert (unread.answer, unread.reasoning, unread.no_answer, unread.truncated) == ("", "", True, False)
    assert split_reply("<think>A", None, "length").truncated
    assert split_reply(None, "only this", "stop").reasoning == "only this"
    assert split_reply("B", ["a list"]).note == "reasoning field of type list ignored"


@pytest.mark.parametrize(
    ("final", "answer"),
    [("B<|end|>", "B"), ("B <|call|>", "B"), ("B<|RETURN|>", "B"), ("B", "B"), ("B<|end|>x", "B<|end|>x")],
)
def test_a_harmony_final_message_without_the_token_that_ends_it(final, answer):
    assert split_reply(f"{HARMONY_RAW}{final}").answer == answer
    for other in ("<think>x</think>", "◁think▷x◁/think▷", "<reasoning>x</reasoning>"):
        assert split_reply(f"{other}{final}").answer == final  # only harmony's final channel drops it


def test_a_finish_reason_read_from_a_file_is_compared_by_value():
    """JSON values are not interned: ``length`` read from a predictions file is a new string."""
    length = json.loads('"length"')
    assert split_reply("<think>A", None, length).status == "truncated"
    assert split_reply("Answer: A", None, "stop", json.loads('"on"')).status == "unclosed"
    assert split_reply("<think>A", None, json.loads('"length"')).truncated
    assert split_reply("Answer: A, or", None, "".join(["len", "gth"])).status == "unscored"
