"""CODIS context analyses on the real config: answer bias (Table 6), output variability (Table 4), --no-context."""

from __future__ import annotations

import json

import pytest
from test_eval_run import _eval_argv
from test_score import swapped

from cogbench.cli import main
from cogbench.errors import UsageError
from cogbench.reference_eval.formats.predictions import read_predictions
from cogbench.reference_eval.judges import codis as codis_judge
from cogbench.reference_eval.judges import codis_equality
from cogbench.reference_eval.metrics.answer_bias import PAPER_PAIRS, WordPair, parse_word_pairs, stated_word
from cogbench.reference_eval.recording.run_reader import read_run
from cogbench.reference_eval.scoring.pipeline import ScoreOptions, run_scoring
from cogbench.reference_eval.tasks.prompts import CODIS_NO_CONTEXT

from openai_server import Reply
from shared_files import codis_example

# What the released CODIS data gives under the rule of metrics/answer_bias.py
# (the paper's Table 6 reports 15:15, 16:16 and 13:13 over 88 queries).
RELEASED_GROUNDTRUTH = {"up:down": [21, 20], "morning:afternoon": [6, 6], "appropriate:not appropriate": [13, 13]}


@pytest.fixture(autouse=True)
def api_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-codis-analyses-test")


@pytest.mark.parametrize(
    "text, question, expected",
    [
        ("Up.", "", "first"),
        ("Picking the pot up.", "", "first"),
        ("Upwards.", "", None),  # whole words only
        ("It is not appropriate.", "", "second"),
        ("appropriate", "", "first"),
        ("No.", "Is my gesture appropriate?", "second"),
        ("Yes, it is.", "Is my gesture appropriate?", "first"),
        ("No.", "Is my gesture rude?", None),
        ("up or down", "", None),  # both: nothing
    ],
)
def test_which_word_a_text_states(text, question, expected):
    pair = {"up": PAPER_PAIRS[0], "appropriate": PAPER_PAIRS[2]}[
        "appropriate" if "appropriate" in text + question else "up"
    ]
    assert stated_word(text, pair, question) == expected


def test_word_pairs_parse_and_reject_malformed_ones():
    assert parse_word_pairs("Upwards/downwards, left/right") == [
        WordPair("upwards", "downwards"),
        WordPair("left", "right"),
    ]
    for bad in ("up", "up/up", "up/down/left", "/down"):
        with pytest.raises(UsageError, match="--word-pairs"):
            parse_word_pairs(bad)


def test_answer_bias_on_the_released_data_and_swapped_answers(built_release, tmp_path):
    truth = run_scoring(
        ScoreOptions(
            task="codis", dataset=str(built_release), predictions=str(codis_example()), out=str(tmp_path / "truth")
        )
    )
    bias = truth["analyses"]["answer_bias"]
    assert {p["pair"]: p["groundtruth"] for p in bias["pairs"]} == RELEASED_GROUNDTRUTH
    assert all(p["model"] == p["groundtruth"] for p in bias["pairs"])  # the example holds the ground truth
    assert [p["paper_groundtruth"] for p in bias["pairs"]] == [[15, 15], [16, 16], [13, 13]]
    assert bias["queries"] == 79 and bias["paper_queries"] == 88
    report = (tmp_path / "truth" / "report.md").read_text()
    assert "| Groundtruth (paper) | 15:15 | 16:16 | 13:13 |" in report
    assert "| Groundtruth (this data) | 21:20 | 6:6 | 13:13 |" in report

    swap = run_scoring(
        ScoreOptions(
            task="codis",
            dataset=str(built_release),
            predictions=swapped(tmp_path),
            out=str(tmp_path / "swap"),
            word_pairs="up/down,appropriate/not appropriate",
        )
    )
    # Each query now carries its pair's other answer: the 21 "up" queries say "down" but one
    # (item 300, "Up." / "Left.") says neither; the 20 "down" queries say "up".
    assert [p["model"] for p in swap["analyses"]["answer_bias"]["pairs"]] == [[20, 20], [13, 13]]
    assert [p["groundtruth"] for p in swap["analyses"]["answer_bias"]["pairs"]] == [[21, 20], [13, 13]]


def test_output_variability_rule_and_llm_judge(built_release, tmp_path, openai_server):
    def same_answer_judge(request):
        text = request.prompt_text
        if text.startswith(codis_judge.JUDGE_PROMPT[:60]):  # the Acc_p/Acc_q judge (Table 12) runs too
            return Reply(text="right")
        assert text.startswith(codis_equality.SAME_ANSWER_PROMPT[:60])
        one = text.split("Here is output 1: ", 1)[1].split("\nHere is output 2: ")[0]
        two = text.rsplit("Here is output 2: ", 1)[1]
        return Reply(text="same" if one.strip().lower() == two.strip().lower() else "different")

    same = run_scoring(
        ScoreOptions(
            task="codis",
            dataset=str(built_release),
            predictions=str(codis_example()),
            no_context_predictions=str(codis_example()),
            out=str(tmp_path / "same"),
        )
    )
    assert same["metrics"]["output_variability"]["overall"] == 0.0
    # 0 of 706 queries changed: still an interval of positive width, clustered by image (Korn-Graubard)
    low, high = same["metrics"]["output_variability"]["interval"]["overall"]
    assert low == 0.0 and 0 < high < 5
    assert read_run(tmp_path / "same").scores["metrics"]["output_variability"]["overall"] == 0.0  # recomputed
    server = openai_server(same_answer_judge)
    changed = run_scoring(
        ScoreOptions(
            task="codis",
            dataset=str(built_release),
            predictions=str(codis_example()),
            no_context_predictions=swapped(tmp_path),
            judge="openai:gpt-judge",
            judge_base_url=server.base_url,
            judge_backoff=0.01,
            judge_concurrency=16,
            out=str(tmp_path / "changed"),
        )
    )
    # Swapped answers: every query's answer differs, except where a pair's two answers normalise alike.
    rule = changed["metrics"]["output_variability"]["overall"]
    assert rule > 95 and changed["metrics"]["output_variability_llm"]["overall"] == pytest.approx(rule, abs=1)
    for name in ("output_variability", "output_variability_llm"):
        low, high = changed["metrics"][name]["interval"]["overall"]
        assert low < changed["metrics"][name]["overall"] <= high
    analysis = changed["analyses"]["output_variability"]
    assert analysis["queries"] == 706 and analysis["llm_prompt_id"] == codis_equality.SAME_ANSWER_PROMPT_ID
    report = (tmp_path / "changed" / "report.md").read_text()
    assert "## Output variability (CODIS Section 4.2, Table 4)" in report
    low, high = changed["metrics"]["output_variability"]["interval"]["overall"]
    assert f"| {rule:.1f} [{low:.1f}, {high:.1f}] |" in report


def test_no_context_predictions_must_cover_the_scored_queries(built_release, tmp_path, capsys):
    partial = tmp_path / "partial.json"
    partial.write_text(json.dumps(json.loads(codis_example().read_text())[:10]))
    code = main(
        [
            "score",
            "--task",
            "codis",
            "--dataset",
            str(built_release),
            "--predictions",
            str(codis_example()),
            "--no-context-predictions",
            str(partial),
            "--out",
            str(tmp_path / "run"),
        ]
    )
    err = capsys.readouterr().err
    assert code != 0 and "have no no-context prediction" in err and "--allow-partial" in err


def test_eval_no_context_runs_resumes_and_reports_output_variability(tiny_llava, built_release, tmp_path, capsys):
    with_context = tmp_path / "with"
    assert main(_eval_argv("codis", tiny_llava, built_release, with_context, "--limit", "3", "--no-score")) == 0
    without = tmp_path / "without"
    assert (
        main(_eval_argv("codis", tiny_llava, built_release, without, "--limit", "2", "--no-score", "--no-context")) == 0
    )
    capsys.readouterr()
    # Resume: the same folder, more rows; the two rows done are not asked again.
    assert (
        main(_eval_argv("codis", tiny_llava, built_release, without, "--limit", "3", "--no-score", "--no-context")) == 0
    )
    assert "queries: 6 total, 4 already done, 2 generated now" in capsys.readouterr().out
    predictions = read_predictions(without / "predictions.jsonl")
    assert len(predictions) == 6 and {p.prompt_id for p in predictions} == {CODIS_NO_CONTEXT.id}
    # Asking with contexts into the no-context folder is refused (run.json names the prompt).
    assert main(_eval_argv("codis", tiny_llava, built_release, without, "--limit", "3", "--no-score")) == 1
    assert "prompt_id" in capsys.readouterr().err
    scores = run_scoring(
        ScoreOptions(
            task="codis",
            dataset=str(built_release),
            predictions=str(with_context / "predictions.jsonl"),
            no_context_predictions=str(without / "predictions.jsonl"),
            allow_partial=True,
            out=str(tmp_path / "score"),
        )
    )
    assert scores["analyses"]["output_variability"]["queries"] == 6
    variability = scores["metrics"]["output_variability"]  # 6 of the 706 queries: PARTIAL, value kept aside
    assert (variability["partial"], variability["n_scored"], variability["n_expected"]) == (True, 6, 706)
    assert variability["overall"] is None and variability["overall_partial"] is not None
    assert main(_eval_argv("vqa", tiny_llava, built_release, tmp_path / "vqa", "--no-context", "--no-score")) != 0
