"""The models a sweep's description cells are scored with: the spec's ``description:`` block.

The Recognition Score (``metrics/recognition``) tags nouns with a spaCy pipeline and embeds them with a
sentence-transformers model: ``eval --spacy-model`` and ``--embedder``, and ``score --embed-batch-size``. A spec
names them once for every description cell::

    description:
      spacy_model: models/en_core_web_sm    # a folder (relative to the spec file, as build is) or a package name
      embedder: models/all-mpnet-base-v2    # a folder, or a Hugging Face Hub id
      embed_batch_size: 64

A value that names a folder beside the spec (or absolutely) is recorded as that folder, absolute; one written as a
path (``./``, ``../``, ``/``, ``~``) that is no folder is refused; anything else is a package name or Hub id, kept as
it is. A spec with the description task has both models loaded when it is planned (``check``), so a model that
cannot load is one line naming its field before anything runs; plan.json records the values, and every shard and
merged run of the sweep scores with what it records. Each process loads them once (``loaded``).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from cogbench.errors import UsageError, locate
from cogbench.reference_eval.metrics import recognition

FIELD = "description"
DEFAULTS: dict[str, Any] = {
    "spacy_model": recognition.PAPER_SPACY_MODEL,
    "embedder": recognition.PAPER_EMBEDDER,
    "embed_batch_size": 64,  # ScoreOptions.embed_batch_size
}
PATH_PREFIXES = ("./", "../", "/", "~")


def resolve(content: dict[str, Any], path: Path) -> dict[str, Any] | None:
    """The spec's description scoring settings, defaults filled in and folders made absolute; None without the task."""
    if FIELD not in content["tasks"]:
        return None
    given = content.get(FIELD) or {}
    settings = {**DEFAULTS, **given}
    for name in ("spacy_model", "embedder"):
        settings[name] = location(str(settings[name]), path, f"{FIELD}.{name}")
    return settings


def location(value: str, path: Path, field: str) -> str:
    """``value`` as a folder relative to the spec's folder (absolute), or as the name it is."""
    folder = Path(value).expanduser()
    folder = folder if folder.is_absolute() else path.resolve().parent / folder
    if folder.is_dir():
        return str(folder.resolve())
    if value.startswith(PATH_PREFIXES):
        raise UsageError(
            f"{locate(str(path), None, field)}: {folder} is not a folder (a path is read from the spec's folder)"
        )
    return value


def check(settings: dict[str, Any] | None, path: Path) -> None:
    """Both models loaded now, as ``eval`` loads them before its first description: one that cannot load is one
    line naming its field (and saying when it is the default, which the spec did not name)."""
    if settings is None:
        return
    for name, load in (("spacy_model", recognition.load_noun_tagger), ("embedder", recognition.load_embedder)):
        try:
            _load(load, settings[name])
        except UsageError as error:
            default = " (the default: name it in the spec)" if settings[name] == DEFAULTS[name] else ""
            raise UsageError(f"{locate(str(path), None, f'{FIELD}.{name}')}{default}: {error}") from None


@functools.lru_cache(maxsize=4)
def _load(load, name_or_path: str) -> Any:
    return load(name_or_path)


def loaded(settings: dict[str, Any]) -> recognition.RecognitionModels:
    """The two models, loaded once per process (a worker runs a cell's shards; merge scores every cell)."""
    spacy_model, embedder = settings["spacy_model"], settings["embedder"]
    nlp = _load(recognition.load_noun_tagger, spacy_model)
    return recognition.RecognitionModels(spacy_model, embedder, nlp, _load(recognition.load_embedder, embedder))
