"""``cogbench judges certify``: may a candidate judge stand in for the retired official one?

The reference is the official judge's verdicts on some models' answers (run folders, or a
Parquet archive: ``verdict_archive``); the candidate judged the same answers (paired by
``answers_sha256``). Per task and category: raw agreement, Cohen's kappa with its
image-clustered interval, prevalence and the confusion matrix (``metrics.agreement``); per
model, how each judged score moves with its paired t interval over images
(``metrics.small_sample``); over three or more models, Kendall's tau-b of the two rankings
and the largest |difference|. PASS needs every bar below; the output names each bar and its
source, since raw agreement alone overstates agreement (it ignores chance).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from cogbench.errors import UsageError, shown
from cogbench.reference_eval.certifying import human_anchor
from cogbench.reference_eval.certifying.verdict_archive import JudgedAnswers
from cogbench.reference_eval.metrics import agreement, human_agreement, intervals, small_sample
from cogbench.schemas.vocabulary import CODIS_CATEGORIES, COGBENCH_CATEGORIES

# The JSON certificate's kind and version (schemas/judge_certificate.schema.json).
CERTIFICATE_FORMAT = "cogbench judge certificate 1"

JUDGED_METRICS = {"codis": ("acc_p", "acc_q"), "description": ("cognition",)}

BAR_SOURCES = {
    "min_kappa": "McHugh (2012): kappa above 0.80 is strong agreement. The papers give raw agreement only "
    "(CogBench Table 4: GPT-4 against human CoR labels, accuracy 0.833; CODIS Table 7: GPT-4 against humans, "
    "96.5% agreement, the mean over its 14 models), which counts chance agreement too",
    "min_tau": "cogbench's bar, after CODIS Tables 7-8 (GPT-4 against human evaluation; the paper prints no tau: "
    "Kendall's tau-b of its Table 7 Acc_p columns, human against GPT-4, is 0.857)",
    "max_difference": "the papers print scores to one decimal; a move of more than 1 point, or an interval "
    "that excludes 0, changes the numbers people compare",
    "human_kappa_margin": "cogbench's bar (the human anchor): the papers' bars came from people (CogBench: GPT-4 against "
    "human labels, 0.833 on 20 images; CODIS: 97.9% raw agreement between people), so the judge's kappa against "
    "the people's labels, at the lower end of its 95% interval, may fall short of the people's own kappa by at "
    "most this much",
    "min_ac1_margin": "cogbench's bar: a judge that always says right agrees with the majority label on a skewed task "
    "(0.871 in a 2026 calibration study); Gwet's AC1 must beat the better constant judge's by this much",
    "max_parse_failures": "cogbench's bar: units the judge gave no verdict (%), every model's run; more changes which "
    "answers a score counts",
}
ANCHOR_BARS = ("human_kappa_margin", "min_ac1_margin", "max_parse_failures")  # listed only with people's labels


@dataclass(frozen=True)
class Bars:
    """What PASS needs: kappa at least, tau at least, |score difference| at most (points)."""

    min_kappa: float = 0.80
    min_tau: float = 0.88
    max_difference: float = 1.0
    # the human anchor (``--labels``): kappa's lower bound >= people's kappa - 0.10, AC1 - constant's >= 0.10,
    # no verdict on at most 2% of the units
    human_kappa_margin: float = 0.10
    min_ac1_margin: float = 0.10
    max_parse_failures: float = 2.0


def _categories(task: str) -> tuple[str, ...]:
    return tuple(CODIS_CATEGORIES if task == "codis" else COGBENCH_CATEGORIES)


def pair_verdicts(
    references: Sequence[JudgedAnswers], candidates: Sequence[JudgedAnswers]
) -> dict[str, list[tuple[JudgedAnswers, JudgedAnswers]]]:
    """Per task, (reference, candidate) for each model's answers; one line naming what cannot be paired."""
    judges = sorted({c.judge for c in candidates})
    if len(judges) != 1:
        held = "; ".join(shown(judge) for judge in judges)
        raise UsageError(f"certify one candidate judge at a time (the candidate runs hold {held})")
    index: dict[tuple[str, str], JudgedAnswers] = {}
    for ref in references:
        if ref.judge == judges[0]:
            raise UsageError(f"{ref.where}: the reference was judged by the candidate itself ({shown(ref.judge)})")
        other = index.setdefault((ref.task, ref.answers), ref)
        if other is not ref:
            raise UsageError(f"{ref.where} and {other.where}: two reference verdict sets for the same answers")
    by_task: dict[str, list[tuple[JudgedAnswers, JudgedAnswers]]] = {}
    seen: set[tuple[str, str]] = set()
    for cand in candidates:
        ref = index.get((cand.task, cand.answers))
        if ref is None:
            raise UsageError(
                f"{cand.where}: no reference verdicts for these answers ({cand.task}, model {shown(cand.model)}, "
                f"answers_sha256 {shown(cand.answers[:12])}); give the official judge's run or archive of the same answers"
            )
        if (cand.task, cand.answers) in seen:
            raise UsageError(f"{cand.where}: the candidate judged these answers twice; give one run per model")
        seen.add((cand.task, cand.answers))
        by_task.setdefault(cand.task, []).append((ref, cand))
    for task, pairs in by_task.items():
        reference_judges = sorted({ref.judge for ref, _ in pairs})
        if len(reference_judges) > 1:
            held = "; ".join(shown(judge) for judge in reference_judges)
            raise UsageError(f"{task}: the references were judged by different judges ({held})")
    return by_task


def paired_units(task: str, ref: JudgedAnswers, cand: JudgedAnswers):
    """Verdict pairs where both judged, the units of each judged score under each judge, and the count left out."""
    pairs, left_out = [], 0
    for key, (image, category, a) in ref.units.items():
        b = cand.units.get(key, (image, category, None))[2]
        if a is None or b is None:
            left_out += 1
            continue
        pairs.append((key, agreement.VerdictPair(image, category, a, b)))
    left_out += sum(key not in ref.units for key in cand.units)
    units_a: dict[str, list[intervals.Unit]] = {name: [] for name in JUDGED_METRICS[task]}
    units_b: dict[str, list[intervals.Unit]] = {name: [] for name in JUDGED_METRICS[task]}
    unit = "acc_q" if task == "codis" else "cognition"
    for _, p in pairs:
        units_a[unit].append(intervals.Unit(p.cluster, p.category, float(p.a)))
        units_b[unit].append(intervals.Unit(p.cluster, p.category, float(p.b)))
    if task == "codis":  # Acc_p: a pair scores when all its queries are right, counted where both judged them all
        items: dict[str, list[agreement.VerdictPair]] = {}
        for key, p in pairs:
            items.setdefault(key[0], []).append(p)
        queries = Counter(key[0] for key in ref.units)
        for item, judged in items.items():
            if len(judged) == queries[item]:
                first = judged[0]
                units_a["acc_p"].append(intervals.Unit(first.cluster, first.category, float(all(p.a for p in judged))))
                units_b["acc_p"].append(intervals.Unit(first.cluster, first.category, float(all(p.b for p in judged))))
    return [p for _, p in pairs], units_a, units_b, left_out


def _agreement_columns(table: agreement.ConfusionTable, resamples: int, seed: int) -> dict[str, dict[str, Any]]:
    """Per column: kappa and its interval, raw agreement, each judge's prevalence of "right", the confusion matrix."""
    columns = agreement.kappa_with_intervals(table, resamples, seed)
    pooled = table.counts.sum(axis=0)
    positive = [i for i, label in enumerate(table.labels) if label >= 1]
    for k, name in enumerate(table.columns):
        matrix, row = pooled[k], columns[name]
        items = row["items"]
        row["raw_agreement"] = round(100.0 * (items - row["flips"]) / items, 2) if items else None
        row["prevalence_reference"] = round(100.0 * matrix[positive, :].sum() / items, 2) if items else None
        row["prevalence_candidate"] = round(100.0 * matrix[:, positive].sum() / items, 2) if items else None
        row["confusion"] = matrix.astype(int).tolist()  # rows: reference's verdict, columns: candidate's
    return columns


def _moves(table_a: intervals.ClusterTable, table_b: intervals.ClusterTable, level: float) -> list[dict[str, Any]]:
    """Per column: each judge's score and candidate - reference with its paired t interval at ``level``."""
    rows = []
    for k, column in enumerate(table_a.columns):
        a, b = table_a.pooled()[k], table_b.pooled()[k]
        if np.isnan(a) or np.isnan(b):
            continue
        hits_b, totals_b = table_b.hits[:, k], table_b.totals[:, k]
        paired = small_sample.paired_difference_t(hits_b, totals_b, table_a.hits[:, k], table_a.totals[:, k], level)
        interval = None if paired["interval"] is None else [float(x) for x in paired["interval"]]
        move = agreement._number(b - a)
        rows.append({"column": column, "reference": agreement._number(a), "candidate": agreement._number(b)})
        rows[-1].update({"difference": move, "interval": interval})
    return rows


def _criterion(name: str, what: str, value: Any, bar: str, passed: bool, detail: str = "") -> dict[str, Any]:
    return {"name": name, "what": what, "value": value, "bar": bar, "passed": bool(passed), "detail": detail}


def _covers_zero(interval: list[float] | None) -> bool:
    return interval is not None and interval[0] <= 0.0 <= interval[1]


def certify_task(
    task: str,
    pairs: Sequence[tuple[JudgedAnswers, JudgedAnswers]],
    bars: Bars,
    resamples: int,
    seed: int,
    people: Sequence[human_anchor.HumanUnit] | None = None,
) -> dict[str, Any]:
    """One task's certificate: its figures and each bar passed or not (with ``people``, the human anchor's too)."""
    categories = _categories(task)
    paired = [paired_units(task, ref, cand) for ref, cand in pairs]
    images = sorted({p.cluster for verdict_pairs, *_ in paired for p in verdict_pairs})
    pooled = agreement.confusion_table([p for verdict_pairs, *_ in paired for p in verdict_pairs], categories)
    # Every model's interval must cover 0: at 95% together (Bonferroni), so that a judge with no bias at all
    # is not failed one time in four over five models.
    level = 1.0 - (1.0 - intervals.LEVEL) / len(pairs)
    models, tables = [], []
    for (ref, cand), (verdict_pairs, units_a, units_b, left_out) in zip(pairs, paired):
        if not verdict_pairs:  # nothing to agree on: kappa and its interval are undefined
            raise UsageError(
                f"{ref.where} and {cand.where}: model {shown(ref.model)}: no {task} answer has a verdict from both "
                "judges; give runs whose judges each judged at least one answer"
            )
        own = agreement.kappa_with_intervals(agreement.confusion_table(verdict_pairs, categories), resamples, seed)
        metric_tables = {
            name: (
                intervals.cluster_table(units_a[name], categories, images),
                intervals.cluster_table(units_b[name], categories, images),
            )
            for name in JUDGED_METRICS[task]
        }
        tables.append(metric_tables)
        models.append(
            {
                "model": ref.model,
                "answers_sha256": ref.answers,
                "reference": ref.where,
                "candidate": cand.where,
                "units": len(verdict_pairs),
                "left_out": left_out,
                "kappa": own["overall"]["kappa"],
                "kappa_interval": own["overall"]["interval"],
                "raw_agreement": round(100.0 * (1 - own["overall"]["flips"] / len(verdict_pairs)), 2)
                if verdict_pairs
                else None,
                "moves": {name: _moves(*metric_tables[name], level) for name in JUDGED_METRICS[task]},
            }
        )
    columns = _agreement_columns(pooled, resamples, seed)
    ranking: dict[str, Any] = {}
    criteria = [
        _criterion(
            "kappa",
            "Cohen's kappa, every model's verdicts pooled",
            columns["overall"]["kappa"],
            f">= {bars.min_kappa}",
            columns["overall"]["kappa"] is not None and columns["overall"]["kappa"] >= bars.min_kappa,
            "" if columns["overall"]["kappa"] is not None else "undefined: a judge gave one verdict throughout",
        )
    ]
    for name in JUDGED_METRICS[task]:
        overall = [next((r for r in m["moves"][name] if r["column"] == "overall"), None) for m in models]
        moved = [(m["model"], r) for m, r in zip(models, overall) if r is not None]
        if len(pairs) >= 3 and len(moved) == len(pairs):
            tau = agreement.kendall_tau_with_interval(
                [t[name][0] for t in tables], [t[name][1] for t in tables], resamples, seed
            )
            tau["models_in_order"] = [m["model"] for m in models]
            ranking[name] = tau
        tau_value = ranking[name]["tau"] if name in ranking else None
        criteria.append(
            _criterion(
                "tau",
                f"Kendall's tau-b of the models' {name} rankings",
                tau_value,
                f">= {bars.min_tau}",
                tau_value is not None and tau_value >= bars.min_tau,
                "" if name in ranking else f"needs three or more models ({len(pairs)} given)",
            )
        )
        largest = max(moved, key=lambda x: abs(x[1]["difference"]), default=None)
        outside = [model for model, r in moved if not _covers_zero(r["interval"])]
        too_far = [model for model, r in moved if abs(r["difference"]) > bars.max_difference + 1e-9]
        detail = "; ".join(
            part
            for part in (
                f"largest: {shown(largest[0])}" if largest else "no model scored",
                f"over the bar: {', '.join(shown(m) for m in too_far)}" if too_far else "",
                f"interval excludes 0: {', '.join(shown(m) for m in outside)}" if outside else "",
            )
            if part
        )
        criteria.append(
            _criterion(
                "difference",
                f"largest |{name} difference| (points, candidate - reference), every interval covering 0",
                abs(largest[1]["difference"]) if largest else None,
                f"<= {bars.max_difference}",
                bool(moved) and not too_far and not outside,
                detail,
            )
        )
    anchor = None
    if people is not None:
        anchor = human_anchor.task_anchor(task, people, [cand for _, cand in pairs], resamples, seed)
        criteria += human_anchor.anchor_criteria(
            anchor, bars.human_kappa_margin, bars.min_ac1_margin, bars.max_parse_failures
        )
    return {
        "task": task,
        **({"human_anchor": anchor} if anchor is not None else {}),
        "reference_judge": pairs[0][0].judge,
        "candidate_judge": pairs[0][1].judge,
        "models": models,
        "images": len(images),
        "difference_level": round(level, 6),  # each model's interval: 95% for all models together
        "labels": pooled.labels,
        "agreement": columns,
        "ranking": ranking,
        "criteria": criteria,
        "status": "PASS" if all(c["passed"] for c in criteria) else "FAIL",
    }


def certify(
    references: Sequence[JudgedAnswers],
    candidates: Sequence[JudgedAnswers],
    bars: Bars = Bars(),
    resamples: int = intervals.DEFAULT_RESAMPLES,
    seed: int = intervals.DEFAULT_SEED,
    labels: tuple[Sequence[str], str] | None = None,
) -> dict[str, Any]:
    """The certificate of the candidates' judge against the references, every task; PASS when every task passes.

    ``labels`` (labels files, their key): the people's labels of the candidate's answers, the human anchor.
    """
    if not references or not candidates:
        raise UsageError("certify needs reference verdicts (--reference) and the candidate's runs (--candidate)")
    by_task = pair_verdicts(references, candidates)
    people = None if labels is None else human_anchor.read_human_units(labels[0], labels[1], candidates, "--candidate")
    tasks = [certify_task(task, pairs, bars, resamples, seed, people) for task, pairs in sorted(by_task.items())]
    listed = [name for name in asdict(bars) if labels is not None or name not in ANCHOR_BARS]
    anchor_method = (
        ""
        if labels is None
        else f"; the human anchor: kappa, Gwet's AC1 and the constant judges against the people's labels with a "
        f"{human_agreement.METHOD} interval ({human_agreement.MIN_IMAGES}+ images, {human_agreement.MIN_RARER}+ "
        "units of the rarer label)"
    )
    return {
        "format": CERTIFICATE_FORMAT,
        "candidate_judge": tasks[0]["candidate_judge"],
        "reference_judges": sorted({t["reference_judge"] for t in tasks}),
        "status": "PASS" if all(t["status"] == "PASS" for t in tasks) else "FAIL",
        "bars": [{"name": name, "value": getattr(bars, name), "source": BAR_SOURCES[name]} for name in listed],
        **({"labels": {"files": list(labels[0]), "key": labels[1]}} if labels is not None else {}),
        "method": f"Cohen's kappa with a {intervals.METHOD} interval ({resamples} resamples, seed {seed}; "
        f"{agreement.MIN_IMAGES}+ images); score moves: {small_sample.PAIRED_METHOD}, each model's at 1 - 0.05/models (Bonferroni: 95% for all models together); Kendall's tau-b "
        f"(scipy.stats.kendalltau){anchor_method}",
        "settings": {"resamples": resamples, "seed": seed},  # with the bars and sources: all a re-derivation needs
        "tasks": tasks,
    }
