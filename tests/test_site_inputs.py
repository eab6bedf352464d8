"""`report --site` reads details datasets written by `publish-results`, verified first (issue 43)."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys

import pytest
from conftest import needs_real_data
from test_hub_results import (
    ACC_P,
    DATASET,
    args_for,
    codis_run,  # noqa: F401 (the module-scoped run fixture)
)
from test_intervals import codis_example, score_codis, swap_pairs
from test_report_run_kind import description_predictions, score_description
from test_runs_report import vqa_run

from cogbench.cli import main
from cogbench.dataset_builders.output import folder_files
from cogbench.reference_eval.publishing.details_dataset import write_details
from cogbench.reference_eval.publishing.hub_results import publish_results
from cogbench.reference_eval.recording.run_reader import read_run
from cogbench.reference_eval.tasks.prompts import DESCRIPTION_DIRECTED, DESCRIPTION_SPONTANEOUS

from hub_server import COMMIT_OID, HubRepo, LocalHub, local_hub_api


def site_data(site) -> dict:
    text = (site / "data" / "site.js").read_text()
    return json.loads(text.split('window.COGBENCH["site"]=', 1)[1].rstrip().rstrip(";"))


@needs_real_data
def test_a_details_dataset_is_a_run_of_the_site_and_an_edited_one_is_refused(built_release, tmp_path, capsys):
    truth, swapped = tmp_path / "truth", tmp_path / "swapped"
    score_codis(built_release, codis_example(), truth, resamples=100)
    score_codis(built_release, swap_pairs(codis_example(), 0.1, 2, tmp_path / "swapped.json"), swapped)  # as verify
    details = tmp_path / "details"
    write_details([read_run(swapped)], details, "org/details", "main")
    site = tmp_path / "site"
    assert main(["report", str(truth), str(details), "--site", str(site), "--permutations", "999"]) == 0
    data = site_data(site)
    assert [run["model"] for run in data["runs"]] == ["output_example", "swapped"]
    acc_p = next(m for m in data["tasks"][0]["metrics"] if m["name"] == "acc_p")
    stated = json.loads((swapped / "scores.json").read_text())["metrics"]["acc_p"]
    assert [row["cells"]["overall"]["v"] for row in acc_p["rows"]] == [100.0, stated["overall"]]
    assert [row["letters"] for row in acc_p["rows"]] == ["a", "b"]  # 35 pairs wrong: told apart
    items = (site / "data" / "items-codis.js").read_text()
    assert items.count('"answers":[{') == 353

    scores = details / "runs" / "codis" / "scores.json"
    edited = json.loads(scores.read_text())
    edited["metrics"]["acc_p"]["overall"] += 5
    scores.write_text(json.dumps(edited))
    capsys.readouterr()
    assert main(["report", str(truth), str(details), "--site", str(tmp_path / "site2")]) == 1
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and f"{details}: not verified" in error and "acc_p" in error
    # the command it names runs as printed and lists the difference (tests/test_hints.py's HINT_SITES)
    printed = re.search(r"`(cogbench verify [^`]+)`", error).group(1)
    assert main(shlex.split(printed)[1:]) == 1
    assert "acc_p" in capsys.readouterr().out


@needs_real_data
def test_a_hub_details_dataset_and_an_eval_results_file_are_inputs(codis_run, tmp_path, monkeypatch):  # noqa: F811
    """publish-results pushes to the local Hub; the site reads the details back by repo id and by results file.

    `cogbench report` runs in a child process with HF_ENDPOINT set, as a user on another Hub would run it:
    huggingface_hub builds its download URLs from HF_ENDPOINT when it is imported."""
    with LocalHub() as hub:
        hub.repos[DATASET] = HubRepo(tags={"v2.0.0": COMMIT_OID})
        hub.models["me/model"] = HubRepo()
        publish_results(args_for(codis_run[1], tmp_path, no_pr=True), api=local_hub_api(hub, monkeypatch), say=print)
        results = tmp_path / "codis_acc_p.yaml"
        results.write_bytes(hub.models["me/model"].files[".eval_results/codis_acc_p.yaml"])
        env = {**os.environ, "HF_ENDPOINT": hub.endpoint, "HF_HUB_OFFLINE": "0", "HF_HOME": str(tmp_path / "hf")}
        for source, site in (("me/details", tmp_path / "by-repo"), (str(results), tmp_path / "by-results")):
            command = [sys.executable, "-m", "cogbench", "report", source, "--site", str(site), "--permutations", "99"]
            done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
            assert done.returncode == 0, done.stderr[-2000:]
            acc_p = next(m for m in site_data(site)["tasks"][0]["metrics"] if m["name"] == "acc_p")
            assert [row["cells"]["overall"]["v"] for row in acc_p["rows"]] == [pytest.approx(ACC_P)]  # 273/353


@needs_real_data
def test_runs_of_different_description_modes_are_ranked_apart(built_release, tmp_path):
    """report shows both modes side by side; compare refuses to pair them, so the site never ranks them together."""
    runs = [
        score_description(
            built_release,
            description_predictions(built_release, tmp_path / f"{name}.jsonl", template),
            tmp_path / name,
        )
        for name, template in (
            ("spontaneous", DESCRIPTION_SPONTANEOUS),
            ("directed", DESCRIPTION_DIRECTED),
            ("directed-again", DESCRIPTION_DIRECTED),
        )
    ]
    site = tmp_path / "site"
    assert main(["report", *map(str, runs), "--site", str(site), "--permutations", "99"]) == 0
    micro = next(m for m in site_data(site)["tasks"][0]["metrics"] if m["name"] == "recognition_micro")
    assert [g["members"] for g in micro["groups"]] == [[1, 2]]
    assert micro["rows"][0]["unranked"].startswith("not ranked: no other run of its kind")


@needs_real_data
def test_writing_a_site_again_with_fewer_tasks_removes_only_what_it_wrote(built_release, tmp_path, capsys):
    """Issue 48 item 9m: the items, images and charts of a task no longer shown go; nothing else does."""
    codis = tmp_path / "codis"
    score_codis(built_release, codis_example(), codis, resamples=100)
    vqa = vqa_run(built_release, tmp_path, "vqa", 2)
    site, fresh = tmp_path / "site", tmp_path / "fresh"
    assert main(["report", str(codis), str(vqa), "--site", str(site), "--permutations", "99"]) == 0
    shown = capsys.readouterr().out
    # the page it wrote, not "wrote the site site" (issue 48 item 9l)
    assert f"wrote the static site {site}/index.html: 2 run(s), items vqa 64, codis 353, " in shown
    assert "data/items-vqa.js" in folder_files(site)
    # Files the patterns own that cogbench did not write as they are: a user's chart, a VQA image edited since.
    (site / "charts" / "mine.png").write_bytes(b"my own chart")
    vqa_images = {name for name in folder_files(site) if name.startswith("images/")}
    assert main(["report", str(codis), "--site", str(fresh), "--permutations", "99"]) == 0
    vqa_images -= set(folder_files(fresh))
    edited = sorted(vqa_images)[0]
    (site / edited).write_bytes(b"edited by hand")
    stale = set(folder_files(site)) - set(folder_files(fresh)) - {"charts/mine.png", edited}
    assert "data/items-vqa.js" in stale and len(stale) > len(vqa_images)
    capsys.readouterr()

    assert main(["report", str(codis), "--site", str(site), "--permutations", "99"]) == 0
    out = capsys.readouterr().out
    assert set(folder_files(site)) == set(folder_files(fresh)) | {"charts/mine.png", edited}
    assert (site / "charts" / "mine.png").read_bytes() == b"my own chart"
    assert (site / edited).read_bytes() == b"edited by hand"
    assert f"removed {len(stale)} file(s) an earlier `report --site` wrote there and this one did not" in out
    assert "data/items-vqa.js" in out and f"kept charts/mine.png, {edited}: not as cogbench wrote them" in out
    for name in folder_files(fresh):
        if name != ".cogbench-output.json":
            assert (site / name).read_bytes() == (fresh / name).read_bytes(), name
