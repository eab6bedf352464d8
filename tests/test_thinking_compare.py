"""`compare` and `report` treat the thinking setting (`eval --thinking`) like the other generation
settings (reports/comparable.py): runs that differ in it are refused, or labelled NOT COMPARABLE."""

from __future__ import annotations

import json

import pytest
from test_coverage_labels import score, vqa_rows, write_vqa

from cogbench.cli import main
from cogbench.errors import UsageError


@pytest.fixture
def two_runs(built_release, tmp_path, capsys):
    rows = vqa_rows(built_release)
    runs = []
    for name in ("a", "b"):
        assert score(built_release, write_vqa(tmp_path / f"{name}.jsonl", rows, name), tmp_path / name) == 0
        runs.append(tmp_path / name)
    capsys.readouterr()
    return runs


def _record(folder, generation):
    """An eval run's run.json beside its scores (schemas/run.schema.json)."""
    scores = json.loads((folder / "scores.json").read_text())
    record = {name: scores.get(name) for name in ("task", "model", "dataset", "dataset_revision")}
    (folder / "run.json").write_text(json.dumps({**record, "prompt_id": "p", "generation": generation}))


def test_compare_refuses_runs_that_thought_differently(two_runs, capsys):
    a, b = two_runs
    _record(a, {"max_new_tokens": 32, "thinking": "on"})
    _record(b, {"max_new_tokens": 32, "thinking": "off"})
    assert main(["compare", str(a), str(b)]) == UsageError.exit_code
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "thinking 'on' vs 'off'" in err and "--allow-mismatch" in err
    assert main(["compare", str(a), str(b), "--allow-mismatch"]) == 0
    assert "thinking 'on' vs 'off'" in capsys.readouterr().out


def test_a_run_recorded_before_the_setting_is_auto(two_runs, capsys):
    a, b = two_runs
    _record(a, {"max_new_tokens": 32})  # made before --thinking existed: its model ran as it does by default
    _record(b, {"max_new_tokens": 32, "thinking": "auto"})
    assert main(["compare", str(a), str(b)]) == 0
    _record(b, {"max_new_tokens": 32, "thinking": "on"})
    capsys.readouterr()
    assert main(["compare", str(a), str(b)]) == UsageError.exit_code
    assert "thinking 'auto' vs 'on'" in capsys.readouterr().err


def test_report_labels_a_run_that_thought_differently(two_runs, tmp_path, capsys):
    a, b = two_runs
    _record(a, {"max_new_tokens": 32, "thinking": "off"})
    _record(b, {"max_new_tokens": 32, "thinking": "on"})
    assert main(["report", str(a), str(b), "--out", str(tmp_path / "refused")]) == UsageError.exit_code
    assert "thinking 'off' vs 'on'" in capsys.readouterr().err
    assert main(["report", str(a), str(b), "--out", str(tmp_path / "r"), "--allow-mismatch"]) == 0
    assert "NOT COMPARABLE: thinking" in (tmp_path / "r" / "report.md").read_text()
