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
