"""The mutation score from cosmic-ray's outcomes, with survivors matched against the named equivalents.

An equivalent mutant is one that cannot change what the code computes (``tests/mutation/equivalent.toml``
says why for each). It is named by file, operator and the text of the mutated source line, so the
list survives edits elsewhere in the file; ``nth`` picks one of several such mutants on one line (by
column, then by cosmic-ray's order: a number gets two mutants, +1 then -1, at one place).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

import tomllib
from cosmic_ray.work_item import TestOutcome, WorkerOutcome
from scipy import stats

ANNOTATION_PREFIX = "not run: inside an annotation"
NOT_SAMPLED_PREFIX = "not run: outside the random sample"
COLUMNS = ("mutants", "annotation", "run", "killed", "survived", "equivalent", "score")


@dataclass(frozen=True)
class Equivalent:
    file: str
    operator: str
    line: str  # the source line, stripped
    reason: str
    nth: int | None = None  # which of the line's mutants by this operator, in column order (then cosmic-ray's order)


@dataclass(frozen=True)
class Summary:
    text: str
    passed: bool


def load_equivalents(path: Path) -> list[Equivalent]:
    entries = tomllib.loads(path.read_text()).get("equivalent", [])
    named = [Equivalent(**entry) for entry in entries]
    for entry in named:
        if not entry.reason.strip():
            raise SystemExit(f"error: {path}: the entry for {entry.file} {entry.line!r} gives no reason")
    return named


def _line_of(checkout: Path, mutation, cache: dict[str, list[str]]) -> str:
    module = str(mutation.module_path)
    if module not in cache:
        cache[module] = (checkout / module).read_text().splitlines()
    return cache[module][mutation.start_pos[0] - 1].strip()


def _changed_lines(diff: str | None) -> list[str]:
    return [line for line in (diff or "").splitlines() if line[:1] in "-+" and not line.startswith(("---", "+++"))]


def summarize(completed, checkout: Path, equivalents: list[Equivalent], fail_under: float) -> Summary:
    """Per-module counts, the score, and every survivor not named as equivalent (with its diff)."""
    lines_cache: dict[str, list[str]] = {}
    same_line = defaultdict(list)  # (file, operator, line text) -> mutations in column order
    for item, _ in completed:
        mutation = item.mutations[0]
        key = (str(mutation.module_path), mutation.operator_name, _line_of(checkout, mutation, lines_cache))
        same_line[key].append((tuple(mutation.start_pos), mutation.occurrence))
    for positions in same_line.values():
        positions.sort()

    def named(mutation) -> Equivalent | None:
        key = (str(mutation.module_path), mutation.operator_name, _line_of(checkout, mutation, lines_cache))
        for entry in equivalents:
            if (entry.file, entry.operator, entry.line) == key and (
                entry.nth is None or same_line[key].index((tuple(mutation.start_pos), mutation.occurrence)) == entry.nth
            ):
                return entry
        return None

    counts: dict[str, Counter] = defaultdict(Counter)
    survivors, wrongly_named, errors, used, unsampled = [], [], [], set(), set()
    for item, result in completed:
        mutation = item.mutations[0]
        row = counts[str(mutation.module_path)]
        row["mutants"] += 1
        if result.worker_outcome == WorkerOutcome.SKIPPED:
            in_annotation = (result.output or "").startswith(ANNOTATION_PREFIX)
            row["annotation" if in_annotation else "not sampled"] += 1
            if not in_annotation and named(mutation) is not None:
                unsampled.add(named(mutation))  # its mutant exists; a sampled run just did not draw it
            continue
        row["run"] += 1
        entry = named(mutation)
        if entry is not None:
            used.add(entry)
        if result.worker_outcome != WorkerOutcome.NORMAL or result.test_outcome == TestOutcome.INCOMPETENT:
            errors.append((mutation, result))
        elif result.test_outcome == TestOutcome.KILLED:
            row["killed"] += 1
            if entry is not None:
                wrongly_named.append((mutation, entry))
        elif entry is not None:
            row["equivalent"] += 1
        else:
            row["survived"] += 1
            survivors.append((mutation, result))

    total = sum(counts.values(), Counter())
    counts["all"] = total
    out = [f"{'module':44s}" + "".join(f"{c:>11s}" for c in COLUMNS)]
    for module, row in sorted(counts.items(), key=lambda kv: (kv[0] == "all", kv[0])):
        judged = row["killed"] + row["survived"]
        score = f"{100 * row['killed'] / judged:.1f}%" if judged else "n/a"
        out.append(f"{module:44s}" + "".join(f"{row[c]:11d}" for c in COLUMNS[:-1]) + f"{score:>11s}")
    judged = total["killed"] + total["survived"]
    score = 100 * total["killed"] / judged if judged else 0.0
    headline = (
        f"mutation score: {total['killed']} killed of {judged} non-equivalent mutants run = {score:.1f}% "
        f"(target {fail_under:g}%); {total['equivalent']} named equivalent, {total['annotation']} in "
        "annotations (not run)"
    )
    if total["not sampled"]:
        low, high = stats.binomtest(total["killed"], judged).proportion_ci(0.95, method="exact") if judged else (0, 1)
        headline += (
            f"; a SAMPLE: {total['run']} of {total['run'] + total['not sampled']} runnable mutants, "
            f"95% Clopper-Pearson interval of the score {100 * low:.1f}-{100 * high:.1f}%"
        )
    out.insert(0, headline)
    for title, rows in (("survivors not named as equivalent", survivors), ("errors (the run is not valid)", errors)):
        if rows:
            out.append(f"\n{title} ({len(rows)}):")
            for mutation, result in sorted(rows, key=lambda r: (str(r[0].module_path), r[0].start_pos)):
                out.append(
                    f"  {mutation.module_path}:{mutation.start_pos[0]} {mutation.operator_name} "
                    f"in {mutation.definition_name or 'module'}"
                )
                out += [f"      {line}" for line in _changed_lines(result.diff)] or [f"      {result.output!r}"[:300]]
    if wrongly_named:
        out.append(f"\nnamed as equivalent but killed ({len(wrongly_named)}): take them out of the list")
        out += [f"  {m.module_path}:{m.start_pos[0]} {m.operator_name}: {e.line}" for m, e in wrongly_named]
    not_drawn = [e for e in equivalents if e not in used and e in unsampled]
    if not_drawn:
        out.append(
            f"\nnamed as equivalent, not sampled ({len(not_drawn)}): their mutants were outside the random sample"
        )
    stale = [e for e in equivalents if e not in used and e not in unsampled and e.file in counts]
    if stale:
        out.append(f"\nnamed as equivalent but matching no mutant ({len(stale)}): the code changed; update the list")
        out += [f"  {e.file} {e.operator}: {e.line}" for e in stale]
    passed = score >= fail_under and not wrongly_named and not errors and judged > 0
    return Summary(text="\n".join(out), passed=passed)
