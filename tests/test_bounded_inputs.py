"""No traceback, bounded everything (issue 38, item 4): hostile response files, .eval_results files,
proxies, option values and replies, each through the real `cogbench` command: one `error:` line
(or one failure line), a documented exit code, and memory bounded by the reply cap, not the input."""

from __future__ import annotations

import json
import tempfile
import tracemalloc
from pathlib import Path

import pytest
import yaml
from conftest import needs_real_data
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_score import minilm_path
from test_untrusted_inputs import error_line

from cogbench.cli import main
from cogbench.errors import EXIT_CODES, CogbenchError

from openai_server import Reply
from shared_files import require_shared, spacy_stand_in

pytestmark = needs_real_data


@pytest.fixture(autouse=True)
def api_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-bounded-inputs")


def eval_argv(dataset, out, *extra):
    return [
        "eval",
        "--task",
        "codis",
        "--model",
        "openai:served-model",
        "--dataset",
        str(dataset),
        "--out",
        str(out),
        "--limit",
        "2",
        "--no-score",
        *extra,
    ]


def judge_argv(raw_dir, dataset, out, *extra):
    predictions = raw_dir / "codis" / "output_example.json"
    argv = ["score", "--task", "codis", "--predictions", str(predictions), "--dataset", str(dataset)]
    return [*argv, "--judge", "openai:judge", "--out", str(out), *extra]


DEEP = b"[" * 200_000 + b"]" * 200_000 + b"\n"
NOT_UTF8 = b'{"custom_id": "item\xff\xfe", "response": null}\n'


@pytest.mark.parametrize(
    "content, says", [(NOT_UTF8, "line 2: not UTF-8 text (byte 20)"), (DEEP, "line 2: JSON nested too deeply")]
)
def test_response_files_not_text_or_too_deep_are_one_line_for_the_model_and_the_judge(
    content, says, built_release, real_raw_dir, tmp_path, capsys
):
    responses = tmp_path / "responses.jsonl"
    responses.write_bytes(b"\n" + content)
    for argv in (
        eval_argv(built_release, tmp_path / "run", "--read-responses", str(responses)),
        judge_argv(real_raw_dir, built_release, tmp_path / "scored", "--read-responses", str(responses)),
    ):
        line = error_line(main(argv), capsys.readouterr().err, 1)
        assert line.startswith(f"error: {responses} {says}; expected a Batch API output line"), line
    assert not (tmp_path / "run").exists()


def test_an_error_repeats_a_5_mb_custom_id_only_in_part(built_release, tmp_path, capsys):
    custom_id = "x" * 5_000_000 + "@0123456789abcdef"
    body = {"choices": [{"message": {"content": "A"}}]}
    responses = tmp_path / "foreign.jsonl"
    responses.write_text(json.dumps({"custom_id": custom_id, "response": {"status_code": 200, "body": body}}) + "\n")
    argv = eval_argv(built_release, tmp_path / "run", "--read-responses", str(responses))
    line = error_line(main(argv), capsys.readouterr().err, 1)
    assert "answers a request this run did not write" in line and "(5,000,017 characters)" in line
    assert len(line) < 400 + len(str(responses))


def test_a_5_mb_value_in_a_predictions_file_is_shown_only_in_part(built_release, tmp_path, capsys):
    huge = "q" * 5_000_000
    predictions = tmp_path / "predictions.jsonl"
    argv = ["score", "--task", "codis", "--predictions", str(predictions), "--dataset", str(built_release)]
    cases = (
        [{"task": "codis", "item_id": "000", "query": huge, "output": "A"}],
        [{"task": huge, "item_id": "000", "output": "A"}],
        [{"task": "codis", "item_id": huge, "query": 1, "output": "A"}] * 2,
    )
    for lines in cases:
        predictions.write_text("".join(json.dumps(line) + "\n" for line in lines))
        line = error_line(main([*argv, "--out", str(tmp_path / "scored")]), capsys.readouterr().err, 2)
        assert "(5,000,000 characters)" in line and len(line) < 300 + len(str(predictions)), line[:500]


def test_a_response_line_over_the_cap_is_refused_without_reading_it_whole(built_release, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COGBENCH_MAX_REPLY_BYTES", "1000000")
    responses = tmp_path / "huge.jsonl"
    text = "y" * 80_000_000
    body = {"choices": [{"message": {"content": text}}]}
    responses.write_text(json.dumps({"custom_id": "a@0123456789abcdef", "response": {"body": body}}) + "\n")
    del text, body
    tracemalloc.start()
    try:
        code = main(eval_argv(built_release, tmp_path / "run", "--read-responses", str(responses)))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    line = error_line(code, capsys.readouterr().err, 1)
    assert line == (
        f"error: {responses} line 1: longer than 1,000,000 bytes, the most one reply may take "
        "(set COGBENCH_MAX_REPLY_BYTES to allow more); not read further"
    )
    assert peak < 30_000_000, peak  # the 80 MB line was never held


def test_an_http_reply_over_the_cap_fails_its_query_at_once(
    built_release, tmp_path, capsys, monkeypatch, openai_server
):
    server = openai_server(lambda request: Reply(text="z" * 3_000_000))
    monkeypatch.setenv("COGBENCH_MAX_REPLY_BYTES", "many")
    line = error_line(
        main(eval_argv(built_release, tmp_path / "r2", "--base-url", server.base_url)), capsys.readouterr().err, 2
    )
    assert line == "error: COGBENCH_MAX_REPLY_BYTES='many': give a positive number of bytes"
    assert not server.chat_requests
    monkeypatch.setenv("COGBENCH_MAX_REPLY_BYTES", "1000000")
    code = main(eval_argv(built_release, tmp_path / "run", "--base-url", server.base_url))
    # (the test server's own threads print their reset connections to stderr: only cogbench's lines count)
    [line] = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error: ")]
    assert code == 3 and "4 of 4 model queries failed" in line
    assert "reply larger than 1,000,000 bytes (the cap; set COGBENCH_MAX_REPLY_BYTES to allow more)" in line
    assert len(server.chat_requests) == 4  # no retry: asking again cannot shrink a broken server's reply


@pytest.mark.parametrize("tokens", [str(10**39), "1048577", "0"])
def test_max_new_tokens_is_bounded(tokens, built_release, tmp_path, capsys, openai_server):
    server = openai_server(lambda request: Reply(text="A"))
    argv = eval_argv(built_release, tmp_path / "run", "--base-url", server.base_url, "--max-new-tokens", tokens)
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "Traceback" not in err
    assert f"argument --max-new-tokens: {tokens} is not a positive integer up to 1,048,576" in err
    assert not server.chat_requests


@pytest.mark.parametrize(
    "content, says",
    [
        ("[]\n", "not a list of results (hub-docs eval_results.yaml)"),
        ("{}\n", "not a list of results (hub-docs eval_results.yaml)"),
        ("- [1, 2]\n", "entry 0: not a mapping (hub-docs eval_results.yaml)"),
        ("- dataset: [1, 2]\n", "entry 0: field dataset: not a mapping"),
        ("- dataset: {task_id: codis_acc_p}\n  source: [u]\n", "entry 0: field source: not a mapping"),
        ("- dataset: {task_id: codis_acc_p}\n  value: [1]\n", "entry 0: field value: [1] is not a number"),
        ("[" * 100_000 + "]" * 100_000, "not readable YAML (nested too deeply)"),
    ],
)
def test_eval_results_files_of_the_wrong_shape_are_one_line(content, says, tmp_path, capsys):
    results = tmp_path / "codis_acc_p.yaml"
    results.write_text(content)
    line = error_line(main(["verify", str(results), "--details", str(tmp_path)]), capsys.readouterr().err, 1)
    assert line == f"error: {results}: {says}"


@pytest.mark.parametrize("variable", ["HTTP_PROXY", "http_proxy"])
def test_a_proxy_or_base_url_host_with_non_ascii_characters_is_a_usage_line(
    variable, built_release, tmp_path, capsys, monkeypatch
):
    for bypass in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(bypass, raising=False)
    monkeypatch.setenv(variable, "http://user:pässwörd@prøxy.example:3128")
    argv = eval_argv(built_release, tmp_path / "run", "--base-url", "http://server.invalid:9/v1")
    line = error_line(main(argv), capsys.readouterr().err, 2)
    assert "prøxy.example" in line and "pässwörd" not in line and "user" not in line
    monkeypatch.delenv(variable)
    argv = eval_argv(built_release, tmp_path / "run", "--base-url", "http://sërver.example:8000/v1")
    line = error_line(main(argv), capsys.readouterr().err, 2)
    assert "sërver.example" in line and "ASCII" in line
    assert not (tmp_path / "run").exists()


def description_argv(dataset, predictions, out, *extra):
    argv = ["score", "--task", "description", "--dataset", str(dataset), "--predictions", str(predictions)]
    return [*argv, "--spacy-model", str(spacy_stand_in()), "--embedder", minilm_path(), "--out", str(out), *extra]


@pytest.mark.slow
def test_a_description_over_spacys_limit_is_tagged_and_judged(built_release, tmp_path, capsys):
    """spaCy refuses a text over 1,000,000 characters (E088) unless told; long sentences keep ROUGE's pairs few."""
    clause = "the woman is washing dishes in the kitchen while the boy takes a cookie and "
    sentence = clause * 20 + "the girl laughs. "
    long = sentence * (1_050_000 // len(sentence) + 1)
    predictions = tmp_path / "long.jsonl"
    others = ["490b03b120225834b6dcf4dace58f0cd", "7c6d5c0ab718407f677e6837b6a938d8"]
    others += ["9331ecd8bebe04fe51c65a8385db52e0", "c47f1cd80074225a10353bf44043962d"]
    lines = [{"task": "description", "item_id": "cookie_theft", "output": long}]
    lines += [{"task": "description", "item_id": item, "output": "A photo."} for item in others]
    predictions.write_text("".join(json.dumps(line) + "\n" for line in lines))
    out = tmp_path / "scored"
    code = main(description_argv(built_release, predictions, out, "--judge", "rouge"))
    err = capsys.readouterr().err
    assert code == 0 and "Traceback" not in err, err
    details = [json.loads(line) for line in (out / "details.jsonl").read_text().splitlines()]
    [judged] = [line for line in details if line["item_id"] == "cookie_theft"]
    assert len(judged["description"]) > 1_000_000 and judged["cognition_rouge"]
    recognized = {match["entity"] for match in judged["recognition"]["matches"] if match["recognized"]}
    assert {"woman", "boy", "girl", "cookie"} <= recognized


@pytest.mark.parametrize("judge", ["nli", "bertscore"])
def test_an_offline_model_folder_of_another_kind_is_one_usage_line(judge, built_release, tmp_path, capsys):
    """A vision-language model's folder (its config has no num_hidden_layers, no sequence-classification class)."""
    folder = require_shared("models", "qwen2.5-vl-7b-instruct-processor", what="the Qwen2.5-VL processor folder")
    argv = description_argv(
        built_release, "unused", tmp_path / "scored", "--judge", judge, "--offline-model", str(folder)
    )
    argv[argv.index("--predictions") : argv.index("--predictions") + 2] = ["--oracle"]
    line = error_line(main(argv), capsys.readouterr().err, 2)
    wanted = "an NLI (sequence classification)" if judge == "nli" else "a BERTScore (text encoder)"
    assert line.startswith(f"error: --offline-model {folder}: cannot load it as {wanted} model (")
    assert not (tmp_path / "scored" / "scores.json").exists()


def flipped_but_decodable(data: bytes, count: int = 64) -> bytes:
    """``count`` bytes in the middle of the JPEG's coded data changed in their low bit, creating no
    0xFF marker byte: the file still decodes in full, to slightly wrong pixels."""
    changed, index = bytearray(data), len(data) // 2
    flipped = 0
    while flipped < count:
        if changed[index] < 0xFE and changed[index - 1] != 0xFF:
            changed[index] ^= 1
            flipped += 1
        index += 1
    return bytes(changed)


def test_a_jpeg_changed_but_decodable_is_named_by_validate_and_in_the_card(real_raw_dir, tmp_path, capsys):
    import io

    from PIL import Image

    from validation_helpers import copy_samples, replace_file

    raw = copy_samples(real_raw_dir, tmp_path / "raw")
    image = sorted((raw / "cogbench-samples" / "images").iterdir())[0]
    replace_file(image, flipped_but_decodable(image.read_bytes()))
    with Image.open(io.BytesIO(image.read_bytes())) as decoded:
        decoded.load()  # the premise: Pillow decodes every pixel of it without complaint
    name = f"images/{image.name}"

    assert main(["validate", str(raw)]) == 0  # a warning: a raw folder may hold other data on purpose
    out = capsys.readouterr().out
    assert f"warning image.not_released: cogbench-samples/{name}: sha256 differs from the authors' release" in out
    assert main(["validate", str(raw), "--strict"]) == 1
    capsys.readouterr()

    assert main(["build", "--raw-dir", str(raw), "--out", str(tmp_path / "build")]) == 0
    assert f"note: 1 cogbench raw file(s) differ from the authors' release ({name}); the card lists them" in (
        capsys.readouterr().out
    )
    manifest = json.loads((tmp_path / "build" / "manifest.json").read_text())
    assert manifest["raw_release"]["cogbench"]["differing"] == [name]
    card = (tmp_path / "build" / "README.md").read_text()
    assert "decoded in full (Pillow's `load()`" in card
    assert "- cogbench: 6 of 7 files as released (" in card and f"**1 differ from the release**: `{name}`" in card


# --- the class "traceback": arbitrary bytes and JSON shapes into the readers ----------------------

any_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12,
)
response_like = st.fixed_dictionaries(
    {"custom_id": st.text(max_size=20) | any_json},
    optional={
        "response": any_json | st.fixed_dictionaries({"status_code": any_json, "body": any_json}),
        "error": any_json,
    },
)
as_line = st.one_of(any_json, response_like).map(lambda value: json.dumps(value).encode() + b"\n")
FUZZ = settings(max_examples=500, deadline=None, suppress_health_check=list(HealthCheck), database=None)


def only_documented_errors(call) -> None:
    try:
        call()
    except CogbenchError as error:
        assert error.exit_code in EXIT_CODES and "\n" not in str(error) and len(str(error)) < 1000, str(error)


@FUZZ
@given(st.lists(st.binary(max_size=200) | as_line, max_size=4))
def test_any_response_file_reads_or_is_one_documented_line(lines):
    from cogbench.reference_eval.backends.batch_files import read_responses

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "out.jsonl"
        path.write_bytes(b"".join(lines))
        only_documented_errors(lambda: read_responses([str(path)]))


@FUZZ
@given(st.binary(max_size=300) | any_json.map(lambda value: yaml.safe_dump(value).encode()))
def test_any_eval_results_file_reads_or_is_one_documented_line(content):
    from cogbench.reference_eval.verifying.verify import verify

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "codis_acc_p.yaml"
        path.write_bytes(content)
        only_documented_errors(lambda: verify(str(path)))  # no details named: read from each entry's source.url


def test_proxy_credentials_with_non_ascii_characters_are_sent_as_utf_8(
    built_release, tmp_path, monkeypatch, openai_server
):
    """RFC 7617: the user and password of Proxy-Authorization in UTF-8 (httpcore refuses a str beyond ASCII)."""
    import base64

    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "http_proxy"):
        monkeypatch.delenv(name, raising=False)
    proxy = openai_server(lambda request: Reply(text="A"))
    host_port = proxy.base_url.removeprefix("http://").removesuffix("/v1")
    monkeypatch.setenv("HTTP_PROXY", f"http://mé:pässwörd@{host_port}")
    assert main(eval_argv(built_release, tmp_path / "run", "--base-url", "http://judge.invalid:8000/v1")) == 0
    expected = "Basic " + base64.b64encode("mé:pässwörd".encode()).decode()
    assert {request.headers["proxy-authorization"] for request in proxy.chat_requests} == {expected}
    assert len(proxy.chat_requests) == 4
