"""A cell judged by an LLM judge (``openai:j``, a loopback judge server): ``sweep merge`` asks the judge nothing the
shards asked (their verdict caches copied into the merged run's), and the merged run's verdicts are the union of
the shards' item for item, and those of an unsharded ``eval`` of the cell; shards whose judge answered one prompt
two ways are refused, and a shard's cache removed by hand costs exactly its prompts again."""

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


def chats(server) -> list:
    return [r for r in server.requests if r.path.endswith("/chat/completions")]


def test_the_merged_run_asks_the_judge_nothing_and_its_verdicts_are_the_shards(judged, tmp_path, capsys):
    sweep, _, judge = judged
    sweep = shutil.copytree(sweep, tmp_path / "sweep")
    cell = sweep / "cells" / CELL
    assert len(chats(judge)) == 6  # the shards asked each of the 6 queries once
    prompts = [json.loads((cell / f"shards/{n}/score/scores.json").read_text())["judge"]["prompts"] for n in (0, 1)]
    assert prompts == [4, 2]  # shards of different sizes: their judge blocks differ in what they asked
    asked = len(judge.requests)
    capsys.readouterr()
    spec = json.loads((sweep / "plan.json").read_text())["spec"]
    assert main(["sweep", "plan", spec, "--out", str(sweep), "--shards", "2"]) == 0  # planned again: its cost
    assert "judge calls: 6 LLM-judge queries at most (each shard scored; each merged" in capsys.readouterr().out
    assert main(["sweep", "merge", str(sweep)]) == 0, capsys.readouterr().err
    assert capsys.readouterr().out.endswith("(PARTIAL, verified)\n")
    assert len(judge.requests) == asked  # nothing: no verdict, not even its model list
    union = {**details(cell / "shards/0/score/details.jsonl"), **details(cell / "shards/1/score/details.jsonl")}
    merged = details(cell / "run/score/details.jsonl")
    assert merged == union and len(merged) == 3
    verdicts = [q["right"] for d in merged.values() for q in d["queries"]]
    assert True in verdicts and False in verdicts  # the judge, not the rule, decided them
    stated = json.loads((cell / "run/score/scores.json").read_text())["judge"]
    shard = json.loads((cell / "shards/0/score/scores.json").read_text())["judge"]
    assert (stated["prompts"], stated["cache_hits"], stated["calls"]) == (6, 6, 0)
    assert stated["cache_key"] == shard["cache_key"] and stated["model"] == "j"
    assert main(["verify", str(cell / "run")]) == 0
    # Merged again: still nothing asked, the same verdicts.
    assert main(["sweep", "merge", str(sweep)]) == 0 and len(judge.requests) == asked
    assert details(cell / "run/score/details.jsonl") == union


def test_the_merged_verdicts_equal_an_unsharded_eval_with_the_judge(judged, tmp_path, monkeypatch, capsys):
    sweep, model, judge = judged
    sweep = shutil.copytree(sweep, tmp_path / "sweep")
    assert main(["sweep", "merge", str(sweep)]) == 0
    build = json.loads((sweep / "plan.json").read_text())["build"]
    argv = ["eval", "--task", "codis", "--model", "openai:m", "--base-url", model.base_url, "--dataset", build]
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    assert main([*argv, "--limit", "3", "--judge", f"openai:j@{judge.base_url}", "--out", str(tmp_path / "one")]) == 0
    alone, merged = (
        details(tmp_path / "one/score/details.jsonl"),
        details(sweep / "cells" / CELL / "run/score/details.jsonl"),
    )
    keep = ("right", "judge_prompt_sha256", "judge_reply", "judge_error")
    assert {i: [{k: q[k] for k in keep} for q in d["queries"]] for i, d in alone.items()} == {
        i: [{k: q[k] for k in keep} for q in d["queries"]] for i, d in merged.items()
    }
    scores = [json.loads(p.read_text())["metrics"] for p in (tmp_path / "one/score/scores.json",)]
    assert scores[0] == json.loads((sweep / "cells" / CELL / "run/score/scores.json").read_text())["metrics"]


def test_a_shards_cache_removed_by_hand_costs_exactly_its_prompts(judged, tmp_path, capsys):
    """Asked again, the judge gives its verdicts again; had it changed its mind, the merge is refused, unscored."""
    sweep, _, judge = judged
    for name, responder, code in (("same", verdict, 0), ("changed", lambda r: Reply(text="wrong"), 1)):
        copy = shutil.copytree(sweep, tmp_path / name)
        (copy / "cells" / CELL / "shards/1/score/judge_cache.sqlite").unlink()
        before, judge.responder = len(chats(judge)), responder
        capsys.readouterr()
        try:
            assert main(["sweep", "merge", str(copy)]) == code
        finally:
            judge.responder = verdict
        assert len(chats(judge)) - before == 2  # shard 1's one item, two queries; shard 0's from its cache
    err = capsys.readouterr().err
    merged, shard = (copy / "cells" / CELL / where / "score" for where in ("run", "shards/1"))
    assert err.startswith(f"error: {merged / 'details.jsonl'} and {shard / 'details.jsonl'}: item ")
    assert "judged otherwise in the merged run than in its shard" in err and err.count("\n") == 1
    assert not (merged / "scores.json").exists()  # not merged: status says so, and its shards are kept


def test_shards_whose_judge_answered_one_prompt_two_ways_are_refused(built_release, tmp_path, monkeypatch, capsys):
    """Overlapping shards (a plan edited by hand), one model answer, a judge that changes its mind: refused."""
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    seen: set[str] = set()

    def fickle(request) -> Reply:
        first = request.prompt_text not in seen
        seen.add(request.prompt_text)
        return Reply(text="right" if first else "wrong")

    with OpenAIServer(letter_responder) as model, OpenAIServer(fickle, models=["j"]) as judge:
        axes = {"judge": [f"openai:j@{judge.base_url}"]}
        models = [{"model": "openai:m", "base_url": model.base_url}]
        spec = write_spec(tmp_path, built_release, models, tasks=["codis"], limit=3, axes=axes)
        sweep = tmp_path / "sweep"
        assert main(["sweep", "plan", str(spec), "--out", str(sweep), "--shards", "2"]) == 0
        cell_json = sweep / "cells" / CELL / "cell.json"
        cell = json.loads(cell_json.read_text())
        cell["shards"][1].insert(0, cell["shards"][0][-1])  # shard 1 also holds shard 0's last item
        cell_json.write_text(json.dumps(cell))
        assert main(["sweep", "run", str(sweep)]) == 0
        capsys.readouterr()
        assert main(["sweep", "merge", str(sweep)]) == 1
    err = capsys.readouterr().err
    first, second = (sweep / "cells" / CELL / f"shards/{n}/score/judge_cache.sqlite" for n in (0, 1))
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"error: {first} and {second}: the judge gave prompt ") and "different replies" in err
    assert not (sweep / "cells" / CELL / "run/score/scores.json").exists()
