"""``cogbench verify`` on LLM-judged runs: a verdict that its stored raw reply does not read as
is named with its item (Hypothesis: any single edited verdict or reply, CODIS or Cognition).

The runs are test_details_dataset's (three CODIS pairs and three Description images, judged by
a real local server whose replies are known: "right", "Wrong.", "**Right**", "Verdict: wrong";
"1. [v] 2. [v] ..." for the Cognition key points).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_details_dataset import judged_runs  # noqa: F401 (the module-scoped runs fixture)

from cogbench.cli import main
from cogbench.reference_eval.verifying.verify import verify


def _lines(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "details.jsonl").read_text().splitlines()]


def _write(run: Path, lines: list[dict]) -> None:
    (run / "details.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))


def test_both_runs_verify_as_written(judged_runs, capsys):  # noqa: F811
    for run in judged_runs[1].values():
        assert main(["verify", str(run)]) == 0
    assert capsys.readouterr().out.count("verified: ") == 2


def test_an_openai_judge_block_without_usage_verifies_and_reports(judged_runs, tmp_path, capsys):  # noqa: F811
    """The schema requires only judge.kind: a scores.json that states no token usage (another tool's, an older
    cogbench's) is read, verified and reported, its judge line without the tokens, never a KeyError."""
    run = shutil.copytree(judged_runs[1]["codis"], tmp_path / "run")
    scores = json.loads((run / "scores.json").read_text())
    usage = scores["judge"].pop("usage")
    (run / "scores.json").write_text(json.dumps(scores, indent=2))
    report = (run / "report.md").read_text()
    tokens = f"; tokens {usage['prompt_tokens']} in, {usage['completion_tokens']} out."
    assert tokens in report
    (run / "report.md").write_text(report.replace(tokens, "."))  # what report.md says without usage
    assert main(["verify", str(run)]) == 0
    assert main(["report", str(run), "--out", str(tmp_path / "report")]) == 0
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and "verified: " in captured.out


def test_a_flipped_codis_verdict_is_named_with_its_reply(judged_runs, tmp_path, capsys):  # noqa: F811
    run = shutil.copytree(judged_runs[1]["codis"], tmp_path / "run")
    lines = _lines(run)
    query = lines[1]["queries"][0]
    reply, was = query["judge_reply"], query["right"]
    query["right"] = not was
    _write(run, lines)
    assert main(["verify", str(run)]) == 1
    printed = capsys.readouterr().out
    item = lines[1]["item_id"]
    assert f"item {item}: query 1: verdict right={not was}, its judge reply {reply!r} reads {was}\n" in printed
    assert "metrics.acc_q.overall_partial: says " in printed and f"(items: {item})" in printed


def test_a_flipped_cognition_verdict_is_named_with_its_cor(judged_runs, tmp_path, capsys):  # noqa: F811
    run = shutil.copytree(judged_runs[1]["description"], tmp_path / "run")
    lines = _lines(run)
    cor = lines[0]["cognition"][0]
    was = cor["verdict"]
    cor["verdict"] = 1 - was
    _write(run, lines)
    assert main(["verify", str(run)]) == 1
    printed = capsys.readouterr().out
    expected = (
        f"item {lines[0]['item_id']}: CoR {cor['category']} {cor['index']}: verdict {1 - was}, "
        f"its Figure {cor['figure']} judge reply reads {was}\n"
    )
    assert expected in printed
    assert "metrics.cognition.overall_partial: says " in printed and f"(items: {lines[0]['item_id']})" in printed


def _edit(run: Path, task: str, data, kind: str) -> str:
    """One verdict or one raw reply of one item changed; returns the item's id."""
    lines = _lines(run)
    line = data.draw(st.sampled_from(lines))
    if task == "codis":
        query = data.draw(st.sampled_from(line["queries"]))
        if kind == "verdict":
            query["right"] = data.draw(st.sampled_from([v for v in (True, False, None) if v is not query["right"]]))
        else:  # a reply that reads the other way
            query["judge_reply"] = "wrong" if query["right"] else "right"
    elif kind == "verdict":
        cor = data.draw(st.sampled_from(line["cognition"]))
        cor["verdict"] = data.draw(st.sampled_from([v for v in (0, 1, None) if v != cor["verdict"]]))
    else:  # key point 1 of one call read the other way
        call = data.draw(st.sampled_from(line["judge_replies"]))
        first = next(c for c in line["cognition"] if c["figure"] == call["figure"])
        call["reply"] = call["reply"].replace(f"1. [{first['verdict']}]", f"1. [{1 - first['verdict']}]", 1)
    _write(run, lines)
    return line["item_id"]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), task=st.sampled_from(["codis", "description"]), kind=st.sampled_from(["verdict", "reply"]))
def test_any_single_edited_llm_verdict_or_reply_is_detected_and_named(judged_runs, data, task, kind):  # noqa: F811
    with tempfile.TemporaryDirectory() as tmp:
        run = shutil.copytree(judged_runs[1][task], Path(tmp) / "run")
        item = _edit(run, task, data, kind)
        found = verify(str(run))
        named = [d for d in found.differences if d.items == [item] and not d.recomputed]
        assert named, (task, kind, [d.line() for d in found.differences])
