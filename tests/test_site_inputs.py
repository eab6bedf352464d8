"""`report --site` reads details datasets written by `publish-results`, verified first (issue 43)."""

from __future__ import annotations

import json

from conftest import needs_real_data
from test_intervals import codis_example, score_codis, swap_pairs

from cogbench.cli import main
from cogbench.reference_eval.reports.details_dataset import write_details
from cogbench.reference_eval.reports.run_reader import read_run


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
