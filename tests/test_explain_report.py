"""``cogbench report`` holding two runs of one model explains their difference (issue 41 item 1).

The same real CODIS predictions (the authors' output_example.json on the real build) scored by two
local LLM judges on the real local OpenAI-compatible server, the second saying the opposite for a few
chosen questions: report.md gets a section splitting the headline metrics' B - A into the pipeline
stages, all of it in the judge stage, with the chosen items named. By hand: one query of each chosen
pair flips from right to wrong, so Acc_q moves by -100/706 per item.
"""

from __future__ import annotations

import json
import random
import re
import shlex

import pytest
from conftest import needs_real_data
from test_explain import (
    codis_lines,
    flipping_judge,
    score,
)
from test_explain_vqa import (
    vqa_a,  # noqa: F401 (module-scoped fixtures)
    vqa_rows,  # noqa: F401
)

from cogbench.cli import main
from cogbench.reference_eval.explaining.stages import STAGES


def table_row(markdown: str, title: str, metric: str) -> list[str]:
    section = markdown.split(f"## {title}", 1)[1].split("\n## ", 1)[0]
    line = next(line for line in section.splitlines() if line.startswith(f"| {metric} |"))
    return [cell.strip() for cell in line.strip("|").split("|")]


@needs_real_data
def test_a_report_of_two_runs_of_one_model_explains_their_difference(
    built_release,
    vqa_a,  # noqa: F811
    tmp_path,
    openai_server,
    monkeypatch,
    capsys,
):
    from cogbench.dataset_builders.load import load_config

    monkeypatch.setenv("OPENAI_API_KEY", "sk-local")
    rows = load_config(str(built_release), "codis").remove_columns("image").to_list()
    questions = [row["question"] for row in rows]
    unique = [row for row in rows if questions.count(row["question"]) == 1]
    chosen = random.Random(41).sample(unique, 5)
    ids = {row["id"] for row in chosen}
    flip = {(row["question"].strip(), row["answer_1"].strip()) for row in chosen}
    runs = []
    judges = (("judge-a", flipping_judge(set())), ("judge-b", flipping_judge(flip)), ("judge-c", flipping_judge(set())))
    for name, responder in judges:
        server = openai_server(responder, models=[name])
        judge = {"judge": f"openai:{name}", "judge_base_url": server.base_url, "judge_backoff": 0.01}
        runs.append(score(built_release, "codis", codis_lines(), tmp_path / name, **judge))

    out = tmp_path / "report"
    assert main(["report", *map(str, runs), str(vqa_a), "--out", str(out)]) == 0
    markdown = (out / "report.md").read_text()
    # A against each later run: one section each, headed apart by the runs' labels (issue 48 item 9l)
    title = "Why two runs of example-vlm differ (codis), A example-vlm · judge-a and B example-vlm · judge-b: B - A by pipeline stage"
    other = title.replace("B example-vlm · judge-b", "B example-vlm · judge-c")
    headings = re.findall(r"^## (Why two runs of .*)$", markdown, re.MULTILINE)
    assert headings == [title, other]  # one model's VQA run is alone: no section
    header = ["Metric", "A", "B", "B - A", *STAGES]
    assert table_row(markdown, title, "Metric") == header
    acc_q = dict(zip(header, table_row(markdown, title, "acc_q")))
    moved = f"{-100 * len(ids) / 706:+.2f}"
    assert acc_q["B - A"] == acc_q["judge"] == moved
    assert all(acc_q[stage] == "0.00" for stage in STAGES if stage != "judge")
    acc_p = dict(zip(header, table_row(markdown, title, "acc_p")))
    assert acc_p["B - A"] == acc_p["judge"]
    section = markdown.split(f"## {title}", 1)[1].split("\n## ", 1)[0]
    named = re.search(r"judge: 5 item\(s\) \(([^)]*)\)", section).group(1)
    assert set(re.findall(r"`([^`]+)`", named)) == ids
    assert "not recorded for 353 shared item(s)" in section  # score runs keep no generation settings
    assert title in (out / "report.html").read_text()

    # the command the section names runs as printed, and says the same split
    printed = re.search(r"`(cogbench explain [^`]+)`", section).group(1)
    capsys.readouterr()
    assert main([*shlex.split(printed)[1:], "--json"]) == 0
    overall = json.loads(capsys.readouterr().out)["metrics"]["acc_q"]["overall"]
    assert overall["shares"]["judge"] == pytest.approx(-100 * len(ids) / 706)
