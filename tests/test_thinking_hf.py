"""The thinking setting and finish reasons through the ``hf:`` backend (issue 39): a tiny model whose
chat template takes ``enable_thinking`` as Qwen3's does (tiny_models.thinking_chat_template)."""

from __future__ import annotations

import json

import pytest
import torch

from cogbench.cli import main
from cogbench.dataset_builders.load import load_config
from cogbench.reference_eval.backends import hf as hf_backend
from cogbench.reference_eval.formats.predictions import read_predictions
from cogbench.reference_eval.tasks.queries import build_queries, undecoded_images

from shared_files import missing_message


@pytest.fixture(scope="module")
def thinking_llava(tmp_path_factory):
    from tiny_models import QWEN_PROCESSOR_DIR, build_tiny_llava, thinking_chat_template

    if not QWEN_PROCESSOR_DIR.is_dir():
        pytest.skip(missing_message(QWEN_PROCESSOR_DIR, "the Qwen2.5-VL tokenizer files"))
    return build_tiny_llava(tmp_path_factory.mktemp("thinking-llava"), chat_template=thinking_chat_template())


def test_the_setting_reaches_the_chat_template_and_the_model_input(thinking_llava, built_release):
    dataset = load_config(str(built_release), "vqa").select(range(1))
    loaded = hf_backend.load_model(hf_backend.HFSettings(model=str(thinking_llava)))
    _, queries = build_queries("vqa", dataset)
    endings = {}
    for setting in ("on", "off", "auto"):
        inputs = hf_backend.prepare_batch(queries, undecoded_images(dataset), loaded.processor, setting)
        endings[setting] = loaded.processor.tokenizer.decode(inputs["input_ids"][0][-16:])
    assert endings["on"].endswith("<|im_start|>assistant\n<think>\n")
    assert endings["off"].endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")
    assert endings["auto"].endswith("<|im_end|>\n<|im_start|>assistant\n")


def test_a_template_without_the_switch_renders_the_same(tiny_llava, built_release):
    """Qwen2.5-VL's template never reads enable_thinking: passing it changes nothing (Jinja ignores it)."""
    dataset = load_config(str(built_release), "vqa").select(range(1))
    loaded = hf_backend.load_model(hf_backend.HFSettings(model=str(tiny_llava)))
    _, queries = build_queries("vqa", dataset)
    prompts = {s: hf_backend.chat_prompt(loaded.processor, queries[0].prompt, True, s) for s in ("on", "off", "auto")}
    assert len(set(prompts.values())) == 1


def test_eval_records_the_setting_and_a_reply_at_the_budget_is_length(thinking_llava, built_release, tmp_path):
    runs = {}
    for setting in ("on", "auto"):
        out = tmp_path / setting
        argv = ["eval", "--task", "vqa", "--model", f"hf:{thinking_llava}", "--dataset", str(built_release)]
        argv += ["--out", str(out), "--limit", "2", "--max-new-tokens", "3", "--num-workers", "0", "--no-score"]
        assert main([*argv, "--thinking", setting]) == 0
        runs[setting] = read_predictions(out / "predictions.jsonl")
        assert json.loads((out / "run.json").read_text())["generation"]["thinking"] == setting
        assert {p.generation["thinking"] for p in runs[setting]} == {setting}
        # A random-weight model never says <|im_end|> in 3 tokens: every reply ran to the budget.
        assert {(p.finish_reason, p.tokens["completion"]) for p in runs[setting]} == {("length", 3)}
    # The prompts end differently (an opened think block), so greedy replies differ: the setting reached the model.
    assert [p.output for p in runs["on"]] != [p.output for p in runs["auto"]]


@pytest.fixture(scope="module")
def opened_llava(tmp_path_factory):
    from tiny_models import QWEN_PROCESSOR_DIR, build_tiny_llava, opened_think_chat_template

    if not QWEN_PROCESSOR_DIR.is_dir():
        pytest.skip(missing_message(QWEN_PROCESSOR_DIR, "the Qwen2.5-VL tokenizer files"))
    return build_tiny_llava(tmp_path_factory.mktemp("opened-llava"), chat_template=opened_think_chat_template())


def test_the_chat_template_says_whether_a_reply_begins_inside_a_think_block(
    opened_llava, thinking_llava, built_release, tmp_path
):
    """Under thinking auto, a template that opens the block in the prompt (R1-style) makes every reply cut at
    the limit reasoning, no answer (truncated); one that does not makes it an answer cut (never unscored)."""
    statuses = {}
    runs = (("opened", opened_llava, "auto"), ("plain", thinking_llava, "auto"), ("switched-on", thinking_llava, "on"))
    for name, model, setting in runs:
        out = tmp_path / name
        argv = ["eval", "--task", "vqa", "--model", f"hf:{model}", "--dataset", str(built_release), "--out", str(out)]
        argv += ["--limit", "3", "--max-new-tokens", "3", "--num-workers", "0", "--thinking", setting]
        assert main(argv) == 0
        predictions = read_predictions(out / "predictions.jsonl")
        assert {p.think_opened for p in predictions} == {name != "plain"}
        assert {p.finish_reason for p in predictions} == {"length"}
        scores = json.loads((out / "score" / "scores.json").read_text())
        statuses[name] = {k: scores["answers"].get(k, 0) for k in ("truncated", "cut", "unscored")}
        assert main(["verify", str(out)]) == 0
    assert statuses["opened"] == statuses["switched-on"] == {"truncated": 3, "cut": 0, "unscored": 0}
    assert statuses["plain"]["unscored"] == 0 and statuses["plain"]["truncated"] + statuses["plain"]["cut"] == 3


def test_finish_reason_is_stop_at_the_first_eos_and_length_without_one():
    eos, pad = 7, 0
    rows = torch.tensor([[5, 6, 9], [5, eos, pad], [eos, pad, pad], [5, 6, eos]])
    assert hf_backend._generated_counts(rows, {eos}) == [(3, "length"), (2, "stop"), (1, "stop"), (3, "stop")]
