"""``cogbench eval --write-requests``: a run's missing queries as request files (backends/batch_files).

The requests continue the run folder ``--out``: only queries it has no prediction for are written, and
a run folder made with other settings is refused, so ``--read-responses`` later fills that same folder.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cogbench.dataset_builders.output import claim_output, placement
from cogbench.errors import UsageError
from cogbench.reference_eval.backends import openai_chat as openai_backend
from cogbench.reference_eval.backends.batch_files import LOCK, REQUEST_FILES
from cogbench.reference_eval.run.folder import check_run_record, done_keys
from cogbench.reference_eval.run.lock import RunLock
from cogbench.reference_eval.run.runner import (
    EvalSettings,
    chat_settings,
    checked_settings,
    dataset_and_queries,
    run_record,
)
from cogbench.reference_eval.tasks.queries import undecoded_images


def write_eval_requests(settings: EvalSettings) -> dict[str, Any]:
    """Write request files of the queries ``--out`` has no prediction for; returns the manifest."""
    check_request_folder(Path(settings.write_requests), Path(settings.out))
    _, name = checked_settings(settings)
    dataset, template, queries = dataset_and_queries(settings)
    api = chat_settings(settings, name)
    record = run_record(settings, template, openai_backend.recorded_settings(api))
    run_dir = Path(settings.out)
    if (run_dir / "run.json").exists():
        check_run_record(run_dir, record)  # only checks: the folder holds the same run
    done = done_keys(run_dir) if run_dir.is_dir() else set()
    missing = [query for query in queries if query.key not in done]
    about = {
        "kind": "eval",
        "run": record,
        "dataset_fingerprint": dataset._fingerprint,
        "run_folder": str(run_dir),
        "queries_total": len(queries),
    }
    folder = Path(settings.write_requests)
    with request_folder_lock(folder):
        return openai_backend.write_query_requests(
            folder, settings.shards, missing, undecoded_images(dataset), api, about
        )


def check_request_folder(folder: Path, out: Path) -> None:
    """``--write-requests`` apart from ``--out``: one folder for both (or one inside the other) would mix
    two commands' files, and ``--read-responses`` into ``--out`` would then be refused."""
    where = placement(folder, out)
    if where is not None:
        raise UsageError(
            f"--write-requests {folder}: {where} --out {out}; give the request files a folder of their own, "
            f"such as {out}-requests"
        )


def request_folder_lock(folder: Path) -> RunLock:
    """The request folder claimed, and its lock (taken by ``with``) as a run folder's: a second writer is
    refused at once, so no folder mixes two request sets under one manifest."""
    claim_output(folder, "requests", REQUEST_FILES)
    return RunLock(
        folder,
        name=LOCK,
        refusal="another cogbench command is writing request files into this folder ({holder}); "
        "wait for it to finish, or use another --write-requests",
    )


def written_lines(manifest: dict[str, Any], folder: Path) -> list[str]:
    """What the command prints after writing: counts, files, and how to read the answers back."""
    shards, done = manifest["shards"], manifest["requests"] < manifest["queries_total"]
    return [
        f"requests: {manifest['requests']} of {manifest['queries_total']} queries written"
        + (f" (the others are answered in {manifest['run_folder']})" if done else "")
        + f", in {len(shards)} shard(s) of {_sizes(shards)} requests",
        f"folder: {folder} (manifest.json lists each shard's sha256)",
        "next: run each shard (a batch API, vllm run-batch, Ray Data; docs/running.md, 'Request files'), then the same "
        "command with --read-responses OUTPUT_FILES_OR_FOLDERS instead of --write-requests",
    ]


def _sizes(shards: list[dict[str, Any]]) -> str:
    sizes = sorted({shard["requests"] for shard in shards}) or [0]
    return "-".join(str(size) for size in (sizes[0], sizes[-1])) if len(sizes) > 1 else str(sizes[0])
