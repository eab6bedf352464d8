"""What is shown is what was verified (issue 48 item 5).

``verify`` re-derives the fields it once took as they stood (each metric's ``unit``, ``judge_error``,
each reply's ``finish_reason`` and thinking setting, ``analyses.answer_bias``'s rule, run.json's
``dataset``) or names them as stated; ``explain`` and ``report --site`` verify a run folder as ``verify``
does before showing a single answer of it, and refuse an edited one in one line, exit 1.

Runs: test_hub_results' real CODIS run (rule judge) and test_details_dataset's LLM-judged eval runs
(run.json, predictions.jsonl; CODIS and Description) on the real build.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_details_dataset import judged_runs  # noqa: F401 (module-scoped fixture)
from test_hub_results import codis_run  # noqa: F401 (module-scoped fixture)
from test_verify_edits import _details, _scores

from cogbench.cli import main
from cogbench.reference_eval.metrics import codis as codis_metrics
from cogbench.reference_eval.verifying import verify_rederive
from cogbench.reference_eval.verifying.verify_result import TaskData, Verification


def _verify(argv: list[str], capsys) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["verify", *argv])
    return code, capsys.readouterr().out


def _file(path: Path, edit) -> None:
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    edit(lines)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def _run_json(folder: Path, edit) -> None:
    record = json.loads((folder / "run.json").read_text())
    edit(record)
    (folder / "run.json").write_text(json.dumps(record))


def _unit(s):
    s["metrics"]["acc_p"]["unit"] = "queries"


def _rule_error(lines):
    assert lines[2]["queries"][0]["right"] is not None
    lines[2]["queries"][0]["judge_error"] = "timeout"


def _over_scale(s):
    s["metrics"]["acc_p"]["exceeds_scale"] = True


def _bias_rule(s):
    s["analyses"]["answer_bias"]["rule"] = "counted by hand"


# (case, edit of the rule-judged CODIS run folder, what the output must name)
RULE_CASES = [
    ("metric unit", lambda r: _scores(r, _unit), "metrics.acc_p.unit: says 'queries', the details give 'pairs'"),
    ("judge_error of a rule verdict", lambda r: _details(r, _rule_error), "query 1: judge_error 'timeout', but no LLM"),
    ("answer bias rule", lambda r: _scores(r, _bias_rule), "analyses.answer_bias: says"),
    (
        "exceeds_scale label",
        lambda r: _scores(r, _over_scale),
        "acc_p.exceeds_scale: says True, the details give False",
    ),
]


@pytest.mark.parametrize("case,edit,named", RULE_CASES, ids=[c[0] for c in RULE_CASES])
def test_each_field_once_taken_as_stated_is_re_derived(codis_run, tmp_path, capsys, case, edit, named):  # noqa: F811
    run = shutil.copytree(codis_run[1], tmp_path / "run")
    assert _verify([str(run)], capsys)[0] == 0
    edit(run)
    code, out = _verify([str(run)], capsys)
    assert code == 1 and named in out, out
    assert out.splitlines()[-1].startswith("NOT verified: ")


def test_a_score_over_100_must_carry_its_exceeds_scale_label():
    """Official parsing counts a Cognition verdict of 2 as 2 (the authors' sum): one CoR judged 2 scores 200,
    which scores.json labels exceeds_scale; the label is re-derived from the numbers, dropped or added."""
    detail = {"item_id": "img", "recognition": {"annotated": 0, "recognized": 0, "matches": []}}
    detail["cognition"] = [{"category": "Event", "index": 1, "verdict": 2}]
    metric = {"overall": 200.0, "per_category": {"Event": 200.0}, "exceeds_scale": True}
    for label, named in ((True, False), (None, True)):
        stated = {k: v for k, v in metric.items() if label or k != "exceeds_scale"}
        scores = {"task": "description", "judge": {"kind": "openai"}, "metrics": {"cognition": stated}, "counts": {}}
        result = Verification()
        verify_rederive.check_counts(TaskData("d", [detail], scores, Path("scores.json"), None), result)
        lines = [d.line() for d in result.differences if "exceeds_scale" in d.where]
        assert lines == (
            ["scores.json: metrics.cognition.exceeds_scale: says False, the details give True"] if named else []
        )


def test_which_word_pairs_a_run_counted_is_named_as_stated(codis_run, tmp_path, capsys):  # noqa: F811
    """The pairs are the run's --word-pairs setting: one dropped is not a difference, and verify says so."""
    run = shutil.copytree(codis_run[1], tmp_path / "run")

    def drop(s):
        bias = s["analyses"]["answer_bias"]
        bias["pairs"] = bias["pairs"][1:]
        bias["queries"] = sum(p["queries"] for p in bias["pairs"])

    _scores(run, drop)
    code, out = _verify([str(run)], capsys)
    stated = out.splitlines()[1]
    assert code == 0 and "analyses.answer_bias word pairs (the run's --word-pairs, as stated)" in stated, out


def _reply_field(name, value, where=lambda lines: lines[0]["queries"][1]):
    def edit(lines):
        answer = where(lines)
        assert answer["answer_status"] == "answered" and name in answer["reply"], answer
        answer["reply"][name] = value

    return edit


def _llm_error(lines):
    query = lines[0]["queries"][0]
    assert query["right"] is not None and query["judge_error"] is None
    query["judge_error"] = "HTTP 500"


def _cor_error(lines):
    cor = lines[0]["cognition"][0]
    assert cor["verdict"] is not None and cor["judge_error"] is None
    cor["judge_error"] = "HTTP 500"


def _prediction_finish(folder: Path) -> None:
    _file(folder / "predictions.jsonl", lambda lines: lines[1].update(finish_reason="end_turn"))


# (case, task, edit of the eval folder, what the output must name)
EVAL_CASES = [
    (
        "finish_reason in details (status unchanged)",
        "codis",
        lambda f: _details(f / "score", _reply_field("finish_reason", "end_turn")),
        "('000', 2): reply (predictions.jsonl's finish_reason, thinking, reasoning, refusal): says {'finish_reason': 'end_turn'",
    ),
    (
        "thinking setting in details",
        "codis",
        lambda f: _details(f / "score", _reply_field("thinking", "off")),
        "('000', 2): reply (predictions.jsonl's finish_reason, thinking, reasoning, refusal)",
    ),
    (
        "finish_reason in predictions.jsonl",
        "codis",
        _prediction_finish,
        "reply (predictions.jsonl's finish_reason, thinking, reasoning, refusal)",
    ),
    ("judge_error of an LLM verdict", "codis", lambda f: _details(f / "score", _llm_error), "query 1: judge_error"),
    ("judge_error of a CoR verdict", "description", lambda f: _details(f / "score", _cor_error), "judge_error 'HTTP"),
    (
        "run.json dataset",
        "codis",
        lambda f: _run_json(f, lambda r: r.update(dataset="elsewhere/build")),
        "run.json: dataset (scores.json's): says 'elsewhere/build'",
    ),
]


@pytest.mark.parametrize("case,task,edit,named", EVAL_CASES, ids=[c[0] for c in EVAL_CASES])
def test_each_eval_run_field_once_taken_as_stated_is_re_derived(
    judged_runs,  # noqa: F811
    tmp_path,
    capsys,
    case,
    task,
    edit,
    named,
):
    folder = shutil.copytree(judged_runs[1][task].parent, tmp_path / task)
    code, out = _verify([str(folder / "score")], capsys)
    assert code == 0, out
    assert "mode and no_image (the eval settings, as stated)" in out.splitlines()[1]
    edit(folder)
    code, out = _verify([str(folder / "score")], capsys)
    assert code == 1 and named in out, out


def test_a_score_folder_names_its_replies_finish_reasons_as_stated(judged_runs, tmp_path, capsys):  # noqa: F811
    """Without the eval folder's predictions.jsonl, a reply's finish reason has nothing to be checked against."""
    run = shutil.copytree(judged_runs[1]["codis"], tmp_path / "score-only")
    code, out = _verify([str(run)], capsys)
    stated = out.splitlines()[1]
    assert code == 0 and "each reply's finish_reason, thinking (as the predictions recorded them" in stated, out


def _other_words(queries: int):
    """An answer edited after scoring (``queries`` of the first pair), its parsed answer edited to match,
    its verdicts and outputs_differ still right: only the answers' hash (and, in an eval folder,
    predictions.jsonl) can tell."""

    def edit(lines):
        for query in lines[0]["queries"][:queries]:
            query["output"] = query["output"].rstrip(".") + ", I am sure."
            query["final_answer"] = codis_metrics.final_answer(query["output"])
        lines[0]["outputs_differ"] = codis_metrics.outputs_differ(*(q["output"] for q in lines[0]["queries"]))

    return edit


@pytest.mark.parametrize("command", ["explain", "report"])
def test_an_answer_edited_after_scoring_is_never_shown(codis_run, judged_runs, tmp_path, capsys, command):  # noqa: F811
    """explain and report --site read a run folder only once `verify` finds it equal; an edited one is
    refused in one line that names the file and field, exit 1 (verify's)."""
    truth = shutil.copytree(codis_run[1], tmp_path / "truth")
    edited = shutil.copytree(codis_run[1], tmp_path / "edited")
    _details(edited, _other_words(1))
    assert _verify([str(edited)], capsys)[0] == 1
    site = ["--site", str(tmp_path / "site"), "--permutations", "99"] if command == "report" else []
    argv = [str(truth), str(edited), *site]
    capsys.readouterr()
    assert main([command, *argv]) == 1
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and error.startswith(f"error: {edited}: not verified, 1 difference(s); first: "), (
        error
    )
    assert f"{edited / 'scores.json'}: provenance.answers_sha256: says" in error, error
    assert not (tmp_path / "site").exists()
    # An eval folder's answers are checked against its predictions.jsonl: the item is named.
    folder = shutil.copytree(judged_runs[1]["codis"].parent, tmp_path / "eval")
    _details(folder / "score", _other_words(2))  # the eval run's two outputs end alike: both edited
    assert main([command, str(folder), str(folder), *site]) == 1
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and "first naming an item: " in error, error
    assert f"{folder / 'score' / 'details.jsonl'}: item ('000', 1): output (predictions.jsonl's final answer)" in error
