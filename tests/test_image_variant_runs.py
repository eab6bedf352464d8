"""The invariance probe end to end (``eval --image-variant``): a local API server whose answer depends on the
image it gets, the tiny model, report, and verify refusing edited details and variant image hashes."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shutil

from conftest import needs_real_data

from cogbench.cli import main
from cogbench.dataset_builders.load import load_config
from cogbench.reference_eval.formats.predictions import read_predictions

from openai_server import Reply

OPTION = re.compile(r"^([ABCD])\. (.*)$", re.MULTILINE)


def _image_of(request) -> bytes:
    part = next(p for p in request.messages[0]["content"] if p["type"] == "image_url")
    return base64.b64decode(part["image_url"]["url"].split(",", 1)[1])


@needs_real_data
def test_a_model_that_misreads_png_images_flips_under_shift2_only(openai_server, built_release, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    rows = load_config(str(built_release), "vqa").select(range(6)).remove_columns("image").to_list()
    truth = {row["question"]: "ABCD"[row["answer"]] for row in rows}
    seen = {}

    def reader(request):  # right on a JPEG (the images and jpeg30), "A" on a PNG (shift2)
        image = _image_of(request)
        question = request.prompt_text.split("\nA. ")[0]
        seen.setdefault(question, set()).add(hashlib.sha256(image).hexdigest())
        return Reply(text=truth[question] if image[:3] == b"\xff\xd8\xff" else "A")

    server = openai_server(reader)
    out = tmp_path / "run"
    argv = ["eval", "--task", "vqa", "--model", "openai:m", "--base-url", server.base_url, "--dataset"]
    argv += [str(built_release), "--out", str(out), "--limit", "6", "--image-variant", "jpeg30,shift2"]
    assert main(argv) == 0
    assert len(server.chat_requests) == 18 and all(len(hashes) == 3 for hashes in seen.values())
    scores = json.loads((out / "score" / "scores.json").read_text())
    metrics = {name: m["overall_partial"] for name, m in scores["metrics"].items()}
    not_a = sum(row["answer"] != 0 for row in rows)  # the questions whose answer is not A: these flip under shift2
    assert metrics["accuracy"] == metrics["accuracy_jpeg30"] == 100 and metrics["flip_rate_jpeg30"] == 0
    assert metrics["flip_rate_shift2"] == metrics["flip_rate"] == 100 * not_a / 6
    assert metrics["accuracy_shift2"] == metrics["accuracy_invariant"] == 100 * (6 - not_a) / 6
    assert scores["image_variants"] == {"names": ["jpeg30", "shift2"], "pillow": [__import__("PIL").__version__]}
    shown = [p for p in read_predictions(out / "predictions.jsonl") if p.variant]
    assert {p.variant_image["sha256"] for p in shown} <= set().union(*seen.values())  # the bytes the model got

    assert main(["verify", str(out), "--dataset", str(built_release)]) == 0
    report = tmp_path / "report"
    assert main(["report", str(out), "--out", str(report)]) == 0
    section = (report / "report.md").read_text().split("## Image variants, vqa")[1].split("\n## ")[0]
    assert "shift2: moved 2 pixels right and down" in section


@needs_real_data
def test_the_tiny_model_runs_variants_and_verify_refuses_edits(tiny_llava, built_release, tmp_path, capsys):
    out = tmp_path / "run"
    argv = ["eval", "--task", "vqa", "--model", f"hf:{tiny_llava}", "--dataset", str(built_release), "--out"]
    argv += [str(out), "--limit", "2", "--max-new-tokens", "2", "--num-workers", "0", "--image-variant", "crop5"]
    assert main(argv) == 0
    assert json.loads((out / "run.json").read_text())["image_variants"]["names"] == ["crop5"]
    assert main(["verify", str(out), "--dataset", str(built_release)]) == 0

    def edited(name, change, *build):
        copy = tmp_path / name
        shutil.copytree(out, copy)
        path = copy / "score" / "details.jsonl"
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        change(lines[0]["variants"][0])
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))
        capsys.readouterr()
        assert main(["verify", str(copy), *build]) == 1
        return capsys.readouterr().out

    flipped = edited("flipped", lambda entry: entry.update(correct=not entry["correct"]))
    assert "variant crop5: correct: says" in flipped
    right = load_config(str(built_release), "vqa")[0]["answer"]
    letter = edited("letter", lambda entry: entry.update(extracted="ABCD"[right], correct=True))
    assert "metrics.accuracy_crop5" in letter and "variant crop5: extracted (read again from its response)" in letter
    text = edited("hashed", lambda entry: entry.update(image_sha256="0" * 64), "--dataset", str(built_release))
    assert "variant crop5: image_sha256 (made from the build)" in text


@needs_real_data
def test_judge_failures_on_variant_queries_are_the_runs_failures(openai_server, built_release, tmp_path, monkeypatch):
    """A CODIS run whose LLM judge fails on the variants' answers only: the run says it failed (exit 3 without
    --allow-failures), counts them apart from the images' own, and verify re-derives those counts."""
    import pytest

    from cogbench.errors import IncompleteRunError
    from cogbench.reference_eval.scoring.options import ScoreOptions
    from cogbench.reference_eval.scoring.pipeline import run_scoring

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")

    def responder(request):  # the model answers "png" on shift2's PNG; the judge cannot read a "png" answer
        if not isinstance(request.messages[0]["content"], str):  # a model request: text and image parts
            return Reply(text="png" if _image_of(request)[:4] == b"\x89PNG" else "jpeg")
        return Reply(text="maybe" if request.prompt_text.endswith("Here is the output: png") else "right")

    server = openai_server(responder)
    out = tmp_path / "run"
    argv = ["eval", "--task", "codis", "--model", "openai:m", "--base-url", server.base_url, "--dataset"]
    argv += [str(built_release), "--out", str(out), "--limit", "2", "--no-score", "--image-variant", "shift2"]
    assert main(argv) == 0

    def options(allow: bool) -> ScoreOptions:
        return ScoreOptions(
            task="codis",
            dataset=str(built_release),
            predictions=str(out / "predictions.jsonl"),
            judge="openai:judge",
            judge_base_url=server.base_url,
            allow_partial=True,
            allow_failures=allow,
            image_variants=("shift2",),
            out=str(tmp_path / ("allowed" if allow else "refused")),
        )

    with pytest.raises(IncompleteRunError, match=r"^4 of 8 judge queries failed"):
        run_scoring(options(False))
    scores = run_scoring(options(True))
    counts = scores["counts"]
    assert (counts["judge_failures"], counts["variant_judge_failures"], counts["variant_queries"]) == (0, 4, 4)
    assert scores["complete"] is False and scores["metrics"]["acc_p_shift2"]["partial"] is True
    assert "on image variants: 4 of 4 queries" in (tmp_path / "allowed" / "report.md").read_text()
    assert main(["verify", str(tmp_path / "allowed")]) == 0
    path = tmp_path / "allowed" / "scores.json"
    path.write_text(json.dumps({**scores, "counts": {**counts, "variant_judge_failures": 0}}))
    assert main(["verify", str(tmp_path / "allowed")]) == 1
