"""Judge panels (issue 40 item 3): several ``--judge`` values, the majority verdict, each member's
scores and verdicts, Krippendorff's alpha, pairwise kappa and the members' error correlation.

The statistics are pinned against independent computations: alpha against Krippendorff's own
worked examples (2011), kappa against ``sklearn.metrics.cohen_kappa_score``, the error correlation
and effective number of judges by hand. End to end, three local judges (tests/openai_server.py)
with known error patterns judge the real CODIS answers and the real Description oracle; every
figure of the panel block is derived here again from the known patterns, and ``verify`` re-derives
it from the details.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import sys
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from cogbench.cli import main
from cogbench.errors import UsageError
from cogbench.reference_eval.judges.panel import panel_verdict, parse_member, parse_members
from cogbench.reference_eval.metrics import panel_agreement
from cogbench.reference_eval.metrics.panel_agreement import PanelItem
from cogbench.reference_eval.scoring.pipeline import ScoreOptions, run_scoring

from openai_server import Reply
from shared_files import codis_example, spacy_stand_in


@pytest.fixture(autouse=True)
def api_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-panel-test")


# --- the rule and the members -------------------------------------------------------------------


def test_majority_with_ties_to_the_lowest_verdict_and_none_when_a_member_gave_none():
    assert panel_verdict([True, True, False]) is True
    assert panel_verdict([False, True, False]) is False
    assert panel_verdict([True, False]) is False  # a tie is "wrong"
    assert panel_verdict([1, 0, 2, 2, 1]) == 1  # 1 and 2 tie: the lower
    assert panel_verdict([True, None, True]) is None


def test_members_carry_their_own_endpoint_and_never_name_it():
    member = parse_member("openai:judge-a@http://user:pw@127.0.0.1:9/v1", "http://default/v1", "codis")
    assert (member.name, member.model, member.base_url) == (
        "openai:judge-a",
        "judge-a",
        "http://user:pw@127.0.0.1:9/v1",
    )
    assert parse_member("openai:org/model@v2", "http://default/v1", "codis").base_url == "http://default/v1"
    assert parse_member("rule", None, "codis").kind == "rule"
    with pytest.raises(UsageError, match="rule is the offline CODIS judge"):
        parse_member("rule", None, "description")
    with pytest.raises(UsageError, match="given twice"):
        parse_members(["openai:a@http://x/v1", "openai:a@http://y/v1"], None, "codis")
    with pytest.raises(UsageError, match="openai:MODEL"):
        parse_members(["openai:a", "bertscore"], None, "description")


def test_a_key_goes_only_to_the_host_it_was_given_for():
    default = "http://127.0.0.1:8000/v1"
    assert parse_member("openai:a", default, "codis").key_variable == "OPENAI_API_KEY"
    # Same scheme, host and port as --judge-base-url (another path): the key's own server.
    assert parse_member("openai:a@http://127.0.0.1:8000/other/v1", default, "codis").key_variable == "OPENAI_API_KEY"
    assert parse_member("openai:a@https://api.openai.com/v1", None, "codis").key_variable == "OPENAI_API_KEY"
    for elsewhere in ("http://127.0.0.1:8001/v1", "https://127.0.0.1:8000/v1", "http://localhost:8000/v1"):
        assert parse_member(f"openai:a@{elsewhere}", default, "codis").key_variable is None
    assert parse_member("openai:a@http://127.0.0.1:9/v1", None, "codis").key_variable is None  # not OpenAI's
    member = parse_member("openai:org/a@https://judge.example/v1#JUDGE_KEY", default, "codis")
    assert (member.name, member.model, member.base_url, member.key_variable) == (
        "openai:org/a",
        "org/a",
        "https://judge.example/v1",
        "JUDGE_KEY",
    )
    assert parse_member("openai:a#OTHER_KEY", default, "codis").key_variable == "OTHER_KEY"
    with pytest.raises(UsageError, match="after # comes the name of the environment variable"):
        parse_member("openai:a@http://x/v1#1-not-a-name", default, "codis")


# --- the statistics, pinned independently ------------------------------------------------------

N = np.nan


def test_alpha_matches_krippendorffs_worked_examples():
    """Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability": A. binary data, two observers,
    no missing data: alpha = 1 - (20-1) * 4 / (14 * 6) = 0.095; C. nominal data, four observers, missing
    data: alpha = 0.743."""
    binary = [[0, 1, 0, 0, 0, 0, 0, 0, 1, 0], [1, 1, 1, 0, 0, 1, 0, 0, 0, 0]]
    assert panel_agreement.krippendorff_alpha(binary) == pytest.approx(1 - 19 * 4 / (14 * 6), abs=1e-4)
    assert panel_agreement.krippendorff_alpha(binary) == 0.0952
    rows = [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3],
        [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N],
    ]
    rows = [[None if np.isnan(v) else int(v) for v in row] for row in rows]
    assert panel_agreement.krippendorff_alpha(rows) == pytest.approx(0.743, abs=5e-4)
    assert panel_agreement.krippendorff_alpha([[True, True], [True, True]]) is None  # one value: undefined


def test_pairwise_kappa_matches_sklearn_and_error_correlation_is_worked_by_hand():
    rng = np.random.default_rng(7)
    truth = rng.integers(0, 2, 300)
    verdicts = [np.where(rng.random(300) < rate, 1 - truth, truth) for rate in (0.1, 0.2, 0.3)]
    items = [
        PanelItem(f"img{i // 2}", "c1" if i % 3 else "c2", tuple(int(v[i]) for v in verdicts), int(truth[i]))
        for i in range(300)
    ]
    found = panel_agreement.panel_agreement(["a", "b", "c"], items, ["c1", "c2"], "reference", resamples=50)
    for pair, (x, y) in zip(found["pairwise_kappa"], combinations(range(3), 2)):
        assert pair["kappa"] == pytest.approx(cohen_kappa_score(verdicts[x], verdicts[y]), abs=1e-4)
    # By hand: 4 items, three members, the reference all 1s.
    # errors a = 1 1 0 0, b = 1 0 1 0, c = 1 1 0 0: r(a,b) = 0, r(a,c) = 1, r(b,c) = 0 -> mean 1/3,
    # n_eff = 3 / (1 + 2 * 1/3) = 1.8.
    small = [PanelItem("i", "c1", v, 1) for v in [(0, 0, 0), (0, 1, 0), (1, 0, 1), (1, 1, 1)]]
    hand = panel_agreement.panel_agreement(["a", "b", "c"], small, ["c1"], "reference", resamples=10)
    errors = hand["error_correlation"]
    assert [p["r"] for p in errors["pairs"]] == [0.0, 1.0, 0.0]
    assert errors["mean_r"] == pytest.approx(1 / 3, abs=1e-4) and errors["effective_judges"] == 1.8
    assert errors["error_rates"] == [50.0, 50.0, 50.0]
    assert panel_agreement.effective_judges(3, 0.0) == 3.0 and panel_agreement.effective_judges(3, 1.0) == 1.0
    # Errors apart (r < 0) count as independent ones: never more judges than members (3 / (1 - 0.68) would be 9.4).
    assert panel_agreement.effective_judges(3, -0.34) == 3.0 and panel_agreement.effective_judges(3, -0.5) == 3.0
    assert panel_agreement.effective_judges(4, 0.5) == 1.6  # 4 / (1 + 3 * 0.5) = 4 / 2.5


# --- end to end on the real data ---------------------------------------------------------------


def _flips(prompt: str, digits: str) -> bool:
    return hashlib.sha256(prompt.encode()).hexdigest()[0] in digits


def codis_member(digits: str):
    """A judge that compares output and ground truth exactly, but flips its verdict on the prompts whose
    sha256 starts with one of ``digits`` (its own error pattern)."""

    def responder(request):
        text = request.prompt_text
        truth = re.search(r"Here is the groundtruth: (.*)\n", text).group(1)
        output = text.rsplit("Here is the output: ", 1)[1]
        right = (truth.strip() == output.strip()) != _flips(text, digits)
        return Reply(text="right" if right else "wrong")

    return responder


CODIS_PATTERNS = {"a": "", "b": "0123", "c": "2345"}  # b and c both err on 2, 3: the panel errs there


def mixed_predictions(tmp_path) -> Path:
    """The authors' example with every third pair's outputs swapped: some answers right, some wrong."""
    pairs = json.loads(codis_example().read_text())
    for number, pair in enumerate(pairs):
        if number % 3 == 0:
            pair["output"] = {"output_1": pair["output"]["output_2"], "output_2": pair["output"]["output_1"]}
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps(pairs))
    return path


@pytest.fixture
def codis_panel_run(built_release, tmp_path, openai_server):
    from cogbench.reference_eval.judges.codis import judge_prompt

    servers = {name: openai_server(codis_member(d), models=[f"judge-{name}"]) for name, d in CODIS_PATTERNS.items()}
    run = tmp_path / "panel"
    argv = ["score", "--task", "codis", "--dataset", str(built_release)]
    argv += ["--predictions", str(mixed_predictions(tmp_path)), "--out", str(run), "--judge-backoff", "0.01"]
    for name, server in servers.items():
        argv += ["--judge", f"openai:judge-{name}@{server.base_url}"]
    assert main(argv) == 0
    return run, servers, judge_prompt


def _details(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "details.jsonl").read_text().splitlines()]


def test_codis_panel_end_to_end(codis_panel_run, capsys):
    run, servers, judge_prompt = codis_panel_run
    scores = json.loads((run / "scores.json").read_text())
    details = _details(run)
    names = [f"openai:judge-{n}" for n in CODIS_PATTERNS]
    assert scores["judge"]["kind"] == "panel" and scores["panel"]["members"] == names
    assert [m["name"] for m in scores["judge"]["members"]] == names
    assert all(s.chat_requests for s in servers.values())  # each member asked its own server
    # Every verdict again, from the answers and the error patterns alone.
    member_verdicts = {n: [] for n in CODIS_PATTERNS}
    panel, truth, pairs = [], [], {n: [] for n in [*CODIS_PATTERNS, "panel"]}
    for detail in details:
        per_query = {n: [] for n in [*CODIS_PATTERNS, "panel"]}
        for query in detail["queries"]:
            prompt = judge_prompt(detail["question"], query["answer"], query["output"])
            right = query["output"].strip() == query["answer"].strip()
            votes = [right != _flips(prompt, d) for d in CODIS_PATTERNS.values()]
            majority = sum(votes) >= 2
            for name, vote in zip(CODIS_PATTERNS, votes):
                member_verdicts[name].append(vote)
                per_query[name].append(vote)
            per_query["panel"].append(majority)
            panel.append(majority)
            truth.append(right)
            assert query["right"] is majority  # the single-judge field holds the panel's verdict
            assert [m["right"] for m in query["panel"]] == votes
            assert [m["judge_reply"] for m in query["panel"]] == ["right" if v else "wrong" for v in votes]
        for name, votes in per_query.items():
            pairs[name].append(all(votes))
    assert panel != truth and member_verdicts["a"] == truth  # the panel errs where b and c both do
    for name, verdicts in member_verdicts.items():
        own = scores["panel"]["metrics"][f"openai:judge-{name}"]
        assert own["acc_q"]["overall"] == pytest.approx(100 * sum(verdicts) / len(verdicts), abs=1e-6)
        assert own["acc_p"]["overall"] == pytest.approx(100 * sum(pairs[name]) / len(pairs[name]), abs=1e-6)
    assert scores["metrics"]["acc_q"]["overall"] == pytest.approx(100 * sum(panel) / len(panel), abs=1e-6)
    agreement = scores["panel"]["agreement"]
    columns = [np.array(member_verdicts[n], dtype=int) for n in CODIS_PATTERNS]
    for pair, (x, y) in zip(agreement["pairwise_kappa"], combinations(range(3), 2)):
        assert pair["kappa"] == pytest.approx(cohen_kappa_score(columns[x], columns[y]), abs=1e-4)
    import krippendorff

    alpha = krippendorff.alpha(reliability_data=np.array(columns, dtype=float), level_of_measurement="nominal")
    assert agreement["krippendorff_alpha"] == pytest.approx(alpha, abs=1e-4)
    errors = np.array([c != np.array(panel, dtype=int) for c in columns], dtype=float)
    rs = [np.corrcoef(errors[x], errors[y])[0, 1] if errors[x].std() else None for x, y in combinations(range(3), 2)]
    defined = [r for r in rs if r is not None]
    mean_r = sum(defined) / len(defined)
    assert agreement["error_correlation"]["mean_r"] == pytest.approx(mean_r, abs=1e-4)
    assert agreement["error_correlation"]["effective_judges"] == pytest.approx(3 / (1 + 2 * max(0, mean_r)), abs=1e-3)
    # report.md shows each member's own numbers and the agreement beside the panel's (its "Judge panel" section).
    report = (run / "report.md").read_text()
    for name, verdicts in member_verdicts.items():
        acc_p, acc_q = 100 * sum(pairs[name]) / len(pairs[name]), 100 * sum(verdicts) / len(verdicts)
        assert f"| `openai:judge-{name}` | {acc_p:.1f} | {acc_q:.1f} |" in report
    assert (
        f"| panel | {100 * sum(pairs['panel']) / len(pairs['panel']):.1f} | {100 * sum(panel) / len(panel):.1f} |"
        in report
    )
    kappa_ab = cohen_kappa_score(columns[0], columns[1])
    low, high = agreement["pairwise_kappa"][0]["interval"]  # 216 images: clustered interval (test_agreement_by_hand)
    assert (
        f"| `openai:judge-a` / `openai:judge-b` | {kappa_ab:.3f} | [{low:.3f}, {high:.3f}] | {len(panel)} |" in report
    )
    assert f"Krippendorff's alpha (nominal) {alpha:.3f};" in report
    assert f"mean pairwise correlation r = {mean_r:.3f}; {3 / (1 + 2 * max(0, mean_r)):.4g} effective" in report
    # verify re-derives it all from the details (test_verify_names_an_edited_member_verdict: and sees an edit).
    assert main(["verify", str(run)]) == 0


def test_verify_names_an_edited_member_verdict(codis_panel_run, tmp_path, capsys):
    run = shutil.copytree(codis_panel_run[0], tmp_path / "edited")
    lines = _details(run)
    member = lines[0]["queries"][0]["panel"][1]
    member["right"] = not member["right"]
    (run / "details.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    capsys.readouterr()
    assert main(["verify", str(run)]) == 1
    out = capsys.readouterr().out
    assert f"item {lines[0]['item_id']}: query 1: openai:judge-b verdict right={member['right']}" in out
    assert "panel.metrics.openai:judge-b.acc_q" in out and "panel.agreement" in out


def cognition_member(verdict):
    """A Figure 8/9 judge answering ``N. [verdict(N)]`` for every key point N of the prompt."""

    def responder(request):
        count = int(re.search(r"Your answers to the (\d+) <", request.prompt_text).group(1))
        return Reply(text=" ".join(f"{n}. [{verdict(n)}]" for n in range(1, count + 1)))

    return responder


COGNITION_PATTERNS = {"a": lambda n: n % 2, "b": lambda n: 1, "c": lambda n: int(n % 3 == 0)}


def test_description_panel_end_to_end(built_release, tmp_path, openai_server, capsys):
    from test_score import minilm_path

    servers = {n: openai_server(cognition_member(v)) for n, v in COGNITION_PATTERNS.items()}
    run = tmp_path / "cognition"
    argv = ["score", "--task", "description", "--dataset", str(built_release), "--oracle", "--out", str(run)]
    argv += ["--spacy-model", str(spacy_stand_in()), "--embedder", minilm_path()]
    for name, server in servers.items():
        argv += ["--judge", f"openai:judge-{name}@{server.base_url}"]
    assert main(argv) == 0
    scores = json.loads((run / "scores.json").read_text())
    votes = {n: [] for n in COGNITION_PATTERNS}
    majority = []
    for detail in _details(run):
        for figure in (8, 9):
            points = [c for c in detail["cognition"] if c["figure"] == figure]
            for position, cor in enumerate(points, 1):
                given = [v(position) for v in COGNITION_PATTERNS.values()]
                for name, vote in zip(COGNITION_PATTERNS, given):
                    votes[name].append(vote)
                majority.append(int(sum(given) >= 2))
                assert cor["verdict"] == majority[-1] and [m["verdict"] for m in cor["panel"]] == given
        assert {r["judge"] for r in detail["panel_replies"]} == {f"openai:judge-{n}" for n in COGNITION_PATTERNS}
    assert scores["metrics"]["cognition"]["overall"] == pytest.approx(100 * sum(majority) / len(majority), abs=1e-6)
    for name, given in votes.items():
        own = scores["panel"]["metrics"][f"openai:judge-{name}"]["cognition"]["overall"]
        assert own == pytest.approx(100 * sum(given) / len(given), abs=1e-6)
    kappas = scores["panel"]["agreement"]["pairwise_kappa"]
    columns = [votes[n] for n in COGNITION_PATTERNS]
    for pair, (x, y) in zip(kappas, combinations(range(3), 2)):
        assert pair["kappa"] == pytest.approx(cohen_kappa_score(columns[x], columns[y]), abs=1e-4)
    capsys.readouterr()
    assert main(["verify", str(run)]) == 0


def test_panel_refusals(built_release, tmp_path, capsys):
    base = ["score", "--task", "codis", "--dataset", str(built_release), "--predictions", str(codis_example())]
    base += ["--out", str(tmp_path / "x")]
    argv = [*base, "--judge", "openai:a@http://127.0.0.1:9/v1", "--judge", "rule", "--write-requests", "r"]
    assert main(argv) == 2
    assert "--write-requests applies only to --judge openai, not to --judge panel" in capsys.readouterr().err
    assert main([*base, "--judge", "rule", "--judge", "rule"]) == 2
    assert "error: --judge rule is given twice: each panel member once" in capsys.readouterr().err
    # The Python API's options meet the same rules (scoring/judge_setup.py, beside check_judge_options).
    options = {
        "task": "codis",
        "dataset": str(built_release),
        "predictions": str(codis_example()),
        "out": str(tmp_path / "y"),
    }
    two = ("rule", "openai:a@http://127.0.0.1:9/v1")
    for extra, message in (
        ({"panel": ("rule",)}, "a judge panel takes two or more --judge values"),
        ({"panel": two, "read_responses": ("r.jsonl",)}, "--read-responses takes one judge, not a panel"),
        ({"panel": (*two, "openai:b#no-name")}, "after # comes the name of the environment variable"),
    ):
        with pytest.raises(UsageError, match=message):
            run_scoring(ScoreOptions(**options, **extra))
    assert not (tmp_path / "y").exists()


def test_a_panel_without_krippendorff_is_refused_before_any_member_judges(
    built_release, tmp_path, openai_server, monkeypatch, capsys
):
    """The alpha needs the krippendorff package (the eval extra): without it, one line before the first request."""
    monkeypatch.setitem(sys.modules, "krippendorff", None)  # `import krippendorff` raises ImportError, as uninstalled
    server = openai_server(codis_member(""), models=["judge"])
    run = tmp_path / "run"
    argv = [*_codis_argv(built_release, tmp_path, run), "--judge", "rule", "--judge", f"openai:judge@{server.base_url}"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: a judge panel needs the krippendorff package") and err.count("\n") == 1, err
    assert server.requests == [] and not run.exists()


def _codis_argv(built_release, tmp_path, run: Path) -> list[str]:
    argv = ["score", "--task", "codis", "--dataset", str(built_release), "--judge-backoff", "0.01"]
    return [*argv, "--predictions", str(mixed_predictions(tmp_path)), "--out", str(run)]


def test_each_server_gets_only_its_own_key(built_release, tmp_path, openai_server, monkeypatch, capsys):
    """OPENAI_API_KEY to --judge-base-url's server, a member's own variable to its server, and no key to a
    member elsewhere that names none: three real servers record every Authorization header they got."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-default-host-0001")
    monkeypatch.setenv("JUDGE_B_KEY", "sk-second-host-0002")
    a = openai_server(codis_member(""), models=["judge-a"], api_key="sk-default-host-0001")
    b = openai_server(codis_member("0123"), models=["judge-b"], api_key="sk-second-host-0002")
    c = openai_server(codis_member("2345"), models=["judge-c"])
    run = tmp_path / "keys"
    argv = [*_codis_argv(built_release, tmp_path, run), "--judge-base-url", a.base_url, "--judge", "openai:judge-a"]
    argv += ["--judge", f"openai:judge-b@{b.base_url}#JUDGE_B_KEY", "--judge", f"openai:judge-c@{c.base_url}"]
    assert main(argv) == 0
    seen = {name: {r.headers.get("authorization") for r in s.requests} for name, s in zip("abc", (a, b, c))}
    assert seen == {"a": {"Bearer sk-default-host-0001"}, "b": {"Bearer sk-second-host-0002"}, "c": {None}}
    assert all(s.chat_requests and any(r.path.endswith("/models") for r in s.requests) for s in (a, b, c))
    scores = json.loads((run / "scores.json").read_text())
    assert scores["panel"]["members"] == ["openai:judge-a", "openai:judge-b", "openai:judge-c"]
    printed = "".join(capsys.readouterr())
    written = b"".join(path.read_bytes() for path in run.rglob("*") if path.is_file())
    for key in ("sk-default-host-0001", "sk-second-host-0002"):
        assert key not in printed and key.encode() not in written


def test_a_member_without_its_key_is_refused_in_one_line(built_release, tmp_path, openai_server, capsys):
    demanding = openai_server(codis_member(""), models=["judge-d"], api_key="sk-its-own-0003")
    other = openai_server(codis_member(""), models=["judge-e"])
    run = tmp_path / "refused"
    base = [*_codis_argv(built_release, tmp_path, run), "--judge", f"openai:judge-e@{other.base_url}"]
    with_password = demanding.base_url.replace("http://", "http://me:PASSWORDinURL@")  # masked where named
    assert main([*base, "--judge", f"openai:judge-d@{with_password}"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: judge openai:judge-d: ") and "\n" not in err
    shown = demanding.base_url.replace("http://", "http://***@")
    assert f"{shown}/models demands a key (HTTP 401), and none is sent to it" in err
    assert "openai:judge-d@URL#VARIABLE" in err and "sk-panel-test" not in err and "PASSWORDinURL" not in err
    assert main([*base, "--judge", f"openai:judge-d@{demanding.base_url}#JUDGE_D_KEY"]) == 2
    assert "error: set JUDGE_D_KEY in the environment" in capsys.readouterr().err
    # Neither server got OPENAI_API_KEY (nor any key), and no judge request went out.
    assert {r.headers.get("authorization") for s in (demanding, other) for r in s.requests} == {None}
    assert not demanding.chat_requests and not other.chat_requests


def test_report_names_a_panel_run_as_not_certified_with_its_agreement(codis_panel_run, tmp_path, capsys):
    run = codis_panel_run[0]
    agreement = json.loads((run / "scores.json").read_text())["panel"]["agreement"]
    assert main(["report", str(run), "--out", str(tmp_path / "report")]) == 0
    section = (tmp_path / "report" / "report.md").read_text().split("## Judge certificate\n", 1)[1].split("\n## ")[0]
    alpha, effective = agreement["krippendorff_alpha"], agreement["error_correlation"]["effective_judges"]
    members = " + ".join(f"openai:judge-{n}" for n in CODIS_PATTERNS)
    assert f"(panel {members} (Krippendorff's alpha {alpha:.3f}, {effective:g} effective judges))" in section
    assert "No certificate given" in section and "with no certificate here" in section
    # The run is labelled by what its members are (issue 48 item 9c): LLMs, not "(offline)".
    text = (tmp_path / "report" / "report.md").read_text()
    assert f"judge panel {members} (tolerant parsing)" in text and "(offline)" not in text


def test_a_keyless_member_refused_at_its_first_request_says_why(built_release, tmp_path, openai_server, capsys):
    """With the model-list check skipped (--judge-accept-retired), a server that demands a key fails each chat request
    at once (401 is not retried), and the failure line says no key goes to that host."""
    demanding = openai_server(codis_member(""), api_key="sk-its-own-0004")
    other = openai_server(codis_member(""))
    argv = [*_codis_argv(built_release, tmp_path, tmp_path / "failed"), "--judge", f"openai:e@{other.base_url}"]
    assert main([*argv, "--judge", f"openai:d@{demanding.base_url}", "--judge-accept-retired"]) == 3
    err = capsys.readouterr().err
    assert "HTTP 401 (no key is sent to this host: name its key's variable, openai:MODEL@URL#VARIABLE)" in err
    assert {r.headers.get("authorization") for r in demanding.requests} == {None}
    asked = [r.prompt_text for r in demanding.chat_requests]
    assert len(asked) == len(set(asked)) > 600  # each distinct prompt tried once: asking again cannot help
    # A member without a verdict leaves kappa and alpha undefined (null), not a traceback; verify agrees.
    agreement = json.loads((tmp_path / "failed" / "scores.json").read_text())["panel"]["agreement"]
    assert agreement["krippendorff_alpha"] is None and agreement["pairwise_kappa"][0]["kappa"] is None
    assert main(["verify", str(tmp_path / "failed")]) == 0
