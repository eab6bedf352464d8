"""Per-model API key variables in a sweep spec (``api_key_env``): each model's requests carry its own key, read
from the environment when a shard runs, and the key is in no file of the sweep folder nor any printed line; a
variable not set is one error line naming the spec file, the model entry and the variable, here (``sweep run``,
``run-shard``, ``cogbench.sweep``) before anything runs, and on a node (the Ray task's function) as the shard's
failure. The servers are real loopback servers that answer 401 to any other key."""

from __future__ import annotations

import json
import os

import pytest
import yaml

import cogbench
from cogbench.cli import main
from cogbench.errors import EXIT_USAGE, UsageError
from cogbench.reference_eval.sweeping.on_ray import shard_task

from sweep_helpers import cells, every_text, letter_responder, write_spec

KEYS = {"GPU1_KEY": "sk-gpu1-do-not-leak-1111", "GPU2_KEY": "sk-gpu2-do-not-leak-2222"}
DEFAULT_KEY = "sk-openai-do-not-leak-0000"


def two_models(openai_server):
    """Two servers, each taking only its own key, and the spec's entries naming each key's variable."""
    first = openai_server(letter_responder, api_key=KEYS["GPU1_KEY"])
    second = openai_server(letter_responder, api_key=KEYS["GPU2_KEY"])
    models = [
        {"model": "openai:good", "base_url": first.base_url, "api_key_env": "GPU1_KEY", "max_attempts": 1},
        {"model": "openai:other", "base_url": second.base_url, "api_key_env": "GPU2_KEY", "max_attempts": 1},
    ]
    return first, second, models


def test_each_model_sends_its_own_key_and_no_file_holds_one(
    openai_server, built_release, tmp_path, capsys, monkeypatch
):
    for name, key in KEYS.items():
        monkeypatch.setenv(name, key)
    monkeypatch.setenv("OPENAI_API_KEY", DEFAULT_KEY)  # set, and sent to neither model
    first, second, models = two_models(openai_server)
    spec = write_spec(tmp_path, built_release, models, limit=2)
    sweep = tmp_path / "sweep"
    assert main(["sweep", "plan", str(spec), "--out", str(sweep), "--shards", "2"]) == 0
    assert main(["sweep", "run", str(sweep)]) == 0
    assert main(["sweep", "merge", str(sweep)]) == 0
    printed = capsys.readouterr()

    assert len(first.requests) == len(second.requests) == 2  # every query answered: no 401
    assert {r.headers["authorization"] for r in first.requests} == {f"Bearer {KEYS['GPU1_KEY']}"}
    assert {r.headers["authorization"] for r in second.requests} == {f"Bearer {KEYS['GPU2_KEY']}"}
    written = every_text(sweep)
    for key in (*KEYS.values(), DEFAULT_KEY):
        assert key not in written and key not in printed.out + printed.err
    # The variable's name is recorded where a shard reads it (cell.json), and in the Kubernetes Job's secret.
    good, other = (json.loads((sweep / "cells" / cell / "cell.json").read_text()) for cell in cells(sweep))
    assert (good["api_key_env"], good["api_key_field"]) == ("GPU1_KEY", "models[0].api_key_env")
    assert (other["api_key_env"], other["api_key_field"]) == ("GPU2_KEY", "models[1].api_key_env")
    assert "api_key_env" not in (sweep / "plan.json").read_text()  # another variable plans the same sweep
    job = yaml.safe_load((sweep / "kubernetes-job.yaml").read_text())
    env = job["spec"]["template"]["spec"]["containers"][0]["env"]
    assert [(v["name"], v["valueFrom"]["secretKeyRef"]["key"]) for v in env] == [
        ("OPENAI_API_KEY", "openai-api-key"),
        ("GPU1_KEY", "GPU1_KEY"),
        ("GPU2_KEY", "GPU2_KEY"),
    ]
    kubernetes_validate = pytest.importorskip("kubernetes_validate", reason="kubernetes-validate (test extra)")
    kubernetes_validate.validate(job, kubernetes_validate.latest_version(), strict=True)


def test_a_variable_not_set_is_one_line_naming_spec_entry_and_variable(
    openai_server, built_release, tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv("GPU1_KEY", KEYS["GPU1_KEY"])
    monkeypatch.setenv("GPU2_KEY", "")  # empty is not set, as for OPENAI_API_KEY
    monkeypatch.setenv("OPENAI_API_KEY", DEFAULT_KEY)
    first, second, models = two_models(openai_server)
    spec = write_spec(tmp_path, built_release, models, limit=2)
    sweep = tmp_path / "sweep"
    assert main(["sweep", "plan", str(spec), "--out", str(sweep), "--shards", "2"]) == 0  # planning needs no key
    capsys.readouterr()
    line = (
        f"{spec.resolve()}: field models[1].api_key_env: GPU2_KEY is not set in this environment "
        "(the API key of openai:other); set it where the shard runs"
    )

    assert main(["sweep", "run", str(sweep)]) == EXIT_USAGE
    assert capsys.readouterr().err == f"error: {line}\n"
    other = next(i for i, cell in enumerate(cells(sweep)) if "--other--" in cell)
    assert main(["sweep", "run-shard", str(sweep), "--index", str(2 * other + 1)]) == EXIT_USAGE
    assert capsys.readouterr().err == f"error: {line}\n"
    with pytest.raises(UsageError) as refused:
        cogbench.sweep(spec, sweep, shards=2)
    assert str(refused.value) == line
    capsys.readouterr()
    assert first.requests == second.requests == []  # refused before any shard ran
    assert not list(sweep.glob("cells/*/attempts/*.json"))

    # On a node (what each Ray task runs): the shard fails with that line, recorded; another model's shard runs.
    failed = shard_task(str(sweep), os.getcwd(), 2 * other)
    assert (failed["state"], failed["error"]) == ("failed", line)
    attempt = json.loads((sweep / "cells" / cells(sweep)[other] / "attempts" / "0.json").read_text())
    assert (attempt["state"], attempt["error"]) == ("failed", line)
    assert shard_task(str(sweep), os.getcwd(), 2 * (1 - other))["state"] == "done"
    assert len(first.requests) == 1 and second.requests == []
    assert KEYS["GPU1_KEY"] not in every_text(sweep)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            {"model": "hf:some/model", "api_key_env": "GPU1_KEY"},
            "field models[0].api_key_env: an API key variable applies to openai: models only",
        ),
        ({"model": "openai:m", "api_key_env": "1_KEY"}, "field models[0].api_key_env: '1_KEY' does not match "),
        ({"model": "openai:m", "api_key_env": "MY KEY"}, "field models[0].api_key_env: 'MY KEY' does not match "),
        (
            {"model": "openai:m@http://127.0.0.1:9/v1#GPU1_KEY"},
            "field models[0].model: #VARIABLE is not taken here: a sweep's openai: model reads its key from "
            "OPENAI_API_KEY, or from the variable its api_key_env names",
        ),
    ],
)
def test_a_key_variable_the_spec_cannot_take_is_refused_when_planned(tmp_path, built_release, capsys, entry, message):
    spec = write_spec(tmp_path, built_release, [entry])
    assert main(["sweep", "plan", str(spec), "--out", str(tmp_path / "sweep")]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.startswith(f"error: {spec}: {message}") and err.count("\n") == 1
    assert not (tmp_path / "sweep").exists()


def test_the_key_variable_is_a_sweep_setting_not_one_of_evaluate(built_release):
    """No `eval` option names the key's variable, so `evaluate(settings=...)` takes none either."""
    with pytest.raises(UsageError, match=r"settings: unknown setting\(s\) api_key_variable; known: "):
        cogbench.evaluate("vqa", built_release, "openai:m", settings={"api_key_variable": "GPU1_KEY"})
