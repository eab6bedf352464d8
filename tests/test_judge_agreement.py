"""Judge agreement (issue 33 item 5) end to end on CODIS; kappa and tau by hand are in test_agreement_by_hand.py.

Two scripted LLM judges served locally score three models' real CODIS predictions; every expected
verdict is known from the script.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from sklearn.metrics import cohen_kappa_score
from test_score import minilm_path

from cogbench.cli import main
from cogbench.reference_eval.run.provenance import answers_sha256
from cogbench.reference_eval.scoring.pipeline import ScoreOptions, run_scoring

from openai_server import Reply, numbered_verdicts
from shared_files import codis_example, spacy_stand_in

# --- end to end: two scripted judges on three models' real CODIS predictions ------------------------------


def codis_truth(text: str) -> tuple[str, str]:
    truth = re.search(r"Here is the groundtruth: (.*)\n", text).group(1)
    return truth.strip(), text.rsplit("Here is the output: ", 1)[1].strip()


def strict_b(output: str) -> bool:
    """Judge B's quirk: any answer that begins with a vowel is wrong."""
    return output[:1].lower() in "aeiou"


def model_predictions(tmp_path: Path, swapped_pairs: int) -> tuple[Path, list[dict]]:
    """The authors' example (every answer right) with the first ``swapped_pairs`` pairs' answers swapped (wrong)."""
    pairs = json.loads(codis_example().read_text())
    for pair in pairs[:swapped_pairs]:
        pair["output"] = {"output_1": pair["output"]["output_2"], "output_2": pair["output"]["output_1"]}
    path = tmp_path / f"model-{swapped_pairs}.json"
    path.write_text(json.dumps(pairs))
    return path, pairs


def expected_verdicts(pairs: list[dict], swapped_pairs: int) -> tuple[list[int], list[int]]:
    """What the script says, query by query: judge A (exact match with the truth) and judge B (A, vowels wrong)."""
    a, b = [], []
    for n, pair in enumerate(pairs):
        for q in (1, 2):
            right = int(n >= swapped_pairs)
            a.append(right)
            b.append(0 if strict_b(pair["output"][f"output_{q}"].strip()) else right)
    return a, b


@pytest.fixture
def judged_runs(built_release, tmp_path, openai_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "local")

    def responder(request):
        truth, output = codis_truth(request.prompt_text)
        right = truth == output and not (request.body["model"] == "judge-b" and strict_b(output))
        return Reply(text="right" if right else "wrong")

    server = openai_server(responder)
    runs, expected = {}, {}
    for swapped in (0, 40, 90):
        path, pairs = model_predictions(tmp_path, swapped)
        expected[swapped] = expected_verdicts(pairs, swapped)
        for judge in ("judge-a", "judge-b"):
            out = tmp_path / f"run-{swapped}-{judge}"
            run_scoring(
                ScoreOptions(
                    task="codis",
                    dataset=str(built_release),
                    predictions=str(path),
                    judge=f"openai:{judge}",
                    judge_base_url=server.base_url,
                    judge_backoff=0.01,
                    judge_concurrency=16,
                    judge_cache=str(tmp_path / f"cache-{judge}.sqlite"),
                    out=str(out),
                )
            )
            runs[(swapped, judge)] = out
    return runs, expected


def test_compare_judges_on_three_models(judged_runs, tmp_path, capsys):
    runs, expected = judged_runs
    out_json = tmp_path / "agreement.json"
    chart = tmp_path / "agreement.png"
    # Any order: runs are paired by the answers they judged, judge A being the first run's judge.
    order = [
        runs[(40, "judge-a")],
        runs[(0, "judge-b")],
        runs[(90, "judge-b")],
        runs[(0, "judge-a")],
        runs[(40, "judge-b")],
        runs[(90, "judge-a")],
    ]
    assert main(["compare", "--judges", *map(str, order), "--json", str(out_json), "--chart", str(chart)]) == 0
    printed = capsys.readouterr().out
    result = json.loads(out_json.read_text())
    assert (
        result["judge_a"] == "openai:judge-a, tolerant parsing"
        and result["judge_b"] == "openai:judge-b, tolerant parsing"
    )
    by_model = {Path(p["a"]["folder"]).name: p for p in result["pairs"]}
    for swapped in (0, 40, 90):
        a, b = expected[swapped]
        pair = by_model[f"run-{swapped}-judge-a"]
        overall = pair["kappa"]["overall"]
        flips = sum(x != y for x, y in zip(a, b))
        assert (overall["items"], overall["flips"], overall["a_higher"], overall["b_higher"]) == (706, flips, flips, 0)
        assert overall["kappa"] == pytest.approx(cohen_kappa_score(a, b), abs=1e-4)
        acc_q = {row["column"]: row for row in pair["moves"]["acc_q"]}["overall"]
        assert acc_q["a"] == pytest.approx(100 * sum(a) / 706, abs=1e-4)
        assert acc_q["b"] == pytest.approx(100 * sum(b) / 706, abs=1e-4)
        assert acc_q["move"] == pytest.approx(100 * (sum(b) - sum(a)) / 706, abs=1e-4)
        assert acc_q["interval"][0] < acc_q["move"] < acc_q["interval"][1]
    # The models keep their order under both judges (fewer swapped answers, higher scores): tau = 1.
    ranking = result["ranking"]["acc_q"]
    assert ranking["models"] == 3 and ranking["tau"] == 1.0
    assert "Kendall's tau" in printed and "| overall | 706 |" in printed
    assert chart.stat().st_size > 10_000
    # The report puts the same agreement beside the runs, as tables and a chart.
    report = tmp_path / "report"
    assert main(["report", *map(str, order), "--out", str(report)]) == 0
    text = (report / "report.md").read_text()
    assert (
        "## Judge agreement, codis: Cohen's kappa" in text
        and "## Judge agreement, codis: scores under each judge" in text
    )
    kappa_40 = {Path(p["a"]["folder"]).name: p for p in result["pairs"]}["run-40-judge-a"]["kappa"]["overall"]
    low, high = kappa_40["interval"]
    row = next(line for line in text.splitlines() if line.startswith(f"| model-40 | {kappa_40['flip_share']:.1f} |"))
    assert row.endswith(f"| {kappa_40['kappa']:.2f} [{low:.2f}, {high:.2f}] |")
    assert "| n/a |" in next(line for line in text.splitlines() if line.startswith("| model-90 |"))
    assert (report / "judge_agreement_codis.png").stat().st_size > 10_000


def test_an_item_one_judge_left_unjudged_is_no_verdict_in_the_agreement(
    built_release, tmp_path, openai_server, monkeypatch
):
    """Judge B never gives a usable reply for one answer text: those queries are left out of kappa and counted
    as unjudged; kappa over the rest equals scikit-learn's on the verdicts the script expects."""
    monkeypatch.setenv("OPENAI_API_KEY", "local")
    path, pairs = model_predictions(tmp_path, 40)
    left_out = pairs[0]["output"]["output_1"].strip()

    def responder(request):
        truth, output = codis_truth(request.prompt_text)
        if request.body["model"] == "judge-b" and output == left_out:
            return Reply(text="I cannot tell.")
        right = truth == output and not (request.body["model"] == "judge-b" and strict_b(output))
        return Reply(text="right" if right else "wrong")

    server = openai_server(responder)
    for judge in ("judge-a", "judge-b"):
        options = ScoreOptions(
            task="codis",
            dataset=str(built_release),
            predictions=str(path),
            judge=f"openai:{judge}",
            judge_base_url=server.base_url,
            judge_backoff=0.01,
            judge_concurrency=16,
            judge_cache=str(tmp_path / f"cache-{judge}.sqlite"),
            out=str(tmp_path / judge),
            allow_failures=True,  # judge B's unusable replies leave its score partial
        )
        run_scoring(options)
    out_json = tmp_path / "agreement.json"
    assert (
        main(["compare", "--judges", str(tmp_path / "judge-a"), str(tmp_path / "judge-b"), "--json", str(out_json)])
        == 0
    )
    (pair,) = json.loads(out_json.read_text())["pairs"]
    a, b = expected_verdicts(pairs, 40)
    outputs = [pair_["output"][f"output_{q}"].strip() for pair_ in pairs for q in (1, 2)]
    kept = [i for i, output in enumerate(outputs) if output != left_out]
    assert 0 < len(kept) < 706
    overall = pair["kappa"]["overall"]
    assert (pair["unjudged"], overall["items"]) == (706 - len(kept), len(kept))
    assert overall["kappa"] == pytest.approx(cohen_kappa_score([a[i] for i in kept], [b[i] for i in kept]), abs=1e-4)


def test_compare_judges_refuses_what_it_cannot_pair(judged_runs, tmp_path, capsys):
    runs, _ = judged_runs
    cases = [
        ([runs[(0, "judge-a")], runs[(40, "judge-a")]], "1 run(s) judged the same answers"),
        ([runs[(0, "judge-a")], runs[(0, "judge-a")]], "judged alike"),
    ]
    for folders, message in cases:
        assert main(["compare", "--judges", *map(str, folders)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and message in err and err.count("\n") == 1
    assert main(["compare", str(runs[(0, "judge-a")])]) == 2
    assert "give two runs" in capsys.readouterr().err


def test_one_judge_model_at_two_endpoints_is_two_judges(built_release, tmp_path, openai_server, capsys, monkeypatch):
    """The verdict cache keys a judge by model and endpoint; so does ``compare --judges``: two servers that both
    call their model "judge" are judges A and B, named apart by their endpoints, not refused as judged alike."""
    monkeypatch.setenv("OPENAI_API_KEY", "local")
    path, pairs = model_predictions(tmp_path, 40)
    expected_a, expected_b = expected_verdicts(pairs, 40)

    def lenient(request):
        truth, output = codis_truth(request.prompt_text)
        return Reply(text="right" if truth == output else "wrong")

    def strict(request):
        truth, output = codis_truth(request.prompt_text)
        return Reply(text="right" if truth == output and not strict_b(output) else "wrong")

    folders = []
    for name, responder in (("a", lenient), ("b", strict)):
        server = openai_server(responder)
        folders.append(tmp_path / f"run-{name}")
        run_scoring(
            ScoreOptions(
                task="codis",
                dataset=str(built_release),
                predictions=str(path),
                judge="openai:judge",
                judge_base_url=server.base_url,
                judge_backoff=0.01,
                judge_concurrency=16,
                judge_cache=str(tmp_path / "cache.sqlite"),  # one cache: it keeps the two endpoints apart
                out=str(folders[-1]),
            )
        )
    out_json = tmp_path / "agreement.json"
    assert main(["compare", "--judges", *map(str, folders), "--json", str(out_json)]) == 0, capsys.readouterr().err
    result = json.loads(out_json.read_text())
    assert result["judge_a"] != result["judge_b"]
    assert all(
        result[k].startswith("openai:judge, tolerant parsing, endpoint 127.0.0.1 #") for k in ("judge_a", "judge_b")
    )
    overall = result["pairs"][0]["kappa"]["overall"]
    flips = sum(x != y for x, y in zip(expected_a, expected_b))
    assert flips and (overall["items"], overall["flips"], overall["b_higher"]) == (706, flips, 0)


def test_compare_judges_llm_against_offline_rouge_on_descriptions(
    built_release, tmp_path, openai_server, capsys, monkeypatch
):
    """The LLM judge says 1 to every key point; ROUGE-L alone says 1 to some: every flip is A right, B wrong,
    kappa is 0 (judge A never varies), and the move is ROUGE's Cognition Score minus 100."""
    monkeypatch.setenv("OPENAI_API_KEY", "local")
    server = openai_server(numbered_verdicts(lambda n: 1))
    common = {
        "task": "description",
        "dataset": str(built_release),
        "oracle": True,
        "spacy_model": str(spacy_stand_in()),
        "embedder": minilm_path(),
    }
    llm = run_scoring(
        ScoreOptions(judge="openai:gpt-judge", judge_base_url=server.base_url, out=str(tmp_path / "llm"), **common)
    )
    rouge = run_scoring(ScoreOptions(judge="rouge", out=str(tmp_path / "rouge"), **common))
    out_json = tmp_path / "agreement.json"
    argv = ["compare", "--judges", str(tmp_path / "llm"), str(tmp_path / "rouge"), "--json", str(out_json)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    result = json.loads(out_json.read_text())
    assert result["judge_a"] == "openai:gpt-judge, tolerant parsing" and result["judge_b"].startswith("rouge")
    overall = result["pairs"][0]["kappa"]["overall"]
    cors = llm["counts"]["cors"]
    missed = round(cors * (100 - rouge["metrics"]["cognition"]["overall"]) / 100)
    assert (overall["items"], overall["flips"], overall["a_higher"], overall["b_higher"]) == (cors, missed, missed, 0)
    assert overall["kappa"] == 0.0 and overall["constant"] == ["A"]
    move = {r["column"]: r for r in result["pairs"][0]["moves"]["cognition"]}["overall"]
    assert move["move"] == pytest.approx(rouge["metrics"]["cognition"]["overall"] - 100.0, abs=1e-3)
    assert "judge A gave one verdict throughout: kappa is 0 by definition" in printed
    assert "needs three or more models" in printed


def test_answers_hash_names_the_answers_not_the_file_or_their_order():
    first = {("001", 1): "Opening.", ("001", 2): "Closing.", ("000", 1): "On."}
    same = dict(reversed(list(first.items())))
    assert answers_sha256(first) == answers_sha256(same)
    assert answers_sha256(first) != answers_sha256({**first, ("000", 1): "Off."})
    assert answers_sha256({"a": "x\ud800"}) != answers_sha256({"a": "x"})  # a lone surrogate is hashed, not lost
