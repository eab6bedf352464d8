"""Tables of ``cogbench report``: cells with the value "best in column" compares, rendered to Markdown and HTML."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

INTERVAL = re.compile(r"^(.*?) (\[(?:[-+]?\d+(?:\.\d+)?, [-+]?\d+(?:\.\d+)?|n/a \(1 image\))\])$")


@dataclass
class Cell:
    text: str
    value: float | None = None  # what "best in column" compares


@dataclass
class Table:
    title: str
    header: list[str]
    rows: list[list[Cell]]
    published_rows: set[int] = field(default_factory=set)
    reference_rows: set[int] = field(default_factory=set)
    note: str = ""
    best_columns: set[int] | None = None  # columns where higher is better (None: every column)
    # Rows ranked together (comparable rows: the papers' rows; runs of one build and judge); a row in no group is
    # never bold. None: every row is one group.
    rank_groups: list[set[int]] | None = None
    numbers_from_second: bool = False  # report.html: the second column holds numbers, not a run's source

    def best(self) -> set[tuple[int, int]]:
        """(row, column) of the highest value of each column within each group of comparable rows.

        Reference rows (Human, Oracle) are never ranked, and a group needs two valued rows: a lone row is
        the best of nothing, so it is never bold.
        """
        groups = self.rank_groups if self.rank_groups is not None else [set(range(len(self.rows)))]
        marked = set()
        for column in range(len(self.header)) if self.best_columns is None else sorted(self.best_columns):
            for group in groups:
                values = [
                    (self.rows[r][column].value, r)
                    for r in sorted(group)
                    if r not in self.reference_rows and self.rows[r][column].value is not None
                ]
                if len(values) >= 2:
                    top = max(v for v, _ in values)
                    marked |= {(r, column) for v, r in values if v == top}
        return marked


def render_markdown(table: Table) -> str:
    best = table.best()
    lines = [f"## {table.title}\n", "| " + " | ".join(table.header) + " |", "|" + "---|" * len(table.header)]
    for r, cells in enumerate(table.rows):
        texts = [f"**{c.text}**" if (r, i) in best else c.text for i, c in enumerate(cells)]
        if r in table.published_rows:
            texts[0] = f"_{texts[0]}_"
        lines.append("| " + " | ".join(texts) + " |")
    return "\n".join(lines) + ("\n\n" + table.note if table.note else "") + "\n"


def _html_cell(text: str) -> str:
    """The value, and its interval (a trailing "[low, high]" of numbers) on a second, smaller line."""
    match = INTERVAL.match(text.replace("`", ""))
    if not match:
        return html.escape(text.replace("`", ""))
    return html.escape(match.group(1)) + f"<span class=ci>{html.escape(match.group(2))}</span>"


def render_html_table(table: Table) -> str:
    best = table.best()
    head = "".join(f"<th>{html.escape(h)}</th>" for h in table.header)
    body = []
    for r, cells in enumerate(table.rows):
        row_class = "published" if r in table.published_rows else "run"
        tds = "".join(
            f"<td{' class=best' if (r, i) in best else ''}>{_html_cell(c.text)}</td>" for i, c in enumerate(cells)
        )
        body.append(f"<tr class={row_class}>{tds}</tr>")
    note = f"<p class=note>{html.escape(table.note.replace('`', ''))}</p>" if table.note else ""
    numbers = " class=numbers" if table.numbers_from_second else ""
    return f"<h2>{html.escape(table.title)}</h2>\n<div class=scroll><table{numbers}><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>{note}\n"


def render_html_section(lines: list[str]) -> str:
    """A section handed over as Markdown lines (certifying/certificate_report's) as HTML, its id its heading's words
    (``judge-certificate``): paragraphs and tables rendered by markdown-it (CommonMark with GFM tables; raw HTML
    in the text escaped, never passed), each table in a box that scrolls rather than widens the page."""
    from markdown_it import MarkdownIt  # the eval extra's; `score` imports this module without it

    anchor = "-".join(re.findall(r"[a-z0-9]+", lines[0].lower())) if lines else "section"
    body = MarkdownIt("commonmark", {"html": False}).enable("table").render("\n".join(lines))
    body = body.replace("<table>", "<div class=scroll><table>").replace("</table>", "</table></div>")
    return f"<section id={anchor} class=md>{body}</section>\n"
