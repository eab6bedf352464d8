"""What a scored run is, read from what it used: its description mode and its judge.

A report or a comparison places runs side by side; the description mode (which
prompt made the descriptions) and the judge (who decided a CoR or an answer was
right, and how its replies were parsed) change the numbers, so both are read
from the run's own record, the prompt templates and judge in ``scores.json``'s
provenance, and are never guessed: a run whose predictions name no prompt
(official-format files) has the mode ``unrecorded``.
"""

from __future__ import annotations

from typing import Any

from cogbench.reference_eval.tasks.prompts import DESCRIPTION_DIRECTED, DESCRIPTION_SPONTANEOUS

UNRECORDED = "unrecorded"
MIXED = "mixed"
MODE_LABEL = {
    "spontaneous": "Mode 1 (spontaneous)",
    "directed": "Mode 2 (directed)",
    "oracle": "annotated description",
    UNRECORDED: "mode not recorded",
    MIXED: "mixed prompts",
}
# Template ids name the mode; a later version (-v2) keeps the stem.
MODE_STEMS = {
    DESCRIPTION_SPONTANEOUS.id.rsplit("-v", 1)[0]: "spontaneous",
    DESCRIPTION_DIRECTED.id.rsplit("-v", 1)[0]: "directed",
}
# The metrics a judge decides (recognition, VQA accuracy and context awareness are rule-based).
# Each metric's name in charts and tables (report charts, report.md's panel section).
METRIC_LABEL = {
    "recognition_micro": "Recognition Score",
    "recognition_macro": "Recognition (macro, extra)",
    "cognition": "Cognition Score",
    "accuracy": "Accuracy (robust extractor)",
    "accuracy_official": "Accuracy (first character)",
    "acc_p": "Acc_p",
    "acc_q": "Acc_q",
    "context_awareness": "Context awareness",
}
JUDGED_METRICS = ("cognition", "acc_p", "acc_q", "output_variability_llm")
# Who judged the papers' published rows: CogBench Table 3 "evaluated by GPT-4"; CODIS Table 3 "assessed by human".
PAPER_JUDGE = {"description": "GPT-4 judge", "codis": "human judges"}


def model_prompt_ids(scores: dict[str, Any], record: dict[str, Any] | None = None) -> list[str]:
    """The inference prompts the predictions name: scores.json's provenance, else the eval run's run.json."""
    templates = (scores.get("provenance") or {}).get("prompt_templates") or []
    ids = {t["id"] for t in templates if t.get("role") == "model" and t.get("id")}
    if not ids and (record or {}).get("prompt_id"):
        ids = {record["prompt_id"]}
    return sorted(ids)


def description_mode(scores: dict[str, Any], record: dict[str, Any] | None = None) -> str:
    """spontaneous | directed | oracle | mixed | unrecorded ("" for other tasks), from the prompts the run used."""
    if scores["task"] != "description":
        return ""
    if scores["predictions"] == "oracle":
        return "oracle"
    ids = model_prompt_ids(scores, record)
    modes = {MODE_STEMS.get(i.rsplit("-v", 1)[0], "other") for i in ids}
    if len(modes) > 1:
        return MIXED
    if modes:
        (mode,) = modes
        return mode if mode != "other" else UNRECORDED
    return (record or {}).get("mode") or UNRECORDED


def judge_record(scores: dict[str, Any]) -> dict[str, Any]:
    """The judge as provenance records it (kind, model, parsing), else scores.json's ``judge``."""
    return (scores.get("provenance") or {}).get("judge") or scores.get("judge") or {"kind": "none"}


def judge_identity(scores: dict[str, Any]) -> tuple[str, str, str]:
    """(kind, model, parsing): what must match for two runs' judged numbers to mean the same."""
    judge = judge_record(scores)
    kind = judge.get("kind", "none")
    model = judge.get("model") or scores.get("judge", {}).get("model") or ""
    parsing = (judge.get("parsing") or scores.get("judge", {}).get("parsing") or "") if kind == "openai" else ""
    return kind, model, parsing


def judge_name(scores: dict[str, Any]) -> str:
    """``openai:MODEL`` / ``rule`` / ``rouge`` ... / ``none``: the judge as leaderboard.csv names it."""
    kind, model, _ = judge_identity(scores)
    return f"{kind}:{model}" if kind in ("openai", "vllm") else kind


LLM_JUDGES = ("openai", "vllm")  # judges that read replies (with a parsing mode); the others run offline


def judge_label(scores: dict[str, Any]) -> str:
    """Short words for tables and legends, by what the judge is: "judge gpt-4o (tolerant parsing)", "judge
    vllm:MODEL (constrained parsing)", "judge panel openai:gpt-4o + rule (tolerant parsing)" (a panel by its
    members), "judge rule (offline)" (only an offline judge); "" for none."""
    kind, model, parsing = judge_identity(scores)
    if kind == "none":
        return ""
    parsing = parsing or judge_record(scores).get("parsing") or ""
    reads = f" ({parsing} parsing)" if parsing else ""
    if kind == "openai":
        return f"judge {model}{reads}"
    if kind == "vllm":
        return f"judge vllm:{model}{reads}"
    if kind == "panel":  # named by its members; rule is its one offline member kind, so it holds an LLM judge
        members = judge_record(scores).get("members") or []
        offline = bool(members) and all(isinstance(m, dict) and m.get("kind") not in LLM_JUDGES for m in members)
        return " ".join(filter(None, ["judge panel", model])) + (" (offline)" if offline else reads)
    return f"judge {kind} (offline)"


def is_judged(scores: dict[str, Any]) -> bool:
    """Whether a judge decided any of the run's metrics."""
    return judge_identity(scores)[0] != "none" and any(m in scores["metrics"] for m in JUDGED_METRICS)


def judge_difference(a: dict[str, Any], b: dict[str, Any]) -> str | None:
    """One phrase naming how two runs' judges differ on the metrics both have judged, or None."""
    shared = [m for m in JUDGED_METRICS if m in a["metrics"] and m in b["metrics"]]
    if not shared or judge_identity(a) == judge_identity(b):
        return None
    kind_a, model_a, parsing_a = judge_identity(a)
    kind_b, model_b, parsing_b = judge_identity(b)
    if (kind_a, model_a) == (kind_b, model_b):
        return f"judge parsing {parsing_a!r} vs {parsing_b!r} ({', '.join(shared)})"
    return f"judge {judge_name(a)!r} vs {judge_name(b)!r} ({', '.join(shared)})"
