"""``cogbench verify``: one edit per case of anything a reader relies on, each refused naming its file
and field (issue 38); the untouched runs verify, with and without ``--dataset BUILD``.

Runs: test_hub_results' real CODIS run (rule judge, the real data under ../shared via a build) and its
published details dataset, test_verify's VQA run on the real samples, and test_details_dataset's
LLM-judged eval runs (run.json, predictions.jsonl; CODIS and Description).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import datasets
import pytest
from test_details_dataset import judged_runs  # noqa: F401 (module-scoped fixture)
from test_hub_results import codis_run  # noqa: F401 (module-scoped fixture)
from test_verify import published, vqa_run  # noqa: F401 (module-scoped fixtures)

from cogbench.cli import main
from cogbench.reference_eval.publishing.details_dataset import write_details
from cogbench.reference_eval.publishing.hub_results import NotPublishable, check_publishable
from cogbench.reference_eval.recording.run_files import render_report
from cogbench.reference_eval.recording.run_reader import read_run


def _scores(run: Path, edit, rerender: bool = True) -> None:
    """Edit scores.json; report.md re-rendered from it, so the two agree and only re-derivation can tell."""
    scores = json.loads((run / "scores.json").read_text())
    edit(scores)
    (run / "scores.json").write_text(json.dumps(scores, indent=2))
    if rerender:
        (run / "report.md").write_text(render_report(scores))


def _details(run: Path, edit) -> None:
    lines = [json.loads(line) for line in (run / "details.jsonl").read_text().splitlines()]
    lines = edit(lines) or lines
    (run / "details.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))


def _bump_interval(s):
    s["metrics"]["acc_p"]["interval"]["overall"][0] += 1.0


def _null(s):
    s["metrics"]["acc_p"]["per_category"]["Attributes"] = None


def _bias(s):
    s["analyses"]["answer_bias"]["pairs"][0]["model"][0] += 1


def _drop_line(lines):
    return lines[1:]


def _image_id(lines):
    lines[5]["image_id"] = lines[0]["image_id"]


def _answer(lines):  # the verdict stays (the output is another answer), so only the build can tell
    lines[4]["queries"][0]["answer"] += " Really."


def _item_id(lines):
    lines[3]["item_id"] = "zzz"


# (case, edit of the run folder, extra verify arguments, what the output must name)
CODIS_CASES = [
    ("interval in scores.json and report.md", lambda r: _scores(r, _bump_interval), [], "acc_p.interval.overall (low)"),
    ("value set to null", lambda r: _scores(r, _null), [], "metrics.acc_p.per_category.Attributes"),
    ("counts.items", lambda r: _scores(r, lambda s: s["counts"].update(items=352)), [], "counts.items"),
    ("n_scored", lambda r: _scores(r, lambda s: s["metrics"]["acc_q"].update(n_scored=700)), [], "acc_q.n_scored"),
    ("n_expected", lambda r: _scores(r, lambda s: s["metrics"]["acc_p"].update(n_expected=354)), [], "n_expected"),
    ("complete", lambda r: _scores(r, lambda s: s.update(complete=False)), [], "scores.json: complete"),
    (
        "missing_predictions",
        lambda r: _scores(r, lambda s: s["counts"].update(missing_predictions=["000#1"])),
        [],
        "counts.missing_predictions",
    ),
    (
        "provenance answers hash",
        lambda r: _scores(r, lambda s: s["provenance"].update(answers_sha256="0" * 64)),
        [],
        "provenance.answers_sha256",
    ),
    (
        "judge identity",
        lambda r: _scores(r, lambda s: s["provenance"]["judge"].update(kind="none")),
        [],
        "judge.kind (provenance.judge.kind)",
    ),
    ("judge parsing", lambda r: _scores(r, lambda s: s["judge"].update(parsing="official")), [], "judge.parsing"),
    # (resamples and seed are the run's own settings, stated: test_verify.py's own-resamples test)
    ("interval images", lambda r: _scores(r, lambda s: s["intervals"].update(clusters=215)), [], "intervals.clusters"),
    ("judge agreement", lambda r: _scores(r, lambda s: s.update(judge_agreement=90.0)), [], "judge_agreement"),
    ("answer bias", lambda r: _scores(r, _bias), [], "analyses.answer_bias"),
    ("dropped details line", lambda r: _details(r, _drop_line), [], "counts.items"),
    ("an item's id", lambda r: _details(r, _item_id), [], "provenance.answers_sha256"),
    ("an item's image id (build)", lambda r: _details(r, _image_id), ["--dataset"], "line 6: image_id"),
    ("a reference answer (build)", lambda r: _details(r, _answer), ["--dataset"], "line 5: answers"),
]


def _verify(argv: list[str], capsys) -> tuple[int, str]:
    code = main(["verify", *argv])
    return code, capsys.readouterr().out


@pytest.mark.parametrize("case,edit,extra,named", CODIS_CASES, ids=[c[0] for c in CODIS_CASES])
def test_each_edit_of_the_codis_run_is_refused_naming_its_field(
    codis_run,  # noqa: F811
    published,  # noqa: F811
    tmp_path,
    capsys,
    case,
    edit,
    extra,
    named,
):
    build, _ = codis_run
    run = shutil.copytree(published[0], tmp_path / "run")
    edit(run)
    code, out = _verify([str(run), *([*extra, str(build)] if extra else [])], capsys)
    assert code == 1, out
    assert named in out, out
    assert out.splitlines()[-1].startswith("NOT verified: ")


def test_the_untouched_runs_verify_with_and_without_the_build(codis_run, vqa_run, built_release, capsys):  # noqa: F811
    build, run = codis_run
    for argv in ([str(run)], [str(run), "--dataset", str(build)], [str(vqa_run), "--dataset", str(built_release)]):
        code, out = _verify(argv, capsys)
        assert code == 0, out
        stated = [line for line in out.splitlines() if line.startswith("stated, not re-derivable: ")]
        assert len(stated) == 1 and out.splitlines()[0].startswith("re-derived: ")
        # Without the build, ids and reference answers are named as stated; with it, re-derived.
        assert ("give --dataset BUILD" in stated[0]) == ("--dataset" not in argv)


def _edit_parquet(details: Path, column: str, edit) -> None:
    path = details / "data" / "codis" / "test.parquet"
    rows = datasets.load_dataset("parquet", data_files=str(path), split="train").to_list()
    rows[0][column] = json.dumps(edit(json.loads(rows[0][column])))
    datasets.Dataset.from_list(rows).to_parquet(str(path))


DETAILS_CASES = [
    ("judge_verdicts", lambda v: [not v[0], v[1]]),
    ("raw_output", lambda v: ["edited", v[1]]),
    ("parsed_answer", lambda v: ["edited", v[1]]),
    ("score_contributions", lambda v: {**v, "acc_q": [[c, 1.0 - h, t] for c, h, t in v["acc_q"]]}),
]


@pytest.mark.parametrize("column,edit", DETAILS_CASES, ids=[c[0] for c in DETAILS_CASES])
def test_a_readable_column_that_disagrees_with_detail_is_refused(published, tmp_path, capsys, column, edit):  # noqa: F811
    details = shutil.copytree(published[1] / "details", tmp_path / "details")
    _edit_parquet(details, column, edit)
    code, out = _verify([str(details)], capsys)
    assert code == 1 and f"row 0: {column}" in out, out


def test_a_vqa_robust_letter_its_response_does_not_give_is_named(vqa_run, tmp_path, capsys):  # noqa: F811
    run = shutil.copytree(vqa_run, tmp_path / "run")

    def edit(lines):
        line = lines[10]  # "The answer is X": the robust extractor reads X
        assert line["extracted"] == line["answer"] and line["choices"]
        line["extracted"] = "ABCD"[("ABCD".index(line["answer"]) + 1) % 4]
        line["correct"] = False

    _details(run, edit)
    code, out = _verify([str(run)], capsys)
    assert code == 1 and "extracted " in out and "is not what the response and its choices give" in out, out


RUN_JSON_CASES = [
    ("temperature", lambda r: r["generation"].update(temperature=0.7), "run.json: generation"),
    ("max tokens", lambda r: r["generation"].update(max_new_tokens=7), "run.json: generation"),
    ("model", lambda r: r.update(model="openai:other"), "run.json: model"),
    ("prompt", lambda r: r.update(prompt_sha256="0" * 64), "run.json: prompt_sha256"),
    ("dataset revision", lambda r: r.update(dataset_revision="9.9.9"), "run.json: dataset_revision"),
    ("deleted", None, "run.json: missing"),
]


@pytest.mark.parametrize("case,edit,named", RUN_JSON_CASES, ids=[c[0] for c in RUN_JSON_CASES])
def test_an_edited_or_deleted_run_json_is_named(judged_runs, tmp_path, capsys, case, edit, named):  # noqa: F811
    folder = shutil.copytree(judged_runs[1]["codis"].parent, tmp_path / "codis")
    code, out = _verify([str(folder / "score")], capsys)
    assert code == 0, out
    if edit is None:
        (folder / "run.json").unlink()
    else:
        record = json.loads((folder / "run.json").read_text())
        edit(record)
        (folder / "run.json").write_text(json.dumps(record))
    code, out = _verify([str(folder / "score")], capsys)
    assert code == 1 and named in out, out


def test_a_recognition_flag_its_similarity_contradicts_is_named(judged_runs, tmp_path, capsys):  # noqa: F811
    run = shutil.copytree(judged_runs[1]["description"], tmp_path / "run")

    def edit(lines):
        match = lines[0]["recognition"]["matches"][0]
        match["recognized"] = not match["recognized"]
        lines[0]["recognition"]["recognized"] += 1 if match["recognized"] else -1

    _details(run, edit)
    code, out = _verify([str(run)], capsys)
    assert code == 1 and "vs the threshold 0.6 says otherwise" in out, out


def test_the_llm_details_dataset_keeps_the_llm_verdicts_not_the_rule_judges(judged_runs, tmp_path, capsys):  # noqa: F811
    run = read_run(judged_runs[1]["codis"])
    queries = [q for d in run.details for q in d["queries"]]
    assert any(q["right"] != q["rule_right"] for q in queries)  # the two judges differ somewhere
    write_details([run], tmp_path / "details", "cogorg/cogbench", "v2.0.0")
    code, out = _verify([str(tmp_path / "details")], capsys)
    assert code == 0, out
    rows = datasets.load_dataset("parquet", data_files=str(tmp_path / "details/data/codis/test.parquet"))["train"]
    assert [json.loads(v) for v in rows["judge_verdicts"]] == [[q["right"] for q in d["queries"]] for d in run.details]


def test_publish_refuses_a_run_flagged_complete_whose_counts_say_otherwise(published, tmp_path):  # noqa: F811
    run = shutil.copytree(published[0], tmp_path / "run")
    _scores(run, lambda s: s["metrics"]["acc_q"].update(n_scored=700, judged=700), rerender=False)
    scored = read_run(run)  # the values still match the details: read_run alone lets it through
    assert scored.scores["complete"] is True
    with pytest.raises(NotPublishable, match=r"flags say complete, its counts do not \(acc_q 700/706 queries\)"):
        check_publishable(scored)


@pytest.mark.parametrize("task", ["codis", "description"])
def test_an_edited_rendered_prompt_hash_is_found_by_rendering_the_prompt_again(
    judged_runs,  # noqa: F811
    built_release,
    tmp_path,
    capsys,
    task,
):
    """An eval run's prompts are rendered again from the build and the model template (the server's
    hashes of what it received pin the stored ones in test_details_dataset); without the build they are
    named as stated."""
    folder = shutil.copytree(judged_runs[1][task].parent, tmp_path / task)
    run = folder / "score"
    code, out = _verify([str(run), "--dataset", str(built_release)], capsys)
    assert code == 0 and "rendered_prompt_sha256" not in out.splitlines()[1], out
    code, out = _verify([str(run)], capsys)
    assert code == 0 and "each answer's rendered_prompt_sha256 (give --dataset BUILD" in out.splitlines()[1], out

    def edit(lines):
        answer = lines[0]["queries"][1] if task == "codis" else lines[0]
        answer["rendered_prompt_sha256"] = "0" * 64

    _details(run, edit)
    code, out = _verify([str(run), "--dataset", str(built_release)], capsys)
    item = json.loads((run / "details.jsonl").read_text().splitlines()[0])["item_id"]
    named = f"item {item}{' (2)' if task == 'codis' else ''}: rendered_prompt_sha256 (its prompt rendered from the build): says '{'0' * 64}'"
    assert code == 1 and named in out, out
