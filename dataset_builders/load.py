"""Loading a built release the way users do: through ``datasets.load_dataset``."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from cogbench.errors import UsageError
from cogbench.schemas.features import CONFIGS, SPLIT


def load_config(dataset: str, config: str, revision: str | None = None, streaming: bool = False):
    """Load one config's test split from a built folder or a Hub repo id.

    A local folder is read offline; a repo id goes to the Hub (or its cache),
    pinned to ``revision`` when given. ``streaming`` reads the files as they
    are now, bypassing the Arrow cache (which the validators must not trust).
    """
    import datasets

    if config not in CONFIGS:
        raise UsageError(f"unknown config {config!r}; choose one of {', '.join(CONFIGS)}")
    local = Path(dataset)
    if local.exists():
        if not (local / "README.md").exists():
            raise UsageError(f"{local} is not a built dataset folder (no README.md); run `cogbench build` first")
        if revision is not None:
            raise UsageError("--revision applies to Hub repos, not to local folders")
        if not (local / "data" / config).is_dir():
            raise UsageError(f"{local}: this build has no {config!r} config (no data/{config}/); build it from raw data that has it")
    else:
        check_hub_dataset(dataset, revision)
    return datasets.load_dataset(str(dataset), config, split=SPLIT, revision=revision, streaming=streaming)


def dataset_revision(dataset: str, revision: str | None = None) -> str:
    """A string that pins what was scored: the manifest's version for a folder, else the revision."""
    manifest = Path(dataset) / "manifest.json"
    if manifest.exists():
        digest = hashlib.sha256(manifest.read_bytes()).hexdigest()[:12]
        version = json.loads(manifest.read_text(encoding="utf-8")).get("dataset_version", "unknown")
        return f"{version}+manifest.{digest}"
    return revision or "main"


def check_hub_dataset(repo_id: str, revision: str | None = None) -> None:
    """Fail in seconds, with what to do, when ``repo_id`` is neither a folder nor a dataset repo we can read."""
    import huggingface_hub
    from huggingface_hub import constants, errors

    where = f"--dataset {repo_id}"
    if repo_id.startswith(("/", ".", "~")) or repo_id.count("/") != 1:
        raise UsageError(f"{where}: no such folder (and not a Hub dataset id of the form org/name)")
    if constants.HF_HUB_OFFLINE:
        cached = huggingface_hub.try_to_load_from_cache(repo_id, "README.md", revision=revision, repo_type="dataset")
        if not isinstance(cached, str):
            raise UsageError(
                f"{where}: no such folder, and HF_HUB_OFFLINE is set with no cached copy of that Hub dataset; "
                "give the path of a built folder (cogbench build) or unset HF_HUB_OFFLINE"
            )
        return
    try:
        huggingface_hub.HfApi().dataset_info(repo_id, revision=revision, timeout=10.0)
    except (errors.RepositoryNotFoundError, errors.GatedRepoError, errors.RevisionNotFoundError) as error:
        raise UsageError(
            f"{where}: no such folder, and no Hub dataset you can read by that name ({type(error).__name__}); "
            "check the path, or log in (hf auth login) for a gated repo"
        ) from None
    except Exception as error:  # noqa: BLE001 -- any transport failure means the same to the user: no Hub
        raise UsageError(
            f"{where}: no such folder, and the Hugging Face Hub cannot be reached ({type(error).__name__}); "
            "give the path of a built folder, or set HF_HUB_OFFLINE=1 to use a cached copy"
        ) from None
