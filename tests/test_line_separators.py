"""A run's own output stays readable (issue 48, item 4): an answer holding U+2028, U+2029 and U+0085.

cogbench writes text as text (``ensure_ascii=False``), so these characters reach predictions.jsonl,
details.jsonl and an EEE record's rows unescaped, as JSON allows; ``str.splitlines()`` splits there,
and every command after ``score`` refused the run ("details.jsonl: record 1: not valid JSON"). Here a
real `openai:` eval run (a real local server as the model) answers one query with all three, and every
command that reads what the run wrote reads it back: JSONL is split at ``"\\n"`` only
(``cogbench.jsonl``).
"""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import needs_real_data

from cogbench.cards.release import build_release
from cogbench.cli import main
from cogbench.dataset_builders.load import load_config
from cogbench.jsonl import file_lines, text_lines
from cogbench.reference_eval.formats.official import OfficialIds, read_any_predictions, write_official
from cogbench.reference_eval.formats.predictions import Prediction, PredictionWriter, read_predictions

from openai_server import OpenAIServer, Reply

pytestmark = needs_real_data

SEPARATORS = "\u2028\u2029\x85"
ODD = f"Putting on{SEPARATORS} my clothes."  # a reply is stripped, so inside it
QUESTION = "Am I taking off or putting on my clothes?"


def model(request):
    return Reply(text=ODD if QUESTION in request.prompt_text else "I cannot tell.")


@pytest.fixture(scope="module")
def run(real_raw_dir, tmp_path_factory):
    """(root, build, the eval run folder, the model server) on the real CODIS data, judged by the rule."""
    root = tmp_path_factory.mktemp("separators")
    raw = root / "raw"
    raw.mkdir()
    shutil.copytree(real_raw_dir / "codis", raw / "codis")
    build = build_release(raw, root / "build", repo_id="cogorg/cogbench").out
    with OpenAIServer(model) as vlm, pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_API_KEY", "x")
        argv = ["eval", "--task", "codis", "--dataset", str(build), "--model", "openai:vlm"]
        argv += ["--base-url", vlm.base_url, "--out", str(root / "run"), "--max-new-tokens", "32"]
        assert main(argv) == 0
        yield root, build, root / "run", vlm


def test_the_answer_is_written_unescaped_and_read_back_whole(run):
    _root, _build, folder, _vlm = run
    for name in ("predictions.jsonl", "score/details.jsonl"):
        text = (folder / name).read_text(encoding="utf-8")
        assert all(char in text for char in SEPARATORS), name  # the writers keep text as text
        assert len(text.splitlines()) > text.count("\n")  # so splitlines() would cut records
    outputs = [p.output for p in read_predictions(folder / "predictions.jsonl")]
    assert outputs.count(ODD) == 2  # both queries of pair 000
    details = [json.loads(line) for _, line in text_lines((folder / "score" / "details.jsonl").read_text())]
    assert sum(ODD in json.dumps(d, ensure_ascii=False) for d in details) == 1  # one line per pair


@pytest.mark.parametrize(
    "command",
    [
        ["verify", "{run}"],
        ["compare", "{run}", "{run}"],
        ["report", "{run}", "--out", "{tmp}/report"],
        ["report", "{run}", "--site", "{tmp}/site"],
        ["explain", "{run}", "{run}"],
        ["rescore", "{run}", "--dataset", "{build}", "--out", "{tmp}/rescored"],
        [
            *("eval", "--task", "codis", "--dataset", "{build}", "--model", "openai:vlm", "--base-url", "{url}"),
            *("--out", "{run_copy}", "--max-new-tokens", "32"),
        ],
    ],
    ids=["verify", "compare", "report", "site", "explain", "rescore", "eval-resume"],
)
def test_every_command_after_score_reads_the_run(command, run, tmp_path, monkeypatch, capsys):
    _root, build, folder, vlm = run
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    copy = tmp_path / "run-copy"
    if "{run_copy}" in command:
        shutil.copytree(folder, copy)
    values = {"run": folder, "build": build, "tmp": tmp_path, "url": vlm.base_url, "run_copy": copy}
    asked = len(vlm.chat_requests)
    capsys.readouterr()
    code = main([part.format(**values) for part in command])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "not valid JSON" not in err
    assert len(vlm.chat_requests) == asked  # a resumed eval finds every answer already there


def test_the_eee_record_of_the_run_verifies(run, tmp_path, capsys):
    _root, _build, folder, _vlm = run
    out = tmp_path / "out"
    argv = ["publish-results", str(folder), "--model-repo", "me/model", "--details-repo", "me/details"]
    assert main([*argv, "--dry-run", "--out", str(out)]) == 0
    (aggregate,) = (out / "details" / "eee").glob("data/codis/me/model/*.json")
    rows = aggregate.with_name(aggregate.stem + "_samples.jsonl").read_text(encoding="utf-8")
    assert all(char in rows for char in SEPARATORS)
    capsys.readouterr()
    assert main(["verify", str(aggregate)]) == 0, capsys.readouterr().err
    assert main(["explain", str(out / "details"), str(folder)]) == 0, capsys.readouterr().err


def test_a_predictions_file_is_split_at_newlines_only(tmp_path):
    """The shared reader: a record holding every separator str.splitlines() knows (and a lone CR between
    tokens, where JSON allows whitespace) is one record; a torn last line is skipped when asked."""
    path = tmp_path / "predictions.jsonl"
    with PredictionWriter(path) as writer:
        writer.write([Prediction(task="vqa", item_id="a", output=f"A{SEPARATORS}\x1c\x1d\x1e\x0b\x0cB")])
    with path.open("a", encoding="utf-8", newline="") as handle:
        handle.write('{"task": "vqa",\r"item_id": "b", "output": "C"}\n{"task": "vqa", "item_id"')
    assert [p.output for p in read_predictions(path, skip_torn_tail=True)] == [
        f"A{SEPARATORS}\x1c\x1d\x1e\x0b\x0cB",
        "C",
    ]
    assert [number for number, _ in file_lines(path)] == [1, 2, 3]
    assert [number for number, _ in text_lines("a\u2028b\n\n c\r\n")] == [1, 3]


@pytest.mark.parametrize(("task", "id_column"), [("vqa", "question_id"), ("description", "image_id"), ("codis", "id")])
def test_the_official_format_writers_round_trip_the_separators(task, id_column, built_release, tmp_path):
    """`eval` writes each task's official file beside predictions.jsonl (JSON Lines for vqa and description)."""
    rows = load_config(str(built_release), task).remove_columns("image").to_list()
    queries = (1, 2) if task == "codis" else (None,)
    predictions = [
        Prediction(task, r[id_column], f"{number}{SEPARATORS}answer{SEPARATORS}", query=q)
        for number, r in enumerate(rows)
        for q in queries
    ]
    path = write_official(task, tmp_path, rows, predictions)
    back = read_any_predictions(path, task, OfficialIds.from_rows(task, rows))
    assert {p.key: p.output for p in back} == {p.key: p.output for p in predictions}
