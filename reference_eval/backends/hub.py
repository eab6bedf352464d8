"""Where an ``hf:`` model comes from, checked before anything is written or loaded.

A folder must hold a saved model (``config.json``); a Hub id must be in the
local cache or reachable. Offline (``HF_HUB_OFFLINE``) or without network, a
Hub id that is not cached fails within seconds with what to do, instead of
minutes of retries and a traceback from transformers.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from cogbench.errors import UsageError

HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?")
PROBE_TIMEOUT_SECONDS = 10.0


def looks_like_path(name: str) -> bool:
    """A name that can only be meant as a folder (a Hub id is ``name`` or ``org/name``)."""
    return name.startswith(("/", "./", "../", "~", ".\\")) or name.count("/") > 1 or "\\" in name


def check_hf_model(name: str, backend: str = "hf") -> None:
    """Raise ``UsageError`` (one line, with the fix) unless ``name`` can be loaded (by transformers or vLLM)."""
    where = f"--model {backend}:{name}"
    path = Path(name).expanduser()
    if path.exists():
        if not path.is_dir():
            raise UsageError(f"{where}: is a file; give the folder the model was saved to (with config.json)")
        if not (path / "config.json").is_file():
            raise UsageError(f"{where}: the folder has no config.json; give a folder written by save_pretrained")
        return
    if looks_like_path(name) or not HUB_ID.fullmatch(name):
        raise UsageError(f"{where}: no such folder (and not a Hugging Face model id of the form org/name)")
    import huggingface_hub
    from huggingface_hub import constants, errors

    if isinstance(huggingface_hub.try_to_load_from_cache(name, "config.json"), str):
        return  # cached: transformers loads it, offline too
    offline_hint = (
        "download it where there is network (`hf download " + name + "`) and set HF_HUB_OFFLINE=1, "
        f"or pass {backend}:/path/to/a/saved/model"
    )
    if constants.HF_HUB_OFFLINE or os.environ.get("TRANSFORMERS_OFFLINE") == "1":
        raise UsageError(f"{where}: not in the local Hugging Face cache and HF_HUB_OFFLINE is set; {offline_hint}")
    try:
        huggingface_hub.HfApi().model_info(name, timeout=PROBE_TIMEOUT_SECONDS)
    except (errors.RepositoryNotFoundError, errors.GatedRepoError) as error:
        raise UsageError(
            f"{where}: no model repo of that name you can read on the Hub ({type(error).__name__})"
        ) from None
    except Exception as error:
        raise UsageError(
            f"{where}: the Hugging Face Hub cannot be reached ({type(error).__name__}); {offline_hint}"
        ) from None
