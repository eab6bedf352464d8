"""A password typed into any spec or option stays home (issue 48 item 1).

Every way a user can type a URL into a command is listed in ``ENTRY_POINTS`` and run against a real local
OpenAI-compatible server (tests/openai_server.py) with ``me:PASSWORD`` in the URL: a single judge with its own
``@URL`` (refused as unlisted, and run with ``--judge-accept-retired``), panel members, ``--judge-base-url``,
``eval``'s ``--base-url``, ``--judge`` and ``--judge-base-url``, ``--model openai:MODEL@URL``, and paths typed as
URLs (predictions, dataset, request files, runs, an output folder). After each: the password is in neither stdout nor stderr, in no
file of the run folder (the judge cache with them), and the server was asked for the model by its name alone.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_judge_failures import perturbed, truth_verdict

from cogbench.cli import main

from openai_server import Reply

PASSWORD = "PASSWORDinSPEC"


def secret(url: str) -> str:
    """``url`` with a user and a password in it."""
    return url.replace("http://", f"http://me:{PASSWORD}@")


def answer(request) -> Reply:
    """A judge's verdict to a CODIS judge prompt, a model's answer to anything else."""
    if "Here is the groundtruth" in request.prompt_text:
        return Reply(text=truth_verdict(request))
    return Reply(text="The left one.")


@pytest.fixture
def setting(built_release, real_raw_dir, tmp_path, openai_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-spec")
    monkeypatch.chdir(tmp_path)
    server = openai_server(answer, models=["judge", "judge-b", "m"])
    unlisted = openai_server(answer, models=["another"])
    predictions = perturbed(real_raw_dir / "codis" / "output_example.json", tmp_path)
    return {
        "dataset": str(built_release),
        "predictions": str(predictions),
        "url": secret(server.base_url),
        "unlisted": secret(unlisted.base_url),
        "servers": (server, unlisted),
        "tmp": tmp_path,
    }


FAST = ["--judge-max-attempts", "1", "--judge-timeout", "10"]  # a request that went astray fails at once


def score(s, *extra: str, predictions: str | None = None) -> list[str]:
    given = predictions or s["predictions"]
    return ["score", "--task", "codis", "--dataset", s["dataset"], "--predictions", given, *FAST, *extra]


def evaluate(s, *extra: str) -> list[str]:
    argv = ["eval", "--task", "codis", "--dataset", s["dataset"], "--limit", "2", "--max-attempts", "1"]
    return [*argv, "--request-timeout", "10", *extra]


# (name, the command line, its exit code, what its error line shows of the URL): every place a URL can be typed.
ENTRY_POINTS = [
    (
        "single judge @URL, unlisted",
        lambda s: score(s, "--judge", f"openai:judge@{s['unlisted']}", "--out", "r"),
        2,
        "/v1/models does not serve judge judge (it serves: another)",
    ),
    (
        "single judge @URL, accepted",
        lambda s: score(s, "--judge", f"openai:judge@{s['unlisted']}", "--judge-accept-retired", "--out", "r"),
        0,
        None,
    ),
    ("single judge @URL, listed", lambda s: score(s, "--judge", f"openai:judge@{s['url']}", "--out", "r"), 0, None),
    (
        "panel members @URL",
        lambda s: score(
            s, "--judge", f"openai:judge@{s['url']}", "--judge", f"openai:judge-b@{s['url']}", "--out", "r"
        ),
        0,
        None,
    ),
    (
        "--judge-base-url",
        lambda s: score(s, "--judge", "openai:judge", "--judge-base-url", s["url"], "--out", "r"),
        0,
        None,
    ),
    (
        "eval --base-url, --judge @URL",
        lambda s: evaluate(s, "--model", "openai:m", "--base-url", s["url"], "--judge", f"openai:judge@{s['url']}"),
        0,
        None,
    ),
    (
        "eval --judge-base-url",
        lambda s: evaluate(
            s,
            "--model",
            "openai:m",
            "--base-url",
            s["url"],
            "--judge",
            "openai:judge",
            "--judge-base-url",
            s["url"],
            "--out",
            "r",
        ),
        0,
        None,
    ),
    (
        "eval --model openai:MODEL@URL",
        lambda s: evaluate(s, "--model", f"openai:m@{s['url']}"),
        2,
        "give the model's endpoint as --base-url URL",
    ),
    (
        "eval --model openai:URL",
        lambda s: evaluate(s, "--model", f"openai:{s['url']}"),
        2,
        "give the model's endpoint as --base-url URL",
    ),
    (
        "--predictions as a URL",
        lambda s: score(s, predictions=f"{s['url']}/p.jsonl"),
        2,
        "error: http:/***@127.0.0.1:",
    ),
    (
        "--dataset as a URL",
        lambda s: ["score", "--task", "description", "--dataset", s["url"], "--oracle"],
        2,
        "***@127.0.0.1:",
    ),
    (
        "--read-responses as a URL",
        lambda s: score(s, "--judge", "openai:judge", "--read-responses", s["url"]),
        2,
        "--read-responses http:/***@127.0.0.1:",
    ),
    (
        "--out as a URL",
        lambda s: score(s, "--out", f"{s['url']}/run"),
        2,
        "error: --out http:/***@127.0.0.1:",
    ),
    (
        "--write-requests as a URL",
        lambda s: score(s, "--judge", "openai:judge", "--write-requests", f"{s['url']}/requests", "--out", "r"),
        2,
        "error: --write-requests http://***@127.0.0.1:",
    ),
    ("report of a URL", lambda s: ["report", s["url"], "--out", "rep"], 2, "error: http:/***@127.0.0.1:"),
    ("verify of a URL", lambda s: ["verify", s["url"]], 2, "error: http://***@127.0.0.1:"),
    ("a number option given a URL", lambda s: score(s, "--seed", s["url"]), 2, "invalid int value: 'http://***@127"),
]


@pytest.mark.parametrize(("name", "argv", "code", "shown"), ENTRY_POINTS, ids=[e[0] for e in ENTRY_POINTS])
def test_no_password_leaves_any_entry_point(setting, capsys, name, argv, code, shown):
    try:
        assert main(argv(setting)) == code
    except SystemExit as stopped:  # argparse's own usage errors
        assert stopped.code == code
    printed = capsys.readouterr()
    assert PASSWORD not in printed.out + printed.err, name
    if shown is not None:  # one line, naming what it refuses, the URL's credentials masked
        last = printed.err.strip().splitlines()[-1]
        assert last.startswith(("error: ", "cogbench ")) and shown in last, printed.err
    written = [p for p in setting["tmp"].rglob("*") if p.is_file() and PASSWORD.encode() in p.read_bytes()]
    assert written == [], name
    assert not [p for p in setting["tmp"].rglob("*") if PASSWORD in p.name]
    asked = {r.body.get("model") for server in setting["servers"] for r in server.chat_requests}
    assert asked <= {"judge", "judge-b", "m"}, asked
    if code == 0:
        assert asked, "the run asked the local server"


def test_a_single_judges_own_url_is_where_it_is_asked(setting, capsys):
    """``--judge openai:MODEL@URL``: that server judges, under the model's name, and scores.json names the judge
    and its host, never the URL."""
    server, unlisted = setting["servers"]
    argv = score(setting, "--judge", f"openai:judge@{setting['unlisted']}", "--judge-accept-retired", "--out", "r")
    assert main(argv) == 0
    assert unlisted.chat_requests and not server.chat_requests
    scores = (Path(setting["tmp"]) / "r" / "scores.json").read_text()
    assert re.search(r'"model": "judge"', scores) and '"endpoint_host": "127.0.0.1"' in scores
    capsys.readouterr()
