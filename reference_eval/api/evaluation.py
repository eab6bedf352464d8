"""cogbench as functions: ``evaluate``, ``score``, ``compare`` and ``verify``, returning results instead of printing.

The ``eval``, ``score``, ``compare`` and ``verify`` commands call these functions and print what
they return, so a notebook and the command line run one code path. Failures are the project's
exceptions (``cogbench.errors``: ``UsageError``, ``IncompleteRunError``, ``CogbenchError``), never
``SystemExit``. A run folder is written only where ``out=`` names one (claimed as every command's
``--out`` is: ``dataset_builders.output.claim_output``); otherwise the work happens in a temporary
folder that is read back, verified, and removed.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cogbench.errors import UsageError
from cogbench.option_types import DEFAULT_PERMUTATIONS, DEFAULT_RESAMPLES, DEFAULT_SEED
from cogbench.reference_eval.api.arguments import EVAL_OPTION_NAMES, checked, path_or_result
from cogbench.reference_eval.metrics.recognition import check_models
from cogbench.reference_eval.publishing.details_dataset import detail_rows
from cogbench.reference_eval.recording.run_reader import ScoredRun, read_run
from cogbench.reference_eval.reports.compare import compare_runs
from cogbench.reference_eval.reports.gate import check_gate_options, with_gate
from cogbench.reference_eval.reports.judge_agreement import judge_agreement
from cogbench.reference_eval.run.completeness import coverage_label, shown_value
from cogbench.reference_eval.run.ranks import distributed_rank
from cogbench.reference_eval.run.runner import EvalSettings, RunSummary, run_eval
from cogbench.reference_eval.scoring.pipeline import ScoreOptions, run_scoring
from cogbench.reference_eval.verifying.verify import Verification
from cogbench.reference_eval.verifying.verify import verify as verify_target

if TYPE_CHECKING:
    import datasets
    import pandas

PathLike = str | os.PathLike[str]
# Set by the arguments of `evaluate` itself, so never through its `settings` / `scoring` mappings.
_EVAL_OWN = frozenset({"task", "model", "dataset", "out", "revision", "limit", "loaded"})
# Set by a sweep's shard only (its model's api_key_env): no `eval` option sets it, so no `settings` key either.
_EVAL_INNER = frozenset({"api_key_variable"})
_SCORE_OWN = frozenset({"task", "dataset", "predictions", "out", "revision", "judge", "loaded_models"})
_FROM_RUN = frozenset({"allow_partial", "allow_failures", "circular", "no_image", "image_variants"})


@dataclass
class Result:
    """One scored run: its numbers with their 95% intervals, what they cover, what made them, and each item.

    ``scores`` is the run's scores.json as written; ``details`` one row per scored item, in the
    columns of the details datasets that ``publish-results`` pushes (``detail`` holds the whole
    details.jsonl line as JSON). ``folder`` is the run folder, or None when it was temporary.
    """

    task: str
    model: str
    scores: dict[str, Any]
    details: datasets.Dataset
    folder: Path | None
    run: ScoredRun = field(repr=False)

    @property
    def metrics(self) -> dict[str, float | None]:
        """Each metric's overall value (the subset's value where the metric is PARTIAL: see ``coverage``)."""
        return {name: shown_value(metric) for name, metric in self.scores["metrics"].items()}

    @property
    def intervals(self) -> dict[str, list[float] | None]:
        """Each metric's 95% interval [low, high] (metrics/intervals.py), None where it has none."""
        return {name: (m.get("interval") or {}).get("overall") for name, m in self.scores["metrics"].items()}

    @property
    def coverage(self) -> dict[str, str]:
        """Each metric's coverage: ``PARTIAL (n/N unit)`` where counted on a subset, else ``complete``."""
        return {name: coverage_label(m) or "complete" for name, m in self.scores["metrics"].items()}

    @property
    def complete(self) -> bool:
        """Every item of the config scored and every metric over all of them."""
        return bool(self.scores["complete"])

    @property
    def provenance(self) -> dict[str, Any]:
        """What made the numbers: package version, data read, prompts, judge, models, thresholds."""
        return self.scores["provenance"]

    def to_pandas(self) -> pandas.DataFrame:
        """The per-item details as a pandas DataFrame."""
        return self.details.to_pandas()


@dataclass
class Evaluation:
    """What ``run_evaluation`` did: the generation's summary and, when scored (rank 0), scores.json's content."""

    summary: RunSummary
    scores: dict[str, Any] | None
    score_folder: Path | None


def _fields(kind: type, given: Mapping[str, Any], own: frozenset[str], what: str) -> dict[str, Any]:
    """``given`` checked against the dataclass's fields: a misspelt setting is an error, not ignored."""
    names = {f.name for f in dataclasses.fields(kind)} - own
    unknown = sorted(set(given) - names)
    if unknown:
        raise UsageError(f"{what}: unknown setting(s) {', '.join(unknown)}; known: {', '.join(sorted(names))}")
    return dict(given)


def _model_spec(model: Any, processor: Any, model_name: str | None) -> tuple[str, tuple[Any, Any] | None]:
    """A backend spec string as it is, or an already-loaded transformers model with its processor (hf)."""
    if isinstance(model, str):
        if processor is not None:
            raise UsageError("processor= goes with a loaded model; a spec string loads its own")
        return model, None
    if processor is None:
        raise UsageError(f"model is a loaded {type(model).__name__}: give its processor too (processor=)")
    name = model_name or getattr(model, "name_or_path", "") or type(model).__name__
    return f"hf:{name}", (model, processor)


def run_evaluation(
    settings: EvalSettings,
    scoring: ScoreOptions | None,
    on_generated: Callable[[RunSummary], None] | None = None,
) -> Evaluation:
    """Generate (``run.runner.run_eval``), then score ``settings.out/predictions.jsonl`` with ``scoring``.

    What ``cogbench eval`` runs; ``on_generated`` hears the generation's summary before scoring
    starts (rank 0 only). ``scoring`` None: generate only.
    """
    if scoring is not None and settings.task == "description" and scoring.loaded_models is None:
        # The scorer's models, loaded before the first query: not found missing after every description.
        scoring.loaded_models = check_models(scoring.spacy_model, scoring.embedder)
    summary = run_eval(settings)
    if distributed_rank()[0] != 0:
        return Evaluation(summary, None, None)
    if on_generated is not None:
        on_generated(summary)
    if scoring is None:
        return Evaluation(summary, None, None)
    options = dataclasses.replace(scoring, predictions=str(summary.predictions_path))
    return Evaluation(summary, score_run(options), Path(str(options.out)))


def read_result(folder: PathLike, temporary: bool = False) -> Result:
    """A run folder read back verified (``recording.run_reader.read_run``), its details as a ``datasets.Dataset``."""
    import datasets

    run = read_run(folder)
    details = datasets.Dataset.from_list(detail_rows(run))
    where = None if temporary else run.folder
    return Result(run.scores["task"], run.scores["model"], run.scores, details, where, run)


def evaluate(
    task: str,
    dataset: PathLike,
    model: Any,
    *,
    processor: Any = None,
    model_name: str | None = None,
    limit: int | None = None,
    revision: str | None = None,
    judge: str | None = None,
    out: PathLike | None = None,
    settings: Mapping[str, Any] | None = None,
    scoring: Mapping[str, Any] | None = None,
) -> Result:
    """Run a model on one config and score it, as ``cogbench eval`` does; returns the scored run.

    Args:
        task: ``description``, ``vqa`` or ``codis``.
        dataset: a built dataset folder (verified before use) or a Hub repo id.
        model: a backend spec (``hf:PATH_OR_ID``, ``openai:MODEL``, ``vllm:PATH_OR_ID``) or an
            already-loaded transformers image-text-to-text model, used in place (no reload).
        processor: the loaded model's processor (with its chat template); only with a loaded model.
        model_name: the name a loaded model is recorded under (default: its ``name_or_path``).
        limit: the first N items only; the scores are then labelled ``PARTIAL (n/N)``.
        revision: the Hub revision of ``dataset``.
        judge: as ``cogbench score --judge`` (default: ``rule`` for codis, none otherwise).
        out: the run folder to write (created, or resumed if it holds the same run); None: a
            temporary folder, removed once read back (``Result.folder`` is then None).
        settings: more of ``EvalSettings``' fields (``batch_size``, ``max_new_tokens``, ``mode``,
            ``base_url``, ``device``...).
        scoring: more of ``ScoreOptions``' fields (``judge_base_url``, ``allow_failures``...).

    Raises:
        cogbench.errors.UsageError: a bad argument, setting or dataset (``exit_code`` 2).
        cogbench.errors.IncompleteRunError: model or judge queries failed after their retries.
    """
    task, dataset, limit, revision, judge, out, extra, score_extra = evaluate_arguments(
        task, dataset, limit, revision, judge, out, settings, scoring
    )
    spec, loaded = _model_spec(model, processor, model_name)
    allow_failures = bool(extra.get("allow_failures", False))
    with tempfile.TemporaryDirectory(prefix="cogbench-") as scratch:
        run_dir = Path(out) if out is not None else Path(scratch) / "run"
        run_settings = EvalSettings(
            task=task,
            model=spec,
            dataset=str(dataset),
            out=run_dir,
            revision=revision,
            limit=limit,
            loaded=loaded,
            **extra,
        )
        options = ScoreOptions(
            task=task,
            dataset=str(dataset),
            revision=revision,
            judge=judge,
            out=str(run_dir / "score"),
            # With a limit only the first rows were run: score those, report the rest as missing.
            allow_partial=limit is not None or allow_failures,
            allow_failures=allow_failures,
            circular=run_settings.circular,
            no_image=run_settings.no_image,
            image_variants=run_settings.image_variants,
            **score_extra,
        )
        restore = _borrowed(loaded)
        try:
            evaluation = run_evaluation(run_settings, options)
        finally:
            restore()
        return read_result(evaluation.score_folder or run_dir / "score", temporary=out is None)


def evaluate_arguments(
    task: Any,
    dataset: Any,
    limit: Any,
    revision: Any,
    judge: Any,
    out: Any,
    settings: Mapping[str, Any] | None,
    scoring: Mapping[str, Any] | None,
) -> tuple[Any, ...]:
    """``evaluate``'s arguments checked as ``cogbench eval``'s options (and ``scoring``'s as ``cogbench score``'s),
    before any work: (task, dataset, limit, revision, judge, out, settings, scoring), converted."""
    if not isinstance(settings or {}, Mapping) or not isinstance(scoring or {}, Mapping):
        raise UsageError("settings= and scoring= are mappings of setting names to values (a dict)")
    own = {"task": task, "dataset": dataset, "limit": limit, "revision": revision, "judge": judge, "out": out}
    own = checked("eval", own)
    extra = checked(
        "eval", _fields(EvalSettings, settings or {}, _EVAL_OWN | _EVAL_INNER, "settings"), EVAL_OPTION_NAMES
    )
    # Partial and failure handling, circular and blind runs follow the run's settings.
    score_extra = checked("score", _fields(ScoreOptions, scoring or {}, _SCORE_OWN | _FROM_RUN, "scoring"))
    return (*own.values(), extra, score_extra)


def _borrowed(loaded: tuple[Any, Any] | None) -> Callable[[], None]:
    """What the hf backend changes on a loaded model and processor (eval mode, left padding), to put back."""
    if loaded is None:
        return lambda: None
    model, processor = loaded
    training, side = model.training, processor.tokenizer.padding_side

    def restore() -> None:
        model.train(training)
        processor.tokenizer.padding_side = side

    return restore


def score_run(options: ScoreOptions) -> dict[str, Any]:
    """Score with ``options`` (``scoring.pipeline.run_scoring``), as ``cogbench score`` does; returns scores.json's content.

    With ``write_requests`` it writes the judge's request files instead and returns ``{"request_files": manifest}``.
    """
    if options.shards != 1 and not options.write_requests:
        raise UsageError("--shards applies only with --write-requests")
    return run_scoring(options)


def score(
    task: str,
    dataset: PathLike,
    predictions: PathLike | None = None,
    *,
    oracle: bool = False,
    judge: str | None = None,
    revision: str | None = None,
    out: PathLike | None = None,
    **options: Any,
) -> Result:
    """Score a predictions file (ours or an official format) against a dataset, as ``cogbench score`` does.

    ``options`` are more of ``ScoreOptions``' fields (``allow_partial``, ``judge_base_url``,
    ``circular``...); ``out`` None scores in a temporary folder, removed once read back.
    ``oracle=True`` scores the annotated descriptions instead of a predictions file.
    """
    extra = checked("score", _fields(ScoreOptions, options, _SCORE_OWN | {"oracle"}, "score"))
    own = {"task": task, "dataset": dataset, "predictions": predictions, "oracle": oracle, "judge": judge}
    task, dataset, predictions, oracle, judge, revision, out = checked(
        "score", {**own, "revision": revision, "out": out}
    ).values()
    with tempfile.TemporaryDirectory(prefix="cogbench-") as scratch:
        folder = Path(out) if out is not None else Path(scratch) / "score"
        score_run(
            ScoreOptions(
                task=task,
                dataset=str(dataset),
                predictions=None if predictions is None else str(predictions),
                oracle=oracle,
                judge=judge,
                revision=revision,
                out=str(folder),
                **extra,
            )
        )
        return read_result(folder, temporary=out is None)


def _run(run: Result | PathLike) -> ScoredRun:
    run = path_or_result(run, "a run", Result)
    return run.run if isinstance(run, Result) else read_run(run)


def compare(
    *runs: Result | PathLike,
    judges: bool = False,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    permutations: int = DEFAULT_PERMUTATIONS,
    allow_mismatch: bool = False,
    gate: bool = False,
    max_drop: float | None = None,
    gate_metric: str | None = None,
) -> dict[str, Any]:
    """Two runs paired per metric (A - B, its 95% interval and p-value), as ``cogbench compare`` does.

    ``runs`` are run folders (verified when read) or ``Result`` objects. ``judges=True``: two
    scorings of each model's predictions by two judges, any number of models (``compare --judges``).
    ``gate=True`` with ``max_drop=X`` (points, 0 to 100) is ``compare --gate --max-drop X``: A the baseline,
    B the candidate; the result's ``"gate"`` holds the decision on ``gate_metric`` (default: the task's
    headline metric) overall: ``passed`` False when the upper end of the 95% interval of B - A (``interval``)
    lies below -X. The defaults are ``cogbench compare``'s (``option_types``: one constant each).
    """
    given = {"judges": judges, "resamples": resamples, "seed": seed, "permutations": permutations}
    bar = {"gate": gate, "max_drop": max_drop, "gate_metric": gate_metric}
    values = checked("compare", {**given, "allow_mismatch": allow_mismatch, **bar})
    judges, resamples, seed, permutations, allow_mismatch = (values[name] for name in (*given, "allow_mismatch"))
    check_gate_options(values["gate"], values["max_drop"], values["gate_metric"], judges)
    runs = tuple(path_or_result(run, "compare", Result) for run in runs)
    if judges:
        if len(runs) < 2:
            raise UsageError("compare --judges: give two or more runs (two scorings of each model's predictions)")
        return plain(judge_agreement([_run(r) for r in runs], resamples, seed))
    if len(runs) != 2:
        raise UsageError(f"compare: give two runs, RUN_A and RUN_B ({len(runs)} given; --judges takes more)")
    result = plain(compare_runs(_run(runs[0]), _run(runs[1]), resamples, seed, permutations, allow_mismatch))
    return with_gate(result, values["max_drop"], values["gate_metric"]) if values["gate"] else result


def plain(value: Any) -> Any:
    """``value`` with every numpy scalar as the Python number it holds (``0.5``, not ``np.float64(0.5)``), throughout."""
    if isinstance(value, dict):
        return {key: plain(inner) for key, inner in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(plain(inner) for inner in value)
    if type(value).__module__ == "numpy" and hasattr(value, "item"):
        return value.item()
    return value


def verify(
    target: Result | PathLike, details: str | None = None, revision: str | None = None, dataset: str | None = None
) -> Verification:
    """Every number of a run, details dataset or ``.eval_results`` file recomputed from the per-item details.

    ``Verification.differences`` lists what differs (empty: all ``equal`` numbers and fields agree);
    ``Verification.stated`` names the fields that could only be read as stated. ``dataset``: the
    build the run scored, to re-derive ids and reference answers from.
    """
    target = path_or_result(target, "verify", Result)
    details, revision, dataset = checked(
        "verify", {"details": details, "revision": revision, "dataset": dataset}
    ).values()
    if isinstance(target, Result):
        if target.folder is None:
            raise UsageError("verify: this result's folder was temporary; evaluate or score with out= to verify it")
        target = target.folder
    return verify_target(str(target), details, revision, dataset)
