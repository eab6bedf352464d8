"""Where two scorings of one item part ways: the pipeline's stages, read from what each details line records.

Pipeline order: items -> prompt -> image -> generation -> output -> parse -> judge -> metric. For an item
both scorings hold, each stage is compared on the fields that stage writes into details.jsonl:

- items: the gold and annotation (CODIS each query's answer, the question and category; VQA the
  answer, choices, category and image; description the annotated entity count and key points);
- prompt: each answer's ``rendered_prompt_sha256``;
- image: the image variants an item was asked on (``eval --image-variant``), each variant image's sha256 and
  the Pillow version that made it; their answers count in the output, parse and judge stages;
- generation: the run's generation settings (the ``eval`` run's run.json ``generation``), counted
  for an item only where its output differs too;
- output: the reply as the model wrote it (``reply.content`` where kept, else the scored text), its
  separate reasoning, compared by sha256 so a run that kept hashes still compares, and the API's
  refusal (``reply.refusal``: a refused reply and an empty one differ here, though both score as empty);
- parse: the scored text (the final answer apart from reasoning), its ``answer_status`` and the
  parsed answer (CODIS ``final_answer``; VQA ``extracted``, ``extracted_official``);
- judge: the verdicts (CODIS ``right``; VQA ``correct``, ``correct_official``; description the
  recognised entities and CoR verdicts) and the judge's raw reply.

A stage a scoring did not record (a null prompt hash: the authors' and VLMEvalKit's files keep no
prompt; no run.json: a ``score`` run keeps no generation settings) is "not recorded" for that item,
never guessed: it is left out of the item's comparison, so the item falls to the next recorded stage.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from cogbench.reference_eval.answers.reply_details import SCORED_FIELD, answer_dicts

STAGES = ("items", "prompt", "image", "generation", "output", "parse", "judge", "metric")
NOT_RECORDED = "not recorded"


@dataclass
class ItemStages:
    """One shared item: the stages where the two scorings differ, and those one of them did not record."""

    differing: list[str] = field(default_factory=list)
    unrecorded: list[str] = field(default_factory=list)

    @property
    def first(self) -> str | None:
        return self.differing[0] if self.differing else None


def _sha(text: Any) -> str | None:
    return None if text is None else hashlib.sha256(str(text).encode("utf-8")).hexdigest()


def _gold(task: str, detail: dict[str, Any], answer: dict[str, Any]) -> Any:
    if task == "codis":
        return (detail.get("category"), detail.get("question"), answer.get("answer"))
    if task == "vqa":
        return (detail.get("category"), detail.get("image_id"), detail.get("answer"), detail.get("choices"))
    cors = [(c.get("category"), c.get("key_point")) for c in detail.get("cognition") or []]
    return (detail["recognition"]["annotated"], cors)


def _raw_output(task: str, answer: dict[str, Any]) -> tuple[str | None, str | None, str | None]:
    """(sha256 of the reply as written, sha256 of its separate reasoning, the API's refusal)."""
    reply = answer.get("reply") or {}
    content = reply.get("content_sha256") or _sha(reply.get("content", answer.get(SCORED_FIELD[task])))
    reasoning = reply.get("reasoning_sha256") or _sha(reply.get("reasoning"))
    return content, reasoning, reply.get("refusal")


def _parsed(task: str, answer: dict[str, Any]) -> Any:
    parsed = (answer.get(SCORED_FIELD[task]), answer.get("answer_status"))
    if task == "codis":
        return (*parsed, answer.get("final_answer"))
    if task == "vqa":
        return (*parsed, answer.get("extracted"), answer.get("extracted_official"))
    return parsed


def _verdict(task: str, detail: dict[str, Any], answer: dict[str, Any]) -> Any:
    if task == "codis":
        return (answer.get("right"), answer.get("judge_reply"))
    if task == "vqa":
        keys = ("correct", "correct_official", "correct_all", "answer_changed")
        return (*(detail.get(k) for k in keys), answer.get("correct"))
    cognition = [c.get("verdict") for c in detail.get("cognition") or []]
    replies = [r.get("reply") for r in detail.get("judge_replies") or []]
    return (detail["recognition"]["recognized"], cognition, replies)


def _images(detail: dict[str, Any]) -> list[tuple[Any, ...]]:
    """The variant images of an item's invariance-probe entries (none without ``--image-variant``)."""
    return [(e.get("variant"), e.get("image_sha256"), e.get("pillow")) for e in detail.get("variants") or []]


def _variant_answers(detail: dict[str, Any]) -> tuple[list[Any], list[Any], list[Any]]:
    """(outputs, parsed answers, verdicts) under each image variant."""
    entries = detail.get("variants") or []
    outputs = [_sha(e.get("response", e.get("outputs"))) for e in entries]
    return outputs, [e.get("extracted") for e in entries], [e.get("correct", e.get("rights")) for e in entries]


def answers_of(task: str, detail: dict[str, Any]) -> dict[Any, dict[str, Any]]:
    return {key: answer for key, answer, _ in answer_dicts(task, [detail])}


def generation_of(record: dict[str, Any] | None) -> dict[str, Any] | None:
    """The run's generation settings, or None where it keeps none (a ``score`` run without run.json)."""
    generation = (record or {}).get("generation")
    return generation if isinstance(generation, dict) and generation else None


def compare_item(
    task: str,
    a: dict[str, Any],
    b: dict[str, Any],
    generation_a: dict[str, Any] | None,
    generation_b: dict[str, Any] | None,
) -> ItemStages:
    """The stages where one item's two details lines differ, in pipeline order."""
    found = ItemStages()
    answers_a, answers_b = answers_of(task, a), answers_of(task, b)
    if set(answers_a) != set(answers_b):  # another set of answers (rotations, queries): another item
        found.differing.append("items")
        return found
    pairs = [(answers_a[key], answers_b[key]) for key in answers_a]
    if any(_gold(task, a, x) != _gold(task, b, y) for x, y in pairs):
        found.differing.append("items")
    prompts = [(x.get("rendered_prompt_sha256"), y.get("rendered_prompt_sha256")) for x, y in pairs]
    if any(None in pair for pair in prompts):
        found.unrecorded.append("prompt")
    elif any(p != q for p, q in prompts):
        found.differing.append("prompt")
    if _images(a) != _images(b):
        found.differing.append("image")
    (outputs_a, parsed_a, verdicts_a), (outputs_b, parsed_b, verdicts_b) = _variant_answers(a), _variant_answers(b)
    output_differs = outputs_a != outputs_b or any(_raw_output(task, x) != _raw_output(task, y) for x, y in pairs)
    if generation_a is None or generation_b is None:
        found.unrecorded.append("generation")
    elif generation_a != generation_b and output_differs:
        found.differing.append("generation")
    if output_differs:
        found.differing.append("output")
    if parsed_a != parsed_b or any(_parsed(task, x) != _parsed(task, y) for x, y in pairs):
        found.differing.append("parse")
    if verdicts_a != verdicts_b or any(_verdict(task, a, x) != _verdict(task, b, y) for x, y in pairs):
        found.differing.append("judge")
    return found


def shown_fields(task: str, detail: dict[str, Any] | None) -> dict[str, Any]:
    """What an item looks like side by side: per answer its gold, output, parsed answer and verdict."""
    if detail is None:
        return {}
    shown = {}
    for key, answer in answers_of(task, detail).items():
        name = f"query {key[1]}" if isinstance(key, tuple) else "answer"
        raw = (answer.get("reply") or {}).get("content", answer.get(SCORED_FIELD[task]))
        shown[name] = {
            "gold": _gold(task, detail, answer),
            "prompt_sha256": (answer.get("rendered_prompt_sha256") or "")[:12] or None,
            "output": raw,
            **({"refusal": answer["reply"]["refusal"]} if "refusal" in (answer.get("reply") or {}) else {}),
            "parsed": _parsed(task, answer),
            "verdict": _verdict(task, detail, answer),
        }
    return json.loads(json.dumps(shown, default=str))
