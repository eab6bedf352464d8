"""The project's predictions file: where running a model and scoring it meet.

One JSON object per line, one line per query:

    {"task": "codis", "item_id": "000", "query": 1, "model": "hf:Qwen/Qwen2-VL-7B-Instruct",
     "prompt_id": "codis-cot-v1", "prompt_sha256": "...", "rendered_prompt_sha256": "...",
     "generation": {...}, "output": "...", "seconds": 0.84,
     "reasoning": "", "finish_reason": "stop", "tokens": {"completion": 212, "reasoning": 180},
     "think_opened": null}

``item_id`` is the row id of the config (``image_id`` for description,
``question_id`` for vqa, ``id`` for codis). ``query`` tells the two queries of a
CODIS pair apart (1 = context_1, 2 = context_2) and is ``null`` elsewhere.
``prompt_sha256`` pins the prompt *template*; ``rendered_prompt_sha256`` is the
sha256 of this query's own prompt text as the model got it (the template
filled in, before the backend's chat template, image not included), so one
item's prompt can be checked; empty where the writer did not know it.

``refusal`` is the model API's refusal (``choices[0].message.refusal`` of an OpenAI-compatible reply:
the ``openai:`` backend reads it from every reply): present only when the model refused, so a line
without one is written byte for byte as before.

Files are appended to and flushed line by line, so a run killed at any moment
leaves at worst one torn last line, which ``open_for_append`` cuts off before
resuming. Reading rejects duplicate keys instead of picking one.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from cogbench.dataset_builders.writes import make_folder, open_existing_or_new
from cogbench.errors import CogbenchError, UsageError, echoed, locate
from cogbench.jsonl import file_lines

TASKS = ("description", "vqa", "codis")
STRING_FIELDS = (
    "model",
    "prompt_id",
    "prompt_sha256",
    "rendered_prompt_sha256",
    "reasoning",
    "finish_reason",
    "refusal",
)


@dataclass(frozen=True)
class Prediction:
    task: str
    item_id: str
    output: str
    query: int | None = None
    model: str = ""
    prompt_id: str = ""
    prompt_sha256: str = ""
    rendered_prompt_sha256: str = ""
    generation: dict[str, Any] = field(default_factory=dict)
    seconds: float | None = None
    # A thinking model's reasoning from a separate reply field (inline think blocks stay in
    # ``output``), why generation stopped ("stop", "length"; "" when unknown) and token counts
    # (``completion``, ``reasoning`` where reported). Scoring reads them through
    # ``answers.reasoning.split_reply``; files without them score as before.
    reasoning: str = ""
    finish_reason: str = ""
    tokens: dict[str, Any] = field(default_factory=dict)
    # Whether the model's chat template ended its generation prompt in an opening think tag (DeepSeek-R1's
    # and Qwen3-Thinking's ``<think>``), so the reply begins inside the block; None where the backend did
    # not render the template (answers.reasoning.thinking_state).
    think_opened: bool | None = None
    # The API's refusal text (``message.refusal``); "" (and no key in the line) when it gave none.
    refusal: str = ""
    # The invariance probe (eval --image-variant): the variant's name, and the image it showed ({"sha256": the
    # variant image's bytes, "pillow": the version that made them}); both left out of the line when not set.
    variant: str | None = None
    variant_image: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, int | None, str | None]:
        return (self.item_id, self.query, self.variant)

    def to_json(self) -> str:
        line = asdict(self)
        # only a refusal or a variant is written: lines without one stay as they were
        for name in ("refusal", "variant", "variant_image"):
            if not line[name]:
                del line[name]
        return json.dumps(line, ensure_ascii=False, sort_keys=True)


def parse_json(text: str, where: str) -> Any:
    """A JSON document of a file the user gave, as text that can be written back out.

    The one parser of prediction files: a decode error, nesting too deep for Python,
    or a lone surrogate escape (``"\ud800"``: valid JSON, but not text, so writing
    it to details.jsonl would fail later) is a one-line error saying where.
    """
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise UsageError(f"{where}: not valid JSON ({error.msg}, line {error.lineno} column {error.colno})") from None
    except RecursionError:
        raise UsageError(f"{where}: not usable JSON (nested too deeply)") from None
    except ValueError as error:  # an integer of thousands of digits: Python refuses to read it
        raise UsageError(f"{where}: not usable JSON ({str(error).split(';')[0]})") from None
    if "\\u" in text or "\\U" in text:  # only escapes can smuggle a lone surrogate into JSON text
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError as error:
            raise UsageError(
                f"{where}: holds a lone surrogate escape ({error.object[error.start : error.end]!r}), which is not text"
            ) from None
        except RecursionError:
            raise UsageError(f"{where}: not usable JSON (nested too deeply)") from None
    return value


def parse_json_object(line: str, where: str) -> dict[str, Any]:
    """One JSONL line that must hold an object; errors say where (``locate`` output)."""
    raw = parse_json(line, where)
    if not isinstance(raw, dict):
        raise UsageError(f"{where}: expected a JSON object")
    return raw


def _parse(line: str, path: Path, line_number: int) -> Prediction:
    where = locate(str(path), f"line {line_number}")
    raw = parse_json_object(line, where)
    for name, kind in (("task", str), ("item_id", str), ("output", str)):
        if not isinstance(raw.get(name), kind):
            raise UsageError(f"{where}: field {name}: missing or not a {kind.__name__}")
    query = raw.get("query")
    # codis: the context asked (1, 2); vqa: null, or the rotation of a circular query (0-3, eval --circular).
    allowed = {"codis": (1, 2), "vqa": (None, 0, 1, 2, 3)}.get(raw["task"], (None,))
    if isinstance(query, bool) or query not in allowed:
        shown = ", ".join("null" if q is None else str(q) for q in allowed)
        raise UsageError(f"{where}: field query: {echoed(query)} is not one of {shown} for task {raw['task']}")
    for name in STRING_FIELDS:
        if not isinstance(raw.get(name, ""), str):
            raise UsageError(f"{where}: field {name}: not a string")
    for name in ("generation", "tokens"):
        if not isinstance(raw.get(name, {}), dict):
            raise UsageError(f"{where}: field {name}: not an object")
    if raw.get("think_opened") is not None and not isinstance(raw["think_opened"], bool):
        raise UsageError(f"{where}: field think_opened: not true, false or null")
    thinking = (raw.get("generation") or {}).get("thinking")
    if thinking is not None and thinking not in ("on", "off", "auto"):
        raise UsageError(f"{where}: field generation.thinking: {echoed(thinking)} is not one of on, off, auto")
    if raw["task"] not in TASKS:
        raise UsageError(f"{where}: field task: {echoed(raw['task'])} is not one of {', '.join(TASKS)}")
    variant, image = raw.get("variant"), raw.get("variant_image", {})
    if variant is not None and (not isinstance(variant, str) or not variant):
        raise UsageError(f"{where}: field variant: {echoed(variant)} is not a variant's name")
    if not isinstance(image, dict) or (variant is not None and not isinstance(image.get("sha256"), str)):
        raise UsageError(f"{where}: field variant_image: not an object with the variant image's sha256")
    known = Prediction.__dataclass_fields__
    return Prediction(**{k: v for k, v in raw.items() if k in known})


def check_utf8(path: Path) -> None:
    """A one-line error naming the line of the first byte that is not UTF-8."""
    data = path.read_bytes()
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise UsageError(
            f"{locate(str(path), f'line {line}')}: not UTF-8 text (byte {error.start}: {error.reason}); "
            "save the file as UTF-8"
        ) from None


def read_predictions(path: str | os.PathLike, skip_torn_tail: bool = False) -> list[Prediction]:
    """Read a whole predictions file; every line must parse, keys must be unique.

    ``skip_torn_tail`` ignores a last line without its newline: what a killed
    writer leaves, for reading a file that another process may be appending to.
    """
    path = Path(path)
    predictions: list[Prediction] = []
    seen: dict[tuple[str, int | None, str | None], int] = {}
    for line_number, line in file_lines(path, skip_torn_tail):
        prediction = _parse(line, path, line_number)
        if prediction.key in seen:
            raise UsageError(
                f"{locate(str(path), f'line {line_number}')}: duplicate prediction for item "
                f"{echoed(prediction.item_id)}{'' if prediction.query is None else f' query {prediction.query}'}"
                f"{'' if prediction.variant is None else f' variant {echoed(prediction.variant)}'} "
                f"(first on line {seen[prediction.key]})"
            )
        seen[prediction.key] = line_number
        predictions.append(prediction)
    return predictions


def _cut_torn_tail(path: Path, root: Path) -> None:
    """Drop a last line that a killed writer left without its newline."""
    with open_existing_or_new(path, "rb+", root) as handle:
        handle.seek(0, os.SEEK_END)
        size = handle.tell()
        if size == 0:
            return
        handle.seek(size - 1)
        if handle.read(1) == b"\n":
            return
        block = 1 << 16
        position = size
        while position > 0:
            start = max(0, position - block)
            handle.seek(start)
            chunk = handle.read(position - start)
            newline = chunk.rfind(b"\n")
            if newline >= 0:
                handle.truncate(start + newline + 1)
                return
            position = start
        handle.truncate(0)


class PredictionWriter:
    """Appends predictions durably; use as a context manager.

    ``done`` holds the keys already in the file when it was opened, so a
    resumed run can skip them.
    """

    def __init__(self, path: str | os.PathLike, root: str | os.PathLike | None = None):
        """``root``: the output folder the file lies in; no folder below it, nor the file, may be a link."""
        self.path = Path(path)
        root = self.path.parent if root is None else Path(root)
        if self.path.parent != root:
            make_folder(self.path.parent, root)
        if self.path.exists():
            _cut_torn_tail(self.path, root)
            self.done = {p.key for p in read_predictions(self.path)}
        else:
            self.done = set()
        self._handle = open_existing_or_new(self.path, "a", root)

    def write(self, predictions: Iterable[Prediction]) -> None:
        """Append a batch and make it durable before returning."""
        lines = []
        for prediction in predictions:
            if prediction.key in self.done:
                raise CogbenchError(f"{self.path}: prediction for {prediction.key} written twice")
            self.done.add(prediction.key)
            lines.append(prediction.to_json() + "\n")
        self._handle.write("".join(lines))
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def close(self) -> None:
        self._handle.close()

    def __enter__(self) -> PredictionWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
