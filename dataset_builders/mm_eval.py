"""``metadata.json``: the build described as the Hub's mm-eval datasets describe theirs.

The mm-eval organisation's datasets (MME, MMBench, MMMU, MMVP, MMT-Bench...) each carry a root
``metadata.json``: ``name`` and one entry per subset with ``language``, ``modalities``,
``task_type``, the benchmark's ``prompt_template`` (Jinja, ``<image>`` where the image goes), a
``mapping_from_source`` (which column fills which field) and ``prompt_template_source``
(``origin``, ``reference``, ``notes`` opening with "Tier N:", 1 being the benchmark authors' own).
This file has those keys, one subset per config, so that a tool or a person finds the prompt a
score was made with and where it comes from; beside them, what only cogbench knows: every template
the evaluator renders for the config exactly as it renders it (``str.format`` text, id, sha256,
the ``eval`` option that picks it) and the authors' scoring scripts at the release's commit.

Rendered from the manifest and ``schemas.prompt_templates`` alone, so ``validate`` re-renders it
and compares, as for croissant.json.
"""

from __future__ import annotations

import re
from typing import Any

from cogbench.dataset_builders.fetch import RELEASE_OF, pinned_files
from cogbench.schemas.prompt_templates import CONFIG_TEMPLATES, SOURCES, PromptTemplate
from cogbench.schemas.sources import expected_licence, sources_of
from cogbench.schemas.vocabulary import CHOICE_COLUMNS, ID_COLUMN, SPLIT

METADATA_FILE = "metadata.json"
NAMES = {"cogbench": "CogBench", "codis": "CODIS"}
TASK_TYPE = {"description": "image_description", "vqa": "multiple_choice_vqa", "codis": "vqa"}
# The authors' scoring scripts of each config, as paths in their repository (the shared oracles/ copies).
AUTHORS_SCORERS = {
    "description": ("eval/recognition_score.py", "eval/cognition_gpt_eval.py", "eval/cognition_score.py"),
    "vqa": ("eval/vqa_accuracy.py",),
    "codis": ("data/eval.py",),
}
# Which column fills each field (mm-eval's mapping_from_source), besides media and id.
FIELDS: dict[str, dict[str, Any]] = {
    "description": {
        "extra": {
            "entities": {"from": "entities", "note": "reference entities of the Recognition Score"},
            "cors": {"from": "cors", "note": "reference chains of reasoning per category (Cognition Score)"},
            "description": {"from": "description", "note": "the annotators' reference description"},
        },
    },
    "vqa": {
        "question": {"from": "question"},
        "options": {"from": list(CHOICE_COLUMNS), "note": "options A-D in this order; the template names each column"},
        "answer": {"from": "answer", "note": "class label: index of the right letter in A-D"},
        "extra": {"category": {"from": "category"}, "image_id": {"from": "image_id"}},
    },
    "codis": {
        "question": {"from": "question"},
        "answer": {"from": ["answer_1", "answer_2"], "note": "the answer under context_1, under context_2"},
        "extra": {
            "context": {"from": ["context_1", "context_2"], "note": "the template's context: one query per context"},
            "category": {"from": "category"},
            "image_id": {"from": "image_id"},
        },
    },
}


def jinja_template(template: PromptTemplate) -> str:
    """The template in mm-eval's form: the image first, each ``{field}`` as ``{{ field }}``."""
    if "{{" in template.text or "{%" in template.text:
        raise ValueError(f"{template.id}: text holds Jinja syntax; it would not convert faithfully")
    return "<image>" + re.sub(r"\{(\w+)\}", r"{{ \1 }}", template.text)


def template_source(template: PromptTemplate) -> dict[str, str]:
    source = SOURCES[template.id]
    tier = f"Tier {source.tier}" if source.tier is not None else "No tier"
    return {"origin": source.origin, "reference": source.reference, "notes": f"{tier}: {source.notes}"}


def scorer_links(config: str) -> list[str]:
    benchmark = next(iter(sources_of([config])))
    pin = pinned_files()[RELEASE_OF[benchmark]]
    return [f"https://github.com/{pin['repository']}/blob/{pin['commit']}/{path}" for path in AUTHORS_SCORERS[config]]


def subset(config: str, entry: dict[str, Any]) -> dict[str, Any]:
    templates = CONFIG_TEMPLATES[config]
    default = templates[0][0]
    return {
        "language": ["en"],
        "modalities": ["single_image_start"],
        "task_type": TASK_TYPE[config],
        "prompt_template": jinja_template(default),
        "mapping_from_source": {
            "media": {"from": "image", "type": "list", "min_items": 1, "max_items": 1},
            "id": {"from": ID_COLUMN[config]},
            **FIELDS[config],
            "source": {"format": "parquet", "url": {SPLIT: f"data/{config}/{SPLIT}-*.parquet"}},
        },
        "prompt_template_source": template_source(default),
        "split": SPLIT,
        "rows": entry["rows"],
        "counts": entry["counts"],
        "prompt_templates": [
            {
                "id": template.id,
                "sha256": template.sha256,
                "eval_option": option,
                "format": "python str.format",
                "text": template.text,
                "prompt_template": jinja_template(template),
                "prompt_template_source": template_source(template),
            }
            for template, option in templates
        ],
        "authors_scoring_scripts": scorer_links(config),
    }


def render_mm_eval(manifest: dict[str, Any]) -> dict[str, Any]:
    """The metadata.json content of a build (keys in mm-eval's order, then cogbench's)."""
    configs = [config for config in CONFIG_TEMPLATES if config in manifest["configs"]]
    licence = expected_licence(configs)
    return {
        "name": " and ".join(NAMES[name] for name in sources_of(configs)) or "CogBench",
        "subsets": {config: subset(config, manifest["configs"][config]) for config in configs},
        "dataset_version": manifest["dataset_version"],
        "license": licence["license"],
        "license_name": licence["license_name"],
        "source_releases": {name: entry["release"] for name, entry in sorted(manifest["raw_release"].items())},
        "builder": f"cogbench {manifest['builder_version']}",
    }
