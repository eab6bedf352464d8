"""The dataset card (README.md) of a built folder.

The YAML front matter is what the Hub and ``load_dataset`` read: ``configs``
maps each config to its Parquet files, ``dataset_info`` declares features and
split sizes. Everything is derived from the manifest and ``features.py``;
nothing is typed by hand.
"""

from __future__ import annotations

from typing import Any

import yaml

from cogbench.dataset_builders.features import FEATURES, SPLIT


def front_matter(manifest: dict[str, Any]) -> dict[str, Any]:
    configs, infos = [], []
    for config, entry in sorted(manifest["configs"].items()):
        configs.append({"config_name": config, "data_files": [{"split": SPLIT, "path": f"data/{config}/{SPLIT}-*.parquet"}]})
        infos.append(
            {
                "config_name": config,
                "features": FEATURES[config]._to_yaml_list(),
                "splits": [{"name": SPLIT, "num_bytes": entry["num_bytes"], "num_examples": entry["rows"]}],
                "download_size": sum(shard["bytes"] for shard in entry["shards"].values()),
                "dataset_size": entry["num_bytes"],
            }
        )
    return {"configs": configs, "dataset_info": infos}


def render_card(manifest: dict[str, Any]) -> str:
    header = yaml.safe_dump(front_matter(manifest), sort_keys=False, allow_unicode=True, width=1000)
    rows = "\n".join(f"| `{config}` | {entry['rows']} |" for config, entry in sorted(manifest["configs"].items()))
    return (
        f"---\n{header}---\n\n"
        f"# CogBench and CODIS (version {manifest['dataset_version']})\n\n"
        f"Built by cogbench {manifest['builder_version']}.\n\n"
        f"| config | rows |\n|---|---|\n{rows}\n"
    )
