"""The ``eval`` subcommand: run a model on a config, write its predictions, then score them (``run/eval_command``).
Its option groups shared with ``score`` live in ``reference_eval/cli.py``.

Heavy libraries are imported inside the functions that run a command.
"""

from __future__ import annotations

import argparse

from cogbench.option_types import (
    MAX_NEW_TOKENS,
    json_counts,
    non_negative_int,
    positive_int,
    positive_seconds,
    share,
    token_count,
)
from cogbench.reference_eval.answers.reasoning import THINKING_SETTINGS
from cogbench.reference_eval.cli import (
    DESCRIPTION_ONLY,
    VQA_ONLY,
    VQA_OR_CODIS,
    DefaultsFormatter,
    add_failure_options,
    add_image_variant_option,
    add_judge_check_options,
    add_reply_options,
    add_request_file_options,
    add_task_and_dataset,
)
from cogbench.reference_eval.tasks.queries import DEFAULT_MAX_NEW_TOKENS, THINKING_MAX_NEW_TOKENS


def register(subparsers: argparse._SubParsersAction) -> None:
    add_eval_parser(subparsers)


ENGINE_OPTIONS = (
    "tensor_parallel_size",
    "data_parallel_size",
    "max_model_len",
    "limit_mm_per_prompt",
    "dtype",
    "gpu_memory_utilization",
    "enforce_eager",
)
EVAL_ONLY_FOR = {
    "mode": DESCRIPTION_ONLY,
    "spacy_model": DESCRIPTION_ONLY,
    "embedder": DESCRIPTION_ONLY,
    "circular": VQA_ONLY,
    "image_variants": VQA_OR_CODIS,
    **dict.fromkeys(("device", "num_workers"), ("model", ("hf",))),
    **dict.fromkeys(("batch_size", "trust_remote_code"), ("model", ("hf", "vllm"))),
    **dict.fromkeys(ENGINE_OPTIONS, ("model", ("vllm",))),
    **dict.fromkeys(
        ("base_url", "concurrency", "max_attempts", "request_timeout", "write_requests", "read_responses"),
        ("model", ("openai",)),
    ),
}


def add_eval_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "eval",
        help="run a model on a config (hf:MODEL, vllm:MODEL or openai:MODEL), write predictions, then score them",
        description=(
            "Run a vision-language model on one config of a built dataset or Hub repo, write "
            "RUN_DIR/predictions.jsonl (resumable: re-run the same command after a crash) and the "
            "official-format export, then score with `cogbench score`'s code. Exit codes: 0 done; "
            "1 error; 2 usage error; 3 some model or judge queries failed (what succeeded is saved; re-run "
            "the same command to retry only those)."
        ),
        formatter_class=DefaultsFormatter,
    )
    add_task_and_dataset(parser)
    parser.add_argument(
        "--model",
        required=True,
        help="hf:MODEL_ID_OR_PATH (transformers, local GPU/CPU), openai:MODEL (OpenAI-compatible API at --base-url; "
        "a URL in the spec is refused) "
        "or vllm:MODEL_ID_OR_PATH (vLLM's offline engine in this process; needs vllm installed)",
    )
    parser.add_argument(
        "--mode",
        choices=("spontaneous", "directed"),
        default=None,
        help="description prompt: Spontaneous Description or Directed Reasoning, CogBench Section 3.2.1 "
        "(default: spontaneous)",
    )
    parser.add_argument("--out", help="run folder (default: runs/eval-TASK-BACKEND-MODEL); re-use it to resume")
    parser.add_argument("--limit", type=positive_int, help="only the first N rows of the config (default: all)")
    parser.add_argument(
        "--batch-size",
        type=positive_int,
        default=16,
        help="queries per generate() call (hf), per LLM.chat call (vllm: answers are saved after each)",
    )
    parser.add_argument(
        "--max-new-tokens",
        type=token_count,
        default=None,
        help=f"generated tokens per query at most, up to {MAX_NEW_TOKENS:,} (default: per task, "
        + ", ".join(f"{task} {tokens}" for task, tokens in DEFAULT_MAX_NEW_TOKENS.items())
        + f"; {THINKING_MAX_NEW_TOKENS} for every task with --thinking on)",
    )
    parser.add_argument(
        "--thinking",
        choices=THINKING_SETTINGS,
        default="auto",
        help="a thinking model's reasoning: on/off is passed to its chat template as enable_thinking "
        "(hf:, vllm:; openai: as chat_template_kwargs, which vLLM and SGLang servers read), and on raises "
        f"the default --max-new-tokens to {THINKING_MAX_NEW_TOKENS}, the output length the Qwen3 model cards "
        "recommend for thinking mode; auto (default) sends nothing and keeps the model's own default. "
        "Recorded in run.json and every prediction",
    )
    parser.add_argument(
        "--structured-regex",
        metavar="REGEX",
        help="constrain every reply to REGEX with vLLM's structured outputs: openai: sends it as the request "
        'body\'s "structured_outputs": {"regex": REGEX} (vllm serve, run-batch; other servers may refuse it), '
        "vllm: as SamplingParams(structured_outputs=...). Recorded like --thinking (default: unconstrained)",
    )
    parser.add_argument("--device", help="torch device for hf models (default: this rank's GPU, else CPU)")
    parser.add_argument(
        "--num-workers", type=non_negative_int, default=2, help="image preprocessing processes (hf; 0: in this one)"
    )
    parser.add_argument(
        "--trust-remote-code",
        action="store_true",
        help="allow the model repo's own Python code to run (hf; only for models that need it)",
    )
    parser.add_argument(
        "--base-url", help="OpenAI-compatible API base URL, e.g. http://host:8000/v1 for vLLM (default: OpenAI's)"
    )
    parser.add_argument(
        "--concurrency",
        type=positive_int,
        default=64,
        help="most API requests in flight (openai); the client adapts below it (429, timeouts, 5xx)",
    )
    parser.add_argument("--max-attempts", type=positive_int, default=6, help="tries per API request (openai)")
    parser.add_argument(
        "--request-timeout",
        type=positive_seconds,
        default=120.0,
        help="seconds one API request may take in all (connecting, sending, the whole reply), per attempt (openai)",
    )
    parser.add_argument(
        "--circular",
        action="store_true",
        help="VQA: ask each question four times with the options rotated; adds all-four-right accuracy, "
        "position bias and answer changes (resumable like plain runs)",
    )
    parser.add_argument(
        "--no-image", action="store_true", help="blind baseline: send the same prompts without the image"
    )
    add_image_variant_option(
        parser, "invariance probe: every query again on each fixed, meaning-preserving transform of its image, "
    )
    parser.add_argument(
        "--no-context",
        action="store_true",
        help="codis: ask each query without its context (CODIS Section 4.2); score with --no-context-predictions",
    )
    _add_engine_options(parser)
    add_reply_options(parser)
    add_request_file_options(parser, "the run's queries", "the run folder --out has no prediction for")
    scoring = parser.add_argument_group("scoring (passed to `cogbench score`)")
    scoring.add_argument("--no-score", action="store_true", help="only generate and export")
    scoring.add_argument("--judge", help="as in `cogbench score --judge` (default: rule for codis, none otherwise)")
    scoring.add_argument("--judge-base-url", help="as in `cogbench score --judge-base-url` (default: OpenAI's)")
    scoring.add_argument(
        "--judge-concurrency", type=positive_int, default=64, help="as in `cogbench score --judge-concurrency`"
    )
    add_judge_check_options(scoring)
    scoring.add_argument("--spacy-model", help="as in `cogbench score --spacy-model` (default: en_core_web_sm)")
    scoring.add_argument(
        "--embedder", help="as in `cogbench score --embedder` (default: sentence-transformers/all-mpnet-base-v2)"
    )
    add_failure_options(scoring)
    parser.set_defaults(func=run_eval_command, only_for=EVAL_ONLY_FOR)


def _add_engine_options(parser: argparse.ArgumentParser) -> None:
    """vllm: engine options, passed to vllm.LLM as they are and recorded in run.json."""
    engine = parser.add_argument_group("vLLM engine (vllm: models)")
    engine.add_argument("--tensor-parallel-size", type=positive_int, default=1, help="GPUs per model copy")
    engine.add_argument(
        "--data-parallel-size", type=positive_int, default=1, help="model copies (where vLLM supports it offline)"
    )
    engine.add_argument("--max-model-len", type=positive_int, help="prompt + answer tokens (default: the model's)")
    engine.add_argument(
        "--limit-mm-per-prompt", type=json_counts, default={"image": 1}, help="JSON, e.g. '{\"image\":1}'"
    )
    engine.add_argument("--dtype", default="auto", help="weights and activations (auto, bfloat16, float16, float32)")
    engine.add_argument("--gpu-memory-utilization", type=share, default=0.9, help="share of GPU memory vLLM may use")
    engine.add_argument("--enforce-eager", action="store_true", help="no CUDA graphs (faster start, slower decode)")


def run_eval_command(args: argparse.Namespace) -> int:
    from cogbench.reference_eval.run.eval_command import eval_from_args

    return eval_from_args(args, ENGINE_OPTIONS)
