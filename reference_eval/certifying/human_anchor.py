"""``judges validate`` and the human anchor of ``judges certify``: judges against people's labels.

People's labels (``labelling.labels_format``: one line per unit and labeller, roles A, B and
adjudicator) are joined through the blinding key to the runs whose answers they labelled, and
from them to any judge's verdicts of those answers (``verdict_archive.JudgedAnswers``, read from
verified run folders). A unit's people's label is A's alone, A's and B's where they agree, and the
adjudicator's where they differ; a unit where they differ with no adjudicator's label is left
out and counted. Per task and category (``metrics.human_agreement``): people against people on
the shared units (A and B), each judge against the people's labels, the constant judges, the
share of units the judge gave no verdict, and over three or more models Kendall's tau-b of the
models' scores by the people and by the judge, on the labelled units.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cogbench.errors import UsageError, echoed, locate, shown
from cogbench.reference_eval.certifying.verdict_archive import JudgedAnswers, Key
from cogbench.reference_eval.labelling.labels_format import Label, read_key, read_labels
from cogbench.reference_eval.metrics import agreement, human_agreement, intervals
from cogbench.schemas.vocabulary import CODIS_CATEGORIES, COGBENCH_CATEGORIES

VALIDATION_FORMAT = "cogbench judge validation 1"
ROLES = ("A", "B", "adjudicator")


@dataclass
class HumanUnit:
    """One labelled unit: whose answers, where (image, category), each role's label and where it was read."""

    task: str
    answers: str  # provenance.answers_sha256
    key: Key
    image: str
    category: str
    labels: dict[str, Label] = field(default_factory=dict)  # role -> label

    def label(self) -> int | None:
        """The people's label: A's, A's and B's where they agree, else the adjudicator's (None: none)."""
        a, b, judge = (self.labels.get(role) for role in ROLES)
        if a is None:
            return None
        if b is None or b.label == a.label:
            return a.label
        return None if judge is None else judge.label


def join_labels(
    labels: Sequence[Label], key_path: Path, judged: Sequence[JudgedAnswers], option: str = "--run"
) -> list[HumanUnit]:
    """Every label on a unit of the given runs' answers; one ``error:`` line naming labels file, line and field."""
    sample, entries = read_key(key_path)
    by_answers: dict[tuple[str, str], JudgedAnswers] = {(j.task, j.answers): j for j in judged}
    units: dict[tuple[str, str, Key], HumanUnit] = {}
    for label in labels:
        file, line = label.place
        if label.sample != sample:
            raise UsageError(
                f"{locate(file, line, 'sample')}: {echoed(label.sample[:12])}... is not the sample of the key "
                f"{key_path} ({sample[:12]}...); give the key written with these labels' page"
            )
        entry = entries.get(label.answers)
        if entry is None:
            raise UsageError(f"{locate(file, line, 'answers')}: {echoed(label.answers)} is not in the key {key_path}")
        if entry.task != label.task:
            raise UsageError(
                f"{locate(file, line, 'task')}: {echoed(label.task)}, but the key gives {echoed(entry.task)}"
            )
        run = by_answers.get((label.task, entry.answers_sha256))
        if run is None:
            raise UsageError(
                f"{locate(file, line, 'answers')}: no {option} holds these answers ({label.task}, model "
                f"{shown(entry.model)}, answers_sha256 {entry.answers_sha256[:12]}; e.g. {entry.run})"
            )
        found = run.units.get(label.key)
        if found is None:
            items = {k[0] for k in run.units}
            missing = "item_id" if label.item_id not in items else "query"
            if missing == "query" and not any(k[:2] == label.key[:2] for k in run.units):
                missing = "category"
            raise UsageError(
                f"{locate(file, line, missing)}: {echoed(getattr(label, missing))}: the unit "
                f"{'/'.join(shown(part, 40) for part in label.key)} is not one of {run.where}'s judged units"
            )
        unit = units.setdefault(
            (label.task, entry.answers_sha256, label.key),
            HumanUnit(label.task, entry.answers_sha256, label.key, found[0], found[1]),
        )
        other = unit.labels.get(label.role)
        if other is not None:
            raise UsageError(
                f"{locate(file, line, 'role')}: unit {label.unit} has a role {label.role} label already "
                f"({other.where}, by {echoed(other.labeller)}); one label per role and unit"
            )
        unit.labels[label.role] = label
    for unit in units.values():
        if "A" not in unit.labels:
            file, line = next(iter(unit.labels.values())).place
            raise UsageError(
                f"{locate(file, line, 'role')}: a role A label of this unit is missing (A labels every unit)"
            )
    return list(units.values())


def read_human_units(
    label_files: Sequence[str], key_path: str, judged: Sequence[JudgedAnswers], option: str = "--run"
) -> list[HumanUnit]:
    """The labels files read, checked and joined to the runs' units."""
    for path in [*label_files, key_path]:
        if not Path(path).is_file():
            raise UsageError(f"{path}: no such file")
    labels = [label for path in label_files for label in read_labels(Path(path))]
    return join_labels(labels, Path(key_path), judged, option)


def check_runs_labelled(units: Sequence[HumanUnit], judged: Sequence[JudgedAnswers]) -> None:
    """Every run given holds answers the people labelled (a run with none would add nothing)."""
    labelled = {(u.task, u.answers) for u in units}
    for run in judged:
        if (run.task, run.answers) not in labelled:
            raise UsageError(
                f"--run {run.where}: no label is of these answers ({run.task}, model {shown(run.model)}); give the "
                "runs of the labelled answers"
            )


def _categories(task: str) -> list[str]:
    return list(CODIS_CATEGORIES if task == "codis" else COGBENCH_CATEGORIES)


def _sample(units: Sequence[HumanUnit]) -> dict[str, Any]:
    labelled = [u for u in units if u.label() is not None]
    return {
        "units_labelled": len(units),
        "units_shared": sum("B" in u.labels for u in units),
        "units_adjudicated": sum("B" in u.labels and u.labels["B"].label != u.labels["A"].label for u in units),
        "excluded_disagreement": len(units) - len(labelled),  # A and B differ, no adjudicator's label
        "units": len(labelled),
        "images": len({u.image for u in labelled}),
        "models": len({u.answers for u in labelled}),
        "labellers": sorted({label.labeller for u in units for label in u.labels.values()}),
    }


def _judge_figures(
    task: str, units: Sequence[HumanUnit], runs: Sequence[JudgedAnswers], resamples: int, seed: int
) -> dict[str, Any]:
    """One judge against the people's labels of one task, its verdicts read from ``runs`` (one per model)."""
    verdicts = {(r.answers, k): v[2] for r in runs for k, v in r.units.items()}
    pairs, per_model, no_verdict = [], {}, 0
    for u in units:
        label, verdict = u.label(), verdicts.get((u.answers, u.key))
        if label is None:
            continue
        if verdict is None:
            no_verdict += 1
            continue
        pairs.append(agreement.VerdictPair(u.image, u.category, label, verdict))
        per_model.setdefault(u.answers, []).append(pairs[-1])
    categories = _categories(task)
    judged = sum(len(r.units) for r in runs)
    failures = sum(v[2] is None for r in runs for v in r.units.values())
    figures: dict[str, Any] = {
        "judge": runs[0].judge,
        "runs": [r.where for r in runs],
        "units": len(pairs),
        "images": len({p.cluster for p in pairs}),
        "no_verdict_labelled": no_verdict,  # labelled units the judge gave no verdict: left out of the agreement
        "parse_failures": {
            "units": judged,
            "no_verdict": failures,
            "share": round(100.0 * failures / judged, 4) if judged else None,
        },
        "agreement": human_agreement.agreement_columns(human_agreement.table(pairs, categories), resamples, seed)
        if pairs
        else {},
        "ranking": None,
    }
    if len(per_model) >= 3:
        order = sorted(per_model)
        images = sorted({p.cluster for p in pairs})
        people = [
            intervals.cluster_table(
                [intervals.Unit(p.cluster, p.category, float(p.a)) for p in per_model[m]], categories, images
            )
            for m in order
        ]
        judge = [
            intervals.cluster_table(
                [intervals.Unit(p.cluster, p.category, float(human_agreement.binary(p.b))) for p in per_model[m]],
                categories,
                images,
            )
            for m in order
        ]
        tau = agreement.kendall_tau_with_interval(people, judge, resamples, seed)
        model_of = {r.answers: r.model for r in runs}
        tau["models_in_order"] = [model_of[m] for m in order]
        tau["units_per_model"] = [len(per_model[m]) for m in order]
        figures["ranking"] = tau
    return figures


def validate(units: Sequence[HumanUnit], judged: Sequence[JudgedAnswers], resamples: int, seed: int) -> dict[str, Any]:
    """Per task: the sample, people against people, then each judge (its runs grouped by judge label)."""
    tasks = []
    for task in sorted({u.task for u in units}):
        mine = [u for u in units if u.task == task]
        labelled = {u.answers for u in mine}
        shared = [
            agreement.VerdictPair(u.image, u.category, u.labels["A"].label, u.labels["B"].label)
            for u in mine
            if "B" in u.labels
        ]
        judges: dict[str, list[JudgedAnswers]] = {}
        for j in judged:
            if j.task == task and j.answers in labelled:
                judges.setdefault(j.judge, []).append(j)
        tasks.append(
            {
                "task": task,
                "sample": _sample(mine),
                "human_human": {
                    "units": len(shared),
                    "images": len({p.cluster for p in shared}),
                    "agreement": human_agreement.agreement_columns(
                        human_agreement.table(shared, _categories(task)), resamples, seed
                    )
                    if shared
                    else {},
                },
                "judges": [_judge_figures(task, mine, runs, resamples, seed) for _, runs in sorted(judges.items())],
            }
        )
    return {
        "format": VALIDATION_FORMAT,
        "method": f"Cohen's kappa, Gwet's AC1, PABAK and the constant judges' AC1, each with a {human_agreement.METHOD} "
        f"interval ({resamples} resamples, seed {seed}; {human_agreement.MIN_IMAGES}+ images and "
        f"{human_agreement.MIN_RARER}+ units of the rarer label); Kendall's tau-b of the models' scores "
        f"(scipy.stats.kendalltau; its {intervals.METHOD} interval from {agreement.MIN_IMAGES} images)",
        "settings": {"resamples": resamples, "seed": seed},
        "tasks": tasks,
    }


def _criterion(name: str, what: str, value: Any, bar: str, passed: bool, detail: str = "") -> dict[str, Any]:
    return {"name": name, "what": what, "value": value, "bar": bar, "passed": bool(passed), "detail": detail}


EPSILON = 1e-9  # the figures are rounded to 4 decimals: a value on its bar passes whatever the binary sum says


def anchor_criteria(
    anchor: dict[str, Any], human_kappa_margin: float, min_ac1_margin: float, max_parse_failures: float
) -> list[dict[str, Any]]:
    """The human anchor's three bars for one task's figures (``task_anchor``)."""
    judge = anchor.get("judge") or {}
    people = ((anchor.get("human_human") or {}).get("agreement") or {}).get("overall") or {}
    overall = (judge.get("agreement") or {}).get("overall") or {}
    human_kappa, interval = people.get("kappa"), overall.get("kappa_interval")
    lower = interval[0] if interval else None
    if not judge:
        why = "no people's labels of this task's answers"
    elif human_kappa is None:
        why = "no people-people kappa: no unit labelled by A and B" if not people else "people-people kappa undefined"
    elif lower is None:
        why = (
            f"no interval: {overall.get('no_interval') or 'kappa undefined'}" if overall else "no labelled unit judged"
        )
    else:
        why = ""
    floor = None if human_kappa is None else round(human_kappa - human_kappa_margin, 4)
    kappa_bar = f">= people-people kappa - {human_kappa_margin:g}" + ("" if floor is None else f" = {floor:g}")
    margin = overall.get("ac1_margin")
    constants = f"always right {overall.get('always_right_ac1')}, always wrong {overall.get('always_wrong_ac1')}"
    failures = (judge.get("parse_failures") or {}).get("share")
    counted = judge.get("parse_failures") or {}
    return [
        _criterion(
            "human_kappa",
            "lower end of the 95% interval of kappa against the people's labels",
            lower,
            kappa_bar,
            not why and lower >= human_kappa - human_kappa_margin - EPSILON,
            why
            or f"kappa {overall.get('kappa')}, people-people kappa {human_kappa} ({people.get('units')} units); "
            f"{overall.get('units')} units, {overall.get('images')} images",
        ),
        _criterion(
            "ac1_margin",
            "Gwet's AC1 against the people's labels minus the better constant judge's",
            margin,
            f">= {min_ac1_margin:g}",
            margin is not None and margin >= min_ac1_margin - EPSILON,
            f"AC1 {overall.get('ac1')}; {constants}" if overall else "no labelled unit judged",
        ),
        _criterion(
            "parse_failures",
            "share of the judge's units with no verdict (%)",
            failures,
            f"<= {max_parse_failures:g}",
            failures is not None and failures <= max_parse_failures + EPSILON,
            f"{counted.get('no_verdict')} of {counted.get('units')} units, every model's run" if counted else "",
        ),
    ]


def task_anchor(
    task: str, units: Sequence[HumanUnit], runs: Sequence[JudgedAnswers], resamples: int, seed: int
) -> dict[str, Any]:
    """certify's human anchor of one task: the sample, people against people, the candidate against the people."""
    (figures,) = validate([u for u in units if u.task == task], runs, resamples, seed)["tasks"] or [None]
    if figures is None:
        return {"sample": None, "human_human": None, "judge": None}
    return {
        "sample": figures["sample"],
        "human_human": figures["human_human"],
        "judge": figures["judges"][0] if figures["judges"] else None,
    }
