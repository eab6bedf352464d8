"""The architectures users care most about, on CPU in float32: Qwen2.5-VL, LLaVA-OneVision, Idefics3 (SmolVLM).

Random-weight tiny models (tests/tiny_models.py) with the real processors answer
real CODIS and VQA queries through ``cogbench eval`` end to end; batched greedy
output equals one query at a time; the image reaches the model. Their processors
need torchvision, which the CPU torch wheel of the main test venv lacks: these
tests are marked ``torchvision`` and run in CI's own venv (.ci/run-vision);
elsewhere they skip and say why.
"""

from __future__ import annotations

import importlib.util

import pytest

from cogbench.cli import main
from cogbench.dataset_builders.load import load_config
from cogbench.reference_eval.backends import hf as hf_backend
from cogbench.reference_eval.formats.predictions import read_predictions
from cogbench.reference_eval.tasks.queries import build_queries, undecoded_images

import tiny_models
from shared_files import missing_message

pytestmark = [
    pytest.mark.torchvision,
    pytest.mark.skipif(
        importlib.util.find_spec("torchvision") is None,
        reason="needs torchvision (the Qwen2.5-VL and LLaVA-OneVision processors): run .ci/run-vision",
    ),
]

# Idefics3 is SmolVLM's architecture (its image processor has a PIL path, but it is tested here with the others).
BUILDERS = ["build_tiny_qwen2_5_vl", "build_tiny_llava_onevision", "build_tiny_idefics3"]


@pytest.fixture(scope="module", params=BUILDERS)
def model_dir(request, tmp_path_factory):
    if not tiny_models.QWEN_PROCESSOR_DIR.is_dir():
        pytest.skip(missing_message(tiny_models.QWEN_PROCESSOR_DIR, "the Qwen2.5-VL processor files"))
    return getattr(tiny_models, request.param)(tmp_path_factory.mktemp(request.param))


def _texts(model_dir, dataset, task, batch_size):
    settings = hf_backend.HFSettings(model=str(model_dir), batch_size=batch_size, max_new_tokens=12, num_workers=0)
    loaded = hf_backend.load_model(settings)
    _, queries = build_queries(task, dataset)
    batches = hf_backend.answer_queries(loaded, settings, queries, undecoded_images(dataset))
    return {answer.query.key[:2]: answer.output for batch in batches for answer in batch}


@pytest.mark.parametrize("task, per_item", [("codis", 2), ("vqa", 1)])
def test_cogbench_eval_answers_real_queries_end_to_end(model_dir, task, per_item, built_release, tmp_path, capsys):
    out = tmp_path / "run"
    argv = [
        "eval",
        "--task",
        task,
        "--model",
        f"hf:{model_dir}",
        "--dataset",
        str(built_release),
        "--out",
        str(out),
        "--limit",
        "4",
        "--batch-size",
        "3",
        "--max-new-tokens",
        "8",
        "--num-workers",
        "1",
        "--no-score",
    ]
    assert main(argv) == 0
    assert f"queries: {4 * per_item} total, 0 already done, {4 * per_item} generated now" in capsys.readouterr().out
    predictions = read_predictions(out / "predictions.jsonl")
    assert len(predictions) == 4 * per_item and all(p.output for p in predictions)
    assert predictions[0].generation["dtype"] == "float32"


def test_batched_greedy_equals_one_at_a_time(model_dir, built_release):
    dataset = load_config(str(built_release), "vqa").select(range(5))
    single = _texts(model_dir, dataset, "vqa", batch_size=1)
    assert _texts(model_dir, dataset, "vqa", batch_size=5) == single
    assert len(set(single.values())) > 1  # the model says different things to different queries


def test_the_image_reaches_the_model(model_dir, built_release):
    """Same prompt, different pictures: the random model's answers differ."""
    dataset, first_id = tiny_models.same_prompt_other_image(built_release)
    texts = _texts(model_dir, dataset, "codis", batch_size=4)
    assert texts[(first_id, 1)] != texts[("copy", 1)]
