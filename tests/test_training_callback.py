"""The training callback (issue 42, item 2): a tiny VLM in a real ``transformers.Trainer`` loop on CPU.

The model is trained on a few dummy examples; every 3 steps ``CogbenchCallback`` evaluates it in process on the
first 24 VQA questions and logs through ``trainer.log``. Each logged number must equal
``cogbench.score`` of the predictions that evaluation wrote, and the keys must say the coverage.
"""

from __future__ import annotations

import json

import pytest

import cogbench
from cogbench.errors import UsageError

LIMIT, EVERY = 24, 3  # 24 questions: several images, so every number has its interval


class _Examples:
    """A few dummy training examples: a VQA-like prompt with its image, the answer "A" (the only tokens learnt)."""

    def __init__(self, processor, images):
        from cogbench.reference_eval.backends.hf import chat_prompt

        self.processor, self.images = processor, images
        self.texts = [chat_prompt(processor, f"Question {i}? A. yes B. no") + "A<|im_end|>" for i in range(4)]

    def __len__(self) -> int:
        return len(self.texts)

    def __getitem__(self, index: int):
        return {"text": self.texts[index], "image": self.images[index % len(self.images)]}

    def collate(self, examples):
        import torch

        batch = self.processor(
            text=[e["text"] for e in examples], images=[e["image"] for e in examples], padding=True, return_tensors="pt"
        )
        # Only the answer is learnt: "A" and the end of the turn, the last two real tokens of each row.
        labels = torch.full_like(batch["input_ids"], -100)
        for row, mask in enumerate(batch["attention_mask"]):
            last = int(mask.nonzero().max())
            labels[row, last - 1 : last + 1] = batch["input_ids"][row, last - 1 : last + 1]
        batch["labels"] = labels
        return batch


@pytest.fixture
def trained(built_release, tiny_llava, tmp_path):
    from transformers import AutoModelForImageTextToText, AutoProcessor, Trainer, TrainingArguments

    from cogbench.dataset_builders.load import load_config

    model = AutoModelForImageTextToText.from_pretrained(tiny_llava)
    processor = AutoProcessor.from_pretrained(tiny_llava)
    images = [row["image"].convert("RGB") for row in load_config(str(built_release), "vqa").select(range(2))]
    examples = _Examples(processor, images)
    arguments = TrainingArguments(
        output_dir=str(tmp_path / "train"),
        max_steps=2 * EVERY,
        per_device_train_batch_size=2,
        learning_rate=1e-2,
        logging_steps=1,
        save_strategy="no",
        report_to=[],
        use_cpu=True,
        remove_unused_columns=False,
        seed=0,
    )
    trainer = Trainer(
        model=model,
        args=arguments,
        train_dataset=examples,
        data_collator=examples.collate,
        processing_class=processor,
    )
    callback = cogbench.CogbenchCallback(
        trainer,
        "vqa",
        built_release,
        limit=LIMIT,
        every_n_steps=EVERY,
        out=tmp_path / "evals",
        settings={"max_new_tokens": 2},
    )
    trainer.add_callback(callback)
    trainer.train()
    return trainer, callback, tmp_path / "evals"


def test_scores_are_logged_at_the_chosen_steps_as_cogbench_score_gives_them(trained, built_release):
    trainer, callback, evals = trained
    logged = {
        entry["step"]: entry for entry in trainer.state.log_history if any(k.startswith("cogbench/") for k in entry)
    }
    assert sorted(logged) == [EVERY, 2 * EVERY] == [step for step, _ in callback.results]
    for step, entry in logged.items():
        predictions = evals / f"step-{step}" / "predictions.jsonl"
        assert len(predictions.read_text().splitlines()) == LIMIT
        rescored = cogbench.score("vqa", built_release, predictions, allow_partial=True)
        total = rescored.scores["counts"]["dataset_items"]
        key = f"cogbench/vqa/accuracy PARTIAL ({LIMIT}/{total} questions)"
        assert entry[key] == rescored.metrics["accuracy"]
        assert [entry[f"{key} ci_low"], entry[f"{key} ci_high"]] == rescored.intervals["accuracy"]
        cogbench_keys = {k for k in entry if k.startswith("cogbench/")}
        assert all("PARTIAL (" in k for k in cogbench_keys) and len(cogbench_keys) % 3 == 0
    # In process: each evaluation saw the weights of its step (a reload from disk would answer the same twice).
    first, last = (
        [json.loads(line)["output"] for line in (evals / f"step-{step}" / "predictions.jsonl").open()]
        for step in (EVERY, 2 * EVERY)
    )
    assert first != last
    assert trainer.model.training  # handed back in training mode
    assert any("loss" in entry for entry in trainer.state.log_history)  # the trainer's own logging went on


def test_the_callback_needs_a_schedule(built_release):
    with pytest.raises(UsageError, match="every_n_steps"):
        cogbench.CogbenchCallback(None, "vqa", built_release)


def test_the_docs_training_example_logs_the_keys_it_describes(built_release, tiny_llava, tmp_path):
    """Issue 48 item 9g: docs/python.md's training block, run as written (after the README block that loads `vqa`
    and the block that loads `model` and `processor`), logs the very keys its text names, the interval's among
    them: its subset spans more than one image, and prints what the page shows after it."""
    import os
    import re
    import subprocess
    import sys

    from test_doc_blocks import ROOT, blocks

    page = ROOT / "docs" / "python.md"
    section = page.read_text()[page.read_text().index("## During training") :]
    key = re.search(r"keys such as\s+`(cogbench/[^`]+)`", section).group(1)
    described = [key, *(f"{key} {bound}" for bound in re.findall(r"`\.\.\. (ci_\w+)`", section))]
    assert described[1:] == [f"{key} ci_low", f"{key} ci_high"]
    found = blocks(page)
    training = next(n for n, b in enumerate(found) if "CogbenchCallback(" in b.code and b.language == "python")
    model = next(b for b in found if b.language == "python" and "AutoModelForImageTextToText" in b.code)
    readme = next(b for b in blocks(ROOT / "README.md") if b.language == "python" and "load_dataset(" in b.code)
    code = "import json\nimport cogbench\n" + readme.code + model.code + found[training].code
    code += "print('LOGGED', json.dumps(sorted({k for entry in logged for k in entry})))\n"
    (tmp_path / "dist").mkdir()
    (tmp_path / "dist" / "cogbench").symlink_to(built_release)
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "tiny-llava").symlink_to(tiny_llava)
    env = {k: v for k, v in os.environ.items() if not k.startswith("COGBENCH_")} | {"HF_HUB_OFFLINE": "1"}
    ran = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    *printed, keys = ran.stdout.rstrip("\n").split("\n")
    logged = json.loads(keys.removeprefix("LOGGED "))
    assert set(described) <= set(logged), (described, logged)
    shown = found[training + 1]  # the output the page shows under the block
    assert shown.language == "text" and printed[-len(shown.code.splitlines()) :] == shown.code.splitlines()
