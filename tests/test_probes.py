"""Circular VQA (``eval --circular``) and the blind baseline (``eval --no-image``): API server, tiny model, resume, report."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

from conftest import needs_real_data

from cogbench.cli import main
from cogbench.dataset_builders.load import load_config
from cogbench.reference_eval.formats.predictions import read_predictions
from cogbench.reference_eval.tasks.queries import rotate

from openai_server import Reply

OPTION = re.compile(r"^([ABCD])\. (.*)$", re.MULTILINE)


def _api_argv(server, dataset, out, task, *extra):
    return [
        "eval",
        "--task",
        task,
        "--model",
        "openai:served-model",
        "--base-url",
        server.base_url,
        "--dataset",
        str(dataset),
        "--out",
        str(out),
        "--concurrency",
        "4",
        "--max-new-tokens",
        "8",
        *extra,
    ]


def _answers(built_release, limit):
    rows = load_config(str(built_release), "vqa").select(range(limit)).remove_columns("image").to_list()
    return {row["question"]: row[f"choice_{'abcd'[row['answer']]}"] for row in rows}, rows


@needs_real_data
def test_circular_vqa_scores_a_reader_and_a_position_biased_model(openai_server, built_release, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    truth, rows = _answers(built_release, 12)

    def reader(request):  # picks the right option wherever the rotation put it
        text = request.prompt_text
        options = {text_: letter for letter, text_ in OPTION.findall(text)}
        return Reply(text=options[truth[text.split("\nA. ")[0]]])

    server = openai_server(reader)
    assert main(_api_argv(server, built_release, tmp_path / "reader", "vqa", "--circular", "--limit", "12")) == 0
    prompts = {}
    for request in server.chat_requests:  # each question shown in its four rotations
        question = request.prompt_text.split("\nA. ")[0]
        prompts.setdefault(question, set()).add(tuple(text for _, text in OPTION.findall(request.prompt_text)))
    for row in rows:
        choices = [row[f"choice_{c}"] for c in "abcd"]
        assert prompts[row["question"]] == {tuple(rotate(choices, 0, r)[0]) for r in range(4)}
    scores = json.loads((tmp_path / "reader" / "score" / "scores.json").read_text())
    # --limit 12: every metric is PARTIAL (12 of 64 questions); its value is kept as overall_partial
    assert all(value["partial"] and value["overall"] is None for value in scores["metrics"].values())
    metrics = {name: value["overall_partial"] for name, value in scores["metrics"].items()}
    assert scores["circular"] is True and scores["counts"]["queries"] == 48
    assert metrics["accuracy"] == metrics["accuracy_circular"] == 100 and metrics["answer_changed"] == 0
    assert [metrics[f"choice_{x}"] for x in "ABCD"] == [25.0] * 4  # the right letter visits every position once
    interval = scores["metrics"]["accuracy_circular"]["interval"]
    # the first 12 questions are all on one image: no spread between images to measure, so no interval
    assert len({row["image_id"] for row in rows}) == 1
    assert interval["overall"] is None and interval["clusters"]["overall"] == 1

    biased = openai_server(lambda request: Reply(text="A"))
    assert main(_api_argv(biased, built_release, tmp_path / "biased", "vqa", "--circular", "--limit", "12")) == 0
    scores = json.loads((tmp_path / "biased" / "score" / "scores.json").read_text())
    # --limit 12: every metric is PARTIAL (12 of 64 questions); its value is kept as overall_partial
    assert all(value["partial"] and value["overall"] is None for value in scores["metrics"].values())
    metrics = {name: value["overall_partial"] for name, value in scores["metrics"].items()}
    first_is_right = sum(row["answer"] == 0 for row in rows)
    assert metrics["accuracy"] == 100 * first_is_right / 12 and metrics["accuracy_circular"] == 0
    assert metrics["choice_A"] == 100 and metrics["answer_changed"] == 100

    out = tmp_path / "report"
    assert main(["report", str(tmp_path / "reader"), str(tmp_path / "biased"), "--out", str(out)]) == 0
    markdown = (out / "report.md").read_text()
    assert "## Circular evaluation, VQA" in markdown and "position_bias.png" in markdown
    assert (out / "position_bias.png").stat().st_size > 10_000


@needs_real_data
def test_blind_requests_carry_no_image_and_the_report_lists_shared_hits(
    openai_server, built_release, tmp_path, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    truth, rows = _answers(built_release, 8)

    def guesser(request):  # right on the first five questions, without seeing anything
        text = request.prompt_text
        question = text.split("\nA. ")[0]
        options = {text_: letter for letter, text_ in OPTION.findall(text)}
        known = [row["question"] for row in rows[:5]]
        return Reply(text=options[truth[question]] if question in known else "none of them")

    for name in ("blind-1", "blind-2"):
        server = openai_server(guesser)
        assert main(_api_argv(server, built_release, tmp_path / name, "vqa", "--no-image", "--limit", "8")) == 0
        for request in server.chat_requests:
            assert [part["type"] for part in request.messages[0]["content"]] == ["text"]
    scores = json.loads((tmp_path / "blind-1" / "score" / "scores.json").read_text())
    assert scores["no_image"] is True and scores["metrics"]["accuracy"]["overall_partial"] == 100 * 5 / 8
    assert json.loads((tmp_path / "blind-1" / "run.json").read_text())["no_image"] is True

    out = tmp_path / "report"
    assert main(["report", str(tmp_path / "blind-1"), str(tmp_path / "blind-2"), "--out", str(out)]) == 0
    markdown = (out / "report.md").read_text()
    section = markdown.split("## Questions answered right without the image by several runs (vqa)")[1].split("\n## ")[0]
    listed = re.findall(r"^\| (\S+) \| \w+ \| ", section, re.MULTILINE)[1:]  # skip the header row
    assert sorted(listed) == sorted(row["question_id"] for row in rows[:5])


@needs_real_data
def test_circular_and_blind_runs_resume_on_the_tiny_model(tiny_llava, built_release, tmp_path, capsys):
    base = [
        "eval",
        "--task",
        "vqa",
        "--model",
        f"hf:{tiny_llava}",
        "--dataset",
        str(built_release),
        "--max-new-tokens",
        "4",
        "--num-workers",
        "0",
        "--batch-size",
        "3",
        "--no-score",
    ]
    circular = tmp_path / "circular"
    assert main([*base, "--out", str(circular), "--circular", "--limit", "2"]) == 0
    first = {(p.item_id, p.query): p.output for p in read_predictions(circular / "predictions.jsonl")}
    assert len(first) == 8 and {q for _, q in first} == {0, 1, 2, 3}
    capsys.readouterr()
    assert main([*base, "--out", str(circular), "--circular", "--limit", "3"]) == 0
    assert "queries: 12 total, 8 already done, 4 generated now" in capsys.readouterr().out
    resumed = {(p.item_id, p.query): p.output for p in read_predictions(circular / "predictions.jsonl")}
    assert len(resumed) == 12 and all(resumed[key] == output for key, output in first.items())
    # A plain run in the circular run's folder is refused rather than mixed in.
    assert main([*base, "--out", str(circular), "--limit", "3"]) == 1
    assert "settings differ from those of the run the folder holds: circular: true → (none)" in capsys.readouterr().err
    assert (
        main(
            [
                "score",
                "--task",
                "vqa",
                "--dataset",
                str(built_release),
                "--circular",
                "--allow-partial",
                "--predictions",
                str(circular / "predictions.jsonl"),
                "--out",
                str(circular / "score"),
            ]
        )
        == 0
    )
    scores = json.loads((circular / "score" / "scores.json").read_text())
    assert scores["counts"]["items"] == 3 and scores["counts"]["queries"] == 12

    blind = tmp_path / "blind"
    assert main([*base, "--out", str(blind), "--no-image", "--limit", "2"]) == 0
    capsys.readouterr()
    assert main([*base, "--out", str(blind), "--no-image", "--limit", "4"]) == 0
    assert "queries: 4 total, 2 already done, 2 generated now" in capsys.readouterr().out
    assert json.loads((blind / "run.json").read_text())["no_image"] is True
    assert main([*base, "--out", str(blind), "--limit", "4"]) == 1  # with images, into the blind folder
    assert "settings differ from those of the run the folder holds: no_image: true → (none)" in capsys.readouterr().err


@needs_real_data
def test_circular_queries_split_over_torchrun_ranks_like_plain_ones(tiny_llava, built_release, tmp_path):
    """Two CPU ranks under torchrun: the 4 x 3 rotated queries split between shards, merged as one process writes them."""
    argv = [
        "eval",
        "--task",
        "vqa",
        "--model",
        f"hf:{tiny_llava}",
        "--dataset",
        str(built_release),
        "--max-new-tokens",
        "4",
        "--num-workers",
        "0",
        "--circular",
        "--limit",
        "3",
        "--no-score",
    ]
    assert main([*argv, "--out", str(tmp_path / "single")]) == 0
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc_per_node",
        "2",
        "-m",
        "cogbench",
        *argv,
        "--out",
        str(tmp_path / "parallel"),
    ]
    finished = subprocess.run(command, capture_output=True, text=True, env=os.environ, timeout=300)
    assert finished.returncode == 0, finished.stderr[-2000:]
    shards = [read_predictions(tmp_path / "parallel" / "shards" / f"rank-{rank}.jsonl") for rank in (0, 1)]
    assert [len(shard) for shard in shards] == [6, 6]
    assert not {p.key for p in shards[0]} & {p.key for p in shards[1]}
    single = [(p.key, p.output) for p in read_predictions(tmp_path / "single" / "predictions.jsonl")]
    assert [(p.key, p.output) for p in read_predictions(tmp_path / "parallel" / "predictions.jsonl")] == single
