"""What ``cogbench verify`` re-derives of a judge panel (scores.json ``panel``) from the details.

Per unit (CODIS query, Cognition CoR): each LLM member's verdict from its stored reply (read in the
run's parsing mode), the rule member's from ``rule_right``, and the panel's verdict, held in the
single-judge field, from the members' by ``PANEL_RULE``. Then each member's scores, recomputed from
the details with that member's verdicts in the panel's place, and the agreement figures (alpha, each
pair's kappa and interval, the error correlation and the effective number of judges) computed again.
"""

from __future__ import annotations

import copy
from typing import Any

from cogbench.reference_eval.judges import codis as codis_judge
from cogbench.reference_eval.judges import cognition as cognition_judge
from cogbench.reference_eval.judges.panel import panel_verdict
from cogbench.reference_eval.metrics import intervals
from cogbench.reference_eval.metrics.panel_agreement import PanelItem, panel_agreement
from cogbench.reference_eval.verifying.verify_result import TaskData, Verification
from cogbench.schemas.vocabulary import CODIS_CATEGORIES, COGBENCH_CATEGORIES

EXACT = 1e-4  # agreement figures are kept to 4 decimals


def _units(task: str, detail: dict[str, Any]) -> list[tuple[str, dict[str, Any], str, str]]:
    """(label, unit, verdict field, category) of each judged unit of one details line."""
    if task == "codis":
        return [(f"query {q['query']}", q, "right", detail["category"]) for q in detail["queries"]]
    return [(f"CoR {c.get('category')} {c.get('index')}", c, "verdict", c["category"]) for c in detail["cognition"]]


def _reply_problems(task: str, detail: dict[str, Any], names: list[str], parsing: str) -> list[str]:
    """Each member's verdict against what its stored reply reads as (the rule member against rule_right)."""
    problems = []
    if task == "codis":
        for q in detail["queries"]:
            for member in q.get("panel") or []:
                reply = member.get("judge_reply")
                if member["judge"] == "rule":
                    read = q.get("rule_right")
                elif isinstance(reply, str):
                    read = codis_judge.parse_verdict(reply, parsing)
                else:
                    read = None
                if member["right"] != read:
                    problems.append(
                        f"query {q['query']}: {member['judge']} verdict right={member['right']}, "
                        + ("rule_right says" if member["judge"] == "rule" else f"its judge reply {reply!r} reads")
                        + f" {read}"
                    )
        return problems
    for name in names:
        for figure in (8, 9):
            cors = [c for c in detail["cognition"] if c["figure"] == figure]
            replies = [r for r in detail.get("panel_replies") or [] if r["judge"] == name and r["figure"] == figure]
            if not cors or not replies:
                continue
            reply = replies[0]["reply"]
            read = cognition_judge.parse_verdicts(reply, len(cors), parsing) if isinstance(reply, str) else None
            given = [next((m["verdict"] for m in c.get("panel") or [] if m["judge"] == name), None) for c in cors]
            if given != (read or [None] * len(cors)):
                problems.append(f"figure {figure}: {name} verdicts {given}, its judge reply {reply!r} reads {read}")
    return problems


def check_panel(data: TaskData, result: Verification) -> None:
    """The panel's verdicts, its members' verdicts and scores, and their agreement, against the details."""
    scores, task, where = data.scores, data.scores["task"], str(data.scores_path)
    panel = scores.get("panel")
    result.same(f"{where}: judge.kind (a panel block)", scores["judge"]["kind"] == "panel", panel is not None)
    if panel is None:
        return
    names, parsing = panel["members"], scores["judge"].get("parsing", "tolerant")
    recorded = [m.get("name") for m in ((scores.get("provenance") or {}).get("judge") or {}).get("members", [])]
    result.same(f"{where}: provenance.judge.members (panel.members)", recorded, names)
    categories = CODIS_CATEGORIES if task == "codis" else COGBENCH_CATEGORIES
    items, views = [], {name: copy.deepcopy(data.details) for name in names}
    for number, detail in enumerate(data.details):
        at, item = f"{data.where}: item {detail['item_id']}", [detail["item_id"]]
        for problem in _reply_problems(task, detail, names, parsing):
            result.problem(at, problem, item)
        for unit_number, (label, unit, field, category) in enumerate(_units(task, detail)):
            members = unit.get("panel") or []
            result.same(f"{at}: {label}: panel members", [m.get("judge") for m in members], names, item)
            if [m.get("judge") for m in members] != names:
                continue
            verdicts = tuple(m[field] for m in members)
            result.same(f"{at}: {label}: panel verdict ({panel['rule']})", unit[field], panel_verdict(verdicts), item)
            items.append(
                PanelItem(detail.get("image_id", detail["item_id"]), category, verdicts, panel_verdict(verdicts))
            )
            for name, verdict in zip(names, verdicts):
                _units(task, views[name][number])[unit_number][1][field] = verdict
    for name in names:
        tables = intervals.metric_tables(task, views[name], categories)
        for metric, stated in (panel["metrics"].get(name) or {}).items():
            if metric not in tables:
                result.state(f"panel.metrics.{name}.{metric} (no per-item record to recompute it from)")
                continue
            for column, value in zip(tables[metric].columns, tables[metric].pooled()):
                key = "overall" if column == "overall" else f"per_category.{column}"
                own = stated.get("overall") if column == "overall" else (stated.get("per_category") or {}).get(column)
                result.compare(f"{where}: panel.metrics.{name}.{metric}.{key}", own, float(value))
    settings = scores.get("intervals") or {}
    again = panel_agreement(
        names,
        items,
        categories,
        "panel",
        settings.get("resamples", intervals.DEFAULT_RESAMPLES),
        settings.get("seed", intervals.DEFAULT_SEED),
    )
    _compare_tree(f"{where}: panel.agreement", panel["agreement"], again, result)


def _compare_tree(where: str, stated: Any, derived: Any, result: Verification) -> None:
    """Numbers compared to 4 decimals, everything else exactly, leaf by leaf."""
    if isinstance(derived, dict) and isinstance(stated, dict):
        for key in derived:
            _compare_tree(f"{where}.{key}", stated.get(key), derived[key], result)
    elif isinstance(derived, list) and isinstance(stated, list) and len(stated) == len(derived):
        for number, (a, b) in enumerate(zip(stated, derived)):
            _compare_tree(f"{where}[{number}]", a, b, result)
    elif isinstance(derived, (int, float)) and not isinstance(derived, bool):
        result.compare(where, stated, derived, tol=EXACT)
    else:
        result.same(where, stated, derived)
