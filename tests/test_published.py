"""The published results shipped with ``cogbench report`` say what the papers say."""

from __future__ import annotations

from collections import Counter

from cogbench.reference_eval.reports.published import published_results, published_table
from cogbench.schemas.features import CODIS_CATEGORIES, COGBENCH_CATEGORIES

from paper_tables import codis_cells, cogbench_cells
from shared_files import require_shared, shared_path

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


def test_cognition_cells_split_the_two_modes():
    require_shared("papers", COGBENCH_PAPER.name, what="the CogBench paper")
    row = paper_row(COGBENCH_PAPER, "LLaVA-v1.6-34B")[1]  # Table 2, Table 3, Table 5
    spontaneous, directed = (float(x) for x in row[3].split("/"))  # Character
    results = [r for r in published_results() if r.table == "Table 3" and r.paper.startswith("CogBench")]
    assert published_table(results, "cognition", "spontaneous")["LLaVA-v1.6-34B"]["character"] == spontaneous == 28.3
    assert published_table(results, "cognition", "directed")["LLaVA-v1.6-34B"]["character"] == directed == 47.2


def test_every_published_cell_is_the_papers():
    """All 707 cells of published_results.csv against the tables parsed from the papers' text."""
    paper = {
        **cogbench_cells(require_shared("papers", COGBENCH_PAPER.name, what="the CogBench paper")),
        **codis_cells(require_shared("papers", CODIS_PAPER.name, what="the CODIS paper")),
    }
    ours = {
        (r.paper.split()[0], r.table, r.model.casefold(), r.mode, r.metric, r.category): r.value
        for r in published_results()
    }
    assert len(ours) == len(published_results()) == 707
    wrong = [
        f"{table} row {model!r} {metric} {mode} {category}: csv {ours.get(key)}, paper {paper.get(key)}"
        for key in sorted(set(ours) | set(paper))
        for (name, table, model, mode, metric, category) in [key]
        if ours.get(key) != paper.get(key)
    ]
    assert not wrong, f"{len(wrong)} cells differ: " + "; ".join(wrong[:20])
