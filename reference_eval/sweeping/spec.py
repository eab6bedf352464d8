"""A sweep spec (``sweep.yaml``, ``schemas/sweep.schema.json``) read, checked, and expanded into its cells.

A cell is one ordinary ``eval`` run: a task, a model with its own settings, and one value of each
settings axis (thinking, max new tokens, judge, image variants). Every field the schema does not name is refused in one
line naming the file and the field, and so is a spec naming one cell twice. A base URL (or a judge's
``@URL``) may carry credentials: a cell keeps it apart from the model's name (``redaction.split_endpoint``),
and ``Cell.shown`` / ``Cell.record`` mask it (``redaction.redact_url``), so no printed or written line has it.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from cogbench.errors import UsageError, locate
from cogbench.redaction import redact_text, redact_url, split_endpoint
from cogbench.reference_eval.run.runner import parse_model_spec
from cogbench.reference_eval.sweeping import scoring_models
from cogbench.reference_eval.tasks import image_variants

SCHEMA_FILE = "sweep.schema.json"
DEFAULT = "default"  # an axis value: eval's own default (max new tokens, judge)
DEFAULT_JUDGE = {"codis": "rule", "vqa": "none", "description": "none"}
NO_VARIANTS = "none"  # an image_variants value: the images alone (no `--image-variant`)
MODEL_SETTINGS = ("batch_size", "concurrency", "max_attempts", "request_timeout")


@dataclass(frozen=True)
class Cell:
    """One run of the sweep: everything ``eval`` needs for it but the build and the items."""

    task: str
    model: str  # the backend spec, without its URL
    label: str  # the model's name in the cell's name
    base_url: str | None  # as given (it may hold credentials): never printed or written as it is
    thinking: str
    max_new_tokens: int | None  # None: the task's default
    judge: str | None  # None: the task's default; may end in @URL (credentials masked when shown)
    settings: tuple[tuple[str, Any], ...] = ()  # the model's batch_size, concurrency, max_attempts, request_timeout
    api_key_env: str | None = None  # the variable holding the model's key (its name; the key is read when a shard runs)
    entry: str = ""  # the model's entry in the spec (models[N]), which an error about it names
    image_variants: tuple[str, ...] = ()  # `eval --image-variant` (vqa, codis); () the images alone

    @property
    def id(self) -> str:
        """The cell's folder name: task, model name, then each axis value (image variants only where given, so
        the cells of a sweep without them keep the names they had)."""
        judge = "default" if self.judge is None else slug(split_endpoint(self.judge)[0])
        tokens = "default" if self.max_new_tokens is None else str(self.max_new_tokens)
        variants = f"--variants-{'+'.join(self.image_variants)}" if self.image_variants else ""
        return f"{self.task}--{self.label}--thinking-{self.thinking}--tokens-{tokens}--judge-{judge}{variants}"

    def record(self) -> dict[str, Any]:
        """The cell as plan.json and cell.json hold it: URLs masked."""
        return {
            "id": self.id,
            "task": self.task,
            "model": self.model,
            "label": self.label,
            "base_url": None if self.base_url is None else redact_url(self.base_url),
            "thinking": self.thinking,
            "max_new_tokens": self.max_new_tokens,
            "judge": None if self.judge is None else redact_text(self.judge),
            "settings": dict(self.settings),
            **({"image_variants": list(self.image_variants)} if self.image_variants else {}),
        }

    def key_record(self) -> dict[str, str]:
        """What cell.json holds of the model's key, when the spec names its variable: the variable's name and the
        spec's field (never the key). Not in plan.json: another variable runs the same cells (replanned alike)."""
        if self.api_key_env is None:
            return {}
        return {"api_key_env": self.api_key_env, "api_key_field": f"{self.entry}.api_key_env"}


@dataclass(frozen=True)
class Spec:
    path: Path  # the spec file, absolute
    sha256: str  # of its bytes: a plan names the spec it was made from
    build: Path  # absolute
    limit: int | None
    cells: tuple[Cell, ...]
    description: dict[str, Any] | None = None  # the description cells' scoring models (scoring_models.resolve)


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")[-60:] or "model"


def schema() -> dict[str, Any]:
    return json.loads(resources.files("cogbench.schemas").joinpath(SCHEMA_FILE).read_text(encoding="utf-8"))


def read_spec(path: str | Path) -> Spec:
    """The spec at ``path``, checked against the schema and expanded; any problem is one ``UsageError`` line."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise UsageError(f"{path}: cannot read the sweep spec ({error.strerror or error})") from None
    try:
        content = yaml.safe_load(data.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise UsageError(f"{path}: not UTF-8 text (byte {error.start})") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark is not None else ""
        raise UsageError(f"{path}: {where}not YAML ({getattr(error, 'problem', None) or 'unreadable'})") from None
    check_schema(content, path)
    build = Path(content["build"])
    build = build if build.is_absolute() else path.resolve().parent / build
    cells = expand(content, path)
    description = scoring_models.resolve(content, path)
    sha256 = hashlib.sha256(data).hexdigest()
    return Spec(path.resolve(), sha256, build.resolve(), content.get("limit"), cells, description)


def check_schema(content: Any, path: Path) -> None:
    """The first way ``content`` breaks the schema, as ``FILE: field F: what`` (an unknown field by its name)."""
    import jsonschema

    errors = sorted(
        jsonschema.Draft202012Validator(schema()).iter_errors(content), key=lambda e: (len(e.absolute_path), e.path)
    )
    if not errors:
        return
    error = errors[0]
    while error.validator == "anyOf" and error.context:  # the branch of the instance's own type says what is wrong
        error = max(error.context, key=lambda e: (e.validator != "type", len(e.absolute_path)))
    where = field_name(error.absolute_path)
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        known = error.schema.get("properties", {})
        unknown = sorted(name for name in error.instance if name not in known)
        field = f"{where}.{unknown[0]}" if where else str(unknown[0])
        raise UsageError(
            f"{locate(str(path), None, redact_text(field))}: unknown field (known here: {', '.join(sorted(known))})"
        )
    if error.validator == "required" and isinstance(error.instance, dict):
        name = next(name for name in error.validator_value if name not in error.instance)
        raise UsageError(f"{locate(str(path), None, f'{where}.{name}' if where else name)}: missing (a required field)")
    message = redact_text(error.message)
    message = message if len(message) <= 160 else message[:157] + "..."
    raise UsageError(f"{locate(str(path), None, where) if where else f'{path}: (top level)'}: {message}")


def field_name(parts) -> str:
    """``models[0].base_url``: a field of the spec as a person names it."""
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def expand(content: dict[str, Any], path: Path) -> tuple[Cell, ...]:
    """Every cell the spec names: tasks × models × thinking × max new tokens × judge × image variants, each once."""
    axes = content.get("axes") or {}
    for name in ("thinking", "max_new_tokens", "image_variants"):
        refuse_repeats(axes.get(name) or [], f"axes.{name}", path)
    variant_values = variant_axis(axes.get("image_variants") or [NO_VARIANTS], path)
    refuse_repeats(content["tasks"], "tasks", path)
    judges = axes.get("judge")
    seen: dict[str, str] = {}
    cells = []
    for task in content["tasks"]:
        task_judges = (judges.get(task) if isinstance(judges, dict) else judges) or [DEFAULT]
        judge_field = f"axes.judge.{task}" if isinstance(judges, dict) else "axes.judge"
        refuse_repeats(task_judges, judge_field, path)
        for number, entry in enumerate(content["models"]):
            where = f"models[{number}]"
            model, base_url = model_and_url(entry, path, where)
            thinking_values = [entry["thinking"]] if "thinking" in entry else axes.get("thinking") or ["auto"]
            shown = variant_values if task in image_variants.TASKS else [()]  # a description has no answer to flip
            for thinking, tokens, judge, variants in itertools.product(
                thinking_values, axes.get("max_new_tokens") or [DEFAULT], task_judges, shown
            ):
                cell = Cell(
                    task=task,
                    model=model,
                    label=entry.get("name") or slug(model.partition(":")[2]),
                    base_url=base_url,
                    thinking=thinking,
                    max_new_tokens=None if tokens == DEFAULT else tokens,
                    judge=None if judge in (DEFAULT, DEFAULT_JUDGE[task]) else judge,
                    settings=tuple((name, entry[name]) for name in MODEL_SETTINGS if name in entry),
                    api_key_env=entry.get("api_key_env"),
                    entry=where,
                    image_variants=variants,
                )
                if cell.id in seen:
                    raise UsageError(
                        f"{locate(str(path), None, where)}: names cell {cell.id} again (first by {seen[cell.id]}); "
                        "a sweep runs each cell once: give the two entries different names or settings"
                    )
                seen[cell.id] = where
                cells.append(cell)
    return tuple(cells)


def variant_axis(values: list[str], path: Path) -> list[tuple[str, ...]]:
    """``axes.image_variants``: each value ``none`` or ``NAME[,NAME...]`` as ``eval --image-variant`` takes it."""
    found = []
    for number, value in enumerate(values):
        if value == NO_VARIANTS:
            found.append(())
            continue
        try:
            found.append(image_variants.parse_variants(value))
        except UsageError as error:
            shown = str(error).removeprefix("--image-variant ")
            raise UsageError(f"{locate(str(path), None, f'axes.image_variants[{number}]')}: {shown}") from None
    return found


def model_and_url(entry: dict[str, Any], path: Path, where: str) -> tuple[str, str | None]:
    """The model's spec without its URL, and its base URL (``base_url``, or the spec's ``@URL``)."""
    spec, url, variable = split_endpoint(entry["model"])
    if variable is not None:
        raise UsageError(
            f"{locate(str(path), None, where + '.model')}: #VARIABLE is not taken here: a sweep's openai: model "
            "reads its key from OPENAI_API_KEY, or from the variable its api_key_env names"
        )
    if url is not None and "base_url" in entry:
        raise UsageError(f"{locate(str(path), None, where + '.model')}: gives a URL and base_url too: give one")
    try:
        backend, _ = parse_model_spec(spec)
    except UsageError as error:
        raise UsageError(f"{locate(str(path), None, where + '.model')}: {str(error).partition(': ')[2]}") from None
    base_url = url if url is not None else entry.get("base_url")
    if base_url is not None and backend != "openai":
        raise UsageError(f"{locate(str(path), None, where + '.base_url')}: a base URL applies to openai: models only")
    if "api_key_env" in entry and backend != "openai":
        raise UsageError(
            f"{locate(str(path), None, where + '.api_key_env')}: an API key variable applies to openai: models only"
        )
    return spec, base_url


def refuse_repeats(values: list[Any], field: str, path: Path) -> None:
    for number, value in enumerate(values):
        if value in values[:number]:
            shown = redact_text(str(value))
            raise UsageError(
                f"{locate(str(path), None, f'{field}[{number}]')}: {shown} is listed twice; a sweep runs each cell once"
            )
