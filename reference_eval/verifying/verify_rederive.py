"""What ``cogbench verify`` re-derives from the details beyond the metric values: the counts and the
coverage flags (``n_scored``, ``n_expected``, ``partial``, ``complete``), the interval settings, the
hash of the answers, the judge's identity as the details show it, judge agreement, the analyses, and a
details dataset's readable columns (what ``load_dataset`` users read) against its ``detail`` column.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from cogbench.reference_eval.answers import reply_details
from cogbench.reference_eval.answers.reasoning import THINK_TAGS
from cogbench.reference_eval.judges.verdicts import UNSCORED
from cogbench.reference_eval.metrics import answer_bias, intervals
from cogbench.reference_eval.metrics.aggregate import percent
from cogbench.reference_eval.publishing.details_dataset import card_scores_sha256, row_fields
from cogbench.reference_eval.run import provenance
from cogbench.reference_eval.run.completeness import is_complete, mark_scale, unscored_rate
from cogbench.reference_eval.tasks.probes import variant_counts
from cogbench.reference_eval.verifying.verify_result import TaskData, Verification
from cogbench.schemas.vocabulary import CODIS_CATEGORIES, COGBENCH_CATEGORIES


def _unscored(units: list[dict[str, Any]]) -> int:
    """Units without a verdict whose judge reply constrained parsing did not read (item_checks re-reads each)."""
    return sum(u.get("judge_error") == UNSCORED for u in units)


def derived_counts(task: str, details: list[dict[str, Any]], parsing: str | None = None) -> dict[str, Any]:
    """The counts of scores.json that follow from the details alone (``parsing``: the LLM judge's mode)."""
    counts: dict[str, Any] = {"items": len(details)}
    constrained = parsing == "constrained"
    if task == "codis":
        queries = [q for d in details for q in d["queries"]]
        verdicts = [q["right"] for q in queries]
        counts.update(
            queries=len(verdicts),
            queries_judged=sum(v is not None for v in verdicts),
            judge_failures=sum(v is None for v in verdicts) - _unscored(queries),
            pairs_judged=sum(all(q["right"] is not None for q in d["queries"]) for d in details),
        )
        if constrained:
            counts["unscored"] = _unscored(queries)
        counts.update(variant_counts(details, constrained))
    elif task == "vqa" and not any("rotations" in d for d in details):
        counts.update(
            unparseable=sum(d.get("extracted") is None for d in details),
            unparseable_official=sum(d.get("extracted_official") is None for d in details),
        )
    elif task == "description":
        counts.update(
            entities=sum(d["recognition"]["annotated"] for d in details),
            entities_recognized=sum(d["recognition"]["recognized"] for d in details),
        )
        if any("cognition" in d for d in details):
            cors = [c for d in details for c in d.get("cognition") or []]
            counts.update(
                cors=len(cors),
                cors_judged=sum(c["verdict"] is not None for c in cors),
                judge_failures=sum(c["verdict"] is None for c in cors) - _unscored(cors),
            )
            if constrained:
                counts["unscored"] = _unscored(cors)
    return counts


def _scored(task: str, name: str, details: list[dict[str, Any]], units: list[Any]) -> tuple[int, int]:
    """(units with an output, units counted) of one metric."""
    if name.startswith("recognition"):
        entities = sum(d["recognition"]["annotated"] for d in details)
        return entities, entities
    if task == "codis" and name in ("acc_p", "context_awareness"):
        return len(details), len(units)
    if task == "codis" and name == "acc_q":
        return 2 * len(details), len(units)
    if name == "output_variability_llm":
        return sum("changed_without_context_llm" in q for d in details for q in d["queries"]), len(units)
    if name == "cognition" and any("cognition" in d for d in details):
        return sum(len(d.get("cognition") or []) for d in details), len(units)
    return len(units), len(units)


def metric_unit(task: str, name: str) -> str:
    """What one unit of a metric is (``run.completeness.mark_coverage``'s ``unit``), as each scorer counts it."""
    if name.startswith("recognition"):
        return "entities"
    if name.startswith("cognition"):
        return "CoRs"
    if name.startswith("choice_"):  # circular VQA: each letter's share of the four responses per question
        return "responses"
    if task == "vqa":
        return "questions"
    return "pairs" if name in ("acc_p", "context_awareness") or name.startswith(("acc_p_", "flip_rate")) else "queries"


def _metric_unscored(task: str, name: str, details: list[dict[str, Any]]) -> int:
    """A metric's unscored units (constrained parsing): CODIS pairs with an unscored query and no failed one."""
    if task == "codis" and name == "acc_p":
        errors = [[q.get("judge_error") for q in d["queries"]] for d in details]
        return sum(UNSCORED in given and all(e in (None, UNSCORED) for e in given) for given in errors)
    if task == "codis" and name == "acc_q":
        return _unscored([q for d in details for q in d["queries"]])
    return _unscored([c for d in details for c in d.get("cognition") or []])


def _expected(task: str, name: str, counts: dict[str, Any]) -> int | None:
    """A metric's units over the whole config, from ``counts.dataset_items`` (the build, when given)."""
    items = counts.get("dataset_items")
    if not isinstance(items, int) or task == "description":
        return None
    if name.startswith("choice_"):
        return 4 * items
    return 2 * items if name in ("acc_q", "output_variability", "output_variability_llm") else items


def check_counts(data: TaskData, result: Verification, expected: dict[str, int] | None = None) -> None:
    """Counts, each metric's coverage fields, ``partial`` and ``complete``, against the details.
    ``expected``: each metric's units over the config, counted in the build (``--dataset``)."""
    scores, details, task, where = data.scores, data.details, data.scores["task"], str(data.scores_path)
    counts = scores["counts"]
    parsing = (scores.get("judge") or {}).get("parsing")
    for key, value in derived_counts(task, details, parsing).items():
        result.same(f"{where}: counts.{key}", counts.get(key), value)
    units = intervals.units_from_details(task, details)
    partial = {}
    for name, metric in scores["metrics"].items():
        if name not in units:
            continue
        scored, judged = _scored(task, name, details, units[name])
        needed = (expected or {}).get(name, _expected(task, name, counts))
        if needed is None:
            result.state(f"metrics.{name}.n_expected (give --dataset BUILD to count it)")
            needed = metric.get("n_expected")
        unscored = 0
        if parsing == "constrained" and name in ("acc_p", "acc_q", "cognition"):  # the judged metrics
            unscored = _metric_unscored(task, name, details)
            result.same(f"{where}: metrics.{name}.unscored", metric.get("unscored"), unscored)
            result.same(
                f"{where}: metrics.{name}.unscored_rate", metric.get("unscored_rate"), unscored_rate(judged, unscored)
            )
        result.same(f"{where}: metrics.{name}.unit", metric.get("unit"), metric_unit(task, name))
        for key, value in (("n_scored", judged), ("judged", judged), ("failed", scored - judged - unscored)):
            result.same(f"{where}: metrics.{name}.{key}", metric.get(key), value)
        for key in ("n_expected", "denominator"):
            result.same(f"{where}: metrics.{name}.{key}", metric.get(key), needed)
        partial[name] = isinstance(needed, int) and judged + unscored < needed
        result.same(f"{where}: metrics.{name}.partial", metric.get("partial"), partial[name])
    for name, metric in scores["metrics"].items():  # the label follows from the numbers checked above
        unlabelled = {k: v for k, v in metric.items() if k != "exceeds_scale"}
        over = "exceeds_scale" in mark_scale({**unlabelled, "per_category": metric.get("per_category") or {}})
        result.same(f"{where}: metrics.{name}.exceeds_scale", metric.get("exceeds_scale", False), over)
    missing = counts.get("missing_predictions") or []
    missing_pairs = {str(m).split("#")[0] for m in missing}
    scored_ids = {d["item_id"] for d in details}
    if missing_pairs & scored_ids:
        result.problem(f"{where}: counts.missing_predictions", "names items the details score")
    if isinstance(counts.get("dataset_items"), int):
        result.same(
            f"{where}: counts.items + missing_predictions", len(details) + len(missing_pairs), counts["dataset_items"]
        )
    derived = is_complete({"counts": counts, "metrics": {n: {"partial": p} for n, p in partial.items()}})
    result.same(f"{where}: complete", scores.get("complete"), derived)


def check_interval_settings(data: TaskData, result: Verification) -> None:
    """The settings recorded beside the intervals, and the images behind each interval."""
    task, where = data.scores["task"], str(data.scores_path)
    categories = CODIS_CATEGORIES if task == "codis" else COGBENCH_CATEGORIES
    stated = data.scores.get("intervals") or {}
    # resamples and seed are the run's own choice (`score --resamples/--seed`, for compare's permutation test
    # and a panel's agreement intervals, which verify_panel re-derives with them): taken as stated (their
    # types checked by scores.schema.json); the settings that follow from the details are re-derived.
    result.state("intervals.resamples and seed (the run's settings, as scores.json states them)")
    resamples, seed = stated.get("resamples", intervals.DEFAULT_RESAMPLES), stated.get("seed", intervals.DEFAULT_SEED)
    fresh, settings = intervals.score_intervals(task, data.details, categories, resamples, seed)
    for key, value in settings.items():
        if key not in ("resamples", "seed"):
            result.same(f"{where}: intervals.{key}", stated.get(key), value)
    for name, metric in data.scores["metrics"].items():
        if name in fresh and isinstance(metric.get("interval"), dict):
            stated_clusters = metric["interval"].get("clusters")
            result.same(f"{where}: metrics.{name}.interval.clusters", stated_clusters, fresh[name].get("clusters"))


def answers_of(task: str, details: list[dict[str, Any]]) -> dict[Any, str]:
    """The answers scored, keyed as ``provenance.answers_sha256`` keys them."""
    if task == "codis":
        return {(d["item_id"], q["query"]): q.get("output") for d in details for q in d["queries"]}
    if task == "vqa":
        if any("rotations" in d for d in details):
            return {(d["item_id"], n): r.get("response") for d in details for n, r in enumerate(d["rotations"])}
        return {d["item_id"]: d.get("response") for d in details}
    return {d["item_id"]: d.get("description") for d in details}


def check_provenance(data: TaskData, result: Verification) -> None:
    """The answers' hash, the judge's identity as the details show it, the dataset revision and thresholds."""
    scores, task, where = data.scores, data.scores["task"], str(data.scores_path)
    recorded = scores.get("provenance") or {}
    answers = answers_of(task, data.details)
    if "answers_sha256" in recorded and all(isinstance(a, str) for a in answers.values()):
        result.same(
            f"{where}: provenance.answers_sha256", recorded["answers_sha256"], provenance.answers_sha256(answers)
        )
    judge, named = scores["judge"], recorded.get("judge") or {}
    for key in ("kind", "model", "parsing"):
        if key in named or key in judge:
            result.same(f"{where}: judge.{key} (provenance.judge.{key})", judge.get(key), named.get(key))
    if named:
        expected = provenance.judge_templates(task, judge["kind"])
        have = [t for t in recorded.get("prompt_templates", []) if t.get("role") == "judge"]
        result.same(f"{where}: provenance.prompt_templates (judge)", have, expected)
        result.same(f"{where}: provenance.thresholds", recorded.get("thresholds"), provenance.thresholds(task))
    if "dataset" in recorded:
        result.same(
            f"{where}: dataset_revision (provenance.dataset.revision)",
            scores["dataset_revision"],
            recorded["dataset"].get("revision"),
        )
    if task == "codis":
        queries = [q for d in data.details for q in d["queries"]]
        prompted = sum(q.get("judge_prompt_sha256") is not None for q in queries)
        shown = "openai" if prompted else "rule"
        if judge["kind"] in ("rule", "openai"):
            result.same(f"{where}: judge.kind (its judge prompts in the details)", judge["kind"], shown)
        both = [q for q in queries if q["right"] is not None and "rule_right" in q]
        agreement = percent(sum(q["right"] == q["rule_right"] for q in both), len(both)) if prompted else None
        result.compare(f"{where}: judge_agreement", scores.get("judge_agreement"), agreement)
    result.state(
        "provenance.cogbench_version",
        "provenance.models (the models' folders and weights hashes as loaded)",
        "the model outputs themselves (the details are their record)",
    )
    if judge["kind"] == "openai":
        result.state(
            "judge.model, judge.endpoint_host (the server that answered)", "judge.prompts/calls/cache_hits/usage"
        )


def check_analyses(data: TaskData, result: Verification) -> None:
    """Answer bias and output variability re-derived from the details; the rest named as stated."""
    analyses, where = data.scores.get("analyses") or {}, str(data.scores_path)
    bias = analyses.get("answer_bias")
    if bias is not None:
        if all(isinstance(d.get("question"), str) for d in data.details):
            pairs = [answer_bias.WordPair(*p["pair"].split(":", 1)) for p in bias.get("pairs") or []]
            triples = [(d["question"], q["answer"], q["output"]) for d in data.details for q in d["queries"]]
            counts = [answer_bias.word_pair_counts(triples, pair) for pair in pairs]
            result.same(f"{where}: analyses.answer_bias", bias, answer_bias.bias_block(counts))
            result.state("analyses.answer_bias word pairs (the run's --word-pairs, as stated)")
        else:
            result.state("analyses.answer_bias (details written before questions were kept)")
    variability = analyses.get("output_variability")
    if variability is not None:
        queries = [q for d in data.details for q in d["queries"] if "changed_without_context" in q]
        result.same(f"{where}: analyses.output_variability.queries", variability.get("queries"), len(queries))
        if "llm_failures" in variability:
            llm = [q for q in queries if "changed_without_context_llm" in q]
            judged = [q for q in llm if q["changed_without_context_llm"] is not None]
            result.same(
                f"{where}: analyses.output_variability.llm_failures",
                variability["llm_failures"],
                len(llm) - len(judged),
            )
            agree = percent(
                sum(q["changed_without_context_llm"] == q["changed_without_context"] for q in judged), len(judged)
            )
            result.compare(
                f"{where}: analyses.output_variability.llm_rule_agreement", variability.get("llm_rule_agreement"), agree
            )
    for name in sorted(set(analyses) - {"answer_bias", "output_variability"}):
        result.state(f"analyses.{name} (needs the models that made it)")


def check_card(data: TaskData, result: Verification) -> None:
    """A details dataset's ``runs/<task>/scores.json`` against the sha256 its card states for it."""
    task, card = data.scores["task"], data.scores_path.parents[2] / "README.md"
    stated = card_scores_sha256(card.read_text(encoding="utf-8"), task) if card.is_file() else None
    if stated is None:
        result.state(f"runs/{task}/scores.json unchanged since publish-results (no card states its sha256)")
        return
    written = hashlib.sha256(data.scores_path.read_bytes()).hexdigest()[:16]
    result.same(f"{card}: {task} scores.json sha256 (of {data.scores_path})", stated, written)


def check_columns(data: TaskData, result: Verification) -> None:
    """A details dataset's readable columns against the ``detail`` each row keeps (what verify scores)."""
    task = data.scores["task"]
    template = None
    for number, (row, detail) in enumerate(zip(data.rows or [], data.details)):
        where, item = f"{data.where}: row {number}", [detail["item_id"]]
        fields = row_fields(task, detail)
        for name, value in fields.items():
            result.same(f"{where}: {name}", _json(row.get(name)), value, item)
        contributions = {
            name: [[u.category, u.hits, u.total] for u in us]
            for name, us in intervals.units_from_details(task, [detail]).items()
            if us
        }
        result.same(f"{where}: score_contributions", _json(row.get("score_contributions")), contributions, item)
        if task == "codis":  # the verdicts scored, never the rule judge's beside them
            result.same(
                f"{where}: judge_verdicts",
                _json(row.get("judge_verdicts")),
                [q["right"] for q in detail["queries"]],
                item,
            )
        for name, value in (
            ("item_id", detail["item_id"]),
            ("image_id", detail.get("image_id", detail["item_id"])),
            ("category", detail.get("category")),
            ("model", data.scores["model"]),
        ):
            result.same(f"{where}: {name}", row.get(name), value, item)
        template = row.get("prompt_template_sha256") if template is None else template
        result.same(f"{where}: prompt_template_sha256", row.get("prompt_template_sha256"), template, item)
    if data.rows is not None:
        shas = [
            t["sha256"]
            for t in (data.scores.get("provenance") or {}).get("prompt_templates", [])
            if t.get("role") == "model"
        ]
        if template is not None and shas:
            result.same(f"{data.where}: prompt_template_sha256 (scores.json's model template)", template in shas, True)


def _json(text: Any) -> Any:
    try:
        return json.loads(text) if isinstance(text, str) else text
    except json.JSONDecodeError:
        return text


def check_replies(data: TaskData, result: Verification) -> None:
    """Each answer's scored text and status re-derived from its kept reply by the rule scoring used
    (``answers/reasoning.py``), and scores.json's ``answers`` counted again from the details."""
    task = data.scores["task"]
    stated = data.scores.get("answers")
    tags = tuple(tuple(pair) for pair in (stated or {}).get("think_tags", THINK_TAGS))
    hashed = 0
    for key, answer, _ in reply_details.answer_dicts(task, data.details):
        if "answer_status" not in answer:
            continue
        again = reply_details.rederived(task, answer, tags)  # type: ignore[arg-type]
        if again is None:
            hashed += 1
            continue
        scored = (answer.get(reply_details.SCORED_FIELD[task]), answer["answer_status"])
        result.same(f"{data.where}: item {key}: final answer and status", scored, (again.answer, again.status))
    recorded = {
        name
        for _, answer, _ in reply_details.answer_dicts(task, data.details)
        for name in ("finish_reason", "thinking", "reasoning_tokens", "refusal")
        if name in (answer.get("reply") or {})
    }
    if recorded and data.run_dir is None:  # an eval run folder's are checked against its predictions.jsonl
        result.state(
            f"each reply's {', '.join(sorted(recorded))} (as the predictions recorded them: no eval run folder)"
        )
    stated_thinking = (stated or {}).get("thinking", "auto")  # score --thinking, where each reply records it too
    counted = reply_details.answers_block(task, data.details, tags, stated_thinking)  # type: ignore[arg-type]
    result.same(f"{data.scores_path.name}: answers", stated, counted)
    if hashed:
        result.state(f"the final answers of {hashed} replies (their reasoning kept as sha256 only)")
