"""``cogbench sweep plan``: the spec's refusals (each with a failing input), the plan it writes, its cost, its folder
rules, and credentials in model URLs masked everywhere (reference_eval/sweeping/spec.py, plan.py)."""

from __future__ import annotations

import hashlib
import json
import sqlite3

import pytest
import yaml

from cogbench.cli import main
from cogbench.dataset_builders.output import OUTPUT_MARKER
from cogbench.errors import UsageError
from cogbench.reference_eval.run.folder import item_ids_record
from cogbench.reference_eval.run.runner import EvalSettings, dataset_and_queries
from cogbench.reference_eval.sweeping.plan import split

from sweep_helpers import SECRET, cells, every_text, write_spec

LOCAL = "http://127.0.0.1:9/v1"  # never called: planning asks no model


def plan(capsys, spec, out, *extra):
    code = main(["sweep", "plan", str(spec), "--out", str(out), *extra])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda s: s.update(modles=[]), "field modles"),
        (lambda s: s["models"][0].update(bse_url=LOCAL), "field models[0].bse_url"),
        (lambda s: s.update(axes={"thinking": ["on"], "temperature": [0.5]}), "field axes.temperature"),
        (lambda s: s.update(axes={"judge": {"vqa": ["none"], "codiss": ["rule"]}}), "field axes.judge.codiss"),
    ],
)
def test_an_unknown_field_is_one_line_naming_file_and_field(tmp_path, capsys, change, field):
    content = {"build": "build", "models": [{"model": "openai:m", "base_url": LOCAL}], "tasks": ["vqa"]}
    change(content)
    spec = tmp_path / "sweep.yaml"
    spec.write_text(yaml.safe_dump(content))
    code, _out, err = plan(capsys, spec, tmp_path / "sweep")
    assert code == 2
    assert err.startswith(f"error: {spec}: {field}: unknown field (known here: ")
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "sweep").exists()


@pytest.mark.parametrize(
    ("models", "axes", "named"),
    [
        # two entries of one model, no names: the same cells twice
        ([{"model": "openai:m", "base_url": LOCAL}, {"model": "openai:m", "base_url": LOCAL}], {}, "field models[1]"),
        # one value twice on an axis
        ([{"model": "openai:m", "base_url": LOCAL}], {"max_new_tokens": [32, 32]}, "field axes.max_new_tokens[1]"),
        # the task's default judge named twice, once by name
        ([{"model": "openai:m", "base_url": LOCAL}], {"judge": ["default", "none"]}, "field models[0]"),
    ],
)
def test_a_cell_named_twice_is_refused(tmp_path, capsys, built_release, models, axes, named):
    spec = write_spec(tmp_path, built_release, models, axes=axes)
    code, _out, err = plan(capsys, spec, tmp_path / "sweep")
    assert code == 2, err
    assert err.startswith(f"error: {spec}: {named}: ") and ("again" in err or "listed twice" in err)
    assert not (tmp_path / "sweep").exists()


def test_two_entries_of_one_model_with_names_are_two_cells(tmp_path, capsys, built_release):
    models = [
        {"model": "openai:m", "base_url": LOCAL, "name": "m-a"},
        {"model": "openai:m", "base_url": LOCAL, "name": "m-b"},
    ]
    code, _out, err = plan(capsys, write_spec(tmp_path, built_release, models), tmp_path / "sweep")
    assert code == 0, err
    assert [c.split("--")[1] for c in cells(tmp_path / "sweep")] == ["m-a", "m-b"]


def test_the_plan_cells_shards_and_cost(tmp_path, capsys, built_release):
    """2 tasks x 2 models x 2 token budgets = 8 cells; limit 5 cut in 2 shards (3 + 2); codis asks 2 queries per item."""
    models = [
        {"model": "openai:m", "base_url": LOCAL, "concurrency": 2},
        {"model": "openai:n", "base_url": LOCAL, "thinking": "off"},
    ]
    spec = write_spec(
        tmp_path, built_release, models, tasks=["vqa", "codis"], limit=5, axes={"max_new_tokens": ["default", 64]}
    )
    code, out, err = plan(capsys, spec, tmp_path / "sweep", "--shards", "2")
    assert code == 0, err
    # vqa: 4 cells x 5 queries; codis: 4 cells x 10 queries; no LLM judge
    assert out.splitlines()[:4] == [
        "cells: 8 (16 shards)",
        "queries: 60 model queries in all",
        "judge calls: 0 LLM-judge queries at most (each shard scored; each merged run reuses its shards' verdicts; "
        "rule and none judges make none)",
        "cells already complete: 0 of 8",
    ]
    sweep = tmp_path / "sweep"
    assert json.loads((sweep / OUTPUT_MARKER).read_text())["kind"] == "sweep"
    ids = cells(sweep)
    assert "codis--n--thinking-off--tokens-64--judge-default" in ids  # the model's own thinking
    cell = json.loads((sweep / "cells" / ids[-1] / "cell.json").read_text())
    assert [len(shard) for shard in cell["shards"]] == [3, 2] and cell["queries_per_item"] == [1, 2]
    plan_json = json.loads((sweep / "plan.json").read_text())
    assert [c["first_index"] for c in plan_json["cells"]] == list(range(0, 16, 2))
    with sqlite3.connect(sweep / "status.sqlite") as db:
        assert db.execute("SELECT COUNT(*), SUM(items_total) FROM cells WHERE state = 'queued'").fetchone() == (8, 40)
    # planned again the same: allowed, nothing changes
    assert plan(capsys, spec, sweep, "--shards", "2")[0] == 0
    # planned again otherwise: refused in one line, the plan kept
    code, out, err = plan(capsys, spec, sweep, "--shards", "3")
    assert code == 2 and "holds another sweep's plan (shards_per_cell: 2 → 3" in err
    assert json.loads((sweep / "plan.json").read_text()) == plan_json


def test_a_folder_holding_anything_else_is_refused(tmp_path, capsys, built_release):
    spec = write_spec(tmp_path, built_release, [{"model": "openai:m", "base_url": LOCAL}])
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("mine")
    code, _, err = plan(capsys, spec, tmp_path / "mine")
    assert code == 2 and "refusing to write into it" in err
    assert sorted(p.name for p in (tmp_path / "mine").iterdir()) == ["notes.txt"]
    # a sweep folder with a file its plan did not write
    assert plan(capsys, spec, tmp_path / "sweep")[0] == 0
    (tmp_path / "sweep" / "cells" / "extra.txt").write_text("mine")
    code, _out, err = plan(capsys, spec, tmp_path / "sweep")
    assert code == 2 and "cells/extra.txt" in err


def test_credentials_in_a_model_url_are_masked_in_every_file_and_line(tmp_path, capsys, built_release):
    models = [
        {"model": "openai:m", "base_url": f"http://user:{SECRET}@127.0.0.1:9/v1"},
        {"model": f"openai:n@http://127.0.0.1:9/v1?api-key={SECRET}"},
    ]
    spec = write_spec(tmp_path, built_release, models, axes={"judge": [f"openai:j@http://k:{SECRET}@127.0.0.1:9/v1"]})
    code, out, err = plan(capsys, spec, tmp_path / "sweep")
    assert code == 0, err
    assert SECRET not in out + err
    assert SECRET not in every_text(tmp_path / "sweep")
    cell = json.loads((tmp_path / "sweep" / "cells" / cells(tmp_path / "sweep")[0] / "cell.json").read_text())
    assert cell["base_url"] == "http://***@127.0.0.1:9/v1" and cell["judge"] == "openai:j@http://***@127.0.0.1:9/v1"
    # a refusal that repeats the URL masks it too
    bad = write_spec(
        tmp_path / "bad", built_release, [{"model": f"openai:m@http://u:{SECRET}@h/v1", "base_url": LOCAL}]
    )
    code, out, err = plan(capsys, bad, tmp_path / "sweep2")
    assert code == 2 and SECRET not in err and "gives a URL and base_url too" in err


def test_a_spec_that_is_not_yaml_or_misses_a_field(tmp_path, capsys):
    spec = tmp_path / "sweep.yaml"
    spec.write_text("models: [\n")
    code, _, err = plan(capsys, spec, tmp_path / "sweep")
    assert code == 2 and err.startswith(f"error: {spec}: line ") and "not YAML" in err
    spec.write_text(yaml.safe_dump({"models": [{"model": "openai:m"}], "tasks": ["vqa"]}))
    code, _, err = plan(capsys, spec, tmp_path / "sweep")
    assert code == 2 and err == f"error: {spec}: field build: missing (a required field)\n"
    spec.write_text(yaml.safe_dump({"build": "b", "models": [{"model": "hf:m", "base_url": LOCAL}], "tasks": ["vqa"]}))
    code, _out, err = plan(capsys, spec, tmp_path / "sweep")
    assert code == 2 and "field models[0].base_url: a base URL applies to openai: models only" in err


@pytest.mark.parametrize(
    ("items", "shards", "sizes"), [(10, 3, [4, 3, 3]), (2, 5, [1, 1]), (6, 1, [6]), (0, 2, [0]), (7, 7, [1] * 7)]
)
def test_split_is_contiguous_and_balanced(items, shards, sizes):
    ids = [str(n) for n in range(items)]
    parts = split(ids, shards)
    assert [len(p) for p in parts] == sizes
    assert [i for p in parts for i in p] == ids


def test_eval_restricted_to_item_ids_keeps_dataset_order_and_refuses_an_unknown_id(built_release, tmp_path):
    """``EvalSettings.item_ids`` (a shard): the config's queries of those items only, in dataset order, whatever the
    order given; an id the config lacks is refused; run.json names the restriction (count, sha256 of sorted ids)."""
    base = EvalSettings(task="codis", model="openai:m", dataset=str(built_release), out=tmp_path / "run")
    _, _, every = dataset_and_queries(base)
    ids = list(dict.fromkeys(q.item_id for q in every))
    chosen = (ids[5], ids[2])
    _, _, queries = dataset_and_queries(EvalSettings(**{**base.__dict__, "item_ids": chosen}))
    assert [(q.item_id, q.query) for q in queries] == [(ids[2], 1), (ids[2], 2), (ids[5], 1), (ids[5], 2)]
    assert [q.row for q in queries] == [q.row for q in every if q.item_id in chosen]  # images: the config's rows
    with pytest.raises(UsageError, match=r"item ids: 1 not in the codis config \(first: 'no-such-item'\)"):
        dataset_and_queries(EvalSettings(**{**base.__dict__, "item_ids": (ids[0], "no-such-item")}))
    sha = hashlib.sha256("\n".join(sorted(chosen)).encode()).hexdigest()
    assert item_ids_record(chosen) == {"count": 2, "sha256": sha}
