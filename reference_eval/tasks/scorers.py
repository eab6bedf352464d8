"""One scorer per task: dataset rows + predictions (+ a judge) -> metrics, per-item details, counts.

``scoring.run_scoring`` reads the inputs, picks the scorer from ``SCORERS`` and
writes the run; the scorers only compute. Each follows its paper: the metrics
themselves are in ``metrics/`` and the judges in ``judges/``. ``options`` is
the run's ``scoring.ScoreOptions`` (the scorers read ``spacy_model``,
``embedder``, ``embed_batch_size`` and ``judge_parsing``).

An LLM judge's raw reply goes into the details beside the verdict read from it (CODIS: each
query's ``judge_reply``; Description: ``judge_replies``, one per judge call), with the sha256 of
the judge prompt (its key in the verdict cache), so ``verify`` re-reads every verdict offline.
The rule judge has no reply: ``judge_reply`` is null and ``rule_right`` is its verdict.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cogbench.reference_eval.judges import codis as codis_judge
from cogbench.reference_eval.judges import cognition as cognition_judge
from cogbench.reference_eval.judges import panel as judge_panel
from cogbench.reference_eval.judges.llm import LLMJudge, prompt_sha256
from cogbench.reference_eval.judges.verdicts import UNSCORED
from cogbench.reference_eval.metrics import codis as codis_metrics
from cogbench.reference_eval.metrics import cognition as cognition_metrics
from cogbench.reference_eval.metrics import recognition, vqa
from cogbench.reference_eval.metrics.aggregate import by_category, percent
from cogbench.reference_eval.metrics.panel_agreement import PanelItem
from cogbench.reference_eval.run import provenance
from cogbench.reference_eval.run.completeness import mark_coverage
from cogbench.reference_eval.tasks.probes import circular_vqa
from cogbench.schemas.vocabulary import CHOICE_COLUMNS, CODIS_CATEGORIES, COGBENCH_CATEGORIES


@dataclass
class TaskResult:
    """What a task scorer hands back: metrics in the scores.json shape, per-item details, counts."""

    metrics: dict[str, dict[str, Any]]
    details: list[dict[str, Any]]
    counts: dict[str, Any] = field(default_factory=dict)
    judge_agreement: float | None = None
    parsing_comparison: dict[str, Any] | None = None  # the other parsing mode's numbers, when they differ
    failure_errors: list[str] = field(default_factory=list)  # one per unit without a verdict
    models: dict[str, Any] = field(default_factory=dict)  # models the metrics used (spaCy, embedder), for provenance
    panel: dict[str, Any] | None = None  # a judge panel's members' scores and agreement (scores.json ``panel``)


def score_description(all_rows, outputs, options, judge: LLMJudge | None) -> TaskResult:
    rows = [row for row in all_rows if row["image_id"] in outputs]
    descriptions = [outputs[row["image_id"]] for row in rows]
    loaded = options.loaded_models
    if loaded is None or (loaded.spacy_model, loaded.embedder_name) != (options.spacy_model, options.embedder):
        loaded = recognition.check_models(options.spacy_model, options.embedder)
    nlp, embedder = loaded.nlp, loaded.embedder
    models = {
        "spacy": provenance.spacy_provenance(nlp, options.spacy_model),
        "embedder": provenance.embedder_provenance(options.embedder, embedder),
    }
    matches = recognition.recognition_matches(
        nlp, embedder, [row["entities"] for row in rows], descriptions, options.embed_batch_size
    )
    scores = recognition.recognition_scores(matches)
    metrics = {name: {"overall": value, "per_category": {}} for name, value in scores.items()}
    details = [
        {
            "item_id": row["image_id"],
            "description": text,  # the model's output (the annotated description for --oracle)
            "recognition": {
                "annotated": len(image_matches),
                "recognized": sum(m.recognized for m in image_matches),
                "matches": [m.__dict__ for m in image_matches],
            },
        }
        for row, text, image_matches in zip(rows, descriptions, matches)
    ]
    counts: dict[str, Any] = {
        "items": len(rows),
        "entities": sum(len(m) for m in matches),
        "entities_recognized": sum(x.recognized for m in matches for x in m),
    }
    entity_total = sum(len(row["entities"]) for row in all_rows)
    for name in scores:
        mark_coverage(metrics[name], counts["entities"], counts["entities"], entity_total, "entities")
    result = TaskResult(metrics, details, counts, models=models)
    if judge is not None:
        _judge_cognition(judge, rows, descriptions, all_rows, options, result)
    return result


def _judge_replies(judge: LLMJudge, prompts: list[str], parse, mode: str):
    """Per prompt: the verdict in ``mode``, the verdict in the other mode, the error (None if judged;
    ``UNSCORED`` for a reply constrained parsing does not read) and the raw reply (an unusable one too;
    None when none came)."""
    other = "tolerant" if mode == "official" else "official"
    # Constrained parsing: a reply that is no official label is final, counted once as unscored, never retried
    # (a retry would draw another reply to the same prompt, and a failure only after every attempt).
    final = (lambda prompt, reply: True) if mode == "constrained" else None
    replies = judge.ask(prompts, accept=final or (lambda prompt, reply: parse(prompt, reply, mode) is not None))
    results = []
    for prompt, reply in zip(prompts, replies):
        text = reply.text if reply.text is not None else reply.unusable_text
        chosen = parse(prompt, reply.text, mode) if reply.text is not None else None
        error = UNSCORED if mode == "constrained" and chosen is None and text is not None else reply.error
        results.append((chosen, parse(prompt, text, other) if text is not None else None, error, text))
    return other, results


NO_CORS = "reply does not give N. [0|1] for every key point"


def _judge_cognition(judge, rows, descriptions, all_rows, options, result: TaskResult) -> None:
    """Cognition Score (CogBench Section 3.2.1) with the LLM judge, added to ``result``."""
    calls = [
        c
        for row, text in zip(rows, descriptions)
        for c in cognition_judge.judge_calls(row["image_id"], row["cors"], text)
    ]
    sizes = {c.prompt: len(c.items) for c in calls}

    def parse(prompt: str, reply: str, mode: str) -> list[int] | None:
        return cognition_judge.parse_verdicts(reply, sizes[prompt], mode)

    members = None
    if isinstance(judge, judge_panel.Panel):  # the panel's verdicts in the judge's fields, each member's beside them
        members = judge_panel.ask_panel(judge, [c.prompt for c in calls], parse, options.judge_parsing, {}, NO_CORS)
        other, replies = "", [judge_panel.call_verdicts(members, n, len(c.items)) for n, c in enumerate(calls)]
    else:
        other, replies = _judge_replies(judge, [c.prompt for c in calls], parse, options.judge_parsing)
    member_cors: list[tuple[cognition_metrics.CorItem, list[Any]]] = []
    verdicts: list[tuple[cognition_metrics.CorItem, int | None]] = []
    alternative: list[tuple[cognition_metrics.CorItem, int | None]] = []
    per_image: dict[str, list[dict[str, Any]]] = {}
    raw: dict[str, list[dict[str, Any]]] = {}
    panel_raw: dict[str, list[dict[str, Any]]] = {}
    for number, (call, (parsed, parsed_other, error, text)) in enumerate(zip(calls, replies)):
        error = error or (None if parsed is not None else NO_CORS)
        if members is None:
            raw.setdefault(call.image_id, []).append(
                {"figure": call.prompt_figure, "prompt_sha256": prompt_sha256(call.prompt), "reply": text}
            )
        else:
            panel_raw.setdefault(call.image_id, []).extend(
                {"judge": name, "figure": call.prompt_figure, "prompt_sha256": prompt_sha256(call.prompt), "reply": r}
                for name, (_, _, r) in ((name, given[number]) for name, given in members.items())
            )
        for position, item in enumerate(call.items):
            verdict = parsed[position] if parsed is not None else None
            verdicts.append((item, verdict))
            alternative.append((item, parsed_other[position] if parsed_other is not None else None))
            if error and error != UNSCORED:
                result.failure_errors.append(error)
            entry = {
                "category": item.category,
                "index": item.index,
                "figure": call.prompt_figure,
                "key_point": item.key_point,
                "verdict": verdict,
                "judge_error": error,
            }
            if members is not None:
                given = {
                    name: judge_panel.member_verdict(replies[number], position) for name, replies in members.items()
                }
                entry["panel"] = [{"judge": n, "verdict": v, "judge_error": e} for n, (v, e) in given.items()]
                member_cors.append((item, [v for v, _ in given.values()]))
            per_image.setdefault(call.image_id, []).append(entry)
    counts = result.counts
    counts["cors"] = len(verdicts)
    counts["cors_judged"] = sum(v is not None for _, v in verdicts)
    unscored = sum(e["judge_error"] == UNSCORED for entries in per_image.values() for e in entries)
    counts["judge_failures"] = sum(v is None for _, v in verdicts) - unscored
    if options.judge_parsing == "constrained":
        counts["unscored"] = unscored
    counts["cors_per_category"] = {c: sum(i.category == c for i, _ in verdicts) for c in COGBENCH_CATEGORIES}
    all_cors = sum(len(cors or []) for row in all_rows for cors in row["cors"].values())
    result.metrics["cognition"] = mark_coverage(
        cognition_metrics.cognition_scores(verdicts),
        counts["cors_judged"],
        len(verdicts),
        all_cors,
        "CoRs",
        counts.get("unscored"),
    )
    for detail in result.details:
        detail["cognition"] = per_image.get(detail["item_id"], [])
        detail["judge_replies"] = raw.get(detail["item_id"], [])
        if members is not None:
            detail["panel_replies"] = panel_raw.get(detail["item_id"], [])
    if isinstance(judge, judge_panel.Panel):
        image_of = {id(item): call.image_id for call in calls for item in call.items}
        member_scores = {
            name: {"cognition": cognition_metrics.cognition_scores([(i, v[m]) for i, v in member_cors])}
            for m, name in enumerate(judge.names)
        }
        items = [PanelItem(image_of[id(i)], i.category, tuple(v), judge_panel.panel_verdict(v)) for i, v in member_cors]
        result.panel = judge_panel.panel_block(
            judge.names, member_scores, items, COGBENCH_CATEGORIES, options.resamples, options.seed
        )
        return
    differing = sum(a != b for (_, a), (_, b) in zip(verdicts, alternative))
    if differing:
        result.parsing_comparison = {
            "mode": other,
            "differing_verdicts": differing,
            "metrics": {"cognition": cognition_metrics.cognition_scores(alternative)["overall"]},
        }


def score_vqa(rows, outputs, options, judge: LLMJudge | None) -> TaskResult:
    robust_rows, official_rows, details = [], [], []
    for row in rows:
        if row["question_id"] not in outputs:
            continue
        response = outputs[row["question_id"]]
        official = vqa.extract_official(response)
        robust = vqa.extract_robust(response, [row[c] for c in CHOICE_COLUMNS])
        official_rows.append((row["category"], official == row["answer"]))
        robust_rows.append((row["category"], robust == row["answer"]))
        details.append(
            {
                "item_id": row["question_id"],
                "image_id": row["image_id"],
                "category": row["category"],
                "answer": row["answer"],
                # the option texts the robust extractor matched the response against (verify re-derives it)
                "choices": [row[c] for c in CHOICE_COLUMNS],
                "response": response,
                "extracted": robust,
                "extracted_official": official,
                "correct": robust == row["answer"],
                "correct_official": official == row["answer"],
            }
        )
    metrics = {
        "accuracy": by_category(robust_rows, COGBENCH_CATEGORIES),
        "accuracy_official": by_category(official_rows, COGBENCH_CATEGORIES),
    }
    counts = {
        "items": len(details),
        "unparseable": sum(d["extracted"] is None for d in details),
        "unparseable_official": sum(d["extracted_official"] is None for d in details),
    }
    for metric in metrics.values():
        mark_coverage(metric, len(details), len(details), len(rows), "questions")
    return TaskResult(metrics, details, counts)


def score_codis(all_rows, outputs, options, judge: LLMJudge | None) -> TaskResult:
    rows = [row for row in all_rows if (row["id"], 1) in outputs and (row["id"], 2) in outputs]
    queries = [(row, q) for row in rows for q in (1, 2)]
    rule = {
        (row["id"], q): codis_judge.rule_verdict(outputs[(row["id"], q)], row[f"answer_{q}"], row[f"answer_{3 - q}"])
        for row, q in queries
    }
    verdicts: dict[tuple[str, int], bool | None] = dict(rule)
    errors: dict[tuple[str, int], str | None] = {}
    raw: dict[tuple[str, int], tuple[str, str | None]] = {}  # LLM judge: (prompt sha256, reply)
    agreement = comparison = None
    members: dict[str, Any] = {}
    prompts = [
        codis_judge.judge_prompt(row["question"], row[f"answer_{q}"], outputs[(row["id"], q)]) for row, q in queries
    ]
    if isinstance(judge, judge_panel.Panel):  # the panel's verdicts in the judge's fields, each member's beside them
        members = judge_panel.ask_panel(
            judge,
            prompts,
            lambda prompt, reply, mode: codis_judge.parse_verdict(reply, mode),
            options.judge_parsing,
            {"rule": [rule[key] for key in rule]},
            "reply gives no verdict",
        )
        for n, (row, q) in enumerate(queries):
            given = [replies[n] for replies in members.values()]
            verdicts[(row["id"], q)] = judge_panel.panel_verdict([v for v, _, _ in given])
            errors[(row["id"], q)] = next((e for _, e, _ in given if e), None)
    elif judge is not None:
        other, replies = _judge_replies(
            judge, prompts, lambda prompt, reply, mode: codis_judge.parse_verdict(reply, mode), options.judge_parsing
        )
        alternative = {}
        for (row, q), prompt, (verdict, verdict_other, error, text) in zip(queries, prompts, replies):
            key = (row["id"], q)
            raw[key] = (prompt_sha256(prompt), text)
            verdicts[key], alternative[key] = verdict, verdict_other
            errors[key] = error or (None if verdict is not None else "reply gives no verdict")
        both = [key for key in verdicts if verdicts[key] is not None]
        agreement = percent(sum(verdicts[key] == rule[key] for key in both), len(both))
        differing = sum(verdicts[key] != alternative[key] for key in verdicts)
        if differing:
            other_metrics = _codis_metrics(rows, alternative, outputs)
            comparison = {
                "mode": other,
                "differing_verdicts": differing,
                "metrics": {name: other_metrics[name]["overall"] for name in ("acc_p", "acc_q")},
            }
    metrics = _codis_metrics(rows, verdicts, outputs)
    details = [
        {
            "item_id": row["id"],
            "image_id": row["image_id"],
            "category": row["category"],
            "question": row["question"],  # what answer bias's selection rules read (verify re-derives it)
            "outputs_differ": codis_metrics.outputs_differ(outputs[(row["id"], 1)], outputs[(row["id"], 2)]),
            "queries": [
                {
                    "query": q,
                    "answer": row[f"answer_{q}"],
                    "output": outputs[(row["id"], q)],
                    "final_answer": codis_metrics.final_answer(outputs[(row["id"], q)]),
                    "right": verdicts[(row["id"], q)],
                    "rule_right": rule[(row["id"], q)],
                    "judge_error": errors.get((row["id"], q)),
                    "judge_prompt_sha256": raw.get((row["id"], q), (None, None))[0],
                    "judge_reply": raw.get((row["id"], q), (None, None))[1],
                }
                for q in (1, 2)
            ],
        }
        for row in rows
    ]
    pairs_judged = sum(verdicts[(r["id"], 1)] is not None and verdicts[(r["id"], 2)] is not None for r in rows)
    queries_judged = sum(v is not None for v in verdicts.values())
    unscored: dict[str, int | None] = {"pairs": None, "queries": None}
    if judge is not None and options.judge_parsing == "constrained":  # no reply failed, some not read: unscored
        unscored["queries"] = sum(error == UNSCORED for error in errors.values())
        unscored["pairs"] = sum(
            UNSCORED in given and all(e in (None, UNSCORED) for e in given)
            for given in ([errors.get((r["id"], q)) for q in (1, 2)] for r in rows)
        )
    mark_coverage(metrics["acc_p"], pairs_judged, len(rows), len(all_rows), "pairs", unscored["pairs"])
    mark_coverage(metrics["acc_q"], queries_judged, len(queries), 2 * len(all_rows), "queries", unscored["queries"])
    mark_coverage(metrics["context_awareness"], len(rows), len(rows), len(all_rows), "pairs")
    counts = {
        "items": len(rows),
        "queries": len(queries),
        "judge_failures": len(queries) - queries_judged - (unscored["queries"] or 0),
        "pairs_judged": pairs_judged,
        "queries_judged": queries_judged,
        **({"unscored": unscored["queries"]} if unscored["queries"] is not None else {}),
    }
    result = TaskResult(metrics, details, counts, agreement, comparison)
    result.failure_errors = [error for error in errors.values() if error and error != UNSCORED]
    if members:
        result.panel = _codis_panel(judge, members, rows, queries, prompts, details, outputs, options)
    return result


def _codis_panel(
    panel: judge_panel.Panel, members, rows, queries, prompts, details, outputs, options
) -> dict[str, Any]:
    """Each member's verdict, reply and prompt hash beside each query's panel verdict; the ``panel`` block."""
    position = {key: n for n, key in enumerate((row["id"], q) for row, q in queries)}
    for detail in details:
        for query in detail["queries"]:
            n = position[(detail["item_id"], query["query"])]
            query["panel"] = [
                {
                    "judge": name,
                    "right": given[n][0],
                    "judge_error": given[n][1],
                    "judge_prompt_sha256": prompt_sha256(prompts[n]) if name in panel.judges else None,
                    "judge_reply": given[n][2],
                }
                for name, given in members.items()
            ]
    scores = {}
    for name, given in members.items():
        own = _codis_metrics(rows, {key: given[n][0] for key, n in position.items()}, outputs)
        scores[name] = {metric: own[metric] for metric in ("acc_p", "acc_q")}
    items = [
        PanelItem(row["image_id"], row["category"], verdicts, judge_panel.panel_verdict(verdicts))
        for n, (row, _) in enumerate(queries)
        for verdicts in [tuple(given[n][0] for given in members.values())]
    ]
    return judge_panel.panel_block(panel.names, scores, items, CODIS_CATEGORIES, options.resamples, options.seed)


def _codis_metrics(rows, verdicts, outputs) -> dict[str, dict[str, Any]]:
    """Acc_p, Acc_q (CODIS Section 3.3) over the judged pairs/queries, context awareness (Section 4.2)."""
    pair_rows, query_rows, aware_rows = [], [], []
    for row in rows:
        v1, v2 = verdicts[(row["id"], 1)], verdicts[(row["id"], 2)]
        query_rows += [(row["category"], float(v)) for v in (v1, v2) if v is not None]
        if v1 is not None and v2 is not None:
            pair_rows.append((row["category"], float(v1 and v2)))
        differ = codis_metrics.outputs_differ(outputs[(row["id"], 1)], outputs[(row["id"], 2)])
        aware_rows.append((row["category"], float(differ)))
    return {
        "acc_p": by_category(pair_rows, CODIS_CATEGORIES),
        "acc_q": by_category(query_rows, CODIS_CATEGORIES),
        "context_awareness": by_category(aware_rows, CODIS_CATEGORIES),
    }


def score_vqa_circular(rows, outputs, options, judge: LLMJudge | None) -> TaskResult:
    metrics, details, counts = circular_vqa(rows, outputs)
    for name, metric in metrics.items():
        if name.startswith("choice_"):  # each letter's share of all responses (four per question)
            mark_coverage(metric, counts["queries"], counts["queries"], 4 * len(rows), "responses")
        else:
            mark_coverage(metric, len(details), len(details), len(rows), "questions")
    return TaskResult(metrics, details, counts)


def add_rendered_prompts(task: str, details: list[dict[str, Any]], hashes: dict[Any, str | None]) -> None:
    """Each answer's ``rendered_prompt_sha256`` (the prompt text the model got; None where the
    predictions file does not say), keyed as ``pipeline`` keys the outputs."""
    for detail in details:
        item = detail["item_id"]
        if task == "codis":
            for query in detail["queries"]:
                query["rendered_prompt_sha256"] = hashes.get((item, query["query"]))
        elif "rotations" in detail:
            for rotation in detail["rotations"]:
                rotation["rendered_prompt_sha256"] = hashes.get((item, rotation["rotation"]))
        else:
            detail["rendered_prompt_sha256"] = hashes.get(item)


SCORERS = {"description": score_description, "vqa": score_vqa, "codis": score_codis}
