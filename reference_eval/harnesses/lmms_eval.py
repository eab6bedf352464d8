"""Export an lmms-eval task folder: one YAML per task (and mode), ``utils.py``, ``utils_description.py``, README.md.

lmms-eval reads every ``*.yaml`` under ``--include_path DIR``; each task here
loads the data (``DatasetLocation``: a Hub repo id pinned to the release tag,
or the build's Parquet shards by paths relative to the task folder, so the
folder works wherever it and the build are moved together) and calls the
functions of ``lmms_eval_tasks`` through the utils files, so prompts and
scorers are this package's (install it beside lmms-eval). Tasks:
``cogbench_description_spontaneous``, ``cogbench_description_directed``
(CogBench Section 3.2.1's two modes), ``cogbench_vqa``, ``cogbench_codis``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from cogbench import __version__
from cogbench.dataset_builders.writes import write_file
from cogbench.errors import UsageError
from cogbench.reference_eval.metrics.recognition import PAPER_EMBEDDER, PAPER_SPACY_MODEL, check_models
from cogbench.reference_eval.tasks.prompts import (
    CODIS_DI_COT,
    DESCRIPTION_DIRECTED,
    DESCRIPTION_SPONTANEOUS,
    VQA_MULTIPLE_CHOICE,
)
from cogbench.reference_eval.tasks.queries import DEFAULT_MAX_NEW_TOKENS

UTILS = '''"""lmms-eval calls these through the YAMLs beside this file; the code is the cogbench package's."""

from cogbench.reference_eval.harnesses.lmms_eval_tasks import *  # noqa: F401,F403
'''
# The description tasks' functions: a module of their own, so that their models are checked when
# lmms-eval loads these tasks (in the first second of a run) and never for a VQA or CODIS run.
UTILS_DESCRIPTION = '''"""The description tasks' functions; importing this checks the Recognition Score's models."""

from cogbench.reference_eval.harnesses.lmms_eval_tasks import *  # noqa: F401,F403
from cogbench.reference_eval.harnesses.lmms_eval_tasks import recognition_score, require_models

# The Recognition Score's models (`cogbench export --spacy-model/--embedder`): names or local paths.
SPACY_MODEL = {spacy_model!r}
EMBEDDER = {embedder!r}
require_models(SPACY_MODEL, EMBEDDER)  # a missing or moved model fails here, before any generation


def description_recognition(items):
    return recognition_score(items, SPACY_MODEL, EMBEDDER)
'''
# The paper's models (CogBench Section 3.2.1), as `cogbench score`'s defaults.
DEFAULT_SPACY_MODEL = PAPER_SPACY_MODEL
DEFAULT_EMBEDDER = PAPER_EMBEDDER

# task name -> (config, prompt template, functions prefix, metrics -> aggregation function)
TASKS = {
    "cogbench_description_spontaneous": (
        "description",
        DESCRIPTION_SPONTANEOUS,
        "description_spontaneous",
        {"recognition": "description_recognition"},
    ),
    "cogbench_description_directed": (
        "description",
        DESCRIPTION_DIRECTED,
        "description_directed",
        {"recognition": "description_recognition"},
    ),
    "cogbench_vqa": ("vqa", VQA_MULTIPLE_CHOICE, "vqa", {"accuracy": "mean", "accuracy_official": "mean"}),
    "cogbench_codis": ("codis", CODIS_DI_COT, "codis", {"acc_p": "codis_acc_p", "acc_q": "codis_acc_q"}),
}


def max_new_tokens(config: str, override: int | None = None) -> int:
    """The generated-token limit of a config's tasks: ``cogbench eval``'s (per task) unless the user gave one."""
    return override if override is not None else DEFAULT_MAX_NEW_TOKENS[config]


def model_reference(name_or_path: str) -> str:
    """A model given as an existing path, made absolute (lmms-eval runs from another folder); a name as given."""
    path = Path(name_or_path).expanduser()
    return str(path.resolve()) if path.exists() else name_or_path


@dataclass(frozen=True)
class DatasetLocation:
    """Where the exported tasks read the data: ``path`` (a Hub repo id or any ``load_dataset`` path) at
    ``revision``, or, with ``shards``, the build's Parquet files relative to the task folder."""

    path: str
    revision: str | None = None
    shards: dict[str, list[str]] | None = None  # config -> shard paths relative to the task folder

    def describe(self) -> str:
        if self.shards is not None:
            return "the build's Parquet shards, by paths relative to this folder"
        return f"{self.path}" + (f" at revision {self.revision}" if self.revision else "")


def dataset_location(dataset: str, revision: str | None, out: Path, dataset_path: str | None = None) -> DatasetLocation:
    """The portable way to point the tasks at ``dataset`` (``--dataset-path`` overrides).

    A Hub repo id stays one; a built folder whose manifest names its repo becomes that
    repo pinned to the release tag (``v`` + dataset_version, as `publish` tags it);
    any other build is read through its shards, relative to ``out``.
    """
    if dataset_path is not None:
        return DatasetLocation(dataset_path, revision)
    manifest_path = Path(dataset) / "manifest.json"
    if not manifest_path.is_file():
        return DatasetLocation(dataset, revision)
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    if manifest.get("repo_id"):
        return DatasetLocation(manifest["repo_id"], f"v{manifest['dataset_version']}")
    build, here = Path(dataset).resolve(), out.resolve()
    shards = {}
    for config, entry in manifest["configs"].items():
        files = [(build / shard).resolve() for shard in sorted(entry["shards"])]
        outside = [str(f) for f in files if not f.is_relative_to(build)]
        if outside:
            raise UsageError(
                f"{manifest_path}: record configs.{config}: field shards: {outside[0]} is outside the build"
            )
        shards[config] = [os.path.relpath(f, here) for f in files]
    return DatasetLocation("parquet", shards=shards)


def exported_tasks(location: DatasetLocation) -> list[str]:
    """The tasks whose config the data has (every task for a Hub repo or another path)."""
    return [name for name, (config, *_) in TASKS.items() if location.shards is None or config in location.shards]


def task_yaml(name: str, location: DatasetLocation, tokens: int | None = None) -> str:
    """One task's YAML; ``tokens`` is the user's `--max-new-tokens` (None: `eval`'s per-task default)."""
    config, template, prefix, metrics = TASKS[name]
    utils = "utils_description" if config == "description" else "utils"
    lines = [
        f"# Written by `cogbench export --format lmms-eval`; prompt {template.id} (sha256 {template.sha256[:12]}).",
        f"task: {name}",
        f"dataset_path: {json.dumps(location.path)}",
    ]
    if location.shards is not None:  # lmms-eval resolves these against this file's folder
        lines += ["dataset_kwargs:", "  data_files:", "    test:"]
        lines += [f"      - {json.dumps(shard)}" for shard in location.shards[config]]
    else:
        lines.append(f"dataset_name: {config}")
        if location.revision:
            lines.append(f"dataset_kwargs:\n  revision: {json.dumps(location.revision)}")
    lines += [
        "test_split: test",
        "output_type: generate_until",
        f"doc_to_visual: !function {utils}.doc_to_visual",
        f"doc_to_text: !function {utils}.{prefix}_doc_to_text",
        f"doc_to_target: !function {utils}.{config}_doc_to_target",
    ]
    if config == "codis":
        lines.append("process_docs: !function utils.codis_process_docs")
    lines += [
        "generation_kwargs:",
        f"  max_new_tokens: {max_new_tokens(config, tokens)}",
        "  temperature: 0",
        "  do_sample: false",
        f"process_results: !function {utils}.{config}_process_results",
        "metric_list:",
    ]
    for metric, aggregation in metrics.items():
        lines += [
            f"  - metric: {metric}",
            f"    aggregation: !function {utils}.{aggregation}",
            "    higher_is_better: true",
        ]
    lines += ["metadata:", f"  version: {json.dumps(template.id)}"]
    return "\n".join(lines) + "\n"


README = """# cogbench tasks for lmms-eval

Written by `cogbench export --format lmms-eval` (cogbench {version}).

    lmms-eval --include_path THIS_FOLDER --tasks {tasks} --model MODEL --log_samples --output_path OUT

**Data**: {where}.
{data_note}
To point the tasks elsewhere, export again with `--dataset-path` (a Hub repo id, or a folder
`load_dataset` reads) and `--revision`, or edit `dataset_path` in the YAML files.

**Generated tokens per query at most** (`generation_kwargs.max_new_tokens`, {tokens_note}):
{token_limits}.

**Models of the Recognition Score** (description tasks; checked when lmms-eval loads those tasks):
spaCy `{spacy_model}`, embedder `{embedder}` (a path is written absolute). A model by name:
install the spaCy one with `python -m spacy download NAME`; a moved folder: export again with
`--spacy-model FOLDER --embedder FOLDER`.

Score the `--log_samples` files (and add judges) with
`cogbench score --task TASK --dataset DATASET --predictions OUT/MODEL/DATE_samples_TASK.jsonl`.
"""
RELATIVE_NOTE = (
    "The YAML files name the shards by paths relative to this folder (lmms-eval 0.7 resolves\n"
    "`data_files` against the YAML's folder): move this folder and the build together."
)


def export_lmms_eval(
    location: DatasetLocation,
    out: Path,
    spacy_model: str = DEFAULT_SPACY_MODEL,
    embedder: str = DEFAULT_EMBEDDER,
    models_checked: bool = False,
    tokens: int | None = None,
) -> list[Path]:
    """Write the task folder ``out`` (created; files of the same names replaced) and return its files.

    The Recognition Score's models are loaded first: a missing one is refused before anything is written.
    ``tokens`` is the user's `--max-new-tokens` for every task (None: `cogbench eval`'s per-task defaults).
    """
    spacy_model, embedder = model_reference(spacy_model), model_reference(embedder)
    if not models_checked:  # `cogbench export` checks them before it claims the folder
        check_models(spacy_model, embedder)
    written = [out / "utils.py", out / "utils_description.py"]
    write_file(written[0], UTILS)
    write_file(written[1], UTILS_DESCRIPTION.format(spacy_model=spacy_model, embedder=embedder))
    for name in exported_tasks(location):
        written.append(write_file(out / f"{name}.yaml", task_yaml(name, location, tokens)))
    readme = README.format(
        version=__version__,
        tasks=",".join(exported_tasks(location)),
        where=location.describe(),
        data_note=RELATIVE_NOTE if location.shards is not None else "",
        spacy_model=spacy_model,
        embedder=embedder,
        tokens_note="given with --max-new-tokens" if tokens is not None else "as `cogbench eval`'s defaults",
        token_limits=", ".join(f"{name} {max_new_tokens(TASKS[name][0], tokens)}" for name in exported_tasks(location)),
    )
    written.append(write_file(out / "README.md", readme))
    return written
