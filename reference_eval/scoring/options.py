"""The options of a scoring run (``cogbench score``, ``eval``'s scoring, the Python API), and its default folder."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from cogbench.reference_eval.metrics import intervals as metric_intervals
from cogbench.reference_eval.metrics import recognition


@dataclass
class ScoreOptions:
    """Everything a scoring run needs besides the data; built from the command line or by tests."""

    task: str
    dataset: str
    predictions: str | None = None  # None with oracle=True
    oracle: bool = False
    revision: str | None = None
    judge: str | None = None  # rule | none | openai:MODEL; None = the task's default
    panel: tuple[str, ...] = ()  # two or more --judge values: a judge panel (judges/panel.py); judge is then None
    judge_base_url: str | None = None
    judge_concurrency: int = 64  # ceiling of the adaptive concurrency
    judge_parsing: str = "tolerant"  # tolerant | official (judges/verdicts.py)
    judge_max_attempts: int = 6
    judge_timeout: float = 120.0
    judge_backoff: float = 1.0
    judge_cache: str | None = None
    judge_accept_retired: bool = False  # skip judges/retirement's check (a shut-down or unlisted judge)
    judge_shutdowns: tuple[str, ...] = ()  # MODEL=YYYY-MM-DD, added to retirement.KNOWN_SHUTDOWNS
    judge_engine_args: tuple[str, ...] = ()  # KEY=VALUE for a vllm: judge's vllm.LLM (judges/vllm_judge.py)
    judge_structured_outputs: bool = False  # openai: judges send each prompt's constraint (judges/constraints.py)
    spacy_model: str = "en_core_web_sm"
    embedder: str = "sentence-transformers/all-mpnet-base-v2"
    embed_batch_size: int = 64
    # The Recognition Score's models already loaded by this command (`eval` checks them first): used
    # when loaded from spacy_model and embedder, so each is loaded once per command.
    loaded_models: recognition.RecognitionModels | None = None
    out: str | None = None  # None: runs/score-TASK-PREDICTIONS (default_score_dir)
    allow_partial: bool = False
    allow_failures: bool = False
    resamples: int = metric_intervals.DEFAULT_RESAMPLES  # bootstrap resamples of the confidence intervals
    seed: int = metric_intervals.DEFAULT_SEED
    circular: bool = False  # vqa predictions of `eval --circular`: four rotations per question
    no_image: bool = False  # predictions of `eval --no-image` (recorded, scored as usual)
    image_variants: tuple[str, ...] = ()  # predictions of `eval --image-variant`: the variants they hold
    # The papers' further measurements (analyses.py).
    metrics: tuple[str, ...] = ()  # "captioning" (description)
    offline_judge: str | None = None  # rouge | bertscore | nli beside an LLM judge (description)
    offline_threshold: float | None = None
    offline_model: str | None = None
    offline_layers: int | None = None
    offline_device: str | None = None
    no_context_predictions: str | None = None  # codis: output variability
    word_pairs: str | None = None  # codis: answer bias, "up/down,morning/afternoon"
    # Judge request files (backends/batch_files.py): write the uncached judge queries, or read the replies.
    write_requests: str | None = None
    shards: int = 1
    read_responses: tuple[str, ...] = ()
    # Thinking models (answers/reasoning.py): the inline think-block tags, and how details keep reasoning.
    think_tags: tuple[tuple[str, str], ...] | None = None  # None: answers.reasoning.THINK_TAGS
    reasoning_in_details: str = "full"  # full | hash (sha256 and length only)
    thinking: str = "auto"  # score --thinking: on/off stands for predictions that record no setting


def default_score_dir(task: str, predictions: str | None) -> str:
    """runs/score-TASK-NAME: a second task or predictions file never lands in the first one's folder."""
    name = Path(predictions).stem if predictions else "oracle"
    return str(Path("runs") / f"score-{task}-{re.sub(r'[^A-Za-z0-9_.-]+', '_', name)}")
