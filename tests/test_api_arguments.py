"""The Python API's errors are the command line's (issue 48 item 8).

``cogbench.evaluate(limit="3")`` was a bare ``TypeError`` and ``evaluate(limit=-1)`` ended in "predictions.jsonl:
not valid JSON". Each row of ``BAD`` gives one API function a bad argument and the command the same value typed:
the API raises ``UsageError`` before any work (the dataset "ds" does not exist, and is never reached) with
exactly the message the command prints after ``error:``. A value the command takes (``--limit 3``) the API
takes too. ``compare()``'s defaults are ``cogbench compare``'s.
"""

from __future__ import annotations

import inspect

import pytest

import cogbench
from cogbench.cli import build_parser, main
from cogbench.errors import UsageError
from cogbench.reference_eval.scoring.options import ScoreOptions

EVAL = ["eval", "--task", "codis", "--dataset", "ds", "--model", "openai:m"]
SCORE = ["score", "--task", "codis", "--dataset", "ds", "--predictions", "p.json"]
BASE = {"task": "codis", "dataset": "ds"}

# (API function, its arguments, the command line given the same value)
BAD = [
    ("evaluate", {"model": "openai:m", "limit": -1}, [*EVAL, "--limit", "-1"]),
    ("evaluate", {"model": "openai:m", "limit": 0}, [*EVAL, "--limit", "0"]),
    ("evaluate", {"model": "openai:m", "limit": "x"}, [*EVAL, "--limit", "x"]),
    ("evaluate", {"model": "openai:m", "limit": 2.5}, [*EVAL, "--limit", "2.5"]),
    ("evaluate", {"model": "openai:m", "limit": True}, [*EVAL, "--limit", "True"]),
    ("evaluate", {"model": "openai:m", "task": "nope"}, ["eval", "--task", "nope", "--dataset", "ds", "--model", "m"]),
    ("evaluate", {"model": "openai:m", "settings": {"batch_size": 0}}, [*EVAL, "--batch-size", "0"]),
    (
        "evaluate",
        {"model": "openai:m", "settings": {"max_new_tokens": 10**9}},
        [*EVAL, "--max-new-tokens", "1000000000"],
    ),
    (
        "evaluate",
        {"model": "openai:m", "settings": {"timeout_seconds": float("nan")}},
        [*EVAL, "--request-timeout", "nan"],
    ),
    ("evaluate", {"model": "openai:m", "settings": {"concurrency": 0}}, [*EVAL, "--concurrency", "0"]),
    ("evaluate", {"model": "openai:m", "settings": {"max_attempts": -2}}, [*EVAL, "--max-attempts", "-2"]),
    ("evaluate", {"model": "openai:m", "settings": {"num_workers": -1}}, [*EVAL, "--num-workers", "-1"]),
    ("evaluate", {"model": "openai:m", "settings": {"thinking": "maybe"}}, [*EVAL, "--thinking", "maybe"]),
    ("evaluate", {"model": "openai:m", "settings": {"mode": "free"}}, [*EVAL, "--mode", "free"]),
    ("evaluate", {"model": "openai:m", "scoring": {"judge_concurrency": 0}}, [*EVAL, "--judge-concurrency", "0"]),
    ("evaluate", {"model": "openai:m", "scoring": {"judge_parsing": "loose"}}, [*EVAL, "--judge-parsing", "loose"]),
    ("score", {"predictions": "p.json", "resamples": 0}, [*SCORE, "--resamples", "0"]),
    ("score", {"predictions": "p.json", "seed": "x"}, [*SCORE, "--seed", "x"]),
    ("score", {"predictions": "p.json", "judge_max_attempts": 0}, [*SCORE, "--judge-max-attempts", "0"]),
    ("score", {"predictions": "p.json", "judge_timeout": 0}, [*SCORE, "--judge-timeout", "0"]),
    ("score", {"predictions": "p.json", "judge_backoff": -1}, [*SCORE, "--judge-backoff", "-1"]),
    ("score", {"predictions": "p.json", "embed_batch_size": 0}, [*SCORE, "--embed-batch-size", "0"]),
    ("score", {"predictions": "p.json", "shards": 0}, [*SCORE, "--shards", "0"]),
    ("score", {"predictions": "p.json", "reasoning_in_details": "some"}, [*SCORE, "--reasoning-in-details", "some"]),
    ("score", {"predictions": "p.json", "metrics": ["bleu"]}, [*SCORE, "--metrics", "bleu"]),
    ("score", {"predictions": "p.json", "task": "x"}, ["score", "--task", "x", "--dataset", "ds", "--oracle"]),
    ("compare", {"resamples": 0}, ["compare", "a", "b", "--resamples", "0"]),
    ("compare", {"seed": "x"}, ["compare", "a", "b", "--seed", "x"]),
    ("compare", {"seed": 1.5}, ["compare", "a", "b", "--seed", "1.5"]),
    ("compare", {"permutations": 0}, ["compare", "a", "b", "--permutations", "0"]),
    ("rescore", {"shards": 0}, ["rescore", "r", "--dataset", "d", "--out", "o", "--shards", "0"]),
    ("explain", {"task": "x"}, ["explain", "a", "b", "--task", "x"]),
]


def call(function: str, arguments: dict) -> None:
    if function in ("evaluate", "score"):
        getattr(cogbench, function)(**{**BASE, **arguments})
    elif function == "compare":
        cogbench.compare("a", "b", **arguments)
    elif function == "rescore":
        cogbench.rescore("r", "d", "o", **arguments)
    else:
        cogbench.explain("a", "b", **arguments)


def cli_message(argv: list[str], capsys) -> str:
    """What the command prints after ``error:`` for ``argv`` (argparse's usage error, exit 2)."""
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2
    return capsys.readouterr().err.strip().splitlines()[-1].split(" error: ", 1)[1]


@pytest.mark.parametrize(("function", "arguments", "argv"), BAD, ids=[f"{b[0]}-{b[2][-2]}" for b in BAD])
def test_a_bad_argument_gives_the_command_lines_message(function, arguments, argv, capsys):
    expected = cli_message(argv, capsys)
    with pytest.raises(UsageError) as raised:
        call(function, arguments)
    assert str(raised.value) == expected


@pytest.mark.parametrize(
    ("function", "arguments", "message"),
    [
        ("evaluate", {"model": "openai:m", "judge": 3}, "argument --judge: expected text, not int 3"),
        ("evaluate", {"model": "openai:m", "settings": [("batch_size", 2)]}, "settings= and scoring= are mappings"),
        ("score", {"predictions": 3}, "argument --predictions: expected text, not int 3"),
        ("score", {"predictions": "p.json", "oracle": "yes"}, "argument --oracle: 'yes' is not True or False"),
        ("compare", {"allow_mismatch": 1}, "argument --allow-mismatch: 1 is not True or False"),
        ("rescore", {"revision": 2}, "argument --revision: expected text, not int 2"),
    ],
)
def test_a_value_no_command_line_could_type_is_one_usage_error(function, arguments, message):
    with pytest.raises(UsageError, match=message.replace("(", r"\(")):
        call(function, arguments)
    with pytest.raises(UsageError, match="expected a run folder"):
        cogbench.verify(3)


def test_a_value_the_command_takes_the_api_takes():
    """``limit="3"`` is ``--limit 3``, ``batch_size="2"`` ``--batch-size 2``, a path an ``os.PathLike``: converted as
    the command line converts what is typed."""
    from pathlib import Path

    from cogbench.reference_eval.api.evaluation import evaluate_arguments

    given = evaluate_arguments("codis", Path("ds"), "3", None, None, None, {"batch_size": "2"}, {"seed": "7"})
    assert given == ("codis", "ds", 3, None, None, None, {"batch_size": 2}, {"seed": 7})


def test_compare_defaults_are_the_command_lines():
    compare_cli = {a.dest: a.default for a in build_parser()._subparsers._group_actions[0].choices["compare"]._actions}
    defaults = inspect.signature(cogbench.compare).parameters
    for name in ("seed", "resamples", "permutations"):
        assert defaults[name].default == compare_cli[name], name
    score_cli = {a.dest: a.default for a in build_parser()._subparsers._group_actions[0].choices["score"]._actions}
    options = ScoreOptions("codis", "ds")
    assert (options.seed, options.resamples) == (score_cli["seed"], score_cli["resamples"])
