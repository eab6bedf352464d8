"""``cogbench compare --judges``: what swapping the judge does to verdicts, scores and rankings.

Input: scorings of the same answers by two judges (an LLM judge, the offline
ROUGE-L/BERTScore/NLI Cognition judges, the CODIS rule judge). Runs are paired by
``provenance.answers_sha256`` (the answers scored, whatever file held them): each
pair must hold two different judges, and with several pairs (several models) the
two judges must be the same two throughout. Per pair: Cohen's kappa per category
with its image-clustered interval, verdict flips, and how each score moves (paired
t interval over images, as ``compare``); over three or more models, Kendall's tau of
the two rankings (``metrics.agreement``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cogbench.errors import UsageError
from cogbench.numbers import fixed
from cogbench.reference_eval.metrics import agreement, intervals, small_sample
from cogbench.reference_eval.recording.run_reader import ScoredRun
from cogbench.reference_eval.reports import charts
from cogbench.reference_eval.reports.comparable import check_or_refuse
from cogbench.reference_eval.reports.tables import Cell, Table
from cogbench.schemas.vocabulary import CODIS_CATEGORIES, COGBENCH_CATEGORIES

# The scores a judge makes, per task (VQA answers are read by rule: no judge to swap).
JUDGED_METRICS = {"description": ("cognition",), "codis": ("acc_p", "acc_q")}
OFFLINE_KINDS = intervals.OFFLINE_KINDS


def judge_label(run: ScoredRun, endpoint: bool = False) -> str:
    """The judge that made a run's verdicts, with its model and parsing mode (``openai:gpt-4o, official parsing``);
    with ``endpoint``, where it answered too (two judges of one model name at two endpoints)."""
    judge = run.scores["judge"]
    kind = judge["kind"]
    if kind == "openai":
        where = _endpoint(run)
        at = f", endpoint {where.get('endpoint_host')} #{where.get('endpoint_id', '?')}" if endpoint else ""
        return f"openai:{judge.get('model')}, {judge.get('parsing', 'tolerant')} parsing{at}"
    if kind in ("vllm", "panel"):  # a panel by its members (``openai:a + rule``), a vllm: judge by its model
        name = f"vllm:{judge.get('model')}" if kind == "vllm" else f"panel of {judge.get('model')}"
        return f"{name}, {judge.get('parsing', 'tolerant')} parsing"
    if kind in OFFLINE_KINDS:
        offline = (run.scores.get("analyses") or {}).get("offline_judge") or {}
        threshold = offline.get("threshold")
        return ", ".join(
            str(x) for x in (kind, offline.get("model"), None if threshold is None else f"threshold {threshold}") if x
        )
    return kind


def judge_identity(run: ScoredRun) -> tuple[str, str | None]:
    """A judge is its label and, for an LLM judge, its endpoint: the verdict cache keeps those apart too."""
    where = _endpoint(run)
    return judge_label(run), where.get("endpoint_id") or where.get("endpoint_host")


def _endpoint(run: ScoredRun) -> dict[str, Any]:
    """The judge's provenance: its endpoint host and id (an LLM judge only)."""
    return (run.scores.get("provenance") or {}).get("judge") or {}


def _answers_id(run: ScoredRun) -> str:
    answers = (run.scores.get("provenance") or {}).get("answers_sha256")
    if not answers:
        raise UsageError(
            f"{run.folder / 'scores.json'}: provenance.answers_sha256 is missing, so it cannot be told which "
            "answers were judged; score the predictions again with this version of cogbench"
        )
    return str(answers)


def verdicts(run: ScoredRun) -> dict[tuple[Any, ...], tuple[str, str, int | None]]:
    """Per judged item: (image, category, verdict as an int, None where the judge gave none)."""
    task = run.scores["task"]
    out: dict[tuple[Any, ...], tuple[str, str, int | None]] = {}
    if task == "codis":
        for d in run.details:
            for q in d["queries"]:
                right = q["right"]
                out[(d["item_id"], q["query"])] = (d["image_id"], d["category"], None if right is None else int(right))
        return out
    if task != "description":
        raise UsageError(f"{run.folder}: {task} answers are read by rule, with no judge to compare")
    for d in run.details:
        key = (
            "cognition"
            if "cognition" in d
            else next((f"cognition_{k}" for k in OFFLINE_KINDS if f"cognition_{k}" in d), None)
        )
        for c in d.get(key, []) if key else []:
            verdict = c["verdict"]
            out[(d["item_id"], c["category"], c["index"])] = (
                d["item_id"],
                c["category"],
                None if verdict is None else int(verdict),
            )
    if not out:
        raise UsageError(f"{run.folder}: no Cognition verdicts (scored with --judge none); nothing to compare")
    return out


def pair_runs(runs: Sequence[ScoredRun]) -> list[tuple[ScoredRun, ScoredRun]]:
    """Runs grouped by the answers they judged: two per group, judge A first (the same A in every group)."""
    groups: dict[str, list[ScoredRun]] = {}
    for run in runs:
        groups.setdefault(_answers_id(run), []).append(run)
    judge_a = judge_identity(runs[0])
    pairs = []
    for group in groups.values():
        if len(group) != 2:
            folders = ", ".join(str(r.folder) for r in group)
            raise UsageError(
                f"--judges: {len(group)} run(s) judged the same answers ({folders}); give exactly two scorings "
                "(two judges) of each model's predictions"
            )
        a, b = sorted(group, key=lambda r: judge_identity(r) != judge_a)
        if judge_identity(a) == judge_identity(b):
            raise UsageError(f"--judges: {a.folder} and {b.folder} were judged alike ({judge_label(a, True)})")
        pairs.append((a, b))
    labels = {(judge_label(a, True), judge_label(b, True)) for a, b in pairs}
    if len({(judge_identity(a), judge_identity(b)) for a, b in pairs}) > 1:
        raise UsageError(
            "--judges: the pairs were judged by different judges ("
            + "; ".join(f"{x} vs {y}" for x, y in sorted(labels))
            + "); every model's predictions must be scored by the same two judges"
        )
    tasks = {a.scores["task"] for a, _ in pairs}
    if len(tasks) > 1:
        raise UsageError(f"--judges: runs of different tasks ({', '.join(sorted(tasks))}); compare one task at a time")
    return pairs


def needs_endpoint(pairs: Sequence[tuple[ScoredRun, ScoredRun]]) -> bool:
    """Whether the judges' labels must name their endpoints to tell A from B (one model name, two endpoints)."""
    return any(judge_label(a) == judge_label(b) for a, b in pairs)


def pair_agreement(a: ScoredRun, b: ScoredRun, resamples: int, seed: int, endpoint: bool = False) -> dict[str, Any]:
    """Kappa per category, flips, and each judged score under A and B with the paired t interval of B - A."""
    mismatch = check_or_refuse(a, b, allow_mismatch=False, judged_alike=False)
    task = a.scores["task"]
    categories = CODIS_CATEGORIES if task == "codis" else COGBENCH_CATEGORIES
    verdicts_a, verdicts_b = verdicts(a), verdicts(b)
    pairs, unjudged = [], 0
    for key, (cluster, category, va) in verdicts_a.items():
        vb = verdicts_b.get(key, (cluster, category, None))[2]
        if va is None or vb is None:
            unjudged += 1
            continue
        pairs.append(agreement.VerdictPair(cluster, category, va, vb))
    table = agreement.confusion_table(pairs, categories)
    details_a = [d for d in a.details if d["item_id"] in mismatch.shared]
    details_b = [d for d in b.details if d["item_id"] in mismatch.shared]
    clusters = sorted({d.get("image_id", d["item_id"]) for d in details_a})
    tables_a = intervals.metric_tables(task, details_a, categories, clusters)
    tables_b = intervals.metric_tables(task, details_b, categories, clusters)
    moves = {}
    for name in JUDGED_METRICS[task]:
        if name not in tables_a or name not in tables_b:
            continue
        rows = []
        for k, column in enumerate(tables_a[name].columns):
            ta, tb = tables_a[name], tables_b[name]
            score_a, score_b = ta.pooled()[k], tb.pooled()[k]
            paired = small_sample.paired_difference_t(tb.hits[:, k], tb.totals[:, k], ta.hits[:, k], ta.totals[:, k])
            rows.append(
                {
                    "column": column,
                    "a": agreement._number(score_a),
                    "b": agreement._number(score_b),
                    "move": agreement._number(score_b - score_a),
                    "interval": paired["interval"],
                }
            )
        moves[name] = rows
    return {
        "a": {"folder": str(a.folder), "model": a.scores["model"], "judge": judge_label(a, endpoint)},
        "b": {"folder": str(b.folder), "model": b.scores["model"], "judge": judge_label(b, endpoint)},
        "labels": table.labels,
        "images": len(table.clusters),
        "unjudged": unjudged,
        "kappa": agreement.kappa_with_intervals(table, resamples, seed),
        "moves": moves,
    }


def judge_agreement(
    runs: Sequence[ScoredRun], resamples: int = intervals.DEFAULT_RESAMPLES, seed: int = intervals.DEFAULT_SEED
) -> dict[str, Any]:
    """Every pair's agreement, and Kendall's tau of the models' rankings per judged metric (3+ models)."""
    pairs = pair_runs(runs)
    endpoint = needs_endpoint(pairs)
    task = pairs[0][0].scores["task"]
    categories = CODIS_CATEGORIES if task == "codis" else COGBENCH_CATEGORIES
    result: dict[str, Any] = {
        "task": task,
        "judge_a": judge_label(pairs[0][0], endpoint),
        "judge_b": judge_label(pairs[0][1], endpoint),
        "method": f"Cohen's kappa, {intervals.METHOD} ({resamples} resamples, seed {seed}); score moves B - A: "
        f"{small_sample.PAIRED_METHOD}",
        "pairs": [pair_agreement(a, b, resamples, seed, endpoint) for a, b in pairs],
        "ranking": {},
    }
    if len(pairs) >= 3:
        clusters = sorted({d.get("image_id", d["item_id"]) for a, b in pairs for d in (*a.details, *b.details)})
        for name in JUDGED_METRICS[task]:
            tables = [
                (
                    intervals.metric_tables(task, a.details, categories, clusters).get(name),
                    intervals.metric_tables(task, b.details, categories, clusters).get(name),
                )
                for a, b in pairs
            ]
            if all(ta is not None and tb is not None for ta, tb in tables):
                tau = agreement.kendall_tau_with_interval(
                    [t[0] for t in tables], [t[1] for t in tables], resamples, seed
                )
                tau["models_in_order"] = [a.scores["model"] for a, _ in pairs]
                result["ranking"][name] = tau
    return result


def _interval(value: list[float] | None, digits: int = 2) -> str:
    return f"[{fixed(value[0], digits)}, {fixed(value[1], digits)}]" if value else "n/a"


def _value(value: float | None, digits: int = 2) -> str:
    return "n/a" if value is None else fixed(value, digits)


def _constant(row: dict[str, Any]) -> str:
    sides = row.get("constant") or []
    if len(sides) == 2:
        return "both judges gave one verdict throughout"
    return f"judge {sides[0]} gave one verdict throughout: kappa is 0 by definition" if sides else ""


def render_agreement(result: dict[str, Any]) -> str:
    """Markdown: per pair a kappa/flips table and a score-move table; then the ranking agreement."""
    lines = [
        f"Judge A: {result['judge_a']}",
        f"Judge B: {result['judge_b']}",
        f"{result['task']}; {result['method']}.",
        "",
    ]
    for pair in result["pairs"]:
        lines += [
            f"## {pair['a']['model']}: {pair['a']['folder']} (A) vs {pair['b']['folder']} (B)",
            "",
            f"{pair['images']} images; verdict labels {pair['labels']}; {pair['unjudged']} item(s) left out "
            "(no verdict from one of the judges)."
            + (
                f" No kappa interval below {agreement.MIN_IMAGES} images (its coverage was measured under 95%)."
                if pair["images"] < agreement.MIN_IMAGES
                else ""
            ),
            "",
            "| category | items | kappa | 95% CI | flips | flip % | A > B | B > A | note |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for column, row in pair["kappa"].items():
            if not row["items"]:
                continue
            lines.append(
                f"| {column} | {row['items']} | {_value(row['kappa'])} | {_interval(row['interval'])} | {row['flips']} "
                f"| {_value(row['flip_share'], 1)} | {row['a_higher']} | {row['b_higher']} | {_constant(row)} |"
            )
        for name, rows in pair["moves"].items():
            lines += ["", f"| {name} | A | B | B - A | 95% CI |", "|---|---|---|---|---|"]
            lines += [
                f"| {r['column']} | {_value(r['a'])} | {_value(r['b'])} | {_value(r['move'])} | {_interval(r['interval'])} |"
                for r in rows
                if r["a"] is not None or r["b"] is not None
            ]
        lines.append("")
    if result["ranking"]:
        lines += [
            "## Ranking of the models under the two judges",
            "",
            "| metric | models | Kendall's tau | 95% CI | p |",
            "|---|---|---|---|---|",
        ]
        for name, tau in result["ranking"].items():
            lines.append(
                f"| {name} | {tau['models']} | {_value(tau['tau'])} | {_interval(tau['interval'])} | {_value(tau['p_value'], 4)} |"
            )
    elif len(result["pairs"]) < 3:
        lines.append("Kendall's tau of the rankings needs three or more models scored by both judges.")
    return "\n".join(lines) + "\n"


def agreement_chart(path: Path, result: dict[str, Any]) -> Path:
    """Kappa per category with its interval, one marker per model (pair); kappa's scale -1..1."""
    pairs = result["pairs"]
    columns = [c for c in pairs[0]["kappa"] if any(p["kappa"][c]["items"] for p in pairs)]
    labels = [p["a"]["model"] for p in pairs]
    fig = charts._figure(min(charts.MAX_WIDTH_INCHES, 2.0 + 0.9 * len(columns)), 4.2, labels)
    ax = fig.add_subplot()
    colours = charts.model_colours(labels)
    step = 0.6 / max(len(pairs), 1)
    for i, pair in enumerate(pairs):
        xs, ys, lows, highs, missing = [], [], [], [], []
        for x, column in enumerate(columns):
            row = pair["kappa"][column]
            offset = x - 0.3 + step * (i + 0.5)  # side by side: two models with equal kappa never hide each other
            if row["kappa"] is None:
                missing.append(offset)
                continue
            xs.append(offset)
            ys.append(row["kappa"])
            ci = row["interval"]
            lows.append(row["kappa"] - ci[0] if ci else 0.0)
            highs.append(ci[1] - row["kappa"] if ci else 0.0)
        ax.errorbar(xs, ys, yerr=[lows, highs], fmt="o", color=colours[labels[i]], capsize=3, label=labels[i])
        for x in missing:
            ax.text(x, -0.95, "n/a", ha="center", va="bottom", fontsize=7, rotation=90, color="dimgrey")
    ax.axhline(0, color="dimgrey", linewidth=0.8)
    ax.set_ylim(-1.05, 1.05)
    ax.set_xticks(range(len(columns)))
    ax.set_xticklabels([charts._short(c, 12) for c in columns], fontsize=8)
    ax.set_ylabel("Cohen's kappa")
    ax.set_title(f"Judge agreement ({result['task']})\nA: {result['judge_a']}; B: {result['judge_b']}", fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    charts._legend_below(
        fig, *ax.get_legend_handles_labels(), "whiskers: 95% intervals, image-clustered bootstrap; n/a: kappa undefined"
    )
    return charts._save(fig, path)


def _kappa_text(row: dict[str, Any]) -> str:
    return "n/a" if row["kappa"] is None else f"{fixed(row['kappa'], 2)} {_interval(row['interval'])}"


def agreement_tables(result: dict[str, Any]) -> list[Table]:
    """The report's tables: kappa per category for each model, and how each judged score moves from A to B."""
    pairs = result["pairs"]
    columns = [c for c in pairs[0]["kappa"] if any(p["kappa"][c]["items"] for p in pairs)]
    kappa_rows = [
        [Cell(p["a"]["model"]), Cell(_value(p["kappa"]["overall"]["flip_share"], 1))]
        + [Cell(_kappa_text(p["kappa"][c])) for c in columns]
        for p in pairs
    ]
    ranking = "; ".join(
        f"Kendall's tau of the {tau['models']} models' {name}: {_value(tau['tau'])} {_interval(tau['interval'])}"
        for name, tau in result["ranking"].items()
    )
    kappa = Table(
        f"Judge agreement, {result['task']}: Cohen's kappa",
        ["model", "flips %", *columns],
        kappa_rows,
        note=f"A: {result['judge_a']}; B: {result['judge_b']}. Kappa [95% interval, {intervals.METHOD}; none below "
        f"{agreement.MIN_IMAGES} images, where its coverage was measured under 95%]; "
        "kappa is 0 wherever one judge gave one verdict throughout (see flips), n/a where both did. "
        + (ranking or "Kendall's tau of the rankings needs three or more models scored by both judges."),
        best_columns=set(),
    )
    move_rows = [
        [
            Cell(p["a"]["model"]),
            Cell(name),
            Cell(_value(row["a"])),
            Cell(_value(row["b"])),
            Cell(f"{_value(row['move'])} {_interval(row['interval'])}"),
        ]
        for p in pairs
        for name, rows in p["moves"].items()
        for row in rows
        if row["column"] == "overall"
    ]
    moves = Table(
        f"Judge agreement, {result['task']}: scores under each judge",
        ["model", "metric", "A", "B", "B - A [95% CI]"],
        move_rows,
        note="Overall scores (%) of the same answers under judge A and judge B; the interval of B - A is a paired "
        "t interval over images. These numbers are not comparable with rows judged by the papers' GPT-4 judge.",
        best_columns=set(),
    )
    return [kappa, moves]


def report_section(runs: Sequence[ScoredRun], out: Path) -> tuple[list[Table], list[tuple[Path, str]], list[str]]:
    """For ``cogbench report``: tables and charts of every task whose runs hold two judges' scorings of the same
    answers; notes for the tasks where such runs cannot be paired."""
    groups: dict[str, list[ScoredRun]] = {}
    for run in runs:
        answers = (run.scores.get("provenance") or {}).get("answers_sha256")
        if answers and run.scores["task"] in JUDGED_METRICS:
            groups.setdefault(answers, []).append(run)
    paired = [g for g in groups.values() if len({judge_identity(r) for r in g}) > 1]
    tables: list[Table] = []
    figures: list[tuple[Path, str]] = []
    notes: list[str] = []
    for task in sorted({g[0].scores["task"] for g in paired}):
        members = [run for g in paired if g[0].scores["task"] == task for run in g]
        try:
            result = judge_agreement(members)
        except UsageError as error:
            notes.append(f"Judge agreement ({task}) not computed: {error}")
            continue
        tables += agreement_tables(result)
        path = agreement_chart(out / f"judge_agreement_{task}.png", result)
        figures.append(
            (
                path,
                f"Judge agreement ({task}): Cohen's kappa per category, {result['judge_a']} vs "
                f"{result['judge_b']}, 95% intervals",
            )
        )
    return tables, figures, notes
