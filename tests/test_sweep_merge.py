"""``cogbench sweep merge`` refuses, in one line naming both sides, shards that are not one run: each rule with a
failing input (a shard of another build, prompt, generation setting, judge or cogbench version; a shard verify
rejects; a shard holding other items than planned; an item answered twice with different outputs)."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from cogbench.cli import main

from openai_server import OpenAIServer, Reply
from sweep_helpers import letter_responder, prediction_keys, write_spec

CELL = "vqa--m--thinking-auto--tokens-default--judge-default"


@pytest.fixture(scope="module")
def ran(built_release, tmp_path_factory):
    """One cell (vqa, 4 items) run in 2 shards; each test plants its defect in a copy."""
    saved = os.environ.get("OPENAI_API_KEY")
    os.environ["OPENAI_API_KEY"] = "test-key"
    with OpenAIServer(letter_responder) as server:
        folder = tmp_path_factory.mktemp("merge")
        models = [{"model": "openai:m", "base_url": server.base_url}]
        spec = write_spec(folder, built_release, models)
        assert main(["sweep", "plan", str(spec), "--out", str(folder / "sweep"), "--shards", "2"]) == 0
        assert main(["sweep", "run", str(folder / "sweep")]) == 0
        yield folder / "sweep", server
    if saved is None:
        os.environ.pop("OPENAI_API_KEY", None)
    else:
        os.environ["OPENAI_API_KEY"] = saved


def edit(path, change):
    record = json.loads(path.read_text())
    change(record)
    path.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")


def merge_refused(capsys, sweep) -> str:
    capsys.readouterr()
    assert main(["sweep", "merge", str(sweep)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and "Traceback" not in err, err
    assert not (sweep / "cells" / CELL / "run").exists()  # nothing merged
    return err


def shard(sweep, number):
    return sweep / "cells" / CELL / "shards" / str(number)


@pytest.mark.parametrize(
    ("file", "change", "says"),
    [
        ("run.json", lambda r: r.update(dataset_revision="1.0.0+manifest.000000000000"), "dataset_revision: "),
        ("run.json", lambda r: r.update(dataset="/elsewhere/build"), "dataset: "),
        ("run.json", lambda r: r.update(prompt_sha256="0" * 64), "prompt_sha256: "),
        ("run.json", lambda r: r["generation"].update(max_new_tokens=64), "generation.max_new_tokens: 32 → 64"),
        ("score/scores.json", lambda r: r.update(judge={"kind": "rule"}), "different judge (judge.kind: none → rule)"),
        (
            "score/scores.json",
            lambda r: r["provenance"].update(cogbench_version="0.1.0"),
            "different cogbench version (cogbench version: ",
        ),
    ],
)
def test_shards_that_are_not_one_run_are_refused_naming_both(ran, tmp_path, capsys, file, change, says):
    sweep = shutil.copytree(ran[0], tmp_path / "sweep")
    edit(shard(sweep, 1) / file, change)
    err = merge_refused(capsys, sweep)
    assert f"{shard(sweep, 0) / file} and {shard(sweep, 1) / file}: " in err and says in err


def test_a_shard_that_verify_rejects_is_refused(ran, tmp_path, capsys):
    sweep = shutil.copytree(ran[0], tmp_path / "sweep")
    edit(shard(sweep, 1) / "score" / "scores.json", lambda r: r["metrics"]["accuracy"].update(overall_partial=99.0))
    err = merge_refused(capsys, sweep)
    assert f"error: {shard(sweep, 1)} and `cogbench verify`: verify rejects it (" in err and "99" in err


def test_a_shard_holding_other_items_or_not_run_is_refused(ran, tmp_path, capsys):
    sweep = shutil.copytree(ran[0], tmp_path / "sweep")
    edit(shard(sweep, 1) / "run.json", lambda r: r["item_ids"].update(count=1))
    err = merge_refused(capsys, sweep)
    assert (
        f"{shard(sweep, 1) / 'run.json'} and {sweep / 'cells' / CELL / 'cell.json'}: the shard holds other items" in err
    )
    sweep = shutil.copytree(ran[0], tmp_path / "sweep2")
    (shard(sweep, 0) / "score" / "scores.json").unlink()
    assert "not run yet" in merge_refused(capsys, sweep)


def test_a_shard_run_with_other_settings_is_refused(ran, tmp_path, capsys):
    """The cell's settings changed between two shards' runs (an edited plan): their run.json files differ."""
    sweep = shutil.copytree(ran[0], tmp_path / "sweep")
    edit(sweep / "cells" / CELL / "cell.json", lambda r: r.update(max_new_tokens=64))
    shutil.rmtree(shard(sweep, 1))
    (sweep / "cells" / CELL / "attempts" / "1.json").unlink()
    assert main(["sweep", "run-shard", str(sweep), "--index", "1"]) == 0
    err = merge_refused(capsys, sweep)
    assert f"{shard(sweep, 0) / 'run.json'} and {shard(sweep, 1) / 'run.json'}: different runs (" in err
    assert "generation.max_new_tokens: 32 → 64" in err


def test_an_item_answered_twice_differently_is_refused_and_the_same_answer_kept_once(
    built_release, tmp_path, monkeypatch, capsys, openai_server
):
    """Shards whose items overlap (a plan edited by hand): one answer twice is kept once; two answers are refused."""
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    asked = []  # shard 0's three items are answered A, then every query of shard 1 B

    def responder(request):
        asked.append(request)
        return Reply(text="A" if len(asked) <= 3 else "B")

    server = openai_server(responder)
    same = openai_server(lambda request: Reply(text="A"))
    for name, url in (("differ", server.base_url), ("same", same.base_url)):
        spec = write_spec(tmp_path / name, built_release, [{"model": "openai:m", "base_url": url}], limit=5)
        sweep = tmp_path / name / "sweep"
        assert main(["sweep", "plan", str(spec), "--out", str(sweep), "--shards", "2"]) == 0
        # shard 1 also holds shard 0's last item
        edit(sweep / "cells" / CELL / "cell.json", lambda r: r["shards"][1].insert(0, r["shards"][0][-1]))
        assert main(["sweep", "run", str(sweep)]) == 0
    err = merge_refused(capsys, tmp_path / "differ" / "sweep")
    sweep = tmp_path / "differ" / "sweep"
    item = json.loads((sweep / "cells" / CELL / "cell.json").read_text())["shards"][0][-1]
    assert (
        f"error: {shard(sweep, 0) / 'predictions.jsonl'} and {shard(sweep, 1) / 'predictions.jsonl'}: item {item} "
        "answered twice, with different outputs; refusing to merge this cell"
    ) in err
    sweep = tmp_path / "same" / "sweep"
    assert main(["sweep", "merge", str(sweep)]) == 0
    keys = prediction_keys(sweep / "cells" / CELL / "run" / "predictions.jsonl")
    assert len(keys) == len(set(keys)) == 5


def test_verify_re_derives_a_shards_item_ids_from_its_answers(ran, tmp_path, capsys):
    """run.json's ``item_ids`` (count, sha256 of the sorted ids) is checked against predictions.jsonl's items."""
    sweep = shutil.copytree(ran[0], tmp_path / "sweep")
    run_json, difference = shard(sweep, 1) / "run.json", "run.json: item_ids (the items of predictions.jsonl)"
    given = json.loads(run_json.read_text())["item_ids"]
    capsys.readouterr()
    assert main(["verify", str(shard(sweep, 1))]) == 0
    assert difference not in capsys.readouterr().out
    for changed in ({**given, "sha256": "0" * 64}, {**given, "count": 1}):  # other items; more answered than given
        edit(run_json, lambda r, changed=changed: r.update(item_ids=changed))
        assert main(["verify", str(shard(sweep, 1))]) != 0
        assert difference in capsys.readouterr().out
    # A failed query left an item unanswered: fewer items than given, stated and not counted as verified.
    edit(run_json, lambda r: r.update(item_ids=given))
    predictions = shard(sweep, 1) / "predictions.jsonl"
    predictions.write_text(predictions.read_text().splitlines(keepends=True)[0])
    main(["verify", str(shard(sweep, 1))])
    out = capsys.readouterr().out
    assert "run.json item_ids (only 1 of its items answered: the rest cannot be named)" in out and difference not in out
