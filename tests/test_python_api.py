"""The Python API (issue 42, item 1): ``cogbench.evaluate``, ``score``, ``compare``, ``verify`` on real data and a tiny VLM.

The numbers are pinned independently: the authors' CODIS example answers are the ground truth
(100 with the rule judge, as test_score.py pins); a model's evaluation equals ``cogbench score``
of the predictions it wrote, and the command line's scores.json of the same input.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import cogbench
from cogbench.errors import CogbenchError, UsageError

from openai_server import Reply
from shared_files import codis_example


def test_import_cogbench_loads_no_api_until_named():
    probe = (
        "import sys, cogbench; assert {'evaluate', 'rescore'} <= set(dir(cogbench)); "
        "print(sorted(m for m in sys.modules if m.startswith('cogbench.reference_eval') or m in ('torch', 'transformers')))"
    )
    shown = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert shown.stdout.strip() == "[]"
    with pytest.raises(AttributeError, match="no attribute 'evalute'"):
        cogbench.evalute  # noqa: B018


def test_score_returns_the_numbers_details_and_provenance_in_memory(built_release, tmp_path):
    result = cogbench.score("codis", built_release, codis_example())
    assert result.folder is None and result.complete
    assert result.metrics["acc_p"] == 100.0 and result.metrics["acc_q"] == 100.0
    assert result.coverage["acc_p"] == "complete"
    low, high = result.intervals["acc_p"]
    assert low < 100.0 == high
    assert result.provenance["cogbench_version"] == cogbench.__version__
    assert len(result.details) == result.scores["counts"]["dataset_items"] == 353
    frame = result.to_pandas()
    assert list(frame["item_id"]) == result.details["item_id"] and frame["item_id"].is_unique
    assert json.loads(frame["detail"][0])["item_id"] == frame["item_id"][0]


def test_the_cli_writes_what_the_api_returns(built_release, tmp_path):
    command = [sys.executable, "-m", "cogbench", "score", "--task", "codis", "--dataset", str(built_release)]
    command += ["--predictions", str(codis_example()), "--out", str(tmp_path / "cli")]
    subprocess.run(command, check=True, capture_output=True)
    written = json.loads((tmp_path / "cli" / "scores.json").read_text())
    result = cogbench.score("codis", built_release, codis_example(), out=tmp_path / "api")
    assert result.folder == tmp_path / "api" and (tmp_path / "api" / "scores.json").is_file()
    for name, metric in written["metrics"].items():
        assert result.scores["metrics"][name]["overall"] == metric["overall"]
        assert result.intervals[name] == metric["interval"]["overall"]
    assert cogbench.verify(result).differences == []


def numpy_values(value, where: str = "") -> list[str]:
    """Where a result holds a numpy scalar or array (a plain float shows as 1.5, a numpy one as np.float64(1.5))."""
    if isinstance(value, dict):
        return [found for key, inner in value.items() for found in numpy_values(inner, f"{where}.{key}")]
    if isinstance(value, (list, tuple)):
        return [found for k, inner in enumerate(value) for found in numpy_values(inner, f"{where}[{k}]")]
    return [f"{where}: {type(value).__name__}"] if type(value).__module__ == "numpy" else []


def test_compare_returns_plain_python_numbers(built_release, tmp_path, openai_server, monkeypatch):
    """Issue 48 item 9l: every number of compare's results is a plain float or int, never np.float64."""
    monkeypatch.setenv("OPENAI_API_KEY", "local")
    kept = cogbench.score("codis", built_release, codis_example(), out=tmp_path / "rule")
    other = cogbench.score("codis", built_release, _first_pairs(tmp_path, 200), allow_partial=True, out=tmp_path / "b")
    compared = cogbench.compare(kept, other, allow_mismatch=True)
    low, high = compared["metrics"]["acc_p"][-1]["interval"]
    assert type(low) is float and type(high) is float and low <= 0.0 <= high
    assert numpy_values(compared) == []
    server = openai_server(lambda request: Reply(text="right"))
    judged = cogbench.score(
        "codis", built_release, codis_example(), judge="openai:judge", judge_base_url=server.base_url
    )
    agreement = cogbench.compare(kept, judged, judges=True)
    assert numpy_values(agreement) == []
    assert (
        numpy_values([judged.metrics, judged.intervals, judged.scores, cogbench.explain(kept.folder, other.folder)])
        == []
    )


def test_errors_are_the_projects_exceptions_never_system_exit(built_release, tmp_path):
    with pytest.raises(UsageError, match="unknown setting.*batch_sise"):
        cogbench.evaluate("vqa", built_release, "hf:whatever", settings={"batch_sise": 2})
    with pytest.raises(UsageError, match="expected hf:MODEL_ID_OR_PATH"):
        cogbench.evaluate("vqa", built_release, "gpt-4o")
    with pytest.raises(UsageError, match="give its processor"):
        cogbench.evaluate("vqa", built_release, object())
    with pytest.raises(CogbenchError, match="no prediction"):
        cogbench.score("codis", built_release, _first_pairs(tmp_path, 5))
    with pytest.raises(UsageError, match="give two runs"):
        cogbench.compare(tmp_path)
    # What a partial file gives when asked for: PARTIAL (n/N) on every metric.
    partial = cogbench.score("codis", built_release, _first_pairs(tmp_path, 5), allow_partial=True)
    assert partial.coverage["acc_p"] == "PARTIAL (5/353 pairs)" and partial.metrics["acc_p"] == 100.0
    # Writing is claimed as every command's --out is: never into a folder cogbench did not write.
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    with pytest.raises(UsageError):
        cogbench.score("codis", built_release, codis_example(), out=foreign)
    assert (foreign / "notes.txt").read_text() == "keep me" and len(list(foreign.iterdir())) == 1


def _first_pairs(tmp_path: Path, count: int) -> Path:
    path = tmp_path / f"first-{count}.json"
    path.write_text(json.dumps(json.loads(codis_example().read_text())[:count]))
    return path


def test_evaluate_a_loaded_model_in_place(built_release, tiny_llava, tmp_path):
    """A loaded model and processor run as they are (no reload), are handed back as they were, and the
    result equals `cogbench score` of the predictions the run wrote."""
    from transformers import AutoModelForImageTextToText, AutoProcessor

    model = AutoModelForImageTextToText.from_pretrained(tiny_llava).train()
    processor = AutoProcessor.from_pretrained(tiny_llava)
    processor.tokenizer.padding_side = "right"
    (tiny_llava.parent / "moved").mkdir()
    settings = {"max_new_tokens": 4, "num_workers": 0, "batch_size": 4}
    # The folder the model was read from is gone: only the object in memory can run.
    moved = tiny_llava.rename(tiny_llava.parent / "moved" / "model")
    try:
        result = cogbench.evaluate(
            "vqa", built_release, model, processor=processor, limit=6, out=tmp_path / "run", settings=settings
        )
    finally:
        moved.rename(tiny_llava)
    assert model.training and processor.tokenizer.padding_side == "right"
    assert result.coverage["accuracy"].startswith("PARTIAL (6/")
    predictions = tmp_path / "run" / "predictions.jsonl"
    lines = [json.loads(line) for line in predictions.read_text().splitlines()]
    assert len(lines) == 6 and lines[0]["model"] == f"hf:{model.name_or_path}"
    assert lines[0]["generation"]["dtype"] == "float32"
    rescored = cogbench.score("vqa", built_release, predictions, allow_partial=True)
    assert rescored.metrics == result.metrics and rescored.intervals == result.intervals
    in_memory = cogbench.evaluate("vqa", built_release, model, processor=processor, limit=6, settings=settings)
    assert in_memory.folder is None and in_memory.metrics == result.metrics
    assert list(in_memory.details["raw_output"]) == list(result.details["raw_output"])
    compared = cogbench.compare(in_memory, result)
    assert compared["shared_items"] == 6 and compared["a"]["model"] == compared["b"]["model"]
    with pytest.raises(UsageError, match="temporary"):
        cogbench.verify(in_memory)
