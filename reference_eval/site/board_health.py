"""A sweep cell's model health, read from its verified run: what each reply did, counted over the scored answers.

Every figure is counted from what the run folder records, answer by answer (``reply_details.answer_dicts``:
a VQA question or rotation, a CODIS query, a description), and a figure the run does not record is ``None``
(shown "n/a", never 0):

- ``unparsed``: answers whose choice letter no extractor found (``extracted`` null; recorded by VQA only);
- ``truncated``: replies that stopped at the token limit (``reply.finish_reason`` ``length``; n/a when no
  reply of the run records a finish reason);
- ``empty``: replies with an empty final answer (``answer_status`` ``empty``);
- ``judge_failures``: answers whose judge gave no usable verdict (``judge_error`` set; recorded where an LLM
  or rule judge decides: CODIS and descriptions, not VQA);
- ``refusals``: replies the model API marked as refused (``reply.refusal``, from ``choices[0].message.refusal``,
  kept in predictions.jsonl's ``refusal``; ``verify`` checks the one against the other). Only the ``openai:``
  backend reads that field, from every reply, so a refusal is *recorded* when the run's predictions were made by
  it (``generation.backend`` ``openai``) and counted then (0 is a real 0); for any other backend (``hf:``,
  ``vllm:``, an imported predictions file) it is ``None``. An ``openai:`` run made before cogbench read the
  field counts 0 too: nothing in its files tells the two apart. A refusal beside an empty content is also an
  ``empty`` reply (it scores as one), so the two figures overlap;
- ``latency``: the median and the largest ``seconds`` of predictions.jsonl (the time each query took); ``verify``
  checks the answers of predictions.jsonl against details.jsonl, not these timings.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cogbench.numbers import fixed
from cogbench.reference_eval.answers.reply_details import answer_dicts

FIGURES = ("unparsed", "truncated", "empty", "judge_failures", "refusals")


def _count(units: list[dict[str, Any]], recorded, counted) -> int | None:
    """How many units ``counted`` says, or None when no unit records the field (``recorded``)."""
    if not any(recorded(unit) for unit in units):
        return None
    return sum(1 for unit in units if recorded(unit) and counted(unit))


def _finish_reason(unit: dict[str, Any]) -> Any:
    return (unit.get("reply") or {}).get("finish_reason")


def _records(predictions: Path) -> list[dict[str, Any]]:
    """The lines of a predictions.jsonl (none when it cannot be read)."""
    try:
        lines = predictions.read_text(encoding="utf-8").split("\n")
    except OSError:
        return []
    return [json.loads(line) for line in lines if line.strip()]


def refusals_recorded(records: list[dict[str, Any]]) -> bool:
    """Whether the run's replies record refusals: its predictions were made by the ``openai:`` backend."""
    return any((record.get("generation") or {}).get("backend") == "openai" for record in records)


def latency(records: list[dict[str, Any]]) -> dict[str, float] | None:
    """Median and largest ``seconds`` of predictions.jsonl's lines, or None when they record none."""
    seconds: list[float] = []
    for record in records:
        value = record.get("seconds")
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            seconds.append(float(value))
    if not seconds:
        return None
    seconds.sort()
    middle = len(seconds) // 2
    median = seconds[middle] if len(seconds) % 2 else (seconds[middle - 1] + seconds[middle]) / 2
    return {"median": median, "max": seconds[-1]}


def health(task: str, details: list[dict[str, Any]], predictions: Path) -> dict[str, Any]:
    """Each figure's count, its share of the answers (percent), and the latency; None where not recorded."""
    units = [unit for _, unit, _ in answer_dicts(task, details)]
    records = _records(predictions)
    recorded = refusals_recorded(records)
    counts = {
        "unparsed": _count(units, lambda u: "extracted" in u, lambda u: u["extracted"] is None),
        "truncated": _count(units, lambda u: _finish_reason(u) is not None, lambda u: _finish_reason(u) == "length"),
        "empty": _count(units, lambda u: "answer_status" in u, lambda u: u["answer_status"] == "empty"),
        "judge_failures": _count(units, lambda u: "judge_error" in u, lambda u: u["judge_error"] is not None),
        "refusals": _count(units, lambda u: recorded, lambda u: bool((u.get("reply") or {}).get("refusal"))),
    }
    figures: dict[str, Any] = {"answers": len(units)}
    for name in FIGURES:
        count = counts[name]
        share = None if count is None or not units else 100.0 * count / len(units)
        figures[name] = {"n": count, "pct": share, "t": _text(count, share)}
    timing = latency(records)
    figures["latency"] = timing
    figures["latency_t"] = (
        f"median {fixed(timing['median'], 2)} s, max {fixed(timing['max'], 2)} s" if timing else "n/a"
    )
    return figures


def _text(count: int | None, share: float | None) -> str:
    if count is None or share is None:
        return "n/a"
    return f"{fixed(share, 1)}% ({count})"
