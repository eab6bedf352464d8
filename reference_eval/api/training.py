"""``CogbenchCallback``: the model being trained, evaluated on a subset every N steps or at each save, in process.

The trainer's own model object and processor go to ``cogbench.evaluate`` (no save, no reload); the
scores with their 95% intervals go through ``trainer.log``, so ``state.log_history`` and every
logger the trainer reports to (TensorBoard, W&B...) get them. A metric counted on a subset says so
in its key, as every cogbench output does: ``cogbench/codis/acc_p PARTIAL (8/353 pairs)``, with
``... ci_low`` and ``... ci_high`` beside it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from cogbench.errors import UsageError
from cogbench.reference_eval.api.evaluation import PathLike, Result, evaluate, evaluate_arguments
from cogbench.reference_eval.run.ranks import distributed_rank


def log_entries(result: Result, prefix: str = "cogbench") -> dict[str, float]:
    """A result's numbers as a trainer's log entries: each metric's value and interval, its coverage in the key."""
    entries = {}
    for name, value in result.metrics.items():
        if value is None:
            continue  # a metric this judge does not give (a judged metric with judge none)
        coverage = result.coverage[name]
        key = f"{prefix}/{result.task}/{name}" + ("" if coverage == "complete" else f" {coverage}")
        entries[key] = value
        interval = result.intervals[name]
        if interval is not None:
            entries[f"{key} ci_low"], entries[f"{key} ci_high"] = interval
    return entries


class CogbenchCallback(TrainerCallback):
    """Evaluate the model being trained with ``cogbench.evaluate`` and log the scores through the trainer.

    Args:
        trainer: the ``transformers.Trainer`` whose model is evaluated and whose ``log`` is used.
        task: ``description``, ``vqa`` or ``codis``.
        dataset: a built dataset folder or Hub repo id.
        limit: the first N items (the subset); its coverage is in every key.
        every_n_steps: evaluate when the global step is a multiple of N.
        on_save: evaluate at each checkpoint save.
        processor: the model's processor (default: the trainer's ``processing_class``).
        out: keep each evaluation's run folder as ``out/step-N`` (default: temporary, removed).
        judge: as in ``cogbench.evaluate``.
        revision: as in ``cogbench.evaluate``.
        settings: as in ``cogbench.evaluate``; defaults to ``num_workers=0`` (no image-decoding
            processes forked from the training process).
        scoring: as in ``cogbench.evaluate``.

    ``results`` holds (global step, ``Result``) of every evaluation, in order.
    """

    def __init__(
        self,
        trainer: Any,
        task: str,
        dataset: PathLike,
        *,
        limit: int | None = None,
        every_n_steps: int | None = None,
        on_save: bool = False,
        processor: Any = None,
        out: PathLike | None = None,
        judge: str | None = None,
        revision: str | None = None,
        settings: Mapping[str, Any] | None = None,
        scoring: Mapping[str, Any] | None = None,
        prefix: str = "cogbench",
    ) -> None:
        if every_n_steps is None and not on_save:
            raise UsageError("CogbenchCallback: give every_n_steps=N, on_save=True, or both")
        whole = isinstance(every_n_steps, int) and not isinstance(every_n_steps, bool)
        if every_n_steps is not None and (not whole or every_n_steps < 1):
            raise UsageError(f"CogbenchCallback: every_n_steps={every_n_steps!r}: give a whole number of 1 or more")
        # Checked now, as `cogbench eval` checks its options, not at the first evaluation many steps later.
        task, dataset, limit, revision, judge, out, settings, scoring = evaluate_arguments(
            task, dataset, limit, revision, judge, out, settings, scoring
        )
        if distributed_rank()[1] > 1:
            raise UsageError(
                "CogbenchCallback evaluates in one process; under torchrun, evaluate saved checkpoints with "
                "`cogbench eval` instead"
            )
        self.trainer = trainer
        self.task, self.dataset, self.limit = task, dataset, limit
        self.every_n_steps, self.on_save_too = every_n_steps, on_save
        self.processor, self.out, self.judge, self.revision = processor, out, judge, revision
        self.settings = {"num_workers": 0, **(settings or {})}
        self.scoring = dict(scoring or {})
        self.prefix = prefix
        self.results: list[tuple[int, Result]] = []

    def on_step_end(self, args, state, control, **kwargs):
        if self.every_n_steps and state.global_step % self.every_n_steps == 0:
            self._evaluate(state, kwargs.get("model"))
        return control

    def on_save(self, args, state, control, **kwargs):
        if self.on_save_too:
            self._evaluate(state, kwargs.get("model"))
        return control

    def _evaluate(self, state, model: Any) -> None:
        step = state.global_step
        if self.results and self.results[-1][0] == step:
            return  # a save at a step already evaluated
        model = model if model is not None else self.trainer.model
        processor = self.processor if self.processor is not None else self.trainer.processing_class
        result = evaluate(
            self.task,
            self.dataset,
            model,
            processor=processor,
            model_name=f"{getattr(model, 'name_or_path', '') or type(model).__name__}@step-{step}",
            limit=self.limit,
            revision=self.revision,
            judge=self.judge,
            out=None if self.out is None else Path(self.out) / f"step-{step}",
            settings=self.settings,
            scoring=self.scoring,
        )
        self.results.append((step, result))
        self.trainer.log(log_entries(result, self.prefix))
