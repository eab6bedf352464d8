"""``cogbench explain`` on VQA, and the command itself (issue 41).

One real VQA run on the real build is the A run; each B run changes one stage (answers, the
rendered prompt's hash, questions left out, the think tags that split the final answer from its
reasoning), and ``explain`` must give that stage 100% of B - A with exactly the changed questions.
Then the command: two tasks refused in one line, Markdown and ``--json``, and ``--published``
beside the papers' rows. The helpers, the CODIS run and the attribution on CODIS are in
tests/test_explain.py.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from conftest import needs_real_data
from test_explain import (
    EXACT,
    assert_all_in,
    codis_a,  # noqa: F401 (the module-scoped CODIS run)
    explain,
    score,
    sha,
)

from cogbench.cli import main

# --- VQA ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def vqa_rows(built_release) -> list[dict]:
    from cogbench.dataset_builders.load import load_config

    return load_config(str(built_release), "vqa").remove_columns("image").to_list()


def vqa_lines(rows, wrong=(), salt=(), think=()):
    lines = []
    for row in rows:
        shift = 1 if row["question_id"] in wrong else 0
        letter = "ABCD"[(row["answer"] + shift) % 4]
        # a think block naming another letter: read as the answer only when the block is not split off
        output = f"<think>{'ABCD'[(row['answer'] + 2) % 4]}</think>{letter}" if row["question_id"] in think else letter
        suffix = "-v2" if row["question_id"] in salt else ""
        lines.append(
            {
                "task": "vqa",
                "item_id": row["question_id"],
                "model": "example-vlm",
                "prompt_id": "vqa-v1",
                "rendered_prompt_sha256": sha(row["question_id"] + suffix),
                "output": output,
            }
        )
    return lines


@pytest.fixture(scope="module")
def vqa_a(built_release, vqa_rows, tmp_path_factory) -> Path:
    return score(built_release, "vqa", vqa_lines(vqa_rows), tmp_path_factory.mktemp("vqa") / "a")


def sample_ids(rows, seed, count):
    return set(random.Random(seed).sample([row["question_id"] for row in rows], count))


@needs_real_data
@pytest.mark.parametrize("seed", range(8))
def test_vqa_changed_answers_are_the_output_stage(built_release, vqa_rows, vqa_a, tmp_path, seed):
    ids = sample_ids(vqa_rows, 600 + seed, 1 + 4 * seed)
    explanation = explain(vqa_a, score(built_release, "vqa", vqa_lines(vqa_rows, wrong=ids), tmp_path / "b"))
    assert_all_in(explanation, "output", ids)
    for item in ids:  # by hand: one question of N wrong
        assert explanation.contributions["accuracy"][item] == pytest.approx(-100 / len(vqa_rows), abs=EXACT)


@needs_real_data
@pytest.mark.parametrize("seed", range(5))
def test_vqa_changed_prompts_are_the_prompt_stage(built_release, vqa_rows, vqa_a, tmp_path, seed):
    ids = sample_ids(vqa_rows, 700 + seed, 2 + seed)
    lines = vqa_lines(vqa_rows, wrong=ids, salt=ids)
    assert_all_in(explain(vqa_a, score(built_release, "vqa", lines, tmp_path / "b")), "prompt", ids)


@needs_real_data
@pytest.mark.parametrize("seed", range(5))
def test_vqa_questions_one_run_lacks_are_the_items_stage(built_release, vqa_rows, tmp_path, seed):
    ids = sample_ids(vqa_rows, 800 + seed, 3 + seed)
    a = score(built_release, "vqa", vqa_lines(vqa_rows, wrong=ids), tmp_path / "a")
    lines = [line for line in vqa_lines(vqa_rows) if line["item_id"] not in ids]
    assert_all_in(explain(a, score(built_release, "vqa", lines, tmp_path / "b", allow_partial=True)), "items", ids)


@needs_real_data
@pytest.mark.parametrize("seed", range(3))
def test_vqa_another_think_tag_split_is_the_parse_stage(built_release, vqa_rows, tmp_path, seed):
    ids = sample_ids(vqa_rows, 900 + seed, 2 + seed)
    lines = vqa_lines(vqa_rows, think=ids)
    a = score(built_release, "vqa", lines, tmp_path / "a")
    b = score(built_release, "vqa", lines, tmp_path / "b", think_tags=(("<r>", "</r>"),))
    assert_all_in(explain(a, b), "parse", ids)


# --- the command: refusals, Markdown and JSON, --published -----------------------------


@needs_real_data
def test_the_command_refuses_two_tasks_in_one_line(codis_a, vqa_a, capsys):  # noqa: F811
    assert main(["explain", str(codis_a), str(vqa_a)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and "different tasks" in err and len(err.splitlines()) == 1


@needs_real_data
def test_the_command_prints_markdown_and_json(codis_a, vqa_a, built_release, vqa_rows, tmp_path, capsys):  # noqa: F811
    ids = sample_ids(vqa_rows, 1000, 4)
    b = score(built_release, "vqa", vqa_lines(vqa_rows, wrong=ids), tmp_path / "b")
    assert main(["explain", str(vqa_a), str(b), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert set(printed["stages"]["output"]["assigned"]) == ids and printed["rule"]
    assert main(["explain", str(vqa_a), str(b)]) == 0
    text = capsys.readouterr().out
    assert "| overall |" in text and "### output: side by side" in text


@needs_real_data
def test_published_names_the_protocol_differences(codis_a, vqa_a, capsys):  # noqa: F811
    assert main(["explain", str(codis_a), "--published", "GPT-4V", "--json"]) == 0
    gap = json.loads(capsys.readouterr().out)
    overall = gap["metrics"]["acc_p"]["columns"]["overall"]
    assert overall["published"] == 32.3 and overall["difference"] == pytest.approx(overall["run"] - 32.3)
    assert overall["inside"] is False
    carried = gap["metrics"]["acc_p"]["carried_by"]
    assert set(carried["categories"]) == set(gap["metrics"]["acc_p"]["columns"]) - {"overall"}
    text = " ".join(gap["protocol_differences"])
    assert "human judges" in text and "gpt-4-turbo-preview" in text and "2026-10-23" in text and "rule" in text
    assert main(["explain", str(vqa_a), "--published", "GPT-4V"]) == 0
    assert "first character" in capsys.readouterr().out
    assert main(["explain", str(vqa_a), "--published", "No-Such-Model"]) == 2
    assert "publish no vqa number" in capsys.readouterr().err


@needs_real_data
def test_the_python_api_returns_what_the_command_prints(codis_a, vqa_a, built_release, vqa_rows, tmp_path, capsys):  # noqa: F811
    """`cogbench.explain` is the command's code path: the same JSON; bad input is a UsageError, not SystemExit."""
    import cogbench
    from cogbench.errors import UsageError

    ids = sample_ids(vqa_rows, 1100, 3)
    b = score(built_release, "vqa", vqa_lines(vqa_rows, wrong=ids), tmp_path / "b")
    found = cogbench.explain(vqa_a, b)
    assert set(found["stages"]["output"]["assigned"]) == ids
    assert main(["explain", str(vqa_a), str(b), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(json.dumps(found))
    gap = cogbench.explain(codis_a, published="GPT-4V")
    assert gap["metrics"]["acc_p"]["columns"]["overall"]["published"] == 32.3
    with pytest.raises(UsageError, match="different tasks"):
        cogbench.explain(codis_a, vqa_a)
    with pytest.raises(UsageError, match="two runs"):
        cogbench.explain(vqa_a)
