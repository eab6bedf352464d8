"""A judge certificate in ``cogbench report``: checked and re-derived before use, then its section.

``report --certificate CERT.json`` shows what ``judges certify --json`` wrote, but only after the
file passes its schema (``schemas/judge_certificate.schema.json``) and ``certify`` run again on the
sources it names (the reference runs or archives and the candidate's runs, with its bars, resamples
and seed) gives the very same certificate: an edited verdict or figure, or sources that changed
since, is refused in one line. The section also names the report's runs judged by an LLM judge that
is not the papers' official one (another model, ``vllm:``, a panel) and whether the certificate
covers them, so numbers judged otherwise are never shown as if the official judge had made them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cogbench.errors import CogbenchError, UsageError, locate
from cogbench.numbers import fixed
from cogbench.reference_eval.certifying.certificate_text import anchor_lines, criteria_table
from cogbench.reference_eval.certifying.certify import Bars, certify
from cogbench.reference_eval.certifying.verdict_archive import read_verdicts
from cogbench.reference_eval.judges.retirement import PAPER_JUDGES, paper_judge_text
from cogbench.reference_eval.recording.run_reader import ScoredRun, schema, validator
from cogbench.reference_eval.reports.judge_agreement import judge_label

OFFICIAL_JUDGES = PAPER_JUDGES  # the papers' judges (judges/retirement.KNOWN_SHUTDOWNS: both shut down)


def _sources(certificate: dict[str, Any], role: str) -> list[str]:
    return list(dict.fromkeys(m[role] for task in certificate["tasks"] for m in task["models"]))


def _found(where: str, role: str, path: str) -> Path:
    """``where`` as certify recorded it, or (a relative path) from the certificate's folder."""
    for found in (Path(where), Path(path).parent / where):
        if found.exists():
            return found
    raise UsageError(
        f"{locate(path, field=role)}: {where} is not there to re-derive the certificate from; run report where "
        "certify ran (or beside the certificate), or certify again"
    )


def _read(where: str, role: str, path: str) -> list[Any]:
    """The verdicts at ``where`` as certify recorded it; a relative path is also tried from the certificate's folder."""
    for found in (Path(where), Path(path).parent / where):
        if found.exists():
            judged = read_verdicts(str(found))
            for answers in judged:
                answers.where = where  # as recorded, so that the re-derivation names the same sources
            return judged
    raise UsageError(
        f"{locate(path, field=role)}: {where} is not there to re-derive the certificate from; run report where "
        "certify ran (or beside the certificate), or certify again"
    )


def _first_difference(stored: Any, again: Any, where: str = "") -> tuple[str, Any, Any] | None:
    """The first field (``tasks.0.criteria.1.value``) where two JSON values differ, with both values."""
    if isinstance(stored, dict) and isinstance(again, dict):
        for key in list(dict.fromkeys([*stored, *again])):
            found = _first_difference(stored.get(key), again.get(key), f"{where}.{key}" if where else str(key))
            if found:
                return found
        return None
    if isinstance(stored, list) and isinstance(again, list) and len(stored) == len(again):
        for number, (a, b) in enumerate(zip(stored, again)):
            found = _first_difference(a, b, f"{where}.{number}")
            if found:
                return found
        return None
    return None if stored == again else (where or "(the whole file)", stored, again)


def _short(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


def verified_certificate(path: str) -> dict[str, Any]:
    """The certificate at ``path``, schema-checked and equal to its re-derivation; one line for anything else."""
    try:
        certificate = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise UsageError(f"--certificate {path}: cannot read it ({error.strerror or error})") from None
    except ValueError as error:
        raise UsageError(f"--certificate {path}: not JSON ({str(error)[:200]})") from None
    except RecursionError:
        raise UsageError(f"--certificate {path}: not usable JSON (nested too deeply)") from None
    problems = sorted(
        validator(schema("judge_certificate.schema.json")).iter_errors(certificate), key=lambda e: list(e.path)
    )
    if problems:
        field = ".".join(str(part) for part in problems[0].absolute_path) or "(top level)"
        raise UsageError(
            f"{locate(path, field=field)}: {problems[0].message} (not the JSON that this cogbench's "
            "`cogbench judges certify` writes with its --json option; certify again)"
        )
    references = [j for where in _sources(certificate, "reference") for j in _read(where, "reference", path)]
    candidates = [j for where in _sources(certificate, "candidate") for j in _read(where, "candidate", path)]
    bars = Bars(**{bar["name"]: bar["value"] for bar in certificate["bars"]})
    settings = certificate["settings"]
    labels = None
    if "labels" in certificate:  # the human anchor: the people's labels and their key, read again
        given = certificate["labels"]
        labels = (
            [str(_found(f, "labels.files", path)) for f in given["files"]],
            str(_found(given["key"], "labels.key", path)),
        )
    derived = certify(references, candidates, bars, settings["resamples"], settings["seed"], labels)
    if labels is not None:
        derived["labels"] = certificate["labels"]  # as recorded (the paths found may be the certificate's folder's)
    again = json.loads(json.dumps(derived))
    difference = _first_difference(certificate, again)
    if difference:
        field, stored, derived = difference
        raise CogbenchError(
            f"{locate(path, field=field)}: NOT verified: the file says {_short(stored)}, its sources give "
            f"{_short(derived)}; certify again"
        )
    return certificate


def _judged_otherwise(run: ScoredRun) -> str | None:
    """How a run was judged when an LLM judge other than the papers' official one decided its verdicts."""
    judge = run.scores["judge"]
    if judge["kind"] == "panel":
        agreement = (run.scores.get("panel") or {}).get("agreement") or {}
        alpha = agreement.get("krippendorff_alpha")
        effective = (agreement.get("error_correlation") or {}).get("effective_judges")
        figures = [f"Krippendorff's alpha {fixed(alpha, 3)}" if alpha is not None else "alpha undefined"]
        figures += [f"{effective:g} effective judges"] if effective is not None else []
        return f"panel {judge.get('model', '')} ({', '.join(figures)})"
    official = OFFICIAL_JUDGES.get(run.scores["task"])
    if judge["kind"] == "vllm" or (judge["kind"] == "openai" and judge.get("model") != official):
        return judge_label(run)
    return None


def report_section(
    runs: Sequence[tuple[str, ScoredRun]], certificate: dict[str, Any] | None = None, source: str = ""
) -> list[str]:
    """report.md's "Judge certificate" section (Markdown lines), or none where no certificate is given and every
    run's verdicts are the official judge's, the rule judge's or no judge's."""
    otherwise = [(label, how) for label, run in runs if (how := _judged_otherwise(run))]
    if certificate is None and not otherwise:
        return []
    lines = ["## Judge certificate", ""]
    covered: set[str] = set()
    if certificate is None:
        lines += ["No certificate given (`--certificate CERT.json`: the JSON `cogbench judges certify` writes).", ""]
    else:
        judge = certificate["candidate_judge"]
        covered = {label for label, run in runs if judge_label(run) == judge}
        replaced = "; ".join(dict.fromkeys(paper_judge_text(task["task"]) for task in certificate["tasks"]))
        lines += [
            f"Certificate `{source}`, re-derived from its sources before use: candidate judge **{judge}** in place "
            f"of {replaced}, certified against the verdicts of {'; '.join(certificate['reference_judges'])}: "
            f"**{certificate['status']}**.",
            "",
        ]
        for task in certificate["tasks"]:
            lines += [f"{task['task']}: {task['status']}, {len(task['models'])} model(s), {task['images']} images.", ""]
            lines += [*criteria_table(task), ""]
            lines += anchor_lines(task)
        lines += [f"- {bar['name']} = {bar['value']}: {bar['source']}." for bar in certificate["bars"]] + [""]
        shown = ", ".join(label for label, _ in runs if label in covered) or "none of this report's runs"
        lines += [f"Runs judged by the certified judge: {shown}.", ""]
    uncovered = [f"{label} ({how})" for label, how in otherwise if label not in covered]
    if uncovered:
        lines += [
            "Judged by an LLM judge other than the papers' official one, with no certificate here: "
            + "; ".join(uncovered)
            + ". Their judged numbers may not mean what the papers' do; certify the judge with "
            "`cogbench judges certify` (docs/judges.md).",
            "",
        ]
    return lines
