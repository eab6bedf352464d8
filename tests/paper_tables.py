"""Every published cell that ``cogbench report`` shows, read from the papers' text in ``../shared/papers``.

The papers' text extraction writes a table row as tab-separated cells on one
line. This reader finds each table by its header line and reads its rows
until the table ends, so the test of ``published_results.csv`` compares every
cell (707) with the paper, not a sample. Where the extraction garbled a model
name it is read as the paper means it (``GARBLED``); the one garbled number
(Table 2's Oracle, printed ``9\\t2.8``) is read as its two pieces joined.
"""

from __future__ import annotations

import re
from pathlib import Path

from cogbench.schemas.features import CODIS_CATEGORIES, COGBENCH_CATEGORIES

GARBLED = {"GPT-40": "GPT-4o", "Owen-VL-Chat": "Qwen-VL-Chat", "mPLUG-Ow1-2": "mPLUG-Owl-2"}
COGBENCH_HEADER = (
    "Model\tTime\tLocation\tCharacter\tCharacter Relationship\tEvent\tEvent Relationship\t"
    "Next Moment Event\tMental State\tOverall"
)
_NUMBERS = re.compile(r"[\d. /]+")
# (paper, table, model as the CSV spells it (case-folded), mode, metric, category) -> value
Key = tuple[str, str, str, str, str, str]


def _rows(lines: list[str], start: int) -> list[tuple[str, list[str]]]:
    """(model, cells) of the table rows after line ``start``, until a line without tabs or the next header."""
    rows = []
    for line in lines[start + 1 :]:
        if "\t" not in line or line.startswith("Model\t"):
            break
        cells = [cell.strip() for cell in line.replace("<u>", "").replace("</u>", "").split("\t") if cell.strip()]
        if len(cells) > 1 and all(_NUMBERS.fullmatch(cell) for cell in cells[1:]):  # not a section heading
            rows.append((GARBLED.get(cells[0], cells[0]), cells[1:]))
    return rows


def _name(model: str) -> str:
    return model.casefold()


def cogbench_cells(paper: Path) -> dict[Key, float]:
    lines = paper.read_text(encoding="utf-8").splitlines()
    cells: dict[Key, float] = {}
    name = "CogBench"
    table2 = next(i for i, line in enumerate(lines) if line.startswith("Model\tRecognition Score"))
    for model, values in _rows(lines, table2 + 1):  # the line after the header is "Mode 1  Mode 2"
        if model == "Oracle":
            cells[(name, "Table 2", _name(model), "oracle", "recognition_micro", "overall")] = float("".join(values))
            continue
        for mode, value in zip(("spontaneous", "directed"), values, strict=True):
            cells[(name, "Table 2", _name(model), mode, "recognition_micro", "overall")] = float(value)
    table3, table5 = [i for i, line in enumerate(lines) if line.rstrip("\t") == COGBENCH_HEADER]
    categories = (*COGBENCH_CATEGORIES, "overall")
    for model, values in _rows(lines, table3):
        for category, value in zip(categories, values, strict=True):
            if model == "Oracle":
                cells[(name, "Table 3", _name(model), "oracle", "cognition", category)] = float(value)
                continue
            spontaneous, directed = value.split("/")
            cells[(name, "Table 3", _name(model), "spontaneous", "cognition", category)] = float(spontaneous)
            cells[(name, "Table 3", _name(model), "directed", "cognition", category)] = float(directed)
    for model, values in _rows(lines, table5):
        for category, value in zip(categories, values, strict=True):
            cells[(name, "Table 5", _name(model), "", "accuracy", category)] = float(value)
    return cells


def codis_cells(paper: Path) -> dict[Key, float]:
    lines = paper.read_text(encoding="utf-8").splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("Model\tAcc_p\tAcc_q"))
    columns = [(metric, category) for category in (*CODIS_CATEGORIES, "overall") for metric in ("acc_p", "acc_q")]
    columns.append(("context_awareness", "overall"))
    cells: dict[Key, float] = {}
    for model, values in _rows(lines, header):
        for (metric, category), value in zip(columns, values, strict=True):
            cells[("CODIS", "Table 3", _name(model), "", metric, category)] = float(value)
    return cells
