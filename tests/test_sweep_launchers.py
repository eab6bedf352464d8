"""The Slurm array script and the Kubernetes Indexed Job of ``cogbench sweep plan``: their per-index commands run
here with the variables the clusters set; the manifest validated against Kubernetes' own schema
(kubernetes-validate); ``run-shard``'s index from the environment; ``sweep status``'s states."""

from __future__ import annotations

import re
import subprocess

import pytest
import yaml

from cogbench.cli import main

from sweep_helpers import CELL, cogbench_command, letter_responder, planned, status, subprocess_env


@pytest.mark.slow  # two cogbench subprocesses (a minute or more on a loaded machine)
def test_per_index_commands_run_here_with_the_clusters_variables(openai_server, built_release, tmp_path, capsys):
    server = openai_server(letter_responder)
    sweep = planned(tmp_path, built_release, server.base_url)
    script = (sweep / "slurm.sh").read_text()
    assert "#SBATCH --array=0-2" in script
    # Slurm: the script itself, as an array task runs it
    slurm = subprocess.run(
        ["bash", str(sweep / "slurm.sh")], env=subprocess_env(SLURM_ARRAY_TASK_ID="0"), capture_output=True, text=True
    )
    assert slurm.returncode == 0, slurm.stderr
    assert slurm.stdout.splitlines()[-1] == f"shard 0 ({CELL}, shard 0): done, 1 items"
    # Kubernetes: the container's command, $(JOB_COMPLETION_INDEX) expanded as the kubelet does
    job = yaml.safe_load((sweep / "kubernetes-job.yaml").read_text())
    assert job["spec"]["completionMode"] == "Indexed" and job["spec"]["completions"] == 3
    command = job["spec"]["template"]["spec"]["containers"][0]["command"]
    env = subprocess_env(JOB_COMPLETION_INDEX="1")
    argv = [re.sub(r"\$\((\w+)\)", lambda m: env[m.group(1)], word) for word in command]
    assert argv[:4] == ["cogbench", "sweep", "run-shard", str(sweep.resolve())]
    kubernetes = subprocess.run([*cogbench_command(), *argv[1:]], env=env, capture_output=True, text=True)
    assert kubernetes.returncode == 0, kubernetes.stderr
    assert kubernetes.stdout.splitlines()[-1] == f"shard 1 ({CELL}, shard 1): done, 1 items"
    lines = status(capsys, sweep)
    assert f"{CELL}  queued   2/3        2/3     no" in lines
    # run-shard with no --index reads JOB_COMPLETION_INDEX (here, in this process)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_API_KEY", "test-key")
        patch.setenv("JOB_COMPLETION_INDEX", "2")
        assert main(["sweep", "run-shard", str(sweep)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"shard 2 ({CELL}, shard 2): done, 1 items"
    assert f"{CELL}  done     3/3        3/3     no" in status(capsys, sweep)
    assert len(server.requests) == 3
    assert main(["sweep", "merge", str(sweep)]) == 0


def test_the_manifest_is_a_valid_kubernetes_job(built_release, tmp_path):
    kubernetes_validate = pytest.importorskip("kubernetes_validate", reason="kubernetes-validate (test extra)")
    sweep = planned(tmp_path, built_release, "http://127.0.0.1:9/v1")
    job = yaml.safe_load((sweep / "kubernetes-job.yaml").read_text())
    version = kubernetes_validate.latest_version()
    kubernetes_validate.validate(job, version, strict=True)  # raises on any departure from the schema
    # the validator bites: a misspelt field, a missing required one
    job["spec"]["template"]["spec"]["containers"][0]["comand"] = ["x"]
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(job, version, strict=True)
    del job["spec"]["template"]["spec"]["containers"][0]["comand"]
    del job["spec"]["template"]["spec"]["containers"][0]["name"]
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(job, version, strict=True)


def test_run_shard_reads_the_clusters_index_variables(openai_server, built_release, tmp_path, capsys, monkeypatch):
    """In this process: no --index, the index read from SLURM_ARRAY_TASK_ID, else JOB_COMPLETION_INDEX."""
    server = openai_server(letter_responder)
    sweep = planned(tmp_path, built_release, server.base_url, shards=2)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.delenv("JOB_COMPLETION_INDEX", raising=False)
    monkeypatch.setenv("SLURM_ARRAY_TASK_ID", "1")
    capsys.readouterr()
    assert main(["sweep", "run-shard", str(sweep)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"shard 1 ({CELL}, shard 1): done, 1 items"
    monkeypatch.delenv("SLURM_ARRAY_TASK_ID")
    monkeypatch.setenv("JOB_COMPLETION_INDEX", "0")
    assert main(["sweep", "run-shard", str(sweep)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"shard 0 ({CELL}, shard 0): done, 2 items"
    assert f"{CELL}  done     3/3        2/2     no" in status(capsys, sweep)
    assert len(server.requests) == 3
