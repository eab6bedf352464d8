"""A judge that is gone is refused in one line before any request (issue 40 item 2).

Against a real local server whose ``GET /v1/models`` lists, omits or dates the judge; the dates
of the built-in table are read against today's date, so the tests that need a date on either
side of today add their own with ``--judge-shutdown``.
"""

from __future__ import annotations

import datetime as dt
import json
import socket

import pytest

from cogbench.cli import main
from cogbench.errors import UsageError
from cogbench.reference_eval.judges import retirement

from openai_server import Reply

SECRET = "sk-retirement-test-98765"
RETIRED_ADVICE = "cogbench judges certify"  # the way out of a retired judge, and only of one
DISTINCT_PROMPTS = 555  # of the 706 CODIS judge queries of the authors' example (identical prompts go once)


@pytest.fixture(autouse=True)
def api_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)


def score(real_raw_dir, built_release, tmp_path, judge, base_url, *extra):
    return main(
        [
            "score",
            "--task",
            "codis",
            "--dataset",
            str(built_release),
            "--predictions",
            str(real_raw_dir / "codis" / "output_example.json"),
            "--judge",
            f"openai:{judge}",
            "--judge-base-url",
            base_url,
            "--judge-backoff",
            "0",
            "--out",
            str(tmp_path / "run"),
            *extra,
        ]
    )


def one_error_line(capsys) -> str:
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert SECRET not in err
    return err


def right(request):
    return Reply(text="right")


def test_the_papers_judges_are_refused_after_their_shutdown(
    real_raw_dir, built_release, tmp_path, openai_server, capsys
):
    # The server still lists it: the date alone refuses it (today is past 2026-10-23, the table says).
    assert dt.date.today() >= dt.date(2026, 10, 23)
    server = openai_server(right, models=["gpt-4-turbo-preview"])
    assert score(real_raw_dir, built_release, tmp_path, "gpt-4-turbo-preview", server.base_url) == 2
    err = one_error_line(capsys)
    assert "judge gpt-4-turbo-preview was shut down on 2026-10-23" in err
    assert "platform.openai.com/docs/deprecations" in err and "docs/judges.md" in err
    assert "cogbench judges certify" in err and "--judge-accept-retired" in err
    assert server.chat_requests == []
    assert not (tmp_path / "run" / "scores.json").exists()


def test_accept_retired_sends_anyway(real_raw_dir, built_release, tmp_path, openai_server, capsys):
    server = openai_server(right, models=["gpt-4-turbo-preview"])
    argv = ("--judge-accept-retired",)
    assert score(real_raw_dir, built_release, tmp_path, "gpt-4-turbo-preview", server.base_url, *argv) == 0
    assert len(server.chat_requests) == DISTINCT_PROMPTS


def test_an_endpoint_that_does_not_list_the_judge(real_raw_dir, built_release, tmp_path, openai_server, capsys):
    server = openai_server(right, models=["Qwen/Qwen3-8B", "other"])
    assert score(real_raw_dir, built_release, tmp_path, "judge-x", server.base_url) == 2
    err = one_error_line(capsys)
    assert f"{server.base_url}/models does not serve judge judge-x (it serves: Qwen/Qwen3-8B, other)" in err
    assert "name one of the models it serves" in err and RETIRED_ADVICE not in err and "did you mean" not in err
    assert server.chat_requests == [] and [r.path for r in server.requests] == ["/v1/models"]
    assert server.requests[0].headers["authorization"] == f"Bearer {SECRET}"


@pytest.mark.parametrize("typed", ["Qwen/Qwen3-8b", "Qwen/Qwen3-8", "QWEN/QWEN3-8B", "qwen3-8B"])
def test_a_misspelt_judge_is_asked_did_you_mean(typed, real_raw_dir, built_release, tmp_path, openai_server, capsys):
    """A typo is not a retired judge (issue 48 item 9h): the closest model the endpoint lists, not certify's advice."""
    server = openai_server(right, models=["Qwen/Qwen3-8B", "meta-llama/Llama-3.3-70B-Instruct"])
    assert score(real_raw_dir, built_release, tmp_path, typed, server.base_url) == 2
    err = one_error_line(capsys)
    assert f"does not serve judge {typed} " in err and err.endswith("did you mean Qwen/Qwen3-8B?\n")
    assert RETIRED_ADVICE not in err and "--judge-accept-retired" not in err
    assert server.chat_requests == []


def test_a_papers_judge_the_endpoint_no_longer_lists_gets_the_retired_advice(
    real_raw_dir, built_release, tmp_path, openai_server, capsys
):
    # gpt-4o answers until 2027-01-14 by the table; an endpoint that has dropped it already: certify a pinned judge.
    later = ("--judge-shutdown", "gpt-4o=2999-01-01")
    server = openai_server(right, models=["gpt-4o-mini", "gpt-4.1"])
    assert score(real_raw_dir, built_release, tmp_path, "gpt-4o", server.base_url, *later) == 2
    err = one_error_line(capsys)
    assert "does not serve judge gpt-4o " in err and RETIRED_ADVICE in err and "did you mean" not in err


def test_model_ids_from_the_server_are_printed_escaped_and_shortened(
    real_raw_dir, built_release, tmp_path, openai_server, capsys
):
    """A served id with a newline and ANSI escapes forged an `error:` line of its own; a 5 MB id filled the terminal."""
    forged = "judge-y\n\x1b[31merror: the judge passed\x1b[0m"
    server = openai_server(right, models=[forged, "z" * 5_000_000])
    assert score(real_raw_dir, built_release, tmp_path, "judge-x", server.base_url) == 2
    err = one_error_line(capsys)  # one line: the newline is shown as \n
    assert "\x1b" not in err and len(err) < 2000, err[:300]
    assert "'judge-y\\n\\x1b[31merror: the judge passed\\x1b[0m'" in err
    assert "(5,000,000 characters)" in err


@pytest.mark.parametrize(
    ("body", "expect"),
    [
        (json.dumps({"data": [{"id": "judge-x", "pad": "p" * 200_000}]}).encode(), "reply larger than 65,536 bytes"),
        (b'{"data": ' + b"[" * 30_000 + b"]" * 30_000 + b"}", "the answer is not a model list"),
    ],
    ids=["over-the-cap", "nested-30000-deep"],
)
def test_a_model_list_over_the_cap_or_nested_too_deep_is_one_line(
    body, expect, real_raw_dir, built_release, tmp_path, openai_server, monkeypatch, capsys
):
    """`GET /models` was read whole (300 MB took 1.23 GB) and parsed without a bound on its depth (a
    RecursionError traceback): it is read up to COGBENCH_MAX_REPLY_BYTES as a chat reply is."""
    monkeypatch.setenv("COGBENCH_MAX_REPLY_BYTES", "65536")
    server = openai_server(right, models=body)
    assert score(real_raw_dir, built_release, tmp_path, "judge-x", server.base_url) == 2
    err = one_error_line(capsys)
    assert f"cannot check judge judge-x: GET {server.base_url}/models: {expect}" in err
    assert server.chat_requests == []


def test_a_listed_judge_is_asked_after_one_look_at_the_list(real_raw_dir, built_release, tmp_path, openai_server):
    server = openai_server(right, models=["judge-x"])
    assert score(real_raw_dir, built_release, tmp_path, "judge-x", server.base_url) == 0
    assert server.requests[0].path == "/v1/models"
    assert [r.path for r in server.requests[1:]] == ["/v1/chat/completions"] * DISTINCT_PROMPTS


@pytest.mark.parametrize(("listed", "refused"), [("2020-05-01", True), ("2999-01-01", False), (946684800, True)])
def test_the_model_lists_own_shutdown_date(
    listed, refused, real_raw_dir, built_release, tmp_path, openai_server, capsys
):
    server = openai_server(
        right, models=[{"id": "judge-x", "shutdown_date" if isinstance(listed, str) else "shutdown_at": listed}]
    )
    code = score(real_raw_dir, built_release, tmp_path, "judge-x", server.base_url)
    if not refused:
        assert code == 0 and len(server.chat_requests) == DISTINCT_PROMPTS
        return
    assert code == 2
    err = one_error_line(capsys)
    day = "2000-01-01" if listed == 946684800 else listed
    assert f"judge judge-x was shut down on {day} (the endpoint's model list, {server.base_url}/models)" in err
    assert server.chat_requests == []


def test_added_shutdown_dates(real_raw_dir, built_release, tmp_path, openai_server, capsys):
    server = openai_server(right, models=["judge-x", "gpt-4-turbo-preview"])
    past = ("--judge-shutdown", "judge-x=2001-02-03")
    assert score(real_raw_dir, built_release, tmp_path, "judge-x", server.base_url, *past) == 2
    assert "judge judge-x was shut down on 2001-02-03 (--judge-shutdown)" in one_error_line(capsys)
    # The user's date replaces the table's: a later one lets the old judge run.
    later = ("--judge-shutdown", "gpt-4-turbo-preview=2999-12-31")
    assert score(real_raw_dir, built_release, tmp_path, "gpt-4-turbo-preview", server.base_url, *later) == 0
    for bad in ("judge-x", "judge-x=tomorrow", "=2020-01-01"):
        assert score(real_raw_dir, built_release, tmp_path, "judge-x", server.base_url, "--judge-shutdown", bad) == 2
        assert "expected MODEL=YYYY-MM-DD" in one_error_line(capsys)


def test_an_unreachable_endpoint_is_one_line(real_raw_dir, built_release, tmp_path, capsys):
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    assert score(real_raw_dir, built_release, tmp_path, "judge-x", f"http://127.0.0.1:{port}/v1") == 2
    err = one_error_line(capsys)
    assert f"cannot check judge judge-x: GET http://127.0.0.1:{port}/v1/models: connection failed" in err
    # A server that is down is not a retired judge (issue 48 item 9h): where it was looked for, credentials masked.
    assert err.endswith(f"; is the server running at http://127.0.0.1:{port}/v1?\n")
    assert RETIRED_ADVICE not in err and "--judge-accept-retired" not in err
    url = f"http://user:{SECRET}@127.0.0.1:{port}/v1?api-key={SECRET}"
    assert score(real_raw_dir, built_release, tmp_path, "judge-x", url) == 2
    err = one_error_line(capsys)  # the secret nowhere in it
    assert f"is the server running at http://***@127.0.0.1:{port}/v1?api-key=***" in err


def test_an_endpoint_refusing_the_key_says_so(real_raw_dir, built_release, tmp_path, openai_server, capsys):
    server = openai_server(right, models=["judge-x"], api_key="another-key")
    assert score(real_raw_dir, built_release, tmp_path, "judge-x", server.base_url) == 2
    err = one_error_line(capsys)
    assert f"GET {server.base_url}/models: HTTP 401; check the key sent to it (OPENAI_API_KEY" in err
    assert RETIRED_ADVICE not in err


def test_a_server_without_a_model_list_is_not_checked_there(real_raw_dir, built_release, tmp_path, openai_server):
    server = openai_server(right)  # GET /v1/models: 404
    assert score(real_raw_dir, built_release, tmp_path, "judge-x", server.base_url) == 0
    assert len(server.chat_requests) == DISTINCT_PROMPTS


def test_request_files_of_a_retired_judge_are_refused_without_an_endpoint(
    real_raw_dir, built_release, tmp_path, capsys
):
    argv = ("--write-requests", str(tmp_path / "requests"))
    assert score(real_raw_dir, built_release, tmp_path, "gpt-4-turbo", "http://127.0.0.1:9/v1", *argv) == 2
    assert "judge gpt-4-turbo was shut down on 2026-10-23" in one_error_line(capsys)
    assert not (tmp_path / "requests").exists()


def test_eval_refuses_a_retired_judge_before_the_model_runs(
    real_raw_dir, built_release, tmp_path, openai_server, capsys
):
    server = openai_server(right, models=["vlm", "gpt-4-turbo-preview"])
    argv = ["eval", "--task", "codis", "--dataset", str(built_release), "--model", "openai:vlm"]
    argv += ["--base-url", server.base_url, "--judge", "openai:gpt-4-turbo-preview"]
    argv += ["--judge-base-url", server.base_url, "--out", str(tmp_path / "eval")]
    assert main(argv) == 2
    assert "judge gpt-4-turbo-preview was shut down on 2026-10-23" in one_error_line(capsys)
    assert server.chat_requests == []  # not one model query either


def test_dates_are_read_against_the_day_given():
    """gpt-4o answers until 2027-01-13 and is refused from 2027-01-14 (no endpoint asked: request files)."""
    retirement.check_judge("gpt-4o", dt.date(2027, 1, 13), None)
    with pytest.raises(UsageError, match="judge gpt-4o was shut down on 2027-01-14"):
        retirement.check_judge("gpt-4o", dt.date(2027, 1, 14), None)
    for shutdown in retirement.KNOWN_SHUTDOWNS:
        assert shutdown.source.startswith("OpenAI's deprecations page")
    assert {s.model: s.date.isoformat() for s in retirement.KNOWN_SHUTDOWNS} == {
        "gpt-4-turbo": "2026-10-23",
        "gpt-4-turbo-preview": "2026-10-23",
        "gpt-4o": "2027-01-14",
    }
