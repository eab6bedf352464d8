"""Request files any engine runs: the OpenAI Batch API's JSONL, written and read back.

Why files: a batch API answers them at a lower price, and vLLM's ``run-batch`` or Ray Data's LLM
module spreads them over machines; cogbench only writes the queries and matches the answers.
Each line's ``body`` is ``openai_api.chat_body``, the exact body the online client sends, and its
``custom_id`` is ``NAME@HASH``: NAME says which item (or judge prompt) it asks, HASH is the sha256
of that body. A response is taken only for a request this run would send with these settings on
this dataset; any other is refused by name, before anything is stored. The model queries' requests
are ``openai_chat``'s, the judge's ``judges.llm``'s; this module imports neither ``datasets`` nor ``openai``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cogbench.dataset_builders.output import claim_output
from cogbench.dataset_builders.writes import remove_temporaries, write_file, write_with
from cogbench.errors import CogbenchError, UsageError, echoed
from cogbench.reference_eval.backends.connections import MAX_REPLY_BYTES_VARIABLE, max_reply_bytes
from cogbench.reference_eval.backends.openai_replies import reply_parts, token_counts

URL = "/v1/chat/completions"
MANIFEST = "manifest.json"
WRITING = ".requests-writing.json"  # the shard names a writer may leave, until its manifest is written
LOCK = "requests.lock"  # run/lock.py's lock of the folder, and its holder beside it
SHARD_NAME = re.compile(r"requests-\d{5,}-of-\d{5,}\.jsonl")
# All that a request folder holds besides its marker.
REQUEST_FILES = (MANIFEST, "requests-*-of-*.jsonl", WRITING, LOCK, f"{LOCK}.json")
FORMAT = "openai-batch-v1"


@dataclass(frozen=True)
class Request:
    """One line of a request file."""

    custom_id: str
    body: dict[str, Any]

    def line(self) -> str:
        return json.dumps({"custom_id": self.custom_id, "method": "POST", "url": URL, "body": self.body}) + "\n"


@dataclass(frozen=True)
class Response:
    """One answered line of an output file: ``text`` or ``error``, and where it was read."""

    custom_id: str
    text: str | None
    error: str | None
    where: str  # FILE line N
    completion_tokens: int = 0
    reasoning: str = ""  # a reasoning model's separate field, finish reason and reasoning tokens (reply_parts)
    finish_reason: str = ""
    reasoning_tokens: int | None = None
    note: str = ""
    refusal: str = ""  # message.refusal (reply_parts)


def body_hash(body: dict[str, Any]) -> str:
    """sha256 (16 hex digits) of the body's canonical JSON: the same request, the same hash."""
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def request(name: str, body: dict[str, Any]) -> Request:
    return Request(f"{name}@{body_hash(body)}", body)


def write_requests(folder: Path, requests: Iterable[Request], count: int, shards: int, about: dict) -> dict:
    """Write ``count`` requests as ``shards`` files of equal size (±1) and the manifest; returns the manifest.

    ``about`` (dataset fingerprint, prompt versions, model, settings) goes into the manifest. The caller
    holds the folder's lock (``run/lock.py``). Only names this command recorded are ever removed or
    replaced (the old manifest's shards, and those a killed writer was writing, from ``WRITING``); the
    old manifest goes first and the new one comes last, so a kill at any point leaves a folder
    described by its manifest or by none.
    """
    if shards < 1:
        raise UsageError(f"--shards {shards}: give a positive number")
    claim_output(folder, "requests", REQUEST_FILES)
    shards = max(1, min(shards, count))
    names = [shard_name(index, shards) for index in range(shards)]
    ours = recorded_shards(folder)
    taken = [name for name in names if (folder / name).exists() and name not in ours]
    if taken:
        raise UsageError(
            f"{folder / taken[0]}: no manifest of this folder lists this file (a copy of yours?); refusing to "
            "replace it: move it away or choose another --write-requests"
        )
    write_file(folder / WRITING, json.dumps({"files": sorted(ours | set(names))}) + "\n")
    (folder / MANIFEST).unlink(missing_ok=True)  # from here until the new one, no manifest describes the folder
    remove_temporaries(folder, REQUEST_FILES)
    for name in sorted(ours - set(names)):
        (folder / name).unlink(missing_ok=True)
    lines = iter(requests)
    written = []
    for index, name in enumerate(names):
        size = count // shards + (index < count % shards)
        digest = hashlib.sha256()

        def write_shard(handle, size=size, digest=digest) -> None:
            for _ in range(size):
                line = next(lines).line().encode("utf-8")
                digest.update(line)
                handle.write(line)

        write_with(folder / name, write_shard)
        written.append({"file": name, "requests": size, "sha256": digest.hexdigest()})
    manifest = {"format": FORMAT, "url": URL, **about, "requests": count, "shards": written}
    write_file(folder / MANIFEST, json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    (folder / WRITING).unlink()
    return manifest


def shard_name(index: int, shards: int) -> str:
    return f"requests-{index + 1:05d}-of-{shards:05d}.jsonl"


def recorded_shards(folder: Path) -> set[str]:
    """The shard names this command recorded in ``folder``: its manifest's, and a killed writer's
    (``WRITING``). Only names of the shape it writes count: an edited list never reaches another file."""
    names: set[str] = set()
    for record, key in ((MANIFEST, "shards"), (WRITING, "files")):
        try:
            listed = json.loads((folder / record).read_text(encoding="utf-8")).get(key) or []
        except (OSError, ValueError, AttributeError):
            continue
        for entry in listed if isinstance(listed, list) else []:
            name = entry.get("file") if isinstance(entry, dict) else entry
            if isinstance(name, str) and SHARD_NAME.fullmatch(name):
                names.add(name)
    return names


def _response_files(paths: Iterable[str]) -> list[Path]:
    files: list[Path] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            # Ray Data's write_json names its JSON-lines files *.json.
            found = sorted(
                p for p in path.iterdir() if p.is_file() and p.suffix in (".jsonl", ".json") and p.name != MANIFEST
            )
            if not found:
                raise UsageError(f"--read-responses {path}: no .jsonl or .json file in this folder")
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            raise UsageError(f"--read-responses {path}: no such file or folder")
    return files


def _parse_line(data: bytes, where: str) -> Response:
    try:
        record = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise CogbenchError(
            f"{where}: not UTF-8 text (byte {error.start + 1}); expected a Batch API output line"
        ) from None
    except RecursionError:
        raise CogbenchError(f"{where}: JSON nested too deeply; expected a Batch API output line") from None
    except ValueError:
        raise CogbenchError(f"{where}: not valid JSON; expected a Batch API output line") from None
    if not isinstance(record, dict) or not isinstance(record.get("custom_id"), str):
        raise CogbenchError(f"{where}: no custom_id; expected a Batch API output line")
    custom_id = record["custom_id"]
    if "body" in record and "response" not in record:
        raise CogbenchError(
            f"{where}: custom_id {echoed(custom_id)} is a request line, not a response; give the output files"
        )
    error, response = record.get("error"), record.get("response")
    if error:
        message = error.get("message") or error.get("code") if isinstance(error, dict) else error
        return Response(custom_id, None, f"engine error: {_one_line(message)}", where)
    if not isinstance(response, dict):
        return Response(custom_id, None, "no response", where)
    if response.get("status_code", 200) != 200:
        return Response(custom_id, None, f"HTTP {echoed(response.get('status_code'))}", where)
    body = response.get("body")
    parts = reply_parts(body)
    if parts is None:
        return Response(custom_id, None, "reply has no message content", where)
    return Response(
        custom_id,
        parts.text,
        None,
        where,
        token_counts(body)[1],
        reasoning=parts.reasoning,
        finish_reason=parts.finish_reason,
        reasoning_tokens=parts.reasoning_tokens,
        note=parts.note,
        refusal=parts.refusal,
    )


def _one_line(message: Any) -> str:
    """An engine's error message as one bounded line (it is shown among the run's failures)."""
    text = " ".join(str(message).split())
    return text if len(text) <= 200 else f"{text[:197]}..."


def _lines(path: Path, cap: int) -> Iterator[tuple[int, bytes]]:
    """(number, bytes) of each non-blank line; a line over ``cap`` bytes is refused before it is read whole."""
    with path.open("rb") as handle:
        number = 0
        while line := handle.readline(cap + 1):
            number += 1
            if len(line) > cap and not (len(line) == cap + 1 and line.endswith(b"\n")):
                raise CogbenchError(
                    f"{path} line {number}: longer than {cap:,} bytes, the most one reply may take "
                    f"(set {MAX_REPLY_BYTES_VARIABLE} to allow more); not read further"
                )
            if line.strip():
                yield number, line


def read_responses(paths: Iterable[str]) -> dict[str, Response]:
    """Every response of the files (folders: their ``*.jsonl`` and ``*.json``), by custom_id, in any order.

    A custom_id answered twice is kept once when the texts agree (an answer beats an error);
    two different answers are an error naming both.
    """
    found: dict[str, Response] = {}
    cap = max_reply_bytes()
    for path in _response_files(paths):
        for number, line in _lines(path, cap):
            response = _parse_line(line, f"{path} line {number}")
            before = found.get(response.custom_id)
            if before is None or (before.error and not response.error):
                found[response.custom_id] = response
            elif before.text is not None and response.text is not None and before.text != response.text:
                raise CogbenchError(
                    f"{response.where}: custom_id {echoed(response.custom_id)} answered twice, differently "
                    f"(also at {before.where}); keep one of the two files"
                )
    return found


def refuse_foreign(responses: dict[str, Response], expected: Iterable[str]) -> None:
    """Refuse, by name, every response to a request this run would not send."""
    expected = set(expected)
    names = {custom_id.rpartition("@")[0] for custom_id in expected}
    foreign = [r for r in responses.values() if r.custom_id not in expected]
    if not foreign:
        return
    first = foreign[0]
    name = first.custom_id.rpartition("@")[0]
    why = (
        f"was written for other settings or another dataset (this run asks {name} with another request body)"
        if name in names
        else "answers a request this run did not write"
    )
    more = f" ({len(foreign) - 1} more such response(s))" if len(foreign) > 1 else ""
    raise CogbenchError(f"{first.where}: custom_id {echoed(first.custom_id)} {why}; refusing it{more}")
