"""`cogbench demo` (issue 48 item 9i): the tiny model and the stand-in server the docs run, shipped in the package.

A wheel user has no tests/ folder, so the docs' "Trying it offline" block runs `cogbench demo tiny-model` and
`cogbench demo server`; the tests build their tiny LLaVA and serve their local OpenAI-compatible server with the
same code (tests/tiny_models.py, tests/openai_server.py). docs/running.md's block itself runs in
tests/test_hints.py and, from the installed wheel, in .ci/run-wheel.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from cogbench.cli import main
from cogbench.reference_eval.demo import cli as demo_cli
from cogbench.reference_eval.demo import tiny_model

from openai_server import OpenAIServer, Reply
from tiny_models import QWEN_PROCESSOR_DIR

CORE_ONLY = str(Path(__file__).with_name("core_only.py"))


def one_error_line(capsys) -> str:
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    return err


def ask(base_url: str) -> str:
    """One chat completion, as any OpenAI client sends it."""
    body = {"model": "anything", "messages": [{"role": "user", "content": "Is it right?"}]}
    request = urllib.request.Request(
        base_url + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Authorization": "Bearer any-key"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())["choices"][0]["message"]["content"]


def test_the_server_runs_on_the_core_install_until_stopped(tmp_path):
    """As the docs run it: in the background, its URL in --url-file once it serves; then asked, then killed."""
    url_file = tmp_path / "url"
    url_file.write_text("")  # as `mktemp` leaves it
    command = [sys.executable, CORE_ONLY, "demo", "server", "--reply", "Undressing.", "--url-file", str(url_file)]
    server = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not url_file.read_text() and time.monotonic() < deadline:
            time.sleep(0.1)
        base_url = url_file.read_text().strip()
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
        assert ask(base_url) == "Undressing."
    finally:
        server.terminate()
        out, err = server.communicate(timeout=30)
    assert out == f"serving {base_url}\n" and "Traceback" not in err


def test_a_port_already_taken_is_one_line(tmp_path, capsys):
    with OpenAIServer(lambda request: Reply(text="theirs")) as theirs:
        port = int(theirs.base_url.rsplit(":", 1)[1].split("/")[0])
        assert main(["demo", "server", "--port", str(port)]) == 2
        err = one_error_line(capsys)
        assert f"--port {port}: cannot listen on 127.0.0.1:{port} (Address already in use)" in err
        assert ask(theirs.base_url) == "theirs"  # theirs still answers
    assert main(["demo", "server", "--url-file", str(tmp_path / "no-folder" / "url")]) == 2
    assert f"no folder {tmp_path / 'no-folder'}" in one_error_line(capsys)
    with pytest.raises(SystemExit) as refused:  # argparse's own usage error
        main(["demo", "server", "--port", "65536"])
    assert refused.value.code == 2 and "is not a port number (0 to 65535" in capsys.readouterr().err


def test_the_tiny_model_refuses_a_folder_it_did_not_write(tmp_path, capsys):
    mine = tmp_path / "models" / "mine"
    mine.mkdir(parents=True)
    (mine / "config.json").write_text('{"mine": true}')
    assert main(["demo", "tiny-model", str(mine), "--tokenizer", str(QWEN_PROCESSOR_DIR)]) == 2
    assert "holds nothing cogbench wrote; refusing to write into it" in one_error_line(capsys)
    assert [path.name for path in mine.iterdir()] == ["config.json"]
    assert (mine / "config.json").read_text() == '{"mine": true}'


def test_a_tokenizer_not_found_is_one_line_and_leaves_no_folder(tmp_path, capsys):
    out = tmp_path / "models" / "tiny"
    assert main(["demo", "tiny-model", str(out), "--tokenizer", str(tmp_path / "no-tokenizer")]) == 2
    err = one_error_line(capsys)
    assert f"--tokenizer {tmp_path / 'no-tokenizer'}: cannot load a tokenizer" in err
    assert "or the Hub repo Qwen/Qwen2.5-VL-7B-Instruct where the Hub can be reached" in err
    assert not out.exists()


def test_the_command_writes_the_tests_own_tiny_model(tiny_llava, tmp_path, capsys):
    """One copy: `cogbench demo tiny-model` and the tests' fixture write the same model, weights and processor."""
    if not QWEN_PROCESSOR_DIR.is_dir():
        pytest.skip(f"the Qwen2.5-VL tokenizer files are not present: {QWEN_PROCESSOR_DIR}")
    assert demo_cli.TOKENIZER == tiny_model.TOKENIZER  # the help's default is the builder's
    out = tmp_path / "models" / "tiny-llava"
    assert main(["demo", "tiny-model", str(out), "--tokenizer", str(QWEN_PROCESSOR_DIR)]) == 0
    assert f"wrote {out}: a random-weight LLaVA" in capsys.readouterr().out
    written = {path.name for path in out.iterdir()} - {".cogbench-output.json"}
    assert written == {path.name for path in tiny_llava.iterdir()}
    for name in written:
        digest = [hashlib.sha256((folder / name).read_bytes()).hexdigest() for folder in (out, tiny_llava)]
        assert digest[0] == digest[1], name
    assert main(["demo", "tiny-model", str(out), "--tokenizer", str(QWEN_PROCESSOR_DIR), "--seed", "1"]) == 0
    assert (out / "model.safetensors").read_bytes() != (tiny_llava / "model.safetensors").read_bytes()
