"""The cluster engines people run, not a scheduler of our own: a Slurm array script and a Kubernetes Indexed Job.

Each array task (``SLURM_ARRAY_TASK_ID``) or completion index (``JOB_COMPLETION_INDEX``) runs one shard with
``cogbench sweep run-shard DIR --index I``; ``run-shard`` reads those variables itself when ``--index`` is not
given. The sweep folder (and, when a model's URL carries credentials, the spec) must be at the same path on
every node: a shared file system, or the volume the manifest mounts.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

INDEX_VARIABLES = ("SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX")
DEFAULT_IMAGE = "cogbench:latest"
DEFAULT_PARALLELISM = 8
SECRET = "cogbench-sweep"  # the Kubernetes secret holding the API keys


def shard_command(folder: Path, index: str) -> list[str]:
    return ["cogbench", "sweep", "run-shard", str(folder), "--index", index]


def slurm_script(folder: Path, shards: int) -> str:
    """An ``sbatch`` array script: one task per shard, index from ``SLURM_ARRAY_TASK_ID``."""
    command = " ".join(shlex.quote(word) for word in shard_command(folder, "INDEX")).replace(
        "INDEX", '"${SLURM_ARRAY_TASK_ID}"'
    )
    return "\n".join(
        [
            "#!/bin/bash",
            f"# cogbench sweep {folder}: one array task per shard ({shards} shards). Submit with: sbatch {folder}/slurm.sh",
            "# Add your site's partition, GPUs and time limit; the folder must be on a file system every node sees.",
            "#SBATCH --job-name=cogbench-sweep",
            f"#SBATCH --array=0-{shards - 1}",
            "#SBATCH --output=cogbench-sweep-%A_%a.out",
            "set -euo pipefail",
            f"exec {command}",
            "",
        ]
    )


def secret_variable(name: str, key: str) -> dict[str, Any]:
    """A container's variable ``name`` read from the secret cogbench-sweep, key ``key`` (optional: a shard that needs
    it and finds it unset fails with cogbench's own line naming it)."""
    return {"name": name, "valueFrom": {"secretKeyRef": {"name": SECRET, "key": key, "optional": True}}}


def kubernetes_job(
    folder: Path, shards: int, image: str = DEFAULT_IMAGE, variables: Sequence[str] = ()
) -> dict[str, Any]:
    """A ``batch/v1`` Indexed Job: one completion per shard, index from ``JOB_COMPLETION_INDEX``; ``variables``: the
    models' own API key variables (their spec's ``api_key_env``), each read from the secret's key of that name."""
    name = "cogbench-sweep-" + (re.sub(r"[^a-z0-9-]+", "-", folder.name.lower()).strip("-")[:40] or "run")
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name.rstrip("-"), "labels": {"app.kubernetes.io/name": "cogbench-sweep"}},
        "spec": {
            "completionMode": "Indexed",
            "completions": shards,
            "parallelism": min(shards, DEFAULT_PARALLELISM),
            "backoffLimit": 2 * shards,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {
                            "name": "shard",
                            "image": image,
                            # Kubernetes expands $(VAR) in a container's command from its environment.
                            "command": shard_command(folder, "$(JOB_COMPLETION_INDEX)"),
                            "env": [
                                secret_variable("OPENAI_API_KEY", "openai-api-key"),
                                *(secret_variable(name, name) for name in variables if name != "OPENAI_API_KEY"),
                            ],
                            "volumeMounts": [{"name": "sweep", "mountPath": str(folder)}],
                        }
                    ],
                    "volumes": [{"name": "sweep", "persistentVolumeClaim": {"claimName": "cogbench-sweep"}}],
                }
            },
        },
    }


def kubernetes_manifest(folder: Path, shards: int, image: str = DEFAULT_IMAGE, variables: Sequence[str] = ()) -> str:
    own = f"; keys {', '.join(variables)}, the models' own keys (api_key_env)" if variables else ""
    head = (
        f"# cogbench sweep {folder}: one completion index per shard ({shards} shards). Apply with: kubectl apply -f "
        f"{folder}/kubernetes-job.yaml\n# The PersistentVolumeClaim cogbench-sweep holds the sweep folder; the secret "
        f"cogbench-sweep, key openai-api-key, the API key of openai: models{own}.\n"
    )
    return head + yaml.safe_dump(kubernetes_job(folder, shards, image, variables), sort_keys=False)
