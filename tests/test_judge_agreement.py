"""Judge agreement (``compare --judges``): Cohen's kappa, flips and Kendall's tau worked by hand.

Kappa (Cohen 1960) of A = 1111110000, B = 1111101100: p_o = 7/10 (five 1-1, two 0-0),
p_A = 0.6, p_B = 0.7, p_e = 0.6 * 0.7 + 0.4 * 0.3 = 0.54, kappa = (0.7 - 0.54) / (1 - 0.54) = 8/23;
3 of 10 verdicts flip; A scores 60, B 70. Tau-b of the order of four models scored
A = (80, 70, 60, 50) and B = (75, 85, 55, 40): one discordant pair (models 1 and 2) of six,
tau = (5 - 1) / 6 = 2/3.
"""

from __future__ import annotations

import json
import shutil

import pytest
from test_hub_results import codis_run  # noqa: F401 (the module-scoped real CODIS run, rule judge)

from cogbench.cli import main
from cogbench.reference_eval.metrics.agreement import cohen_kappa, kendall_tau
from cogbench.reference_eval.reports.judge_agreement import agreement_table, ranking
from cogbench.reference_eval.scoring.pipeline import ScoreOptions, run_scoring

from openai_server import Reply

A = [1, 1, 1, 1, 1, 1, 0, 0, 0, 0]
B = [1, 1, 1, 1, 1, 0, 1, 1, 0, 0]


def codis_details(verdicts: list[int], category: str = "Attributes") -> list[dict]:
    """Hand-made CODIS details lines: two queries per pair, two pairs per image."""
    return [
        {
            "item_id": f"{n:03d}",
            "image_id": f"img{n // 2}",
            "category": category,
            "outputs_differ": True,
            "queries": [{"query": q + 1, "right": bool(verdicts[2 * n + q])} for q in (0, 1)],
        }
        for n in range(len(verdicts) // 2)
    ]


def test_kappa_and_tau_by_hand():
    assert cohen_kappa(A, B) == pytest.approx(8 / 23)
    assert cohen_kappa(A, A) == pytest.approx(1.0)
    assert kendall_tau([80, 70, 60, 50], [75, 85, 55, 40]) == pytest.approx(2 / 3)


def test_agreement_table_by_hand():
    table = agreement_table("codis", codis_details(A), codis_details(B))
    row = table["rows"]["overall"]
    assert (row["units"], row["images"]) == (10, 3)
    assert row["kappa"] == pytest.approx(8 / 23) and row["flipped"] == pytest.approx(30.0)
    assert (row["score_a"], row["score_b"], row["move"]) == pytest.approx((60.0, 70.0, 10.0))
    low, high = row["kappa_interval"]
    assert -1 <= low <= 8 / 23 <= high <= 1
    same = agreement_table("codis", codis_details(A), codis_details(A))["rows"]["overall"]
    assert same["kappa"] == 1.0 and same["kappa_interval"] == [1.0, 1.0] and same["flipped"] == 0.0


def test_kendall_tau_of_four_models_by_hand():
    def verdicts(right: int) -> list[int]:
        return [1] * right + [0] * (20 - right)

    pairs = [
        ("codis", f"m{i}", codis_details(verdicts(a)), codis_details(verdicts(b)))
        for i, (a, b) in enumerate(((16, 15), (14, 17), (12, 11), (10, 8)))
    ]
    result = ranking(pairs, resamples=200, seed=0)
    assert result["scores_a"] == pytest.approx([80, 70, 60, 50]) and result["scores_b"] == pytest.approx(
        [75, 85, 55, 40]
    )
    assert result["tau"] == pytest.approx(2 / 3)
    low, high = result["tau_interval"]
    assert -1 <= low <= high <= 1


def test_compare_judges_on_real_runs(codis_run, openai_server, monkeypatch, tmp_path, capsys):  # noqa: F811
    """The rule run (576 of 706 queries right) against an LLM judge that says "right" to all:
    p_e = p_A, so kappa = 0; 130 of 706 verdicts flip (18.41%); the score moves by +18.41."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    _build, rule_run = codis_run
    server = openai_server(lambda request: Reply(text="right"))
    rule = json.loads((rule_run / "scores.json").read_text())
    run_scoring(
        ScoreOptions(
            task="codis",
            dataset=rule["dataset"],
            predictions=rule["predictions"],
            judge="openai:judge-b",
            judge_base_url=server.base_url,
            judge_backoff=0.01,
            out=str(tmp_path / "llm"),
        )
    )
    assert main(["compare", "--judges", str(rule_run), str(tmp_path / "llm"), "--resamples", "200"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("judges: A = rule, B = openai:judge-b (codis)")
    assert "| overall | 706 | 216 | 0.000 [0.000, 0.000] | 18.4 | 81.6 | 100.0 | 18.4 |" in printed
    # The same two runs in `cogbench report`: the agreement table and its chart (judges in name order).
    assert main(["report", str(rule_run), str(tmp_path / "llm"), "--out", str(tmp_path / "report")]) == 0
    report = (tmp_path / "report" / "report.md").read_text()
    assert "## Judge agreement, codis: A = openai:judge-b, B = rule" in report
    assert "| overall | 706 | 0.000 [0.000, 0.000] | 18.4 | 100.0 | 81.6 | -18.4 |" in report
    assert (tmp_path / "report" / "judge_agreement_codis.png").is_file()
    shutil.copy(tmp_path / "report" / "judge_agreement_codis.png", "/tmp/h8_judge_agreement_codis.png")
