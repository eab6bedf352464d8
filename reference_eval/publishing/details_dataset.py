"""A run's per-item details as a Hub dataset (the "details" datasets of lm-evaluation-harness,
lmms-eval and lighteval): one Parquet row per scored item, a card naming the run's provenance,
and the run's scores.json and report.md beside them, so ``cogbench verify`` re-derives every
published number from the rows alone.

Layout (one config per task)::

    README.md                       card: YAML configs + provenance
    data/<task>/test.parquet        one row per item
    runs/<task>/scores.json         the run's scores.json, unchanged
    runs/<task>/report.md           the run's report.md, unchanged

Each row keeps the full details.jsonl line (``detail``, JSON text) beside readable columns, so
re-scoring is lossless. ``judge_replies`` are an LLM judge's raw replies as details.jsonl keeps
them (each with the sha256 of its judge prompt, its key in the verdict cache), so a verdict can be
re-read from its reply; the rule judge has none (null; ``rule_right`` in ``detail`` is its
verdict), an offline Cognition judge gives its own record per CoR (best sentence and its score).
``prompt_sha256`` is the sha256 of each answer's rendered prompt, null where the predictions
file did not say (the authors' and VLMEvalKit's files keep no prompt); the template's sha256
is ``prompt_template_sha256`` and in the card.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from cogbench.reference_eval.judges.offline import OFFLINE_JUDGES
from cogbench.reference_eval.metrics.intervals import units_from_details
from cogbench.reference_eval.recording.run_reader import RunNotVerified, ScoredRun

DATA = "data/{task}/test.parquet"
SCORES = "runs/{task}/scores.json"
REPORT = "runs/{task}/report.md"


def template_sha256(run: ScoredRun) -> str | None:
    """The sha256 of the model prompt template the run used, where the run recorded it."""
    if run.run_record and run.run_record.get("prompt_sha256"):
        return run.run_record["prompt_sha256"]
    templates = (run.scores.get("provenance") or {}).get("prompt_templates") or []
    shas = [t["sha256"] for t in templates if t.get("role") == "model"]
    return shas[0] if len(shas) == 1 else None


def row_fields(task: str, detail: dict[str, Any]) -> dict[str, Any]:
    """Raw output, rendered prompt hash, parsed answer, verdicts, judge replies and errors of one item
    (``verify`` re-derives each row's columns with it)."""
    if task == "codis":
        queries = detail["queries"]
        return {
            "raw_output": [q.get("output") for q in queries],
            "prompt_sha256": [q.get("rendered_prompt_sha256") for q in queries],
            "parsed_answer": [q.get("final_answer") for q in queries],
            "judge_verdicts": [q.get("right") for q in queries],
            "judge_replies": [q.get("judge_reply") for q in queries],
            "judge_errors": [q.get("judge_error") for q in queries],
        }
    if task == "vqa":
        answers = detail.get("rotations") or [detail]  # a circular run: the four rotations
        pick = (lambda values: values) if "rotations" in detail else (lambda values: values[0])
        return {
            "raw_output": pick([a.get("response") for a in answers]),
            "prompt_sha256": pick([a.get("rendered_prompt_sha256") for a in answers]),
            "parsed_answer": pick(
                [{"robust": a.get("extracted"), "official": a.get("extracted_official")} for a in answers]
            ),
            "judge_verdicts": None,
            "judge_replies": None,
            "judge_errors": None,
        }
    offline = next((detail[f"cognition_{kind}"] for kind in OFFLINE_JUDGES if f"cognition_{kind}" in detail), None)
    if "cognition" not in detail and offline is not None:  # an offline judge gave the Cognition Score
        cors, replies = offline, [{"score": c.get("score"), "best_sentence": c.get("best_sentence")} for c in offline]
    else:
        cors, replies = detail.get("cognition") or [], detail.get("judge_replies")
    return {
        "raw_output": detail.get("description"),
        "prompt_sha256": detail.get("rendered_prompt_sha256"),
        # the description's noun nearest each annotated entity
        "parsed_answer": [
            {"entity": m.get("entity"), "noun": m.get("noun")} for m in detail["recognition"].get("matches", [])
        ]
        or None,
        "judge_verdicts": [c["verdict"] for c in cors] or None,
        "judge_replies": replies or None,
        "judge_errors": [c.get("judge_error") for c in cors] or None,
    }


def detail_rows(run: ScoredRun) -> list[dict[str, Any]]:
    """One row per details.jsonl line; per-answer values as JSON text, so every row has one schema."""
    task, template = run.scores["task"], template_sha256(run)
    rows = []
    for detail in run.details:
        units = units_from_details(task, [detail])
        contributions = {name: [[u.category, u.hits, u.total] for u in us] for name, us in units.items() if us}
        fields = row_fields(task, detail)
        rows.append(
            {
                "item_id": detail["item_id"],
                "image_id": detail.get("image_id", detail["item_id"]),
                "category": detail.get("category"),
                "model": run.scores["model"],
                "prompt_template_sha256": template,
                **{name: json.dumps(value, ensure_ascii=False) for name, value in fields.items()},
                "score_contributions": json.dumps(contributions),
                "detail": json.dumps(detail, ensure_ascii=False, sort_keys=True),
            }
        )
    return rows


def render_card(runs: list[ScoredRun], dataset_id: str, revision: str) -> str:
    """The details dataset's card: configs for `load_dataset`, and what made each run."""
    configs = "\n".join(
        f"- config_name: {run.scores['task']}\n  data_files:\n  - split: test\n    path: {DATA.format(task=run.scores['task'])}"
        for run in runs
    )
    lines = [
        "---",
        "configs:",
        configs,
        "tags:",
        "- evaluation",
        "- cogbench",
        "---",
        "",
        f"# Per-item details: {runs[0].scores['model']} on `{dataset_id}`",
        "",
        f"Written by `cogbench publish-results`. Dataset `{dataset_id}` at revision `{revision}`. One row per",
        "scored item; `detail` is the run's details.jsonl line unchanged, and `runs/<task>/scores.json` and",
        "`report.md` are the run's files, so `cogbench verify` recomputes every number from these rows, offline.",
        "",
        "| config | items | judge | parsing | prompt template sha256 | cogbench | scores.json sha256 |",
        "|---|---|---|---|---|---|---|",
    ]
    for run in runs:
        scores = run.scores
        judge = scores["judge"]
        lines.append(
            f"| {scores['task']} | {len(run.details)} | {judge['kind']}{':' + judge['model'] if judge.get('model') else ''} "
            f"| {judge.get('parsing', '-')} | `{template_sha256(run) or '-'}` "
            f"| {(scores.get('provenance') or {}).get('cogbench_version', '-')} "
            f"| `{hashlib.sha256((run.folder / 'scores.json').read_bytes()).hexdigest()[:16]}` |"
        )
    lines += [
        "",
        "Columns `raw_output`, `prompt_sha256`, `parsed_answer`, `judge_verdicts`, `judge_replies` and `judge_errors`",
        "are JSON text (a list per CODIS pair, one entry per query). `prompt_sha256` is the sha256 of the prompt",
        "text the model got, null where the predictions file did not record it (the authors' and VLMEvalKit's",
        "files keep no prompt); `prompt_template_sha256` is the template's. `judge_replies` are an LLM judge's",
        "raw replies, with the sha256 of each judge prompt (its key in the verdict cache) for Cognition; the rule",
        "judge has none (null), an offline Cognition judge gives its best sentence and score per CoR.",
        'Load with `load_dataset(REPO, CONFIG, split="test", revision=COMMIT)`.',
        "",
    ]
    return "\n".join(lines)


def card_scores_sha256(card: str, task: str) -> str | None:
    """The scores.json sha256 (first 16 hex digits) the card's table states for ``task``; None where no row does.
    ``verify`` checks ``runs/<task>/scores.json`` against it, so an edited stated field (the interval settings,
    say, which no detail re-derives) does not pass."""
    for line in card.splitlines():
        if line.startswith(f"| {task} |"):
            return line.rstrip().rstrip("|").rsplit("|", 1)[-1].strip().strip("`") or None
    return None


def write_details(runs: list[ScoredRun], folder: Path, dataset_id: str, revision: str) -> list[str]:
    """Write the details dataset into ``folder``; return the paths written, relative to it."""
    import datasets

    datasets.disable_progress_bars()
    written = []
    for run in runs:
        task = run.scores["task"]
        path = folder / DATA.format(task=task)
        path.parent.mkdir(parents=True, exist_ok=True)
        datasets.Dataset.from_list(detail_rows(run)).to_parquet(str(path))
        for name, source in ((SCORES, "scores.json"), (REPORT, "report.md")):
            target = folder / name.format(task=task)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes((run.folder / source).read_bytes())
        written += [DATA.format(task=task), SCORES.format(task=task), REPORT.format(task=task)]
    (folder / "README.md").write_text(render_card(runs, dataset_id, revision), encoding="utf-8")
    return ["README.md", *written]


def read_details_folder(folder: Path) -> dict[str, dict[str, Any]]:
    """Per task: the details lines (from the Parquet rows' ``detail``), the rows, scores.json and report.md."""
    import datasets
    import pyarrow
    import pyarrow.parquet as pq

    datasets.disable_progress_bars()
    found = {}
    for parquet in sorted(folder.glob("data/*/test.parquet")):
        task = parquet.parent.name
        try:  # a broken file is one line here, before `datasets` logs it and raises
            pq.read_metadata(parquet)
        except (pyarrow.ArrowException, OSError) as error:
            raise RunNotVerified(f"{parquet}: not a readable Parquet file ({type(error).__name__})") from None
        rows = datasets.load_dataset("parquet", data_files=str(parquet), split="train")
        found[task] = {
            "details": [json.loads(text) for text in rows["detail"]],
            "rows": rows.to_list(),  # the readable columns, which verify checks against ``detail``
            "scores_path": folder / SCORES.format(task=task),
            "report_path": folder / REPORT.format(task=task),
        }
    return found
