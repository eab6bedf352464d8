"""The errata path end to end (issue 41, item 3): two real CODIS builds whose raw files differ by one
answer, an `openai:` eval run on the old one (real local servers for the model and its LLM judge),
`rescore` on the new one without a model request and with one judge request (the query whose gold
changed), and `explain` old vs new naming exactly that item, by the amount derived by hand.

The model answers item 000 ("Am I taking off or putting on my clothes?") as the authors' old gold
says, and every other query "I cannot tell."; the judge says right exactly when the output is the
groundtruth. On the old build the model gets pair 000 right (both queries) and nothing else; the
errata restate 000's second answer, so on the new build its second query is wrong: Acc_p falls by one
pair of 353 (100/353 points), Acc_q by one query of 706 (100/706 points), and the category of 000
(Location and Orientation, counted from data.json here) by one of its own pairs and queries.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path

import pytest
from conftest import needs_real_data

from cogbench.cli import main
from cogbench.reference_eval.formats.predictions import read_predictions

from openai_server import Reply, answer_as_engine, request_lines
from release_helpers import copy_real_raw
from validation_helpers import edit_json

pytestmark = needs_real_data

QUESTION = "Am I taking off or putting on my clothes?"
OLD_ANSWER, NEW_ANSWER = "Taking off my clothes.", "Taking my clothes off."


def model(request):
    if QUESTION in request.prompt_text:
        up = "My hand is moving upwards." in request.prompt_text
        return Reply(text="Putting on my clothes." if up else OLD_ANSWER)
    return Reply(text="I cannot tell.")


def judge(request):
    truth = re.search(r"Here is the groundtruth: (.*)\nHere is the output: (.*)", request.prompt_text, re.S)
    return Reply(text="right" if truth.group(1) == truth.group(2) else "wrong")


def edit_raw(real_raw_dir: Path, dest: Path, add_pair: bool) -> Path:
    raw = copy_real_raw(real_raw_dir, dest)

    def edit(data):
        pair = next(p for p in data if p["id"] == "000")
        assert pair["question"] == QUESTION and pair["answer"]["answer_2"] == OLD_ANSWER
        pair["answer"]["answer_2"] = NEW_ANSWER
        if add_pair:
            data.append(dict(data[1], id="353", question="Is this a new question?"))

    edit_json(raw / "codis" / "data.json", edit)
    return raw


@pytest.fixture(scope="module")
def errata_run(real_raw_dir, tmp_path_factory):
    """(old build, new build with errata, the eval run on the old build, the servers) on the real data."""
    from openai_server import OpenAIServer

    root = tmp_path_factory.mktemp("rescore")
    old, draft, new = root / "old", root / "draft", root / "new"
    assert main(["build", "--raw-dir", str(real_raw_dir), "--out", str(old)]) == 0
    raw = edit_raw(real_raw_dir, root / "raw", add_pair=False)
    assert main(["build", "--raw-dir", str(raw), "--out", str(draft), "--version", "3.0.0"]) == 0
    assert main(["diff", str(old), str(draft), "--errata", str(root / "errata.json")]) == 0
    build = ["build", "--raw-dir", str(raw), "--out", str(new), "--version", "3.0.0", "--previous", str(old)]
    assert main([*build, "--errata", str(root / "errata.json")]) == 0
    vlm, judge_server = OpenAIServer(model), OpenAIServer(judge, models=["judge"])
    with vlm, judge_server, pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_API_KEY", "x")
        argv = ["eval", "--task", "codis", "--dataset", str(old), "--model", "openai:vlm"]
        argv += ["--base-url", vlm.base_url, "--out", str(root / "run"), "--max-new-tokens", "32"]
        argv += ["--judge", "openai:judge", "--judge-base-url", judge_server.base_url]
        assert main(argv) == 0
        yield {"root": root, "old": old, "new": new, "raw": raw, "vlm": vlm, "judge": judge_server}


def test_rescore_and_explain_give_the_impact_of_one_corrected_answer(errata_run, tmp_path, capsys):
    run, new, vlm, judge_server = errata_run["root"] / "run", errata_run["new"], errata_run["vlm"], errata_run["judge"]
    old_scores = json.loads((run / "score" / "scores.json").read_text())
    assert old_scores["metrics"]["acc_p"]["overall"] == pytest.approx(100 / 353)
    model_calls, judge_calls = len(vlm.chat_requests), len(judge_server.chat_requests)
    assert model_calls == 706
    out = tmp_path / "rescored"
    capsys.readouterr()
    assert (
        main(["rescore", str(run), "--dataset", str(new), "--out", str(out), "--judge-base-url", judge_server.base_url])
        == 0
    )
    printed = capsys.readouterr().out
    assert len(vlm.chat_requests) == model_calls  # no model request
    assert [r.prompt_text.count(NEW_ANSWER) for r in judge_server.chat_requests[judge_calls:]] == [1]  # 000 query 2
    assert "rescored: 706 stored answer(s)" in printed and "1 judge request(s)" in printed
    assert f"impact: cogbench explain {run} {out}" in printed
    assert "PARTIAL" not in printed
    new_scores = json.loads((out / "score" / "scores.json").read_text())
    assert new_scores["complete"] is True and new_scores["dataset_revision"].startswith("3.0.0+manifest.")
    assert json.loads((out / "run.json").read_text())["dataset"] == str(new)
    assert main(["verify", str(out)]) == 0
    capsys.readouterr()

    pairs = json.loads((errata_run["raw"] / "codis" / "data.json").read_text())
    in_category = sum(p["category"] == "Location and Orientation" for p in pairs)
    assert main(["explain", str(run), str(out), "--json"]) == 0
    explained = json.loads(capsys.readouterr().out)
    text = json.dumps(explained)
    assert "000" in text
    acc_p, acc_q = explained["metrics"]["acc_p"], explained["metrics"]["acc_q"]
    assert acc_p["overall"]["difference"] == pytest.approx(-100 / 353, abs=1e-9)
    assert acc_q["overall"]["difference"] == pytest.approx(-100 / 706, abs=1e-9)
    assert acc_p["overall"]["shares"]["items"] == pytest.approx(-100 / 353, abs=1e-9)
    assert acc_p["Location and Orientation"]["difference"] == pytest.approx(-100 / in_category, abs=1e-9)
    assert acc_q["Location and Orientation"]["shares"]["items"] == pytest.approx(-50 / in_category, abs=1e-9)
    assert explained["stages"]["items"]["assigned"] == ["000"]
    assert all(not explained["stages"][s]["assigned"] for s in explained["stages"] if s != "items")


def test_new_items_get_request_files_of_exactly_them(errata_run, real_raw_dir, tmp_path, capsys):
    """A build with one pair more: its two queries are the request files, the score is PARTIAL, and
    `eval --read-responses` into the same folder completes it (the model asked those two only)."""
    raw = edit_raw(real_raw_dir, tmp_path / "raw", add_pair=True)
    grown = tmp_path / "grown"
    build = ["build", "--raw-dir", str(raw), "--out", str(grown), "--version", "3.0.0"]
    assert main([*build, "--previous", str(errata_run["old"])]) == 0
    run, judge_server, vlm = errata_run["root"] / "run", errata_run["judge"], errata_run["vlm"]
    out, requests = tmp_path / "rescored", tmp_path / "requests"
    capsys.readouterr()
    argv = ["rescore", str(run), "--dataset", str(grown), "--out", str(out), "--judge-base-url", judge_server.base_url]
    assert main([*argv, "--write-requests", str(requests)]) == 0
    printed = capsys.readouterr().out
    assert "requests: 2 of 708 queries written" in printed
    scores = json.loads((out / "score" / "scores.json").read_text())
    assert scores["complete"] is False and scores["counts"]["missing_predictions"] == ["353#1", "353#2"]
    lines = request_lines(requests)
    assert len(lines) == 2 and all("Is this a new question?" in json.dumps(line["body"]) for line in lines)
    assert {p.item_id for p in read_predictions(out / "predictions.jsonl")} == {f"{i:03d}" for i in range(353)}
    # The engine answers them; `eval --read-responses` into the same folder completes the run.
    calls = len(vlm.chat_requests)
    answer_as_engine(vlm, lines, tmp_path / "output.jsonl")
    assert len(vlm.chat_requests) == calls + 2
    finish = ["eval", "--task", "codis", "--dataset", str(grown), "--model", "openai:vlm", "--out", str(out)]
    finish += ["--max-new-tokens", "32", "--judge", "openai:judge", "--judge-base-url", judge_server.base_url]
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_API_KEY", "x")
        assert main([*finish, "--read-responses", str(tmp_path / "output.jsonl")]) == 0
    assert len(vlm.chat_requests) == calls + 2
    assert json.loads((out / "score" / "scores.json").read_text())["complete"] is True


def test_rescore_prints_the_eval_command_for_what_it_lacks(errata_run, real_raw_dir, tmp_path, capsys):
    raw = edit_raw(real_raw_dir, tmp_path / "raw", add_pair=True)
    grown = tmp_path / "grown"
    build = ["build", "--raw-dir", str(raw), "--out", str(grown), "--version", "3.0.0"]
    assert main([*build, "--previous", str(errata_run["old"])]) == 0
    run, judge_server = errata_run["root"] / "run", errata_run["judge"]
    out = tmp_path / "rescored"
    capsys.readouterr()
    argv = ["rescore", str(run), "--dataset", str(grown), "--out", str(out), "--judge-base-url", judge_server.base_url]
    assert main(argv) == 0
    hint = re.search(r"answer them with: (cogbench eval .*)$", capsys.readouterr().out, re.M).group(1)
    assert shlex.split(hint)[:2] == ["cogbench", "eval"]
    assert main(shlex.split(hint)[1:]) == 0  # runs as printed: the request files of the two new queries
    assert len(request_lines(Path(f"{out}-missing-requests"))) == 2


def test_rescore_refusals_in_one_line(errata_run, tmp_path, capsys):
    run, new = errata_run["root"] / "run", errata_run["new"]
    edited = tmp_path / "edited"
    shutil.copytree(run, edited)
    text = (edited / "predictions.jsonl").read_text()
    (edited / "predictions.jsonl").write_text(text.replace(OLD_ANSWER, "Putting on my clothes.", 1))
    capsys.readouterr()
    assert main(["rescore", str(edited), "--dataset", str(new), "--out", str(tmp_path / "a")]) == 2
    err = capsys.readouterr().err
    assert "the run does not verify" in err and "answers_sha256" in err and not (tmp_path / "a").exists()
    hint = re.search(r"`(cogbench verify [^`]+)` lists all", err).group(1)
    assert main(shlex.split(hint)[1:]) == 1  # runs as printed, and lists the edited answers
    assert "answers_sha256" in capsys.readouterr().out
    score_only = tmp_path / "score-only"
    predictions = str(run / "predictions.jsonl")
    argv = ["score", "--task", "codis", "--dataset", str(errata_run["old"]), "--predictions", predictions]
    assert main([*argv, "--out", str(score_only)]) == 0
    capsys.readouterr()
    assert main(["rescore", str(score_only), "--dataset", str(new), "--out", str(tmp_path / "b")]) == 2
    assert "not an eval run folder" in capsys.readouterr().err
    assert main(["rescore", str(run), "--dataset", str(run), "--out", str(tmp_path / "c")]) != 0
    err = capsys.readouterr().err
    assert err.startswith("error:") and "Traceback" not in err and not (tmp_path / "c").exists()


def test_the_docs_errata_walk_through_runs_as_written(built_release, real_raw_dir, tmp_path):
    """docs/explain.md's errata section, both blocks through bash as written (the second one's stand-in
    model from tests/openai_server.py), and the numbers it shows: one query of 706 turns right."""
    import os
    import subprocess
    import sys

    page = (Path(__file__).resolve().parents[1] / "docs" / "explain.md").read_text()
    section = page[page.index("## Errata: what") : page.index("## Against the papers")]
    blocks = re.findall(r"```bash\n(.*?)```", section, re.S)
    assert len(blocks) == 2
    copy_real_raw(real_raw_dir, tmp_path / "raw")
    (tmp_path / "dist").mkdir()
    (tmp_path / "dist" / "cogbench").symlink_to(built_release)
    (tmp_path / "tests").symlink_to(Path(__file__).resolve().parent)
    env = {k: v for k, v in os.environ.items() if not k.startswith("COGBENCH_")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    outputs = []
    for block in blocks:
        ran = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", block],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:]
        outputs.append(ran.stdout)
    assert '| `codis` | `000` | `answer_2` | "Taking off my clothes." | "Undressing." |' in outputs[0]
    # diff --errata's hint, run as printed with no COGBENCH_RAW_DIR: the build again from the raw folder the new
    # build was made from (raw-fixed, which its build marker records), not the default raw/ (issue 48 item 9a)
    hint = re.search(r"carry them into the build: `(cogbench build [^`]+)`", outputs[0]).group(1)
    assert shlex.split(hint)[2:4] == ["--raw-dir", "raw-fixed"], hint
    again = subprocess.run(["bash", "-c", hint], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-2000:]
    assert "errata: 1 corrected field(s), on the card" in again.stdout
    assert "rescored: 706 stored answer(s) of runs/codis-v2, no model called" in outputs[1]
    shown = re.search(r"```text\n(## acc_q.*?)```", section, re.S).group(1)
    assert outputs[1].endswith(shown)  # the page shows what the block prints
    overall = re.search(r"\| overall \| ([\d.]+) \| ([\d.]+) \| \+([\d.]+) \| \+([\d.]+) \|", shown)
    assert float(overall.group(3)) == float(overall.group(4)) == round(100 / 706, 2)


def test_an_item_asked_other_text_is_not_carried(errata_run, real_raw_dir, tmp_path, capsys):
    """A corrected question changes the prompt the model got: that item's stored answers answer another
    question, so they are not carried; its queries are left for `eval` and the score is PARTIAL."""
    raw = copy_real_raw(real_raw_dir, tmp_path / "raw")
    edit_json(raw / "codis" / "data.json", lambda data: data[1].update(question=data[1]["question"] + " Say why."))
    reworded = tmp_path / "reworded"
    assert main(["build", "--raw-dir", str(raw), "--out", str(reworded), "--version", "3.0.0"]) == 0
    run, judge_server = errata_run["root"] / "run", errata_run["judge"]
    capsys.readouterr()
    out = tmp_path / "rescored"
    argv = ["rescore", str(run), "--dataset", str(reworded), "--out", str(out)]
    assert main([*argv, "--judge-base-url", judge_server.base_url]) == 0
    printed = capsys.readouterr().out
    assert "rescored: 704 stored answer(s)" in printed
    assert "not carried: 1 item(s) now asked other text: 001" in printed
    assert "PARTIAL: 2 query(ies) without an answer" in printed
    scores = json.loads((out / "score" / "scores.json").read_text())
    assert scores["counts"]["missing_predictions"] == ["001#1", "001#2"]


def raw_with_one_image_changed(real_raw_dir: Path, dest: Path, image: str) -> Path:
    """The real raw data with CODIS ``image`` corrected (re-encoded with one pixel changed, same name):
    every file hard-linked or copied, the changed one written to a fresh inode (shared is never touched)."""
    import io

    from PIL import Image

    from validation_helpers import copy_codis, replace_file

    raw = copy_real_raw(real_raw_dir, dest)
    (raw / "codis" / "images").unlink()
    shutil.rmtree(raw / "codis")
    copy_codis(real_raw_dir, raw)
    picture = Image.open(raw / "codis" / "images" / image).convert("RGB")
    picture.putpixel((0, 0), tuple(255 - c for c in picture.getpixel((0, 0))))
    encoded = io.BytesIO()
    picture.save(encoded, format="JPEG", quality=95)
    replace_file(raw / "codis" / "images" / image, encoded.getvalue())
    return raw


def test_an_item_shown_another_image_is_not_carried(errata_run, real_raw_dir, tmp_path, capsys):
    """A corrected image keeps the prompt text, but the model never saw it: the items showing it are left
    for `eval` (request files of exactly their queries), found from the new build's errata over the run's
    build, or by comparing the two builds' images where the build has no errata; where neither can tell,
    rescore says so."""
    from cogbench.reference_eval.api.rescoring import rescore

    image = "e4da3b7fbb.jpg"
    pairs = json.loads((real_raw_dir / "codis" / "data.json").read_text())
    showing = sorted(p["id"] for p in pairs if p["image_id"] == image)
    assert "001" in showing and len(showing) == 2
    raw = raw_with_one_image_changed(real_raw_dir, tmp_path / "raw", image)
    assert (real_raw_dir / "codis" / "images" / image).read_bytes() != (raw / "codis" / "images" / image).read_bytes()
    old, run, judge_server = errata_run["old"], errata_run["root"] / "run", errata_run["judge"]
    plain, draft, fixed = tmp_path / "plain", tmp_path / "draft", tmp_path / "fixed"
    assert main(["build", "--raw-dir", str(raw), "--out", str(plain), "--version", "3.0.0"]) == 0
    assert main(["build", "--raw-dir", str(raw), "--out", str(draft), "--version", "3.0.0"]) == 0
    assert main(["diff", str(old), str(draft), "--errata", str(tmp_path / "errata.json")]) == 0
    build = ["build", "--raw-dir", str(raw), "--out", str(fixed), "--version", "3.0.0", "--previous", str(old)]
    assert main([*build, "--errata", str(tmp_path / "errata.json")]) == 0
    errata = json.loads((fixed / "manifest.json").read_text())["errata"]
    assert [(e["id"], e["field"]) for e in errata["items"]] == [(i, "image") for i in showing]
    queries = [f"{i}#{q}" for i in showing for q in (1, 2)]

    capsys.readouterr()
    out, requests = tmp_path / "by-errata", tmp_path / "requests"
    argv = ["rescore", str(run), "--dataset", str(fixed), "--out", str(out), "--judge-base-url", judge_server.base_url]
    assert main([*argv, "--write-requests", str(requests)]) == 0
    printed = capsys.readouterr().out
    assert f"not carried: 2 item(s) now shown another image: {', '.join(showing)}" in printed
    assert "rescored: 702 stored answer(s)" in printed and "requests: 4 of 706 queries written" in printed
    scores = json.loads((out / "score" / "scores.json").read_text())
    assert scores["complete"] is False and scores["counts"]["missing_predictions"] == queries
    lines = request_lines(requests)
    questions = [next(p["question"] for p in pairs if p["id"] == i) for i in showing]
    assert sorted(next(q for q in questions if q in json.dumps(line["body"])) for line in lines) == sorted(
        questions * 2
    )
    assert {p.item_id for p in read_predictions(out / "predictions.jsonl")} == {f"{i:03d}" for i in range(353)} - set(
        showing
    )

    by_errata = rescore(run, str(fixed), tmp_path / "api-errata", judge_base_url=judge_server.base_url)
    by_images = rescore(run, str(plain), tmp_path / "api-images", judge_base_url=judge_server.base_url)
    assert by_errata.changed_image == by_images.changed_image == showing
    assert "errata" in by_errata.images and f"compared with the run's build {old}" in by_images.images
    assert by_errata.result.scores["counts"]["missing_predictions"] == queries
    assert by_images.result.scores["counts"]["missing_predictions"] == queries

    # The run's build moved away from where run.json says, and the build without errata: nothing can tell.
    # (run.json's dataset edited instead would no longer verify: verify compares it with scores.json's.)
    away = old.with_name(old.name + "-moved")
    old.rename(away)
    try:
        capsys.readouterr()
        argv = ["rescore", str(run), "--dataset", str(plain), "--out", str(tmp_path / "unchecked")]
        assert main([*argv, "--judge-base-url", judge_server.base_url]) == 0
        printed = capsys.readouterr().out
    finally:
        away.rename(old)
    revision = json.loads((run / "run.json").read_text())["dataset_revision"]
    assert f"WARNING: images not compared: the run's build {revision} is not a local folder" in printed
    assert "rescored: 706 stored answer(s)" in printed


def test_rescore_is_named_at_the_package_top(errata_run, tmp_path):
    """`cogbench.rescore` (loaded on first use) is the command's function: it returns what it did, the
    new scores derived by hand in the module docstring (pair 000's second query now wrong: Acc_q
    100/706, Acc_p 0), and fails with the project's exceptions, never SystemExit."""
    import cogbench
    from cogbench.errors import UsageError

    assert {"rescore", "Rescored"} <= set(dir(cogbench)) and "rescore" in cogbench.__all__
    run, new, judge_server = errata_run["root"] / "run", errata_run["new"], errata_run["judge"]
    done = cogbench.rescore(run, str(new), tmp_path / "api", judge_base_url=judge_server.base_url)
    assert isinstance(done, cogbench.Rescored) and isinstance(done.result, cogbench.Result)
    assert done.carried == 706 and done.missing == [] and done.changed_image == [] and done.next_command is None
    assert done.result.folder == tmp_path / "api" / "score" and done.result.complete
    assert done.result.metrics["acc_q"] == pytest.approx(100 / 706) and done.result.metrics["acc_p"] == 0
    with pytest.raises(UsageError, match="no scores.json here"):
        cogbench.rescore(new, str(new), tmp_path / "b")
