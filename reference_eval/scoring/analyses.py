"""The papers' further measurements, run by ``cogbench score`` beside the headline metrics.

- Description: captioning metrics (CogBench Appendix E, Table 7; ``metrics.captioning``)
  with ``--metrics captioning``; the offline Cognition judges (Appendix F, Table 4;
  ``judges.offline``) with ``--judge rouge|bertscore|nli`` (they give the Cognition
  Score) or ``--offline-judge KIND`` beside ``--judge openai:MODEL`` (agreement per
  category is reported).
- CODIS: output variability (CODIS Section 4.2, Table 4; ``metrics.output_variability``)
  with ``--no-context-predictions FILE``, and answer bias (Section 5.2, Table 6;
  ``metrics.answer_bias``) for every run.

Each function returns what goes into scores.json (``metrics`` entries, the
``analyses`` object) and adds per-item facts to the details.
"""

from __future__ import annotations

from typing import Any

from cogbench.errors import CogbenchError, UsageError
from cogbench.numbers import fixed
from cogbench.reference_eval.answers.reasoning import THINK_TAGS, final_answer
from cogbench.reference_eval.formats.official import OfficialIds, read_any_predictions
from cogbench.reference_eval.judges import codis_equality
from cogbench.reference_eval.judges import offline as offline_judges
from cogbench.reference_eval.judges.llm import LLMJudge
from cogbench.reference_eval.metrics import answer_bias, captioning, cognition
from cogbench.reference_eval.metrics.aggregate import by_category, percent
from cogbench.reference_eval.metrics.output_variability import output_changed
from cogbench.reference_eval.run.completeness import mark_coverage
from cogbench.reference_eval.tasks.prompts import DESCRIPTION_MODES
from cogbench.schemas.vocabulary import CATEGORY_LABEL, CODIS_CATEGORIES, COGBENCH_CATEGORIES

EXTRA_METRICS = ("captioning",)


def offline_kind(options: Any) -> str | None:
    """The offline Cognition judge asked for: ``--judge rouge|...`` or ``--offline-judge``."""
    if options.judge in offline_judges.OFFLINE_JUDGES:
        if options.offline_judge and options.offline_judge != options.judge:
            raise UsageError(
                f"--judge {options.judge} and --offline-judge {options.offline_judge}: give one offline judge"
            )
        return options.judge
    if options.offline_judge:
        offline_judges.check_kind(options.offline_judge)
    return options.offline_judge


def check_options(options: Any) -> None:
    """Usage errors of the options this module reads, before any work."""
    for name in options.metrics:
        if name not in EXTRA_METRICS:
            raise UsageError(f"--metrics {name!r}: choose from {', '.join(EXTRA_METRICS)}")
    if options.metrics and options.task != "description":
        raise UsageError("--metrics captioning applies to --task description")
    if offline_kind(options) and options.task != "description":
        raise UsageError("the offline judges (rouge, bertscore, nli) score the Cognition of --task description")
    if options.no_context_predictions and options.task != "codis":
        raise UsageError("--no-context-predictions applies to --task codis")
    threshold = options.offline_threshold
    if threshold is not None and not 0.0 <= threshold <= 1.0:  # also refuses nan
        raise UsageError(f"--offline-threshold {threshold}: a score threshold lies within 0..1")
    if options.word_pairs and options.task != "codis":
        raise UsageError("--word-pairs applies to --task codis")
    if options.word_pairs:
        answer_bias.parse_word_pairs(options.word_pairs)
    if "captioning" in options.metrics:
        captioning.require_java()


def description_mode(prompt_ids: list[str]) -> str:
    """spontaneous / directed from the predictions' prompt ids (Table 7 reports both modes)."""
    modes = sorted(mode for mode, template in DESCRIPTION_MODES.items() if template.id in prompt_ids)
    return ", ".join(modes) if modes else "not recorded"


def run_captioning(rows, outputs, prompt_ids: list[str], details: list[dict[str, Any]]) -> dict[str, Any]:
    scored = [row for row in rows if row["image_id"] in outputs]
    result = captioning.captioning_scores(
        {row["image_id"]: row["description"] for row in scored},
        {row["image_id"]: outputs[row["image_id"]] for row in scored},
    )
    for detail in details:
        detail["captioning"] = result["per_item"].get(detail["item_id"])
    empty = sum(not outputs[row["image_id"]].strip() for row in scored)
    return {
        "mode": description_mode(prompt_ids),
        "items": len(scored),
        "empty_descriptions": empty,
        "scores": result["overall"],
        "reference": "CogBench final paper, Appendix E, Table 7 (pycocoevalcap)",
    }


def offline_settings(options: Any) -> offline_judges.OfflineJudgeSettings | None:
    kind = offline_kind(options)
    if not kind:
        return None
    return offline_judges.OfflineJudgeSettings(
        kind=kind,
        threshold=options.offline_threshold,
        model=options.offline_model,
        bertscore_layers=options.offline_layers,
        device=options.offline_device,
    )


def load_offline_model(options: Any) -> offline_judges.JudgeModel | None:
    """The offline judge's model, loaded and checked before any item is scored (None: none needed)."""
    settings = offline_settings(options)
    return offline_judges.load_judge_model(settings) if settings and options.task == "description" else None


def run_offline_judge(
    options: Any,
    rows,
    outputs,
    details: list[dict[str, Any]],
    metrics: dict[str, Any],
    counts: dict[str, Any],
    loaded: offline_judges.JudgeModel | None = None,
) -> dict[str, Any]:
    """Offline Cognition verdicts; the Cognition Score when no LLM judge ran, else agreement with it.

    ``loaded``: the judge's model from ``load_offline_model`` (loaded here when not given).
    """
    settings = offline_settings(options)
    kind = settings.kind
    scored = [row for row in rows if row["image_id"] in outputs]
    items = [offline_judges.cor_items(row["image_id"], row["cors"]) for row in scored]
    verdicts = offline_judges.judge_descriptions(settings, items, [outputs[row["image_id"]] for row in scored], loaded)
    scores = cognition.cognition_scores([(v.item, v.verdict) for v in verdicts])
    by_image: dict[str, list[dict[str, Any]]] = {}
    for v in verdicts:
        by_image.setdefault(v.item.image_id, []).append(
            {
                "category": v.item.category,
                "index": v.item.index,
                "key_point": v.item.key_point,
                "score": v.score,
                "best_sentence": v.sentence,
                "verdict": v.verdict,
            }
        )
    for detail in details:
        detail[f"cognition_{kind}"] = by_image.get(detail["item_id"], [])
    analysis: dict[str, Any] = {
        "kind": kind,
        "model": settings.resolved_model(),
        "threshold": settings.resolved_threshold(),
        "cors": len(verdicts),
        "reference": "CogBench final paper, Appendix F, Table 4",
    }
    all_cors = sum(len(cors or []) for row in rows for cors in row["cors"].values())
    # Offline verdicts never fail: every CoR of a scored image is judged; fewer than the config has is partial.
    mark_coverage(scores, len(verdicts), len(verdicts), all_cors, "CoRs")
    if "cognition" not in metrics:
        metrics["cognition"] = scores
        counts.update(
            cors=len(verdicts),
            cors_judged=len(verdicts),
            judge_failures=0,
            cors_per_category={c: sum(v.item.category == c for v in verdicts) for c in COGBENCH_CATEGORIES},
        )
        return analysis
    metrics["cognition_offline"] = scores
    llm = {(d["item_id"], c["category"], c["index"]): c["verdict"] for d in details for c in d.get("cognition", [])}
    rows_agree = [
        (v.item.category, float(v.verdict == llm[key]))
        for v in verdicts
        if llm.get(key := (v.item.image_id, v.item.category, v.item.index)) is not None
    ]
    analysis["agreement_with_llm_judge"] = by_category(rows_agree, COGBENCH_CATEGORIES)
    analysis["agreement_cors"] = len(rows_agree)
    return analysis


def _no_context_outputs(options: Any, rows) -> dict[tuple[str, int], str]:
    predictions = read_any_predictions(options.no_context_predictions, "codis", OfficialIds.from_rows("codis", rows))
    tags = getattr(options, "think_tags", None) or THINK_TAGS
    thinking = getattr(options, "thinking", "auto")
    if any(p.variant is not None for p in predictions):
        first = next(p for p in predictions if p.variant is not None)
        raise UsageError(
            f"{options.no_context_predictions}: item {first.item_id}: field variant: the no-context predictions hold "
            "image-variant answers (eval --image-variant); give a run's predictions made without --image-variant"
        )
    return {(p.item_id, p.query): final_answer(p, tags, thinking).answer for p in predictions}


def run_output_variability(
    options: Any,
    rows,
    outputs,
    judge: LLMJudge | None,
    details: list[dict[str, Any]],
    metrics: dict[str, Any],
    expected: int | None = None,
) -> dict[str, Any]:
    """Share of queries whose output changed without context (CODIS Section 4.2, Table 4)."""
    without = _no_context_outputs(options, rows)
    keys = [(row, q) for row in rows for q in (1, 2) if (row["id"], q) in outputs]
    missing = [f"{row['id']}#{q}" for row, q in keys if (row["id"], q) not in without]
    if missing and not options.allow_partial:
        raise CogbenchError(
            f"{options.no_context_predictions}: {len(missing)} scored quer(ies) have no no-context prediction "
            f"(first: {', '.join(missing[:5])}); use --allow-partial to compare the rest"
        )
    keys = [(row, q) for row, q in keys if (row["id"], q) in without]
    rule = {(row["id"], q): output_changed(outputs[(row["id"], q)], without[(row["id"], q)]) for row, q in keys}
    metrics["output_variability"] = mark_coverage(
        by_category([(row["category"], float(rule[(row["id"], q)])) for row, q in keys], CODIS_CATEGORIES),
        len(keys),
        len(keys),
        expected or 2 * len(rows),
        "queries",
    )
    analysis: dict[str, Any] = {
        "queries": len(keys),
        "missing": missing,
        "no_context_predictions": str(options.no_context_predictions),
        "reference": "CODIS paper, Section 4.2, Table 4 (judged by hand in the paper)",
    }
    llm: dict[tuple[str, int], bool | None] = {}
    if judge is not None:
        prompts = [
            codis_equality.same_answer_prompt(row["question"], outputs[(row["id"], q)], without[(row["id"], q)])
            for row, q in keys
        ]
        replies = judge.ask(prompts, accept=lambda prompt, reply: codis_equality.parse_changed(reply) is not None)
        for (row, q), reply in zip(keys, replies):
            llm[(row["id"], q)] = codis_equality.parse_changed(reply.text) if reply.text is not None else None
        judged = [(row["category"], float(llm[(row["id"], q)])) for row, q in keys if llm[(row["id"], q)] is not None]
        metrics["output_variability_llm"] = mark_coverage(
            by_category(judged, CODIS_CATEGORIES), len(judged), len(keys), expected or 2 * len(rows), "queries"
        )
        analysis.update(
            llm_prompt_id=codis_equality.SAME_ANSWER_PROMPT_ID,
            llm_prompt_sha256=codis_equality.SAME_ANSWER_PROMPT_SHA256,
            llm_failures=len(keys) - len(judged),
            llm_rule_agreement=percent(sum(llm[k] == rule[k] for k in llm if llm[k] is not None), len(judged)),
        )
    by_id = {detail["item_id"]: detail for detail in details}
    for row, q in keys:
        query = by_id[row["id"]]["queries"][q - 1]
        query["no_context_output"] = without[(row["id"], q)]
        query["changed_without_context"] = rule[(row["id"], q)]
        if judge is not None:
            query["changed_without_context_llm"] = llm[(row["id"], q)]
    return analysis


def run_answer_bias(options: Any, rows, outputs) -> dict[str, Any]:
    """Word-pair frequencies in ground truth and outputs (CODIS Section 5.2, Table 6)."""
    pairs = answer_bias.parse_word_pairs(options.word_pairs) if options.word_pairs else list(answer_bias.PAPER_PAIRS)
    triples = [
        (row["question"], row[f"answer_{q}"], outputs[(row["id"], q)])
        for row in rows
        for q in (1, 2)
        if (row["id"], q) in outputs
    ]
    return answer_bias.bias_block([answer_bias.word_pair_counts(triples, pair) for pair in pairs])


def run_analyses(
    options: Any,
    rows,
    outputs,
    prompt_ids: list[str],
    judge: LLMJudge | None,
    details: list[dict[str, Any]],
    metrics: dict[str, Any],
    counts: dict[str, Any],
    offline_model: offline_judges.JudgeModel | None = None,
) -> dict[str, Any]:
    """Every further measurement the options ask for (or that is cheap: answer bias); ``{}`` if none."""
    analyses: dict[str, Any] = {}
    if options.task == "description":
        if "captioning" in options.metrics:
            analyses["captioning"] = run_captioning(rows, outputs, prompt_ids, details)
        if offline_kind(options):
            analyses["offline_judge"] = run_offline_judge(
                options, rows, outputs, details, metrics, counts, offline_model
            )
    elif options.task == "codis":
        scored = [row for row in rows if (row["id"], 1) in outputs and (row["id"], 2) in outputs]
        if options.no_context_predictions:
            analyses["output_variability"] = run_output_variability(
                options, scored, outputs, judge, details, metrics, expected=2 * len(rows)
            )
        analyses["answer_bias"] = run_answer_bias(options, scored, outputs)
    return analyses


def _number(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _percent(value: float | None) -> str:
    return "-" if value is None else fixed(value)


def _percent_interval(metric: dict[str, Any]) -> str:
    """The overall value and its 95% interval over images, as the report's other cells show it."""
    interval = (metric.get("interval") or {}).get("overall")
    text = _percent(metric["overall"])
    return text + (
        f" [{fixed(interval[0])}, {fixed(interval[1])}]" if metric["overall"] is not None and interval else ""
    )


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header), *("| " + " | ".join(r) + " |" for r in rows)]


def render(scores: dict[str, Any]) -> str:
    """The report.md sections of the further measurements ("" when none ran)."""
    found, metrics, model = scores.get("analyses") or {}, scores["metrics"], scores["model"]
    lines: list[str] = []
    if "captioning" in found:
        cap = found["captioning"]
        lines += ["## Captioning metrics (CogBench Appendix E, Table 7)", ""]
        lines += _table(
            ["Model", "Mode", *(captioning.COLUMN_LABEL[m] for m in captioning.CAPTIONING_METRICS)],
            [[model, cap["mode"], *(_number(cap["scores"][m]) for m in captioning.CAPTIONING_METRICS)]],
        )
        lines += [
            "",
            f"{cap['items']} descriptions against their reference; pycocoevalcap (PTB tokenizer, CIDEr-D).",
            "",
        ]
    if "offline_judge" in found:
        off = found["offline_judge"]
        lines += [
            f"## Offline Cognition judge: {off['kind']} (CogBench Appendix F)",
            "",
            f"Model `{off['model'] or '-'}`, threshold {off['threshold'] if off['threshold'] is not None else 'entailment'}; "
            f"{off['cors']} CoRs.",
            "",
        ]
        if "agreement_with_llm_judge" in off:
            offline_scores, agreement = metrics["cognition_offline"], off["agreement_with_llm_judge"]
            header = ["", *(CATEGORY_LABEL[c] for c in COGBENCH_CATEGORIES), "Overall"]
            lines += _table(
                header,
                [
                    [
                        f"Cognition ({off['kind']})",
                        *(_percent(offline_scores["per_category"].get(c)) for c in COGBENCH_CATEGORIES),
                        _percent(offline_scores["overall"]),
                    ],
                    [
                        "Agreement with the LLM judge",
                        *(_percent(agreement["per_category"].get(c)) for c in COGBENCH_CATEGORIES),
                        _percent(agreement["overall"]),
                    ],
                ],
            )
            lines += ["", f"Agreement over {off['agreement_cors']} CoRs both judges decided.", ""]
    if "output_variability" in found:
        var = found["output_variability"]
        row = [model, _percent_interval(metrics["output_variability"])]
        header = ["Model", "Output Variability (normalised answers)"]
        if "output_variability_llm" in metrics:
            header.append("Output Variability (LLM judge)")
            row.append(_percent_interval(metrics["output_variability_llm"]))
        lines += ["## Output variability (CODIS Section 4.2, Table 4)", "", *_table(header, [row])]
        lines += [
            "",
            f"{var['queries']} queries compared with `{var['no_context_predictions']}`; the paper judged by hand.",
            "",
        ]
    if "answer_bias" in found:
        bias = found["answer_bias"]
        pairs = bias["pairs"]
        lines += ["## Answer bias (CODIS Section 5.2, Table 6)", ""]
        lines += _table(
            ["Model", *(p["pair"].replace(":", " : ") for p in pairs)],
            [
                [
                    "Groundtruth (paper)",
                    *(":".join(map(str, p["paper_groundtruth"])) if p["paper_groundtruth"] else "-" for p in pairs),
                ],
                ["Groundtruth (this data)", *(":".join(map(str, p["groundtruth"])) for p in pairs)],
                [model, *(":".join(map(str, p["model"])) for p in pairs)],
            ],
        )
        lines += [
            "",
            f"{bias['queries']} queries selected here (paper: {bias['paper_queries']}) by the rule in "
            "`metrics/answer_bias.py`; Context awareness is in the table above.",
            "",
        ]
    return "\n".join(lines)
