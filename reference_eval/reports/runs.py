"""``cogbench report RUN_DIR... --out DIR``: many runs side by side, beside the papers' published results.

Writes report.md, report.html (self-contained: charts inlined), leaderboard.csv
and the PNG charts. Tables follow the papers' layouts (CogBench Tables 2, 3, 5;
CODIS Table 3); each run's cell carries its 95% interval, published cells are
marked as such, and the best value of each column (references such as Human and
Oracle aside) is bold.
"""

from __future__ import annotations

import base64
import csv
import html
import io
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from cogbench.dataset_builders.output import claim_output
from cogbench.dataset_builders.writes import locked_folder, remove_temporaries, write_file
from cogbench.numbers import fixed
from cogbench.reference_eval.recording.run_files import CODIS_SHORT, interval_text, metric_interval
from cogbench.reference_eval.recording.run_kind import (
    MIXED,
    MODE_LABEL,
    PAPER_JUDGE,
    UNRECORDED,
)
from cogbench.reference_eval.recording.run_reader import ScoredRun
from cogbench.reference_eval.reports import judge_agreement
from cogbench.reference_eval.reports.probe_sections import blind_tables, circular_table, image_variant_tables
from cogbench.reference_eval.reports.published import (
    REFERENCE_MODELS,
    PublishedResult,
    published_results,
    published_table,
)
from cogbench.reference_eval.reports.report_charts import make_charts
from cogbench.reference_eval.reports.report_runs import ReportRun, leaderboard_rows, load_report_runs, run_line
from cogbench.reference_eval.reports.tables import (
    Cell,
    Table,
    render_html_section,
    render_html_table,
    render_markdown,
)
from cogbench.reference_eval.run.completeness import coverage_label, sample_label, shown_value, unscored_text
from cogbench.schemas.vocabulary import CATEGORY_LABEL, CODIS_CATEGORIES, COGBENCH_CATEGORIES
from cogbench.validation.integrity import verify_build

# Every file `cogbench report` writes in its --out (dataset_builders.output.claim_output).
# Charts by "*.png" (their names follow the runs: radar_*, bars_*, ...); a PNG is only ever written by name.
REPORT_FILES = (
    "report.md",
    "report.html",
    "leaderboard.csv",
    "*.png",
    # Temporaries of versions before dataset_builders/writes.py (what a crash of one left is still ours).
    "report.md.partial",
    "report.html.partial",
    "leaderboard.csv.partial",
)
LEGACY_TEMPORARIES = REPORT_FILES[-3:]


def unrank(tables: list[Table], runs: list[ReportRun]) -> None:
    """A NOT COMPARABLE run's cells are never "best": they keep their text, without a value to rank."""
    labels = {run.label for run in runs if run.not_comparable}
    for table in tables:
        for row in table.rows:
            if row and row[0].text in labels:
                row[1:] = [Cell(cell.text) for cell in row[1:]]


def rank_groups(tables: list[Table], runs: list[ReportRun]) -> None:
    """Bold compares only rows that are comparable: the papers' rows among themselves, and runs among runs of
    the same kind (full release or SAMPLE build, and judge): never a run above the papers' rows, never a lone row.
    """
    kind = {run.label: (sample_label(run.run.scores), run.judge) for run in runs}
    for table in tables:
        groups: dict[object, set[int]] = {"published": set(table.published_rows)}
        for r, row in enumerate(table.rows):
            if r not in table.published_rows and row and row[0].text in kind:
                groups.setdefault(kind[row[0].text], set()).add(r)
        table.rank_groups = list(groups.values())


def _run_cell(metric: dict[str, Any] | None, category: str | None = None) -> Cell:
    """A run's value [interval]; a partial metric's cells say PARTIAL (n/N) and never count as best."""
    if metric is None:
        return Cell("-")
    value = shown_value(metric, category)
    text = interval_text(value, *metric_interval(metric, category))
    if metric.get("partial"):  # the label once per row (its Overall cell and the run's name); never best
        return Cell(f"{coverage_label(metric)} {text}" if value is not None and category is None else text, None)
    if category is None and "unscored" in metric:  # constrained judge parsing: the unscored rate beside the number
        return Cell(f"{text} ({unscored_text(metric)})", value)
    return Cell(text, value)


def _published_cell(value: float | None) -> Cell:
    return Cell("-" if value is None else fixed(value), value)


def _source(run: ReportRun, judged: bool = False) -> str:
    """Short (the folder is in the Runs list); in a judged table, the run's judge."""
    return f"run, {run.judge}" if judged and run.judge else "run"


def _add_published(
    table: Table, rows: dict[str, dict[str, float]], columns: Sequence[str], source: str, leading: Sequence[str] = ()
) -> None:
    for model, values in rows.items():
        if model in REFERENCE_MODELS:
            table.reference_rows.add(len(table.rows))
        table.published_rows.add(len(table.rows))
        table.rows.append(
            [
                Cell(model),
                Cell(f"published, {source}"),
                *(Cell(x) for x in leading),
                *(_published_cell(values.get(c)) for c in columns),
            ]
        )


def description_tables(runs: list[ReportRun], published: list[PublishedResult]) -> list[Table]:
    runs = [r for r in runs if r.task == "description"]
    if not runs:
        return []
    unplaced = any(r.mode in (UNRECORDED, MIXED) for r in runs)
    table2 = Table(
        "Recognition Score, Description task (CogBench Table 2)",
        [
            "Model",
            "Source",
            "Mode 1 (spontaneous)",
            "Mode 2 (directed)",
            *(["Mode not recorded"] if unplaced else []),
            "macro (extra)",
        ],
        [],
        note="Mode 1 = Spontaneous Description prompt, Mode 2 = Directed Reasoning prompt (CogBench Section 3.2.1); "
        "a run's mode is read from the prompt templates its predictions name."
        + (
            " Runs whose predictions name no prompt (official-format files) or several are not placed in a mode: "
            "their score is under 'Mode not recorded', never beside the papers' rows of either mode."
            if unplaced
            else ""
        ),
    )
    for run in runs:
        if run.mode == "oracle":
            table2.reference_rows.add(len(table2.rows))
        micro = _run_cell(run.metrics.get("recognition_micro"))
        column = {"directed": 1, UNRECORDED: 2, MIXED: 2}.get(run.mode, 0)
        cells = [Cell("") for _ in range(3 if unplaced else 2)]
        cells[column] = micro
        if run.mode == "oracle":
            cells[1] = Cell("(one description)")
        table2.rows.append(
            [Cell(run.label), Cell(_source(run)), *cells, _run_cell(run.metrics.get("recognition_macro"))]
        )
    spontaneous = published_table(published, "recognition_micro", "spontaneous")
    directed = published_table(published, "recognition_micro", "directed")
    for model in spontaneous:
        if model in REFERENCE_MODELS:
            table2.reference_rows.add(len(table2.rows))
        table2.published_rows.add(len(table2.rows))
        both = model in directed
        table2.rows.append(
            [
                Cell(model),
                Cell("published, CogBench Table 2"),
                _published_cell(spontaneous[model]["overall"]),
                _published_cell(directed[model]["overall"] if both else None),
                *([Cell("-")] if unplaced else []),
                Cell("-"),
            ]
        )
    tables = [table2]
    judged = [r for r in runs if "cognition" in r.metrics]
    if judged:
        columns = [*COGBENCH_CATEGORIES, "overall"]
        table3 = Table(
            "Cognition Score, Description task (CogBench Table 3)",
            ["Model", "Source", "Mode", *(CATEGORY_LABEL[c] for c in COGBENCH_CATEGORIES), "Overall"],
            [],
            note="The paper prints both modes in one cell (Mode 1 / Mode 2); here each mode is a row. "
            "Published rows were judged by GPT-4 (CogBench Table 3); each run's Source names its own judge and "
            "parsing: a number from another judge is not alike the published ones.",
        )
        for run in judged:
            if run.mode == "oracle":
                table3.reference_rows.add(len(table3.rows))
            table3.rows.append(
                [
                    Cell(run.label),
                    Cell(_source(run, judged=True)),
                    Cell(MODE_LABEL[run.mode]),
                    *(_run_cell(run.metrics["cognition"], None if c == "overall" else c) for c in columns),
                ]
            )
        for mode in ("spontaneous", "directed"):
            rows = {
                m: v
                for m, v in published_table(published, "cognition", mode).items()
                if mode == "directed" or m not in REFERENCE_MODELS
            }
            _add_published(table3, rows, columns, f"CogBench Table 3, {PAPER_JUDGE['description']}", [MODE_LABEL[mode]])
        tables.append(table3)
    return tables


def vqa_table(runs: list[ReportRun], published: list[PublishedResult]) -> list[Table]:
    runs = [r for r in runs if r.task == "vqa"]
    if not runs:
        return []
    columns = [*COGBENCH_CATEGORIES, "overall"]
    table = Table(
        "VQA accuracy (CogBench Table 5)",
        ["Model", "Source", "Answer extractor", *(CATEGORY_LABEL[c] for c in COGBENCH_CATEGORIES), "Overall"],
        [],
        note="Extractor: `official` takes the response's first character as the authors' script does; "
        '`robust` also reads "The answer is B" and option texts. Chance is 25%.',
    )
    for run in runs:
        for metric, extractor in (("accuracy", "robust"), ("accuracy_official", "official")):
            table.rows.append(
                [
                    Cell(run.label),
                    Cell(_source(run)),
                    Cell(extractor),
                    *(_run_cell(run.metrics.get(metric), None if c == "overall" else c) for c in columns),
                ]
            )
    _add_published(table, published_table(published, "accuracy"), columns, "CogBench Table 5", ["as published"])
    return [table]


def codis_table(runs: list[ReportRun], published: list[PublishedResult]) -> list[Table]:
    runs = [r for r in runs if r.task == "codis"]
    if not runs:
        return []
    header = ["Model", "Source"]
    for category in CODIS_CATEGORIES:
        header += [f"{CODIS_SHORT[category]} Acc_p", f"{CODIS_SHORT[category]} Acc_q"]
    header += ["Overall Acc_p", "Overall Acc_q", "Context Awareness"]
    table = Table(
        "CODIS (CODIS Table 3)",
        header,
        [],
        note="Acc_p: both queries of a pair right; Acc_q: single queries right (CODIS Section 3.3). "
        "Published numbers were judged by humans; each run's Source names its own judge, so they are not alike.",
    )
    for run in runs:
        row = [Cell(run.label), Cell(_source(run, judged=True))]
        for category in [*CODIS_CATEGORIES, None]:
            row += [_run_cell(run.metrics.get("acc_p"), category), _run_cell(run.metrics.get("acc_q"), category)]
        row.append(_run_cell(run.metrics.get("context_awareness")))
        table.rows.append(row)
    acc_p, acc_q = published_table(published, "acc_p"), published_table(published, "acc_q")
    awareness = published_table(published, "context_awareness")
    for model in acc_p:
        if model in REFERENCE_MODELS:
            table.reference_rows.add(len(table.rows))
        table.published_rows.add(len(table.rows))
        row = [Cell(model), Cell(f"published, CODIS Table 3, {PAPER_JUDGE['codis']}")]
        for category in [*CODIS_CATEGORIES, "overall"]:
            row += [_published_cell(acc_p[model].get(category)), _published_cell(acc_q[model].get(category))]
        row.append(_published_cell(awareness.get(model, {}).get("overall")))
        table.rows.append(row)
    return [table]


# --- files ------------------------------------------------------------------------

# Tables fit a 1400 px window (CODIS Table 3 has 13 number columns; tests/test_report_html.py
# measures it in headless Chromium): compact cells, the interval may break after its comma,
# headers and the Source column wrap.
HTML_STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2em auto;max-width:1600px;color:#222;padding:0 1em}
.scroll{overflow-x:auto}
table{border-collapse:collapse;font-size:12.5px;margin:.5em 0}th,td{border:1px solid #ccc;padding:2px 5px;text-align:right}
th{background:#f0f0f0;position:sticky;top:0;font-size:12px}td:first-child,td:nth-child(2),th:first-child,th:nth-child(2){text-align:left}
td:nth-child(2){font-size:11.5px;min-width:7em}
tr.run td{background:#eef5ff}tr.published td{color:#555;font-style:italic}td.best{font-weight:bold;color:#000}
.ci{display:block;font-size:10.5px;color:#666;font-weight:normal}.note{font-size:12px;color:#555}figure{margin:1.5em 0}img{max-width:100%;border:1px solid #eee}
figcaption{font-size:13px;color:#444}
.md td,.md th{text-align:left}.md td:nth-child(2){font-size:12.5px;min-width:0;text-align:right}.md td:nth-child(3),.md td:nth-child(4){white-space:nowrap}.md code{overflow-wrap:anywhere}
table.numbers td:nth-child(2),table.numbers th:nth-child(2){text-align:right;font-size:12.5px;min-width:0}
"""


Sections = Callable[[list[ReportRun]], list[Table]]  # more tables from the rooms above (explaining/report_section)
# (label, run) of each run -> Markdown lines of a section after the runs' list (certifying/certificate_report).
Section = Callable[[list[tuple[str, ScoredRun]]], list[str]]


def write_report(
    paths: Sequence[str],
    out: Path,
    allow_mismatch: bool = False,
    sections: Sections | None = None,
    judge_section: Section | None = None,
) -> dict[str, Any]:
    """Load the runs, write every file of the report into ``out``; returns what was written."""
    reads = [("RUN_DIR", path) for path in paths]
    claim_output(out, "report", REPORT_FILES, create=False, reads=reads)
    runs = load_report_runs(paths, allow_mismatch)
    for dataset in sorted({run.run.scores["dataset"] for run in runs}):
        if Path(dataset).is_dir():  # a local build the runs were scored on, if still there: checked like `score` does
            verify_build(dataset)
    published = published_results()
    claim_output(out, "report", REPORT_FILES, reads=reads)
    with locked_folder(out):  # one report at a time: a killed one's temporaries are cleaned, a running one's kept
        remove_temporaries(out, REPORT_FILES, LEGACY_TEMPORARIES)
        section = judge_section([(r.label, r.run) for r in runs]) if judge_section else []
        return _write_report_files(runs, published, out, section, sections)


def _write_report_files(
    runs: list[ReportRun],
    published: list[PublishedResult],
    out: Path,
    section: list[str],
    sections: Sections | None = None,
) -> dict[str, Any]:
    tables = description_tables(runs, published) + vqa_table(runs, published) + codis_table(runs, published)
    tables += circular_table(runs) + blind_tables(runs) + image_variant_tables(runs)
    unrank(tables, runs)
    rank_groups(tables, runs)
    figures = make_charts(runs, published, out)
    agreement_tables, agreement_figures, agreement_notes = judge_agreement.report_section([r.run for r in runs], out)
    tables += agreement_tables + (sections(runs) if sections else [])
    figures += agreement_figures
    intro = (
        f"{len(runs)} run(s). Each run's cell: score [95% interval]; the interval (Korn-Graubard, design effect "
        "estimated over images: an image's questions, CoRs or CODIS pairs count together) holds the score the run "
        "would get on the population of images in 95 of 100 draws; n/a where a category has one image. "
        "PARTIAL (n/N): counted on n of the config's N units, never bold. SAMPLE (x of 251 images): a build that is "
        "not the full release, not comparable with the published rows. Published rows (italic) are the papers' "
        "numbers, without intervals. Bold: best in the column among comparable rows only: the papers' rows among "
        "themselves, runs among runs of the same build kind and judge (never a run above the papers' rows, never a "
        "lone row; Human and Oracle rows aside). "
        "NOT COMPARABLE: scored on another build or generated another way than the first run of its task "
        "(`--allow-mismatch`), never bold. Numbers are % (0-100)."
    )
    runs_list = "\n".join(
        f"- **{r.label}**: {run_line(r)}, `{r.run.folder}`"
        + (f"; **NOT COMPARABLE**: {r.not_comparable}" if r.not_comparable else "")
        for r in runs
    )
    markdown = [
        "# cogbench report\n",
        intro + "\n",
        "## Runs\n",
        runs_list + "\n",
        *(n + "\n" for n in agreement_notes),
        *(["\n".join(section)] if section else []),
    ]
    markdown += [render_markdown(t) for t in tables]
    markdown += ["## Charts\n"] + [f"![{caption}]({path.name})\n\n{caption}\n" for path, caption in figures]
    write_file(out / "report.md", "\n".join(markdown))
    body = [f"<h1>cogbench report</h1><p>{html.escape(intro)}</p><h2>Runs</h2><ul>"]
    body += [
        f"<li><b>{html.escape(r.label)}</b>: {html.escape(run_line(r))}, <code>{html.escape(str(r.run.folder))}</code>"
        + (f"; <b>NOT COMPARABLE</b>: {html.escape(r.not_comparable)}" if r.not_comparable else "")
        + "</li>"
        for r in runs
    ]
    body.append("</ul>")
    body += [f"<p>{html.escape(n)}</p>" for n in agreement_notes]
    if section:  # its Markdown rendered: heading, paragraphs, tables
        body.append(render_html_section(section))
    body += [render_html_table(t) for t in tables]
    body.append("<h2>Charts</h2>")
    for path, caption in figures:
        data = base64.b64encode(path.read_bytes()).decode("ascii")
        body.append(
            f'<figure><img src="data:image/png;base64,{data}" alt="{html.escape(caption)}">'
            f"<figcaption>{html.escape(caption)}</figcaption></figure>"
        )
    write_file(
        out / "report.html",
        "<!doctype html><html><head><meta charset=utf-8><title>cogbench report</title>"
        f"<style>{HTML_STYLE}</style></head><body>{''.join(body)}</body></html>\n",
    )
    rows = leaderboard_rows(runs)
    fields = list(dict.fromkeys(key for row in rows for key in row))
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    write_file(out / "leaderboard.csv", buffer.getvalue())
    return {
        "runs": len(runs),
        "tables": [t.title for t in tables],
        "charts": [str(p) for p, _ in figures],
        "files": [str(out / n) for n in ("report.md", "report.html", "leaderboard.csv")],
    }
