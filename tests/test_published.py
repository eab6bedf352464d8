"""The published results shipped with ``cogbench report`` say what the papers say."""

from __future__ import annotations

from collections import Counter

import pytest
from shared_files import shared_path

from cogbench.reference_eval.reports.published import published_results, published_table
from cogbench.schemas.features import CODIS_CATEGORIES, COGBENCH_CATEGORIES

PAPERS = shared_path("papers")
COGBENCH_PAPER = PAPERS / "000_6dc3e33e0e23f358.txt"
CODIS_PAPER = PAPERS / "002_32deffa052033b7d.txt"


def paper_row(paper, label: str) -> list[str]:
    """The cells of the table lines that start with ``label`` (each table's row), underline marks removed."""
    rows = [line.replace("<u>", "").replace("</u>", "").split("\t") for line in paper.read_text().splitlines()]
    return [[cell for cell in row if cell] for row in rows if row[0] == label]


def test_every_table_is_complete():
    results = published_results()
    per_table = Counter((r.paper.split()[0], r.table, r.metric, r.mode) for r in results)
    assert per_table[("CogBench", "Table 2", "recognition_micro", "spontaneous")] == 17
    assert per_table[("CogBench", "Table 3", "cognition", "directed")] == 17 * 9
    assert per_table[("CogBench", "Table 5", "accuracy", "")] == 18 * 9  # 17 models and Human
    assert per_table[("CODIS", "Table 3", "acc_p", "")] == 15 * 6  # 14 models and Human
    assert {r.category for r in results if r.table == "Table 5"} == {*COGBENCH_CATEGORIES, "overall"}
    assert {r.category for r in results if r.metric == "acc_q"} == {*CODIS_CATEGORIES, "overall"}


@pytest.mark.skipif(not COGBENCH_PAPER.is_file(), reason="../shared/papers is not present")
@pytest.mark.parametrize("label, model, table, metric, mode, category, column", [
    ("GPT-40", "GPT-4o", "Table 5", "accuracy", "", "overall", 9),  # second "GPT-40" row: Table 5
    ("InternVL2-26B", "InternVL2-26B", "Table 2", "recognition_micro", "spontaneous", "overall", 1),
    ("LLaVA-OV-7B-Chat", "LLaVA-OV-7B-Chat", "Table 2", "recognition_micro", "directed", "overall", 2),
    ("Human", "Human", "Table 5", "accuracy", "", "event_relationship", 6),
])
def test_cogbench_cells_match_the_paper(label, model, table, metric, mode, category, column):
    rows = paper_row(COGBENCH_PAPER, label)
    row = {"Table 2": rows[0], "Table 3": rows[1], "Table 5": rows[-1]}[table] if len(rows) > 1 else rows[0]
    assert published_table([r for r in published_results() if r.table == table], metric, mode)[model][category] == float(row[column])


@pytest.mark.skipif(not COGBENCH_PAPER.is_file(), reason="../shared/papers is not present")
def test_cognition_cells_split_the_two_modes():
    row = paper_row(COGBENCH_PAPER, "LLaVA-v1.6-34B")[1]  # Table 2, Table 3, Table 5
    spontaneous, directed = (float(x) for x in row[3].split("/"))  # Character
    results = [r for r in published_results() if r.table == "Table 3" and r.paper.startswith("CogBench")]
    assert published_table(results, "cognition", "spontaneous")["LLaVA-v1.6-34B"]["character"] == spontaneous == 28.3
    assert published_table(results, "cognition", "directed")["LLaVA-v1.6-34B"]["character"] == directed == 47.2


@pytest.mark.skipif(not CODIS_PAPER.is_file(), reason="../shared/papers is not present")
@pytest.mark.parametrize("model, metric, category, column", [
    ("GPT-4V", "acc_p", "overall", 11),
    ("GPT-4V", "acc_q", "Relationships", 10),
    ("BLIP-2-11B", "acc_p", "Cultural Background", 5),  # underlined in the paper
    ("Human", "context_awareness", "overall", 13),
])
def test_codis_cells_match_the_paper(model, metric, category, column):
    row = [r for r in paper_row(CODIS_PAPER, model) if len(r) == 14][0]
    results = [r for r in published_results() if r.paper.startswith("CODIS")]
    assert published_table(results, metric)[model][category] == float(row[column])
