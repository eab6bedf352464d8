"""``cogbench labels dataset``: labels of one sample, unblinded with its key, as a folder ready for the Hub.

Labels are collected once and serve every later judge: each row names the model and the ``answers_sha256`` of the
answers it labels, so any judge's run of the same answers (``provenance.answers_sha256``) joins them on
(task, answers_sha256, item_id, category, query), the verdict archive's key. The folder holds
``data/labels.parquet``, the page's ``sample.json`` (seed and protocol) and ``README.md``, a dataset card whose
front matter names the Parquet file, so ``huggingface_hub``'s ``upload_folder`` publishes it as it is.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from cogbench import __version__
from cogbench.dataset_builders.output import claim_output, record_written
from cogbench.dataset_builders.writes import write_file, write_with
from cogbench.errors import UsageError, locate
from cogbench.reference_eval.labelling.labels_format import (
    SAMPLE_FILE,
    check_against_sample,
    read_key,
    read_labels,
    read_sample,
)

DATASET_FILES = ("README.md", SAMPLE_FILE, "data/labels.parquet")
COLUMNS = (
    "task",
    "model",
    "answers_sha256",
    "item_id",
    "category",
    "query",
    "label",
    "labeller",
    "role",
    "time",
    "unit",
    "sample",
)
CARD = """---
license: other
tags:
- cogbench
- human-labels
- llm-as-a-judge
configs:
- config_name: default
  data_files:
  - split: train
    path: data/labels.parquet
---

# People's labels of judged units (cogbench)

Written by `cogbench labels dataset` (cogbench {version}) from {files} labels file(s) of the sample `{sample}`
(seed {seed}): {labels} label(s) of {units} unit(s) by {labellers} labeller(s). Every figure below is over this
**sample**, not the whole benchmark.

Each row is one person's label of one unit, keyed as a judge's verdict is (`task`, `answers_sha256`, `item_id`,
`category`, `query`): join them with any judge's run of the same answers (`provenance.answers_sha256` of its
scores.json) to measure that judge against people (`cogbench judges validate`). `label` is 1 for yes, 0 for no.

## Protocol

{questions}
- Units drawn: {per_stratum} per task, category and model (all when a stratum holds fewer), with seed {seed};
  {order}.
- Roles: {roles}; a share of {share} of each stratum's units is shared.
- Labellers were blind: the page showed the image, the question or reasoning item and one model's answer, never a
  verdict, score, model name or judge reply. `sample.json` lists the units drawn and each stratum's counts.

## Counts

| task | model | units labelled | labels | units labelled twice | agree |
|---|---|---|---|---|---|
{rows}
"""


def joined_rows(labels, entries: dict[str, Any]) -> list[dict[str, Any]]:
    """The labels with each opaque answers id replaced by its model and answers_sha256."""
    rows = []
    for label in labels:
        entry = entries.get(label.answers)
        if entry is None or entry.task != label.task:
            file, line = label.place
            raise UsageError(f"{locate(file, line, 'answers')}: {label.answers} is not in the key ({label.task})")
        row = {name: getattr(label, name) for name in COLUMNS if hasattr(label, name)}
        rows.append({**row, "model": entry.model, "answers_sha256": entry.answers_sha256})
    return rows


def _count_rows(rows: list[dict[str, Any]]) -> str:
    lines = []
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["task"], row["model"]), []).append(row)
    for (task, model), group in sorted(groups.items()):
        by_unit: dict[str, list[int]] = {}
        for row in group:
            by_unit.setdefault(row["unit"], []).append(row["label"])
        twice = [given for given in by_unit.values() if len(given) > 1]
        agree = sum(len(set(given)) == 1 for given in twice)
        shown_model = model.replace("|", "\\|")
        lines.append(f"| {task} | {shown_model} | {len(by_unit)} | {len(group)} | {len(twice)} | {agree} |")
    return "\n".join(lines)


def write_labels_dataset(files: list[Path], page: Path, key: Path, out: Path) -> dict[str, Any]:
    """Check every labels file against the page's sample and the key, write the dataset folder ``out``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    reads = [("LABELS", f) for f in files] + [("--sample", page), ("--key", key)]
    claim_output(out, "labels-dataset", DATASET_FILES, create=False, reads=reads)
    sample = read_sample(page)
    sample_id, entries = read_key(key)
    if sample_id != sample["sample"]:
        raise UsageError(
            f"--key {key}: the key of sample {sample_id[:12]}..., not of {page} ({sample['sample'][:12]}...)"
        )
    labels = []
    for path in files:
        given = read_labels(path)
        check_against_sample(given, sample, f"{page}/{SAMPLE_FILE}")
        labels += given
    seen: dict[tuple[str, str], str] = {}
    for label in labels:
        if seen.setdefault((label.unit, label.labeller), label.where) != label.where:
            file, line = label.place
            raise UsageError(
                f"{locate(file, line, 'unit')}: {label.unit} labelled by {label.labeller} in two files "
                f"(also {seen[(label.unit, label.labeller)]}); give each labeller's export once"
            )
    rows = joined_rows(labels, entries)
    claim_output(out, "labels-dataset", DATASET_FILES, reads=reads)
    schema = pa.schema([(name, pa.int8() if name == "label" else pa.string()) for name in COLUMNS])
    table = pa.Table.from_pylist([{name: row[name] for name in COLUMNS} for row in rows], schema=schema)
    write_with(out / "data" / "labels.parquet", lambda handle: pq.write_table(table, handle), root=out)
    write_file(out / SAMPLE_FILE, json.dumps(sample, indent=2, ensure_ascii=False) + "\n", root=out)
    protocol = sample["protocol"]
    questions = "\n".join(f"- {task}: *{text}*" for task, text in sorted(protocol["questions"].items()))
    card = CARD.format(
        version=__version__,
        files=len(files),
        sample=sample["sample"],
        seed=sample["seed"],
        labels=len(rows),
        units=len({row["unit"] for row in rows}),
        labellers=len({row["labeller"] for row in rows}),
        questions=questions,
        per_stratum=protocol["per_stratum"],
        order=protocol["order"],
        roles=protocol["roles"],
        share=protocol["shared_share"],
        rows=_count_rows(rows),
    )
    write_file(out / "README.md", card, root=out)
    record_written(out, DATASET_FILES, list(DATASET_FILES))
    people = Counter(row["labeller"] for row in rows)
    return {"labels": len(rows), "units": len({row["unit"] for row in rows}), "labellers": len(people)}
