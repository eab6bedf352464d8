"""Out of memory is survived: batches split in half down to one query, answers unchanged.

The error is injected at the model's ``generate`` (the only thing replaced): for
batches above a size it raises the real ``torch.OutOfMemoryError`` before any
work, as CUDA's allocator would; the tiny LLaVA, its processor and the real
CODIS config stay real.
"""

from __future__ import annotations

import json

import torch
from transformers import LlavaForConditionalGeneration

from cogbench.cli import main
from cogbench.dataset_builders.load import load_config
from cogbench.reference_eval.backends import hf as hf_backend
from cogbench.reference_eval.formats.predictions import read_predictions
from cogbench.reference_eval.tasks.queries import build_queries, undecoded_images


def _inject_oom(monkeypatch, fits: int, sizes: list[int], fail_single: int | None = None):
    """``generate`` raises OutOfMemoryError above ``fits`` queries, and on the ``fail_single``-th one-query call."""
    real = LlavaForConditionalGeneration.generate
    singles = [0]

    def generate(self, *args, **kwargs):
        rows = kwargs["input_ids"].shape[0]
        sizes.append(rows)
        singles[0] += rows == 1
        if rows > fits or (rows == 1 and singles[0] == fail_single):
            raise torch.OutOfMemoryError("CUDA out of memory (injected)")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(LlavaForConditionalGeneration, "generate", generate)


def _texts(loaded, settings, queries, images, on_cut=None):
    batches = hf_backend.answer_queries(loaded, settings, queries, images, on_cut)
    return [(answer.query.key, answer.output) for batch in batches for answer in batch]


def test_a_batch_out_of_memory_is_split_and_the_answers_equal_an_uninterrupted_run(
    tiny_llava, built_release, monkeypatch
):
    dataset = load_config(str(built_release), "codis").select(range(7))
    _, queries = build_queries("codis", dataset)  # 14 queries
    images = undecoded_images(dataset)
    settings = hf_backend.HFSettings(model=str(tiny_llava), batch_size=8, max_new_tokens=12, num_workers=0)
    loaded = hf_backend.load_model(settings)
    uninterrupted = _texts(loaded, settings, queries, images)

    sizes, cuts = [], []
    _inject_oom(monkeypatch, fits=3, sizes=sizes)
    split = _texts(loaded, settings, queries, images, cuts.append)
    assert sorted(split) == sorted(uninterrupted)  # item for item
    assert len(split) == len(queries) == 14
    # 8 fails, its halves of 4 fail, then 2 works and is kept: 8 -> 4 -> 2, 2, 2, 2, then the batch of 6
    # comes already cut to 2 (never tried at 6 or 4 again).
    assert sizes == [8, 4, 2, 2, 2, 2, 2, 2, 2]
    assert cuts == [2]  # reported once


def test_one_query_out_of_memory_names_it_and_the_run_resumes(tiny_llava, built_release, tmp_path, monkeypatch, capsys):
    out = tmp_path / "run"

    def argv(folder):
        return [
            "eval",
            "--task",
            "codis",
            "--model",
            f"hf:{tiny_llava}",
            "--dataset",
            str(built_release),
            "--out",
            str(folder),
            "--limit",
            "5",
            "--batch-size",
            "4",
            "--max-new-tokens",
            "12",
            "--num-workers",
            "0",
            "--no-score",
        ]

    assert main(argv(tmp_path / "straight")) == 0
    straight = read_predictions(tmp_path / "straight" / "predictions.jsonl")

    sizes: list[int] = []
    # Batch 4 fails, 2 fails, 1 works (kept, printed once); the fourth single query fails even alone.
    _inject_oom(monkeypatch, fits=1, sizes=sizes, fail_single=4)
    capsys.readouterr()
    assert main(argv(out)) == 1
    err = capsys.readouterr().err
    assert err.count("out of memory: batches split; continuing at batch size 1") == 1
    failing_line = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(failing_line) == 1 and "out of memory on cpu even alone (batch size 1)" in failing_line[0]
    assert "item " in failing_line[0] and "run the same command again to resume" in failing_line[0]
    saved = read_predictions(out / "shards" / "rank-0.jsonl")
    assert len(saved) == 3  # everything answered before it is kept
    assert json.loads((out / "run.json").read_text())["batch_size_after_oom"] == 1

    monkeypatch.undo()  # memory freed: the same command finishes the run
    sizes.clear()
    _inject_oom(monkeypatch, fits=4, sizes=sizes)
    assert main(argv(out)) == 0
    assert "queries: 10 total, 3 already done, 7 generated now" in capsys.readouterr().out
    assert set(sizes) == {1}  # the resumed run starts at the kept size
    resumed = read_predictions(out / "predictions.jsonl")
    assert [(p.key, p.output) for p in resumed] == [(p.key, p.output) for p in straight]
