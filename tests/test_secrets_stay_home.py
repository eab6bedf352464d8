"""Secrets go to no one else (issue 38 item 2).

``verify FILE.yaml`` downloads only from the Hub configured here: a ``source.url`` naming another
host (a second real local Hub, which records every request and its Authorization header) is refused
in one line before any request. A key inside ``--judge-base-url`` is never printed back, nor
written into the run or request folders; the printed command, run as printed, still writes
requests for exactly the missing judge queries.
"""

from __future__ import annotations

import shlex
import socket
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_hub_results import DATASET, args_for, codis_run  # noqa: F401 (the module-scoped run fixture)
from test_judge_failures import perturbed, truth_verdict
from test_judge_request_files import _score

from cogbench.cli import main
from cogbench.redaction import redact_text, redact_url
from cogbench.reference_eval.publishing.hub_results import publish_results

from hub_server import COMMIT_OID, HubRepo, LocalHub, configure_hub, local_hub_api
from openai_server import Reply, answer_as_engine, request_lines

TOKEN = "hf_TESTtokenTHATmustSTAYhome"


def test_verify_downloads_details_only_from_the_configured_hub(codis_run, tmp_path, monkeypatch, capsys):  # noqa: F811
    _build, run = codis_run
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    with LocalHub() as hub, LocalHub() as other:
        hub.repos[DATASET] = HubRepo(tags={"v2.0.0": COMMIT_OID})
        hub.models["me/model"] = HubRepo()
        assert publish_results(args_for(run, tmp_path), api=local_hub_api(hub, monkeypatch), say=lambda _: None) == 0
        other.repos["me/details"] = hub.repos["me/details"]  # the same details, on a host nobody configured
        configure_hub(hub, monkeypatch, tmp_path / "hub-cache")
        text = hub.models["me/model"].prs[0][".eval_results/codis_acc_p.yaml"].decode()
        assert f"url: {hub.endpoint}/datasets/me/details/tree/{COMMIT_OID}" in text
        results = tmp_path / "codis_acc_p.yaml"
        results.write_text(text)
        before = len(hub.requests)
        assert main(["verify", str(results)]) == 0
        assert set(hub.authorizations[before:]) == {f"Bearer {TOKEN}"}  # the token, to the configured Hub only
        capsys.readouterr()

        host = other.endpoint.removeprefix("http://")
        for planted in (other.endpoint, f"http://{hub.endpoint.removeprefix('http://')}@{host}"):
            results.write_text(text.replace(hub.endpoint, planted))
            assert main(["verify", str(results)]) == 2
            error = capsys.readouterr().err.strip()
            assert error.startswith(f"error: {results}: source.url is on http://{host}, not on the Hub configured")
            assert "\n" not in error and TOKEN not in error
        assert other.requests == [] and other.authorizations == []


def test_a_key_in_the_judge_url_is_never_printed_and_the_printed_command_still_works(
    built_release, real_raw_dir, tmp_path, openai_server, capsys, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    predictions = perturbed(real_raw_dir / "codis" / "output_example.json", tmp_path)
    server = openai_server(lambda request: Reply(text=truth_verdict(request)))
    secret_url = "http://me:PASSWORDinURL@127.0.0.1:9/v1?api-key=KEYinQUERY"
    run, requests = tmp_path / "run", tmp_path / "requests"
    judge = ("--judge-base-url", secret_url)
    assert _score(predictions, built_release, run, *judge, "--write-requests", str(requests)) == 0
    lines = request_lines(requests)
    outputs = answer_as_engine(server, lines, tmp_path / "out.jsonl").read_text().splitlines()
    (tmp_path / "out.jsonl").write_text("\n".join(outputs[3:]) + "\n")  # three prompts unanswered
    capsys.readouterr()
    assert _score(predictions, built_release, run, *judge, "--read-responses", str(tmp_path / "out.jsonl")) == 3
    printed = capsys.readouterr()
    for secret in ("PASSWORDinURL", "KEYinQUERY"):
        assert secret not in printed.out + printed.err
        for folder in (run, requests):
            assert not [p for p in folder.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]
    command = shlex.split(printed.err.split("Write requests for exactly the missing ones with: ")[1].split(", or")[0])
    assert "http://***@127.0.0.1:9/v1?api-key=***" in command
    assert main(command[1:]) == 0  # as printed: the masked URL keys the same cached verdicts
    missing = request_lines(Path(command[command.index("--write-requests") + 1]))
    assert [line["custom_id"] for line in missing] == [line["custom_id"] for line in lines[:3]]


def test_error_messages_naming_a_url_mask_its_credentials(built_release, tmp_path, capsys, monkeypatch):
    with socket.socket() as probe:  # a port nothing listens on: fetch-raw's download fails, naming the URL
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    mirror = f"http://me:PASSWORDinURL@127.0.0.1:{port}/raw"
    assert main(["fetch-raw", "codis", "--dest", str(tmp_path / "raw"), "--base-url", mirror]) == 1
    error = capsys.readouterr().err
    assert f"cannot download http://***@127.0.0.1:{port}/raw/" in error
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    argv = ["eval", "--task", "codis", "--model", "openai:m", "--dataset", str(built_release), "--limit", "1"]
    argv += [
        "--no-score",
        "--out",
        str(tmp_path / "r"),
        "--base-url",
        "ftp://me:PASSWORDinURL@host/v1?api-key=KEYinQUERY",
    ]
    assert main(argv) == 2
    error += capsys.readouterr().err
    assert "base URL 'ftp://***@host/v1?api-key=***'" in error
    assert "PASSWORDinURL" not in error and "KEYinQUERY" not in error


SECRET = st.text("abcdefXYZ0123456789", min_size=6, max_size=20)


@given(user=SECRET, password=SECRET, key=SECRET, name=st.sampled_from(["api-key", "key", "access_token", "sig"]))
def test_no_credential_survives_redaction(user, password, key, name):
    url = f"https://{user}:{password}@example.org:8443/v1/chat?{name}={key}&model=m"
    shown = redact_url(url)
    assert shown == f"https://***@example.org:8443/v1/chat?{name}=***&model=m"
    assert redact_text(f"cannot reach {url}: refused") == f"cannot reach {shown}: refused"


@given(path=st.text("abcdefgh/-_.", max_size=20), port=st.integers(1, 65535))
def test_a_url_without_credentials_is_shown_unchanged(path, port):
    url = f"http://127.0.0.1:{port}/{path}?model=x"
    assert redact_url(url) == url  # judge cache keys hash it: existing caches keep answering


@pytest.mark.parametrize(
    ("url", "refusal"),
    [
        ("http://elsewhere.example/datasets/me/details/blob/abc/eee/data/codis/me/m/r.json", "not on the Hub"),
        ("{hub}/datasets/me/details/blob/abc/eee/data/../../../etc/r.json", "outside the details dataset"),
    ],
)
def test_an_eee_record_source_is_held_to_the_same_rules(url, refusal, monkeypatch, tmp_path):
    """A source.url naming an EEE record (publish-results --results-source eee) goes to the configured Hub
    only, and its path stays inside the details dataset."""
    from huggingface_hub import constants

    from cogbench.errors import UsageError
    from cogbench.reference_eval.verifying.result_source import details_source

    monkeypatch.setattr(constants, "ENDPOINT", "https://hub.example")
    with pytest.raises(UsageError, match=refusal):
        details_source(tmp_path / "r.yaml", url.format(hub="https://hub.example"))
    assert details_source(tmp_path / "r.yaml", "https://hub.example/datasets/me/details/blob/abc/eee/data/x.json") == (
        "me/details",
        "abc",
        "eee/data/x.json",
    )
