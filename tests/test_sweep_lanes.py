"""``sweep run --jobs K`` with description cells (reference_eval/sweeping/execute.py, ``in_workers``): they run one
after another in one worker of their own, beside the other cells, so the Recognition Score's models are loaded by one
process only. Slow tier: the workers are spawned interpreters, and one loads spaCy, torch and MiniLM."""

from __future__ import annotations

import json
import os
import threading

from cogbench.cli import main

from openai_server import Reply
from sweep_helpers import local_models, plan, write_spec

TEXT = "A man talks to a police officer beside the cars on the road."


def test_with_jobs_the_description_cells_share_one_worker_beside_the_others(
    openai_server, built_release, tmp_path, capsys, monkeypatch
):
    """``sweep run --jobs 2``: both description cells run in one worker process, which no other cell runs in (so
    the Recognition Score's models are loaded once), while the VQA cells run beside it: a description query waits
    for a VQA query to arrive, which only a worker running at the same time can send."""
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    vqa_asked = threading.Event()
    met = []

    def responder(request):
        if "A. " in request.prompt_text:
            vqa_asked.set()
            return Reply(text="A")
        met.append(vqa_asked.wait(timeout=60))
        return Reply(text=TEXT)

    server = openai_server(responder)
    models = [{"model": f"openai:{name}", "base_url": server.base_url, "max_attempts": 1} for name in ("m", "n")]
    spec = write_spec(
        tmp_path, built_release, models, tasks=["description", "vqa"], limit=2, description=local_models()
    )
    sweep = tmp_path / "sweep"
    assert plan(capsys, spec, sweep)[0] == 0
    assert main(["sweep", "run", str(sweep), "--jobs", "2"]) == 0, capsys.readouterr()
    assert met and all(met)
    pids = {
        path.parts[-3]: json.loads(path.read_text())["pid"] for path in sorted(sweep.glob("cells/*/attempts/*.json"))
    }
    description = {pid for cell, pid in pids.items() if cell.startswith("description--")}
    others = {pid for cell, pid in pids.items() if not cell.startswith("description--")}
    assert len(pids) == 4 and len(description) == 1 and not description & others and os.getpid() not in description
    assert main(["sweep", "status", str(sweep)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "cells: 0 queued, 0 running, 4 done, 0 failed, 0 missing"
