"""The site's items: every item of each task with its image, question and gold from the build, and each
run's answer: raw output (reasoning apart), parsed answer, verdict and the judge's raw reply (a judge panel's: each
member's verdict and raw reply beside the panel's majority verdict).

Answers come from the runs' verified details (``run_reader.read_run``) through ``details_dataset.row_fields``,
the one rule that names each item's output, parsed answer, verdicts and judge replies. The item's content comes
from the build the runs were scored on, read through ``validation.integrity.load_verified``; an image is written
once, as the build stores it, named by its sha256. Each item carries the flags the viewer filters by, decided
here so the page only compares booleans: runs disagree (their verdicts differ), judges disagree (two runs with
the same output text got different verdicts), truncated or unscored (an answer truncated or empty, a judge error,
a verdict of null: a judge reply that constrained parsing left unscored among them).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from cogbench.reference_eval.answers.reasoning import NO_ANSWER
from cogbench.reference_eval.answers.reply_details import answer_dicts, rederived
from cogbench.reference_eval.judges.verdicts import UNSCORED
from cogbench.reference_eval.publishing.details_dataset import row_fields
from cogbench.reference_eval.reports.report_runs import ReportRun
from cogbench.schemas.vocabulary import CATEGORY_LABEL
from cogbench.validation.integrity import load_verified

ID_COLUMN = {"description": "image_id", "vqa": "question_id", "codis": "id"}
UNSCORED_STATUS = NO_ANSWER  # every reply scored as no answer (answers/reasoning.py)


def build_rows(dataset: str, task: str) -> list[dict[str, Any]] | None:
    """The build's rows of the task's config, images undecoded; None when the build is not a local folder."""
    import datasets

    if not Path(dataset).is_dir():
        return None
    data = load_verified(dataset, task)
    data = data.cast_column("image", datasets.Image(decode=False))
    names = data.features["category"].names if "category" in data.features else None
    rows = data.to_list()
    for row in rows:
        if names is not None:
            row["category"] = names[row["category"]]
    return rows


def item_content(task: str, row: dict[str, Any], write_image: Callable[[bytes], str]) -> dict[str, Any]:
    """What a person reads of the item: image file, question (options or the two CODIS contexts), gold."""
    image = row.get("image") or {}
    content: dict[str, Any] = {"image": write_image(image["bytes"]) if image.get("bytes") else None}
    if task == "codis":
        content.update(
            question=row["question"],
            contexts=[row["context_1"], row["context_2"]],
            gold=[row["answer_1"], row["answer_2"]],
        )
    elif task == "vqa":
        content.update(
            question=row["question"],
            options=[row[f"choice_{x}"] for x in "abcd"],
            gold="ABCD"[row["answer"]],
        )
    else:
        content.update(
            question="Describe the image (CogBench description task).",
            gold=row["description"],
            entities=row["entities"],
            cors={c: [cor["text"] for cor in cors] for c, cors in row["cors"].items() if cors},
        )
    return content


def _replies(task: str, detail: dict[str, Any]) -> list[dict[str, Any]]:
    """Each answer's kept reply (one per CODIS query or VQA rotation): its reasoning, inline or from a separate
    field, split again by ``answers.reply_details.rederived`` (the rule `score` and `verify` apply), the reply as
    written when it differs from the scored text, finish reason and status."""
    replies = []
    for _, answer, _ in answer_dicts(task, [detail]):
        record = answer.get("reply") or {}
        split = rederived(task, answer)
        replies.append(
            {
                "reasoning": (split.reasoning if split is not None else record.get("reasoning")) or None,
                "content": record.get("content"),
                "finish": record.get("finish_reason"),
                "status": answer.get("answer_status", "answered"),
            }
        )
    return replies


def panel_members(task: str, detail: dict[str, Any]) -> list[dict[str, Any]] | None:
    """A judge panel's members on one item, in the panel's order: each member's verdict and error per unit (CODIS
    query, Cognition CoR) and its raw replies (per query; per Figure 8/9 prompt); None for a run of one judge."""
    if task == "codis":
        units = [query.get("panel") or [] for query in detail.get("queries", [])]
        verdict, replies = "right", None
    elif task == "description":
        units = [cor.get("panel") or [] for cor in detail.get("cognition") or []]
        verdict, replies = "verdict", detail.get("panel_replies") or []
    else:
        return None
    names = list(dict.fromkeys(m.get("judge") for unit in units for m in unit))
    if not names:
        return None
    members = []
    for name in names:
        given = [next((m for m in unit if m.get("judge") == name), {}) for unit in units]
        members.append(
            {
                "judge": name,
                "verdicts": [m.get(verdict) for m in given],
                "errors": [m.get("judge_error") for m in given],
                "replies": [m.get("judge_reply") for m in given]
                if replies is None
                else [{"figure": r.get("figure"), "reply": r.get("reply")} for r in replies if r.get("judge") == name],
            }
        )
    return members


def run_answer(task: str, detail: dict[str, Any]) -> dict[str, Any]:
    """One run's answer to one item, as plain data."""
    fields = row_fields(task, detail)
    answer = {
        "out": fields["raw_output"],
        "parsed": fields["parsed_answer"],
        "verdict": fields["judge_verdicts"],
        "judge": fields["judge_replies"],
        "judge_error": fields["judge_errors"],
        # constrained parsing: each query's (or CoR's) judge reply that is no official label; neither wrong nor a
        # judge failure (judges/verdicts.py), so the page says UNSCORED, not "Judge error"
        "unscored": [error == UNSCORED for error in fields["judge_errors"]] if fields["judge_errors"] else None,
        "replies": _replies(task, detail),
    }
    members = panel_members(task, detail)
    if members is not None:  # a panel's verdict is its members' majority: each member is shown
        answer["panel"] = members
    if task == "vqa":
        answer["verdict"] = {"robust": detail["correct"], "official": detail["correct_official"]}
    elif task == "description":
        recognition = detail["recognition"]
        answer["recognition"] = [recognition["recognized"], recognition["annotated"]]
    return answer


def _verdict_key(answer: dict[str, Any]) -> str:
    return repr(answer["verdict"]) + repr(answer.get("recognition"))


def flags(answers: list[dict[str, Any] | None]) -> dict[str, bool]:
    """The filters' facts about one item (see the module's docstring)."""
    given = [a for a in answers if a is not None]
    by_output: dict[str, set[str]] = {}
    for answer in given:
        by_output.setdefault(repr(answer["out"]), set()).add(_verdict_key(answer))
    unscored = False
    for answer in given:
        verdicts = answer["verdict"] if isinstance(answer["verdict"], list) else [answer["verdict"]]
        verdicts = [v for v in verdicts if not isinstance(v, dict)] + [
            x for v in verdicts if isinstance(v, dict) for x in v.values()
        ]
        errors = answer["judge_error"] or []
        unscored = unscored or any(r["status"] in UNSCORED_STATUS for r in answer["replies"])
        unscored = unscored or any(v is None for v in verdicts) or any(e for e in errors)
    return {
        "runs_disagree": len({_verdict_key(a) for a in given}) > 1,
        "judges_disagree": any(len(keys) > 1 for keys in by_output.values()),
        "unscored": unscored,
    }


def task_items(
    task: str, runs: list[ReportRun], write_image: Callable[[bytes], str]
) -> tuple[list[dict[str, Any]], str]:
    """(every item of the task with each run's answer, in the order of ``runs``; a note on what is missing)."""
    first = runs[0].run.scores
    rows = build_rows(first["dataset"], task)
    by_run = [{d["item_id"]: d for d in run.run.details} for run in runs]
    order: list[str] = []
    for details in by_run:
        order += [item for item in details if item not in order]
    content: dict[str, dict[str, Any]] = {}
    note = ""
    if rows is None:
        note = f"the build {first['dataset']} is not a local folder: items show no image, question or gold"
    else:
        for row in rows:
            if str(row[ID_COLUMN[task]]) in set(order):
                content[str(row[ID_COLUMN[task]])] = item_content(task, row, write_image)
        order = [str(row[ID_COLUMN[task]]) for row in rows if str(row[ID_COLUMN[task]]) in content] + [
            item for item in order if item not in content
        ]
    items = []
    for item in order:
        details = [d.get(item) for d in by_run]
        category = next((d.get("category") for d in details if d and d.get("category")), None)
        answers = [run_answer(task, d) if d else None for d in details]
        items.append(
            {
                "id": item,
                "category": category,
                "category_label": CATEGORY_LABEL.get(category, category) if category else "",
                **content.get(item, {}),
                "answers": answers,
                **flags(answers),
            }
        )
    return items, note
