"""``cogbench sweep run DIR --ray ADDRESS`` on a real one-node Ray cluster (vllm_helpers.one_node_cluster), cogbench run by the Ray
venv's python (.ci/run-ray installs it there): the sweep, merged, equals the same sweep run here item for item
(predictions, and scores.json, details.jsonl and run.json byte for byte: the tasks are rule-scored); a second run
skips every shard; a failed shard is reported while the others finish, and the next run retries only it; an
address's credentials are masked; ``cogbench.sweep(ray=...)`` on the same cluster gives what the commands give.

Marked ``ray``: runs only where ``COGBENCH_RAY_PYTHON`` names the Ray venv's python."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from openai_server import Reply
from sweep_helpers import CELL, SECRET, cells, every_text, letter_responder, with_credentials, write_spec
from vllm_helpers import one_node_cluster

RAY_PYTHON = os.environ.get("COGBENCH_RAY_PYTHON")
pytestmark = [
    pytest.mark.ray,
    pytest.mark.skipif(not RAY_PYTHON, reason="set COGBENCH_RAY_PYTHON to the Ray venv's python (.ci/run-ray)"),
]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """The head node's environment is what its workers get: the API key is set there, not sent through Ray."""
    work = tmp_path_factory.mktemp("ray-cluster")
    with one_node_cluster(RAY_PYTHON, work, dict(os.environ, OPENAI_API_KEY="test-key", TQDM_DISABLE="1")) as env:
        yield env


def cogbench(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess:
    """``python -m cogbench ARGS`` of the Ray venv, in ``cwd`` (relative folders, as a user names them)."""
    return subprocess.run(
        [RAY_PYTHON, "-m", "cogbench", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=900
    )


def outputs(path: Path) -> list[dict]:
    """A predictions file's records but for their timing."""
    return [{k: v for k, v in json.loads(line).items() if k != "seconds"} for line in path.read_text().splitlines()]


def shard_lines(text: str) -> list[str]:
    return sorted(line for line in text.splitlines() if line.startswith("shard "))


def test_a_sweep_on_ray_equals_the_local_run_item_for_item(cluster, openai_server, built_release, tmp_path):
    good = openai_server(letter_responder)
    other = openai_server(lambda request: Reply(text="B"))
    models = [
        {"model": "openai:good", "base_url": with_credentials(good.base_url), "concurrency": 2},
        {"model": f"openai:other@{other.base_url}", "name": "other"},
    ]
    address = cluster["RAY_ADDRESS"]
    runs = {}
    for name, extra in (("local", []), ("ray", ["--ray", address])):
        folder = tmp_path / name  # each sweep at the relative path `sweep` from its own folder
        write_spec(folder, built_release, models, tasks=["vqa", "codis"], limit=3)
        plan = cogbench(cluster, folder, "sweep", "plan", "sweep.yaml", "--out", "sweep", "--shards", "2")
        assert plan.returncode == 0, plan.stderr[-3000:]
        runs[name] = cogbench(cluster, folder, "sweep", "run", "sweep", *extra)
        assert runs[name].returncode == 0, runs[name].stderr[-5000:]
        merge = cogbench(cluster, folder, "sweep", "merge", "sweep")
        assert merge.returncode == 0, merge.stderr[-3000:]
        assert len(merge.stdout.splitlines()) == 4 and all(
            line.endswith("(PARTIAL, verified)") for line in merge.stdout.splitlines()
        )
    print(runs["ray"].stdout)
    assert len(good.requests) + len(other.requests) == 2 * 2 * (3 + 6)  # each run: every query asked once
    ray_out = runs["ray"].stdout.splitlines()
    assert f"ray {address}: 8 shard tasks submitted, each reserving 1 CPU and 0 GPU; 0 already done" in ray_out
    assert shard_lines(runs["ray"].stdout) == shard_lines(
        runs["local"].stdout
    )  # "shard I (CELL, shard K): done, N items"
    assert len(shard_lines(runs["ray"].stdout)) == 8 and all(line.endswith(" items") for line in ray_out[-8:])

    local, ray = tmp_path / "local" / "sweep", tmp_path / "ray" / "sweep"
    assert cells(ray) == cells(local) and len(cells(ray)) == 4
    for cell in cells(ray):
        for number in (0, 1):
            shard = Path("cells", cell, "shards", str(number))
            assert outputs(ray / shard / "predictions.jsonl") == outputs(local / shard / "predictions.jsonl")
            assert (ray / shard / "score/scores.json").read_bytes() == (
                local / shard / "score/scores.json"
            ).read_bytes()
        run = Path("cells", cell, "run")
        items = outputs(ray / run / "predictions.jsonl")
        assert items == outputs(local / run / "predictions.jsonl")
        assert len(items) == (3 if cell.startswith("vqa") else 6) and all(item["output"] for item in items)
        for name in ("score/scores.json", "score/details.jsonl", "run.json", "official_codis_output.json"):
            if (local / run / name).exists() or (ray / run / name).exists():
                assert (ray / run / name).read_bytes() == (local / run / name).read_bytes(), (cell, name)
        attempts = [json.loads((ray / "cells" / cell / "attempts" / f"{n}.json").read_text()) for n in (0, 1)]
        assert [a["state"] for a in attempts] == ["done", "done"] and all(a["host"] for a in attempts)

    again = cogbench(cluster, tmp_path / "ray", "sweep", "run", "sweep", "--ray", address)
    assert again.returncode == 0, again.stderr[-3000:]
    assert len(good.requests) + len(other.requests) == 36  # nothing asked again, no task submitted
    assert "submitted" not in again.stdout
    done_again = [line.split("): ", 1)[1] for line in shard_lines(again.stdout)]
    assert done_again == ["already done, 2 items", "already done, 1 items"] * 4  # each cell: 3 items in 2 shards
    for text in (runs["ray"].stdout, runs["ray"].stderr, again.stdout, again.stderr, every_text(ray)):
        assert SECRET not in text


def test_a_failed_shard_is_reported_while_the_others_finish_and_is_retried_alone(
    cluster, openai_server, built_release, tmp_path
):
    server = openai_server(letter_responder)
    write_spec(
        tmp_path, built_release, [{"model": "openai:m", "base_url": server.base_url, "max_attempts": 1}], limit=3
    )
    assert cogbench(cluster, tmp_path, "sweep", "plan", "sweep.yaml", "--out", "sweep", "--shards", "3").returncode == 0
    # An address that carries credentials, where no Ray Client listens: one line, masked (after Ray's 30 s timeout)
    secret = cogbench(cluster, tmp_path, "sweep", "run", "sweep", "--ray", f"ray://user:{SECRET}@127.0.0.1:9")
    assert secret.returncode == 1
    assert secret.stderr.splitlines()[-1].startswith(
        "error: --ray 'ray://***@127.0.0.1:9': could not join the Ray cluster: "
    )
    assert SECRET not in secret.stdout + secret.stderr + every_text(tmp_path / "sweep") and len(server.requests) == 0
    mine = tmp_path / "sweep" / "cells" / CELL / "shards" / "1" / "notes.txt"
    mine.parent.mkdir(parents=True)
    mine.write_text("the user's, in shard 1's folder: cogbench refuses to write there")
    # `auto`: the cluster of RAY_ADDRESS; half a CPU per task
    run = cogbench(cluster, tmp_path, "sweep", "run", "sweep", "--ray", "auto", "--ray-num-cpus", "0.5")
    print(run.stdout, run.stderr)
    assert run.returncode == 1
    assert "ray auto: 3 shard tasks submitted, each reserving 0.5 CPU and 0 GPU; 0 already done" in run.stdout
    assert shard_lines(run.stdout) == [
        f"shard 0 ({CELL}, shard 0): done, 1 items",
        f"shard 1 ({CELL}, shard 1): failed: sweep/cells/{CELL}/shards/1 exists and holds nothing cogbench wrote; "
        "refusing to write into it: choose another --out or empty it yourself",
        f"shard 2 ({CELL}, shard 2): done, 1 items",
    ]
    errors = [line for line in run.stderr.splitlines() if line.startswith("error: ")]
    assert errors == [
        f"error: 1 of 3 shards failed (first: shard 1, {CELL}: sweep/cells/{CELL}/shards/1 exists "
        "and holds nothing cogbench wrote; refusing to write into it: choose another --out or empty it "
        "yourself); run the same command again to resume them"
    ]
    assert len(server.requests) == 2
    status = cogbench(cluster, tmp_path, "sweep", "status", "sweep")
    assert f"{CELL}  failed   2/3        2/3     no" in status.stdout

    mine.unlink()
    again = cogbench(cluster, tmp_path, "sweep", "run", "sweep", "--ray", cluster["RAY_ADDRESS"])
    assert again.returncode == 0, again.stderr[-3000:]
    assert "1 shard tasks submitted, each reserving 1 CPU and 0 GPU; 2 already done" in again.stdout
    assert shard_lines(again.stdout) == [
        f"shard 0 ({CELL}, shard 0): already done, 1 items",
        f"shard 1 ({CELL}, shard 1): done, 1 items",
        f"shard 2 ({CELL}, shard 2): already done, 1 items",
    ]
    assert len(server.requests) == 3
    merge = cogbench(cluster, tmp_path, "sweep", "merge", "sweep")
    assert merge.returncode == 0 and merge.stdout.strip().endswith("(PARTIAL, verified)"), merge.stderr[-3000:]


API_SWEEP = """
import json, sys
import cogbench
result = cogbench.sweep("sweep.yaml", "sweep", shards=2, ray=sys.argv[1], ray_num_cpus=0.5)
print(json.dumps({"lines": list(result.lines), "runs": sorted(result.runs), "states": [c.state for c in result.cells]}))
"""


def test_cogbench_sweep_on_ray_equals_the_commands_on_ray(cluster, openai_server, built_release, tmp_path):
    """One model, one task, two shards: ``cogbench.sweep(ray=ADDRESS)`` (the Ray venv's python) plans, runs on the
    cluster and merges as ``sweep plan``, ``sweep run --ray`` and ``sweep merge`` do: the same lines, the same merged
    runs byte for byte; the URL's key nowhere."""
    server = openai_server(letter_responder)
    models = [{"model": "openai:m", "base_url": with_credentials(server.base_url)}]
    address = cluster["RAY_ADDRESS"]
    command, api = tmp_path / "command", tmp_path / "api"
    write_spec(command, built_release, models, limit=3)
    plan = cogbench(cluster, command, "sweep", "plan", "sweep.yaml", "--out", "sweep", "--shards", "2")
    run = cogbench(cluster, command, "sweep", "run", "sweep", "--ray", address, "--ray-num-cpus", "0.5")
    merge = cogbench(cluster, command, "sweep", "merge", "sweep")
    assert plan.returncode == run.returncode == merge.returncode == 0, (plan.stderr + run.stderr + merge.stderr)[-3000:]

    write_spec(api, built_release, models, limit=3)
    called = subprocess.run(
        [RAY_PYTHON, "-c", API_SWEEP, address], cwd=api, env=cluster, capture_output=True, text=True, timeout=900
    )
    assert called.returncode == 0, called.stderr[-5000:]
    result = json.loads(called.stdout.splitlines()[-1])
    assert len(server.requests) == 2 * 3  # each sweep asked every query once
    said = plan.stdout.splitlines()[:-1] + run.stdout.splitlines() + merge.stdout.splitlines()
    assert f"ray {address}: 2 shard tasks submitted, each reserving 0.5 CPU and 0 GPU; 0 already done" in said
    assert sorted(result["lines"]) == sorted(said)  # shards end in any order
    assert result["runs"] == [CELL] and result["states"] == ["done"]
    for name in ("score/scores.json", "score/details.jsonl", "run.json"):
        path = Path("sweep", "cells", CELL, "run", name)
        assert (api / path).read_bytes() == (command / path).read_bytes(), name
    for text in (called.stdout, called.stderr, run.stdout, run.stderr, every_text(api / "sweep")):
        assert SECRET not in text
