"""Per item, the fields of a details line that follow from its other fields, recomputed.

This is what lets ``cogbench verify`` name the item behind a differing number: a parsed answer
that is not what the output parses to, a verdict the rule judge would not give, an LLM judge's
verdict that is not what its stored raw reply reads as (read by the parser scoring used, in the
run's parsing mode), a CODIS ``outputs_differ`` or a VQA ``correct`` that its answers contradict, a VQA
robust letter that its response and kept option texts do not give, a Recognition flag its similarity contradicts.
Nothing here calls a judge or a model. Runs written before replies were kept are not checked
against them.
"""

from __future__ import annotations

from typing import Any

from cogbench.reference_eval.judges import codis as codis_judge
from cogbench.reference_eval.judges import cognition as cognition_judge
from cogbench.reference_eval.judges.verdicts import UNSCORED
from cogbench.reference_eval.metrics import codis as codis_metrics
from cogbench.reference_eval.metrics import recognition as recognition_metrics
from cogbench.reference_eval.metrics import vqa as vqa_metrics


def _llm_verdict(query: dict[str, Any], parsing: str) -> list[str]:
    """A CODIS query's LLM verdict against its stored reply (none when the run kept no reply)."""
    if "judge_reply" not in query:
        return []
    reply = query["judge_reply"]
    read = codis_judge.parse_verdict(reply, parsing) if isinstance(reply, str) else None
    problems = _unscored_mark(f"query {query['query']}", query, isinstance(reply, str) and read is None, parsing)
    if query["right"] == read:
        return problems
    said = f"its judge reply {reply!r} reads {read}" if isinstance(reply, str) else "the judge gave no reply"
    return [*problems, f"query {query['query']}: verdict right={query['right']}, {said}"]


def _unscored_mark(unit: str, entry: dict[str, Any], unread: bool, parsing: str) -> list[str]:
    """Constrained parsing: a unit is marked unscored exactly when its judge replied and the reply is no label."""
    marked = entry.get("judge_error") == UNSCORED
    if marked == (unread and parsing == "constrained"):
        return []
    return [f"{unit}: marked unscored is {marked}, its judge reply {'is' if unread else 'is not'} unread"]


def _judge_error(unit: str, entry: dict[str, Any], field: str, judge_kind: str) -> list[str]:
    """``judge_error`` as scoring sets it: none where no judge was asked (rule); a panel's, its first
    member's error; a single LLM judge's, there exactly when the unit has no verdict (its text, a
    failed request's message, is the judge client's and read as stated)."""
    if "judge_error" not in entry:
        return []
    error = entry["judge_error"]
    if isinstance(entry.get("panel"), list):
        first = next((m.get("judge_error") for m in entry["panel"] if m.get("judge_error")), None)
        return [] if error == first else [f"{unit}: judge_error {error!r}, its panel members' first error is {first!r}"]
    if judge_kind not in ("openai", "vllm"):
        return [] if error is None else [f"{unit}: judge_error {error!r}, but no LLM judge was asked"]
    if (error is None) == (entry[field] is not None) and (error is None or (isinstance(error, str) and error)):
        return []
    return [f"{unit}: judge_error {error!r} with verdict {entry[field]}: an error is there exactly when no verdict is"]


def _codis(detail: dict[str, Any], rule_judged: bool, parsing: str | None, judge_kind: str = "rule") -> list[str]:
    problems = []
    queries = sorted(detail["queries"], key=lambda q: q["query"])
    outputs = [q.get("output") for q in queries]
    if all(isinstance(o, str) for o in outputs) and detail["outputs_differ"] != codis_metrics.outputs_differ(*outputs):
        problems.append(f"outputs_differ is {detail['outputs_differ']}, its outputs give the opposite")
    for q in queries:
        problems += _judge_error(f"query {q['query']}", q, "right", judge_kind)
        if parsing is not None:
            problems += _llm_verdict(q, parsing)
        if not isinstance(q.get("output"), str):
            continue
        if "final_answer" in q and q["final_answer"] != codis_metrics.final_answer(q["output"]):
            problems.append(f"query {q['query']}: final_answer {q['final_answer']!r} is not what its output parses to")
        answers = [x.get("answer") for x in queries]
        if not all(isinstance(a, str) for a in answers):
            continue
        rule = codis_judge.rule_verdict(q["output"], answers[q["query"] - 1], answers[2 - q["query"]])
        if "rule_right" in q and q["rule_right"] != rule:
            problems.append(f"query {q['query']}: rule_right is {q['rule_right']}, the rule judge says {rule}")
        if rule_judged and q["right"] != rule:
            problems.append(f"query {q['query']}: verdict right={q['right']}, the rule judge says {rule}")
    return problems


def _vqa(detail: dict[str, Any]) -> list[str]:
    if "rotations" in detail or not isinstance(detail.get("answer"), str):
        return []
    problems = []
    response = detail.get("response")
    choices = detail.get("choices")
    if isinstance(response, str) and isinstance(choices, list):  # the robust letter, from the option texts kept
        robust = vqa_metrics.extract_robust(response, choices)
        if detail.get("extracted") != robust:
            problems.append(f"extracted {detail.get('extracted')!r} is not what the response and its choices give")
    if isinstance(response, str) and detail.get("extracted_official") != vqa_metrics.extract_official(response):
        problems.append(f"extracted_official {detail.get('extracted_official')!r} is not what the response parses to")
    for flag, extracted in (("correct", "extracted"), ("correct_official", "extracted_official")):
        if extracted in detail and detail[flag] != (detail[extracted] == detail["answer"]):
            problems.append(
                f"{flag} is {detail[flag]}, but {extracted} {detail[extracted]!r} vs answer {detail['answer']!r}"
            )
    return problems


def _cognition(detail: dict[str, Any], parsing: str) -> list[str]:
    """Each CoR's LLM verdict against the reply of its judge call (Figure 8 or 9), read by position."""
    problems = []
    for call in detail.get("judge_replies") or []:
        cors = [c for c in detail.get("cognition") or [] if c.get("figure") == call.get("figure")]
        reply = call.get("reply")
        read = cognition_judge.parse_verdicts(reply, len(cors), parsing) if isinstance(reply, str) else None
        for position, cor in enumerate(cors):
            unit = f"CoR {cor['category']} {cor.get('index')}"
            problems += _unscored_mark(unit, cor, isinstance(reply, str) and read is None, parsing)
            expected = read[position] if read is not None else None
            if cor["verdict"] != expected:
                said = f"reply reads {expected}" if isinstance(reply, str) else "call got no reply"
                said = f"its Figure {call['figure']} judge {said}"
                problems.append(f"CoR {cor['category']} {cor.get('index')}: verdict {cor['verdict']}, {said}")
    return problems


def _description(detail: dict[str, Any], parsing: str | None, judge_kind: str = "none") -> list[str]:
    recognition = detail["recognition"]
    matches = recognition.get("matches")
    problems = [
        problem
        for cor in detail.get("cognition") or []
        for problem in _judge_error(f"CoR {cor.get('category')} {cor.get('index')}", cor, "verdict", judge_kind)
    ]
    problems += _cognition(detail, parsing) if parsing is not None else []
    if not isinstance(matches, list):
        return problems
    if recognition["annotated"] != len(matches):
        problems.append(f"recognition.annotated is {recognition['annotated']}, {len(matches)} entities are listed")
    if recognition["recognized"] != sum(bool(m.get("recognized")) for m in matches):
        problems.append(f"recognition.recognized is {recognition['recognized']}, its matches say otherwise")
    for match in matches:
        similarity = match.get("similarity")
        # similarity is kept to 6 decimals: within that of the threshold the flag cannot be re-derived
        threshold = recognition_metrics.THRESHOLD
        if (
            isinstance(similarity, (int, float))
            and abs(similarity - threshold) > 1e-6
            and match.get("recognized") != (similarity > threshold)
        ):
            problems.append(
                f"entity {match.get('entity')!r}: recognized {match.get('recognized')}, its similarity "
                f"{similarity} vs the threshold {recognition_metrics.THRESHOLD} says otherwise"
            )
    return problems


def item_problems(
    task: str, details: list[dict[str, Any]], judge_kind: str, parsing: str = "tolerant"
) -> dict[str, list[str]]:
    """``{item_id: [problem, ...]}`` for every item whose derived fields disagree with its own data.
    ``parsing``: the LLM judge's parsing mode (scores.json ``judge.parsing``)."""
    llm = parsing if judge_kind in ("openai", "vllm") else None
    found = {}
    for detail in details:
        if task == "codis":
            problems = _codis(detail, judge_kind == "rule", llm, judge_kind)
        elif task == "vqa":
            problems = _vqa(detail)
        else:
            problems = _description(detail, llm, judge_kind)
        if problems:
            found[detail["item_id"]] = problems
    return found
