"""A cell judged by an LLM judge (``openai:j``, a loopback judge server): its shards, of different sizes, asked the
judge different numbers of prompts, and are merged all the same, into the union of their verdicts."""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest

from cogbench.cli import main

from openai_server import OpenAIServer, Reply
from sweep_helpers import letter_responder, write_spec

CELL = "codis--m--thinking-auto--tokens-default--judge-openai_j"


def verdict(request) -> Reply:
    """A judge whose verdict depends on the prompt alone: right for some, wrong for others."""
    return Reply(text="right" if hashlib.sha256(request.prompt_text.encode()).digest()[0] % 2 else "wrong")


@pytest.fixture(scope="module")
def judged(built_release, tmp_path_factory):
    """One CODIS cell (3 items, 6 queries) cut in 2 uneven shards (2 + 1 items), judged by ``openai:j``, run."""
    saved = pytest.MonkeyPatch()
    saved.setenv("OPENAI_API_KEY", "test-key")
    with OpenAIServer(letter_responder) as model, OpenAIServer(verdict, models=["j"]) as judge:
        folder = tmp_path_factory.mktemp("judged")
        models = [{"model": "openai:m", "base_url": model.base_url}]
        axes = {"judge": [f"openai:j@{judge.base_url}"]}
        spec = write_spec(folder, built_release, models, tasks=["codis"], limit=3, axes=axes)
        assert main(["sweep", "plan", str(spec), "--out", str(folder / "sweep"), "--shards", "2"]) == 0
        assert main(["sweep", "run", str(folder / "sweep")]) == 0
        yield folder / "sweep", model, judge
    saved.undo()


def details(path) -> dict[str, dict]:
    return {r["item_id"]: r for r in map(json.loads, path.read_text().splitlines())}


def test_shards_that_asked_the_judge_different_numbers_of_prompts_merge(judged, tmp_path, capsys):
    sweep = shutil.copytree(judged[0], tmp_path / "sweep")
    cell = sweep / "cells" / CELL
    prompts = [json.loads((cell / f"shards/{n}/score/scores.json").read_text())["judge"]["prompts"] for n in (0, 1)]
    assert prompts == [4, 2]
    capsys.readouterr()
    assert main(["sweep", "merge", str(sweep)]) == 0, capsys.readouterr().err
    union = {**details(cell / "shards/0/score/details.jsonl"), **details(cell / "shards/1/score/details.jsonl")}
    assert details(cell / "run/score/details.jsonl") == union
    verdicts = [q["right"] for d in union.values() for q in d["queries"]]
    assert True in verdicts and False in verdicts  # the judge, not the rule, decided them
