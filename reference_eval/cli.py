"""The ``score`` subcommand, and the option groups it shares with ``eval`` (``run/cli.py``); ``rescore`` is the
api room's (``api/cli.py``).

Heavy libraries are imported inside the functions that run a command.
"""

from __future__ import annotations

import argparse

from cogbench.errors import UsageError
from cogbench.option_types import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    finite,
    non_negative_seconds,
    positive_int,
    positive_seconds,
    resample_count,
)
from cogbench.reference_eval.answers.reasoning import THINKING_SETTINGS
from cogbench.reference_eval.metrics.recognition import PAPER_EMBEDDER, PAPER_SPACY_MODEL
from cogbench.schemas.vocabulary import CONFIGS


def register(subparsers: argparse._SubParsersAction) -> None:
    add_score_parser(subparsers)


class DefaultsFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows each option's default; options without one say in their help what happens."""

    def _get_help_string(self, action: argparse.Action) -> str:
        if action.default in (None, False) or "default" in (action.help or ""):
            return action.help or ""
        return super()._get_help_string(action)


class _JudgeValues(argparse.Action):
    """``--judge`` once: the judge; twice or more: a panel (``panel``, judges/panel.py), ``judge`` then "panel"."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        given = [*getattr(namespace, "judges", []), str(values)]
        namespace.judges = given
        namespace.judge = given[0] if len(given) == 1 else "panel"
        namespace.panel = tuple(given) if len(given) > 1 else ()


def add_failure_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--allow-failures",
        action="store_true",
        help="exit 0 even when some judge or model queries still fail after their retries (the result is "
        "labelled partial); without it such a run exits 3",
    )
    parser.add_argument(
        "--judge-parsing",
        choices=("tolerant", "official", "constrained"),
        help="how an LLM judge's replies become verdicts: tolerant (case, labels, markdown; never ambiguous), "
        "official (the authors' rule) or constrained (not the authors': only a reply that is exactly an official "
        "label is read, any other is unscored, left out of the score and shown as a rate beside it; for a judge "
        "constrained to the labels, such as vllm:); scores.json gives the other mode's numbers when they differ; "
        "refused without an LLM judge (default: tolerant)",
    )


def add_judge_check_options(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """The check before the first judge request (judges/retirement.py), and a vllm: judge's engine: `score`'s
    and `eval`'s."""
    parser.add_argument(
        "--judge-engine-arg",
        dest="judge_engine_args",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a keyword argument of vllm.LLM for a --judge vllm: judge, each vllm: member of a panel alike "
        "(dtype=float32, max_model_len=4096, "
        "enforce_eager=true; VALUE read as JSON where it parses), recorded in its identity; repeatable "
        "(default: seed=0 only, vLLM's defaults otherwise)",
    )
    parser.add_argument(
        "--judge-structured-outputs",
        action="store_true",
        help="an openai: judge sends each prompt's official labels as the request body's structured_outputs "
        "(vLLM's field: vllm serve, run-batch; other servers may refuse it), as a vllm: judge always constrains them "
        "(default: unconstrained)",
    )
    parser.add_argument(
        "--judge-accept-retired",
        action="store_true",
        help="send judge requests even to a judge past its known shutdown date, or one the endpoint's "
        "GET /models does not list (default: refuse it before any request; docs/judges.md)",
    )
    parser.add_argument(
        "--judge-shutdown",
        dest="judge_shutdowns",
        action="append",
        default=[],
        metavar="MODEL=YYYY-MM-DD",
        help="add (or replace) a judge's shutdown date in the table the check reads; repeatable "
        "(default: the built-in table: gpt-4-turbo, gpt-4-turbo-preview 2026-10-23, gpt-4o 2027-01-14)",
    )


def add_task_and_dataset(parser: argparse.ArgumentParser) -> None:
    """The arguments that pick what is evaluated; `score` and `eval` share them."""
    parser.add_argument(
        "--task",
        required=True,
        choices=CONFIGS,
        help="which config to evaluate: description (Recognition/Cognition), vqa or codis",
    )
    parser.add_argument("--dataset", required=True, help="built dataset folder or Hugging Face repo id")
    parser.add_argument("--revision", help="Hub revision (tag, branch or commit) of --dataset (default: main)")


def add_score_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "score",
        help="score a model's predictions (Recognition, Cognition, VQA accuracy, CODIS Acc_p/Acc_q)",
        description=(
            "Score predictions against a built CogBench/CODIS dataset. Predictions may be in the "
            "project's format or the benchmarks' official ones. Writes scores.json, details.jsonl "
            "and report.md to --out. Exit codes: 0 done; 1 error; 2 usage error; 3 some judge "
            "queries failed (partial result written; re-run to retry them)."
        ),
        formatter_class=DefaultsFormatter,
    )
    add_task_and_dataset(parser)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--predictions", help="predictions file (project JSONL or an official format)")
    source.add_argument(
        "--oracle",
        action="store_true",
        help="score the annotated reference descriptions as predictions (description task; the papers' Oracle rows)",
    )
    parser.add_argument(
        "--judge",
        default=None,
        action=_JudgeValues,
        help="rule (offline CODIS judge), none (skip judge-based metrics), openai:MODEL[@BASE_URL][#KEY_VARIABLE] "
        "(its own endpoint and key as a panel member's), vllm:PATH_OR_ID[@REVISION] "
        "(in this process, constrained to the official labels; needs vllm), or an offline "
        "Cognition judge rouge|bertscore|nli (description); repeat it for a panel judged by majority, "
        "each member rule, vllm:PATH_OR_ID or openai:MODEL[@BASE_URL][#KEY_VARIABLE], a member on another host "
        "sent the key in KEY_VARIABLE or none (docs/judges.md) (default: rule for codis, none otherwise)",
    )
    parser.set_defaults(panel=())
    parser.add_argument(
        "--judge-base-url",
        help="base URL of an OpenAI-compatible API, the one host OPENAI_API_KEY is sent to; a panel member's own "
        "@BASE_URL overrides it (default: OpenAI's)",
    )
    parser.add_argument(
        "--judge-concurrency",
        type=positive_int,
        default=64,
        help="most judge requests in flight; the client adapts below it (429, timeouts, 5xx)",
    )
    parser.add_argument(
        "--judge-max-attempts", type=positive_int, default=6, help="tries per judge request (429/5xx/timeouts)"
    )
    parser.add_argument(
        "--judge-timeout",
        type=positive_seconds,
        default=120.0,
        help="seconds one judge request may take in all (connecting, sending, the whole reply), per attempt",
    )
    parser.add_argument(
        "--judge-backoff",
        type=non_negative_seconds,
        default=1.0,
        help="seconds before the first retry; doubles with each retry",
    )
    parser.add_argument(
        "--judge-cache",
        help="sqlite file of cached verdicts, outside any build or other command's folder (another score "
        "folder's judge_cache.sqlite may be shared) (default: OUT/judge_cache.sqlite)",
    )
    add_judge_check_options(parser)
    parser.add_argument("--spacy-model", default=PAPER_SPACY_MODEL, help="spaCy pipeline name or path (nouns)")
    parser.add_argument(
        "--embedder",
        default=PAPER_EMBEDDER,
        help="sentence-transformers model name or path (Recognition Score)",
    )
    parser.add_argument("--embed-batch-size", type=positive_int, default=64, help="strings per embedder batch")
    parser.add_argument(
        "--out",
        help="run folder for scores.json, details.jsonl, report.md "
        "(default: runs/score-TASK-PREDICTIONS, PREDICTIONS the file's name without suffix)",
    )
    parser.add_argument(
        "--allow-partial",
        action="store_true",
        help="score only the ids present in both predictions and dataset, and report the rest",
    )
    parser.add_argument(
        "--circular", action="store_true", help="VQA predictions of `eval --circular` (four rotations per question)"
    )
    parser.add_argument(
        "--no-image", action="store_true", help="record that the predictions were made without images (blind baseline)"
    )
    add_image_variant_option(parser, "predictions of `eval --image-variant` (vqa, codis): the variants they hold; ")
    parser.add_argument(
        "--resamples",
        type=resample_count,
        default=DEFAULT_RESAMPLES,
        help="recorded in scores.json for compare; the 95%% intervals are Korn-Graubard "
        "(metrics/small_sample.py) and need no resampling",
    )
    parser.add_argument(
        "--seed", type=int, default=DEFAULT_SEED, help="seed of the bootstrap (same seed, same intervals)"
    )
    _add_analysis_options(parser)
    add_reply_options(parser)
    parser.add_argument(
        "--thinking",
        choices=THINKING_SETTINGS,
        default="auto",
        help="whether the model thought before answering, for replies whose predictions record no thinking setting "
        "(third-party files; eval --thinking auto): on, a reply with no closing tag and no reasoning field is an "
        "open think block (no answer); off, it is the answer. auto (default): a reply cut at the token limit with "
        "no tag is not read (UNSCORED, scored as no answer). A prediction recording the other setting is refused",
    )
    add_failure_options(parser)
    add_request_file_options(parser, "the judge queries", "no cached verdict answers (--judge openai:MODEL)")
    parser.set_defaults(func=run_score, only_for=SCORE_ONLY_FOR)


def add_reply_options(parser: argparse.ArgumentParser) -> None:
    """How a thinking model's replies are read and kept (answers/reasoning.py; docs/scoring.md)."""
    parser.add_argument(
        "--think-tags",
        nargs=2,
        action="append",
        metavar=("OPEN", "CLOSE"),
        help="an inline think-block tag pair; repeat for several; replaces the defaults "
        "(<think></think>, ◁think▷◁/think▷, <thinking></thinking>, <reasoning></reasoning>)",
    )
    parser.add_argument(
        "--reasoning-in-details",
        choices=("full", "hash"),
        default="full",
        help="keep each reply's reasoning in details.jsonl in full, or only its sha256 and length "
        "(then verify cannot re-derive the final answers from it)",
    )


def variant_names(text: str) -> tuple[str, ...]:
    """``--image-variant NAME[,NAME...]``: argparse's usage line, then one error line, for an unknown name."""
    from cogbench.reference_eval.tasks.image_variants import parse_variants

    try:
        return parse_variants(text)
    except UsageError as error:
        raise argparse.ArgumentTypeError(str(error).removeprefix("--image-variant ")) from None


def add_image_variant_option(parser: argparse.ArgumentParser, what: str) -> None:
    """The invariance probe's variants (tasks/image_variants.py); listed in --help from the registry."""
    from cogbench.reference_eval.tasks.image_variants import VARIANTS

    parser.add_argument(
        "--image-variant",
        dest="image_variants",
        type=variant_names,
        default=(),
        metavar="NAME[,NAME...]",
        help=what + f"scored for flip rate and invariant accuracy; one of {', '.join(VARIANTS)} "
        "(docs/scoring.md, Invariance probe) (default: none)",
    )


# Options refused where they do not apply (see cogbench.cli.refuse_inapplicable).
DESCRIPTION_ONLY = ("task", ("description",))
VQA_ONLY = ("task", ("vqa",))
VQA_OR_CODIS = ("task", ("vqa", "codis"))
SCORE_ONLY_FOR = {
    "spacy_model": DESCRIPTION_ONLY,
    "embedder": DESCRIPTION_ONLY,
    "embed_batch_size": DESCRIPTION_ONLY,
    "circular": VQA_ONLY,
    "image_variants": VQA_OR_CODIS,
    **dict.fromkeys(("write_requests", "read_responses"), ("judge", ("openai",))),
}


def _add_analysis_options(parser: argparse.ArgumentParser) -> None:
    """The papers' further measurements (reference_eval/scoring/analyses.py; docs/measurements.md)."""
    group = parser.add_argument_group("further measurements")
    group.add_argument(
        "--metrics",
        action="append",
        default=[],
        choices=("captioning",),
        help="description: also METEOR, CIDEr, BLEU-1..4 against the reference (CogBench Appendix E, Table 7; needs Java); "
        "repeatable (default: none)",
    )
    group.add_argument(
        "--offline-judge",
        choices=("rouge", "bertscore", "nli"),
        help="description: an offline Cognition judge (CogBench Appendix F) beside --judge openai:MODEL, "
        "with agreement per category; --judge rouge|bertscore|nli uses one alone (default: none)",
    )
    group.add_argument(
        "--offline-threshold",
        type=finite,
        help="score threshold of rouge (default 0.5) / bertscore (default 0.9); not given by the paper",
    )
    group.add_argument(
        "--offline-model",
        help="bertscore / nli model name or local path "
        "(defaults: roberta-large; MoritzLaurer/mDeBERTa-v3-base-xnli-multilingual-nli-2mil7)",
    )
    group.add_argument(
        "--offline-layers", type=int, help="bertscore: hidden layer to use (default: bert-score's, else the last)"
    )
    group.add_argument("--offline-device", help="torch device for bertscore / nli (default: bert-score's / CPU)")
    group.add_argument(
        "--no-context-predictions",
        help="codis: predictions of `eval --no-context`; reports output variability (CODIS Section 4.2, Table 4) "
        "(default: not reported)",
    )
    group.add_argument(
        "--word-pairs",
        help="codis answer bias (CODIS Table 6): FIRST/SECOND pairs, comma-separated "
        "(default: up/down,morning/afternoon,appropriate/not appropriate)",
    )


def run_score(args: argparse.Namespace) -> int:
    from cogbench.reference_eval.api.commands import score_from_args

    return score_from_args(args)


def add_request_file_options(parser: argparse.ArgumentParser, what: str, which: str) -> None:
    """Request files any engine runs (OpenAI Batch API JSONL; docs/running.md, "Request files"): eval's and score's."""
    group = parser.add_argument_group("request files (OpenAI Batch API JSONL, for batch APIs, vllm run-batch, Ray)")
    files = group.add_mutually_exclusive_group()
    files.add_argument(
        "--write-requests",
        metavar="DIR",
        help=f"write {what} that {which} as request files in DIR (with manifest.json) and stop; nothing is sent "
        "(default: send them)",
    )
    files.add_argument(
        "--read-responses",
        nargs="+",
        metavar="FILE_OR_DIR",
        help="take the answers from Batch API / vllm run-batch / Ray Data output files (folders: their *.jsonl, *.json), "
        "any order "
        "(default: from the model)",
    )
    group.add_argument("--shards", type=positive_int, default=1, help="with --write-requests: files of equal size")
