"""``--judge-parsing constrained`` (issue 40 item 1): a reply that is exactly an official label is read, any
other is unscored: left out of the score, neither wrong nor a failure, counted and shown as a rate beside the
number; ``verify`` re-derives the count from the details. Also ``--judge-structured-outputs`` (each request
carries its prompt's labels) and ``--judge-engine-arg`` (refused without a ``vllm:`` judge).

Real CODIS items (the first three pairs of the real build) answered by a real local server, judged by the same
server with known replies in request order (``--judge-concurrency 1``); the expected numbers are worked by hand.
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from cogbench.cli import main
from cogbench.reference_eval.judges import verdicts

from openai_server import OpenAIServer, Reply

# Judge replies in the order of the queries (pair 1 q1, q1 q2, pair 2 q1, ...).
REPLIES = ["right", "wrong", "Right.", "right", "wrong", "I think it is right"]


class Server:
    def __init__(self):
        self.judged = 0

    def __call__(self, request) -> Reply:
        content = request.messages[0]["content"]
        if isinstance(content, list):  # the model
            return Reply(text="The answer is up.")
        reply = REPLIES[self.judged % len(REPLIES)]
        self.judged += 1
        return Reply(text=reply)


@pytest.fixture(scope="module")
def constrained_run(built_release, tmp_path_factory):
    root = tmp_path_factory.mktemp("constrained")
    server = Server()
    with pytest.MonkeyPatch.context() as patch, OpenAIServer(server) as http:
        patch.setenv("OPENAI_API_KEY", "sk-test")
        argv = ["eval", "--task", "codis", "--model", "openai:m", "--base-url", http.base_url]
        assert (
            main([*argv, "--dataset", str(built_release), "--out", str(root / "eval"), "--limit", "3", "--no-score"])
            == 0
        )
        score = ["score", "--task", "codis", "--dataset", str(built_release), "--allow-partial"]
        score += ["--predictions", str(root / "eval" / "predictions.jsonl"), "--judge", "openai:judge"]
        score += ["--judge-base-url", http.base_url, "--judge-concurrency", "1"]  # the default attempts (3)
        score += ["--judge-parsing", "constrained", "--judge-structured-outputs", "--out", str(root / "run")]
        code = main(score)
        requests = [r for r in http.chat_requests if isinstance(r.messages[0]["content"], str)]
    return code, root / "run", requests


def test_unread_replies_are_unscored_not_wrong_nor_failures(constrained_run, capsys):
    code, run, _ = constrained_run
    assert code == 0  # unscored replies are not failures: no exit 3 without --allow-failures
    scores = json.loads((run / "scores.json").read_text())
    # By hand: queries T, F, -, T, F, - (two unscored); pairs (T,F) judged, (-,T) and (F,-) unscored.
    assert scores["counts"]["unscored"] == 2 and scores["counts"]["judge_failures"] == 0
    acc_q, acc_p = scores["metrics"]["acc_q"], scores["metrics"]["acc_p"]
    assert (acc_q["judged"], acc_q["unscored"], acc_q["failed"], acc_q["overall_partial"]) == (4, 2, 0, 50.0)
    assert acc_q["unscored_rate"] == pytest.approx(100 * 2 / 6, abs=1e-4)
    assert (acc_p["judged"], acc_p["unscored"], acc_p["failed"], acc_p["overall_partial"]) == (1, 2, 0, 0.0)
    lines = [json.loads(line) for line in (run / "details.jsonl").read_text().splitlines()]
    queries = [q for line in lines for q in line["queries"]]
    assert [q["judge_reply"] for q in queries] == REPLIES
    assert [q["right"] for q in queries] == [True, False, None, True, False, None]
    assert [q["judge_error"] == verdicts.UNSCORED for q in queries] == [False, False, True, False, False, True]
    # The authors' reading of the same replies ('right' in reply, case-sensitive) is given beside it.
    comparison = scores["judge"]["parsing_comparison"]
    assert comparison["mode"] == "official" and comparison["differing_verdicts"] == 2
    assert comparison["metrics"]["acc_q"] == pytest.approx(100 * 3 / 6)
    summary = (run / "report.md").read_text()
    assert "unscored 2/6 queries (33.3%)" in summary and "UNSCORED (2/6 queries, 33.3%" in summary
    # An unscored reply is final: asked once, never retried (issue 48 item 9b), and no failure in any count.
    assert scores["judge"]["calls"] == 6 and scores["judge"]["failures"] == 0
    assert "Judge failures: 0 of 6 queries; unscored 2/6 queries (33.3%)." in summary
    assert summary.lower().count("failure") == 1  # one figure, one name: the judge's cost line repeats none


def test_each_judge_request_carries_its_prompts_labels(constrained_run):
    _, _, requests = constrained_run
    assert len(requests) == 6
    assert all(r.body["structured_outputs"] == {"choice": ["right", "wrong"]} for r in requests)


def test_verify_rederives_the_unscored_count_and_marks(constrained_run, tmp_path, capsys):
    _, run, _ = constrained_run
    assert main(["verify", str(run)]) == 0
    copy = Path(shutil.copytree(run, tmp_path / "run"))
    lines = [json.loads(line) for line in (copy / "details.jsonl").read_text().splitlines()]
    lines[1]["queries"][0]["judge_error"] = None  # an unscored query no longer marked
    (copy / "details.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    capsys.readouterr()
    assert main(["verify", str(copy)]) == 1
    printed = capsys.readouterr().out
    assert "counts.unscored" in printed and "metrics.acc_q.unscored" in printed
    assert f"item {lines[1]['item_id']}: query 1: marked unscored is False" in printed


def test_report_and_leaderboard_show_the_rate_beside_the_number(constrained_run, tmp_path):
    _, run, _ = constrained_run
    assert main(["report", str(run), "--out", str(tmp_path / "report")]) == 0
    rows = list(csv.DictReader((tmp_path / "report" / "leaderboard.csv").open()))
    assert rows[0]["judge_parsing"] == "constrained"
    assert (rows[0]["acc_q.unscored"], rows[0]["acc_p.unscored"]) == ("2", "2")


def test_official_mode_reads_every_reply_as_the_authors_do():
    assert [verdicts.parse_right_wrong(r, "official") for r in REPLIES] == [True, False, False, True, False, True]
    assert [verdicts.parse_right_wrong(r, "constrained") for r in REPLIES] == [True, False, None, True, False, None]
    assert verdicts.parse_numbered(" 1. [1]\n2. [0] ", 2, "constrained") == [1, 0]
    for unread in ("1.[1] 2.[0]", "1. [1] 2. [2]", "1. [1]", "1. [1] 2. [0] 3. [1]", "2. [1] 1. [0]"):
        assert verdicts.parse_numbered(unread, 2, "constrained") is None


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--judge-engine-arg", "dtype=float32"], "--judge-engine-arg applies only with --judge vllm:"),
        (["--judge-structured-outputs"], "--judge-structured-outputs applies only with --judge openai:MODEL"),
    ],
)
def test_a_judge_option_without_its_judge_is_refused(built_release, tmp_path, capsys, extra, message):
    argv = ["score", "--task", "codis", "--dataset", str(built_release), "--oracle", "--out", str(tmp_path / "r")]
    assert main([*argv, "--judge", "rule", *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {message}") and err.count("\n") == 1


def test_engine_arguments_are_read_as_json_and_refused_in_one_line():
    from cogbench.errors import UsageError
    from cogbench.reference_eval.judges import vllm_judge

    given = ["dtype=float32", "max_model_len=4096", "enforce_eager=true", 'limit_mm_per_prompt={"image":1}']
    assert vllm_judge.engine_arguments(given) == {
        "dtype": "float32",
        "max_model_len": 4096,
        "enforce_eager": True,
        "limit_mm_per_prompt": {"image": 1},
    }
    for bad, said in (("dtype", "expected KEY=VALUE"), ("model=x", "given by --judge vllm:")):
        with pytest.raises(UsageError, match=said):
            vllm_judge.engine_arguments([bad])
    with pytest.raises(UsageError, match="given twice"):
        vllm_judge.engine_arguments(["seed=1", "seed=2"])
