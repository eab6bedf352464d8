"""Loading a built release the way users do: through ``datasets.load_dataset``."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from cogbench.dataset_builders.output import build_command
from cogbench.errors import UsageError
from cogbench.schemas.vocabulary import CONFIGS, SPLIT

# What the Hub accepts as a dataset repo id: NAME or ORG/NAME, no path segments beyond that.
HUB_REPO_ID = re.compile(r"(?:[A-Za-z0-9][\w.-]*/)?[A-Za-z0-9][\w.-]*")


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
            raise UsageError(
                f"{local} is not a built dataset folder (no README.md); build it first: `{build_command(local)}`"
            )
        if revision is not None:
            raise UsageError("--revision applies to Hub repos, not to local folders")
        if not (local / "data" / config).is_dir():
            raise UsageError(
                f"{local}: this build has no {config!r} config (no data/{config}/); build it from raw data that has it"
            )
    else:
        check_hub_dataset(str(dataset), revision)
    return datasets.load_dataset(str(dataset), config, split=SPLIT, revision=revision, streaming=streaming)


def stream_rows(folder: str, config: str, batch_rows: int = 10):
    """(features, rows) of a built folder's config as ``load_dataset`` gives them, images not decoded.

    The data files and features are resolved by ``datasets.load_dataset_builder`` from the
    card, exactly as for users; the rows are then read a few at a time from those Parquet
    files and cast to those features, so memory stays flat whatever the size of the data
    (``load_dataset(streaming=True)`` buffers whole row groups of images). Arrow's threads
    are not used: a batch is ten rows, and each thread would keep its own freed buffers.
    """
    import datasets
    import pyarrow as pa
    import pyarrow.parquet as pq

    from cogbench.schemas.features import FEATURES  # datasets' Features: imported only where a dataset is read

    builder = datasets.load_dataset_builder(str(folder), config)
    features = datasets.Features(builder.info.features or FEATURES[config])
    features["image"] = datasets.Image(decode=False)
    files = builder.config.data_files[SPLIT]
    if not files:
        raise FileNotFoundError(f"the card's data_files for {config} match no file")

    def rows():
        for path in files:
            parquet = pq.ParquetFile(path, pre_buffer=False)
            for batch in parquet.iter_batches(batch_size=batch_rows, use_threads=False):
                yield from pa.Table.from_batches([batch]).cast(features.arrow_schema).to_pylist()
            del parquet
            pa.default_memory_pool().release_unused()

    return features, rows()


def dataset_revision(dataset: str, revision: str | None = None) -> str:
    """A string that pins what was scored: the manifest's version for a folder, else the revision."""
    manifest = Path(dataset) / "manifest.json"
    if manifest.exists():
        digest = hashlib.sha256(manifest.read_bytes()).hexdigest()[:12]
        version = json.loads(manifest.read_text(encoding="utf-8")).get("dataset_version", "unknown")
        return f"{version}+manifest.{digest}"
    return revision or "main"


def filter_category(dataset, *names: str | list[str] | tuple[str, ...]):
    """Rows whose ``category`` is one of ``names``, given as names, not class-label integers.

    ``dataset.filter(lambda r: r["category"] == "mental")`` matches nothing (the
    column holds integers); this maps names through the ClassLabel and refuses
    an unknown one, listing the valid names. Names come as arguments or lists
    (``filter_category(vqa, ["mental", "time"])``).
    """
    names = tuple(name for given in names for name in ([given] if isinstance(given, str) else given))
    label = dataset.features["category"]
    unknown = [name for name in names if name not in label.names]
    if unknown or not names:
        raise UsageError(
            f"unknown category {', '.join(map(repr, unknown)) or '(none given)'}; choose from {', '.join(label.names)}"
        )
    wanted = {label.str2int(name) for name in names}
    return dataset.filter(lambda category: category in wanted, input_columns="category")


def check_hub_dataset(repo_id: str, revision: str | None = None) -> None:
    """Fail in seconds, with what to do, when ``repo_id`` is neither a folder nor a dataset repo we can read."""
    import huggingface_hub
    from huggingface_hub import constants, errors

    where = f"--dataset {repo_id}"
    if not HUB_REPO_ID.fullmatch(repo_id):
        raise UsageError(f"{where}: no such folder (and not a Hub dataset id of the form ORG/NAME)")
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
    except Exception as error:
        raise UsageError(
            f"{where}: no such folder, and the Hugging Face Hub cannot be reached ({type(error).__name__}); "
            "give the path of a built folder, or set HF_HUB_OFFLINE=1 to use a cached copy"
        ) from None
