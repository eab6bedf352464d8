"""``eval.yaml``: the build registered as a Hub benchmark (hub-docs "Evaluation Results").

The Hub aggregates a benchmark's leaderboard from the model repos' ``.eval_results/*.yaml``
files whose ``dataset.task_id`` names one of the tasks listed here. One task per config and
metric family (``schemas.vocabulary.BENCHMARK_TASKS``), only for the configs the build holds.
Rendered from the manifest alone, so ``validate`` re-renders it and compares, as for croissant.json.
"""

from __future__ import annotations

from typing import Any

import yaml

from cogbench.schemas.vocabulary import BENCHMARK_TASKS, EVALUATION_FRAMEWORK, SPLIT

EVAL_YAML_FILE = "eval.yaml"
SCHEMA_FILE = "eval_yaml.schema.json"
DESCRIPTION = {
    "description": "CogBench image descriptions: Recognition Score (entities named) and Cognition Score "
    "(chains of reasoning judged) over eight reasoning categories.",
    "vqa": "CogBench multiple-choice VQA: accuracy over eight reasoning categories.",
    "codis": "CODIS context-dependent image questions: pair accuracy Acc_p and query accuracy Acc_q.",
}


def render_eval_yaml(manifest: dict[str, Any]) -> dict[str, Any]:
    """The eval.yaml content of a build (as a dict; ``eval_yaml_text`` writes it)."""
    configs = [config for config in DESCRIPTION if config in manifest["configs"]]
    names = [name for name, held in (("CogBench", {"description", "vqa"}), ("CODIS", {"codis"})) if held & set(configs)]
    return {
        "name": " and ".join(names) or "CogBench",
        "description": " ".join(DESCRIPTION[c] for c in configs)
        + f" Dataset version {manifest['dataset_version']}; scores come from `cogbench eval` / `cogbench score`.",
        "evaluation_framework": EVALUATION_FRAMEWORK,
        "tasks": [
            {"id": task_id, "config": config, "split": SPLIT}
            for task_id, (config, _) in BENCHMARK_TASKS.items()
            if config in configs
        ],
    }


def eval_yaml_text(content: dict[str, Any]) -> str:
    return yaml.safe_dump(content, sort_keys=False, allow_unicode=True, width=100)
