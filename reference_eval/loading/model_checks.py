"""Every model cogbench scores or generates with is checked after it loads, and named in provenance.

Why: transformers loads a checkpoint into whatever class it is asked for and
fills the weights it did not find with random values, printing a report to the
log and nothing more (a BERT folder loaded as ``T5EncoderModel`` gives a random
model and plausible-looking scores). Here every transformers load goes through
``load_checked``, which asks transformers for its loading info
(``output_loading_info=True``) and refuses, before any item is scored, a model
with weights that were missing from the checkpoint or had the wrong shape
(``UsageError``, exit 2). Unexpected keys (weights in the checkpoint the class
does not use: a pooler, a task head, layers cut off on purpose) are allowed: if
nothing is missing, every weight the computation uses came from the checkpoint.

``model_record`` says what was loaded: folder, class, a sha256 of its weight
files and the library versions, for ``scores.json``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from cogbench.dataset_builders.raw import sha256_file
from cogbench.errors import UsageError

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".h5", ".msgpack", ".ckpt")
LIBRARIES = ("transformers", "bert-score", "sentence-transformers", "spacy", "torch")


def check_loading_info(folder: str, class_name: str, info: dict[str, Any]) -> None:
    """Refuse a model whose checkpoint lacked weights it uses (missing or mismatched keys)."""
    missing = sorted(info.get("missing_keys") or ())
    mismatched = sorted(
        f"{key} (checkpoint {tuple(a)}, model {tuple(b)})" for key, a, b in info.get("mismatched_keys") or ()
    )
    errors = list(info.get("error_msgs") or ())
    if not (missing or mismatched or errors):
        return
    parts = []
    if missing:
        parts.append(f"{len(missing)} weight(s) missing from the checkpoint, first: {', '.join(missing[:3])}")
    if mismatched:
        parts.append(f"{len(mismatched)} weight(s) of the wrong shape, first: {mismatched[0]}")
    if errors:
        parts.append(f"load error: {str(errors[0]).splitlines()[0]}")
    raise UsageError(
        f"{folder}: loaded as {class_name}, but {'; '.join(parts)}; these would be random, so the model is not used "
        "(is this the model you meant, and is its folder complete?)"
    )


def load_checked(model_class, name_or_path: str, **kwargs):
    """``model_class.from_pretrained`` with the loading info checked; the model, ready for ``eval()``."""
    try:
        model, info = model_class.from_pretrained(name_or_path, output_loading_info=True, **kwargs)
    except RuntimeError as error:  # transformers raises on shape mismatches after its report
        raise UsageError(
            f"{name_or_path}: cannot be loaded as {getattr(model_class, '__name__', model_class)} "
            f"({str(error).strip().splitlines()[0]})"
        ) from None
    check_loading_info(name_or_path, type(model).__name__, info)
    return model


def check_reloaded(model, folder: str) -> None:
    """Check a model some other library loaded (sentence-transformers): load its folder again, checked.

    The other library does not pass transformers' loading info on, so the same
    class loads the same folder once more with ``output_loading_info``.
    """
    load_checked(type(model), folder, config=model.config)


def model_folder(name_or_path: str) -> Path | None:
    """The local folder a name stands for: itself, or its Hub cache snapshot (None if not there)."""
    folder = Path(name_or_path).expanduser()
    if folder.is_dir():
        return folder
    try:
        import huggingface_hub

        return Path(huggingface_hub.snapshot_download(name_or_path, local_files_only=True))
    except Exception:  # not a Hub id, or not in the cache: nothing to hash
        return None


def weights_sha256(folder: Path | None) -> str | None:
    """One digest of a folder's weight files (relative path and content, sorted); None when it has none."""
    if folder is None:
        return None
    files = [p for p in folder.rglob("*") if p.is_file() and p.name.endswith(WEIGHT_SUFFIXES)]
    return files_sha256(folder, files) if files else None


def files_sha256(folder: Path, files) -> str:
    """One digest for files of a folder: their relative paths and contents, in sorted order."""
    digest = hashlib.sha256()
    for path in sorted(files):
        digest.update(f"{path.relative_to(folder).as_posix()}\0{sha256_file(path)}\n".encode())
    return digest.hexdigest()


def library_versions() -> dict[str, str | None]:
    # importlib.metadata costs more than all of `cogbench --help`, which imports this module: loaded here.
    from importlib import metadata

    versions: dict[str, str | None] = {}
    for name in LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def model_record(requested: str, model_class: str, folder: Path | None = None) -> dict[str, Any]:
    """What was loaded, for provenance: the folder, the class, the weights' digest."""
    folder = folder if folder is not None else model_folder(requested)
    return {
        "requested": requested,
        "folder": str(folder) if folder else None,
        "class": model_class,
        "weights_sha256": weights_sha256(folder),
    }
