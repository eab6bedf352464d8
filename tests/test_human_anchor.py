"""``judges validate`` and certify's human anchor on hand-laid verdicts and real labels files (issue 52 parts 2-3).

Fast: the verdicts are ``JudgedAnswers`` laid out by hand (as tests/test_certify_bars.py does), the labels
and their key real files in the labels format (``labelling.labels_format`` reads them). Figures are pinned by
``sklearn.metrics.cohen_kappa_score`` and ``scipy.stats.kendalltau``, or worked by hand in the comments; every
bar of the anchor is pinned at its boundary, just passing and just failing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scipy.stats import kendalltau
from sklearn.metrics import cohen_kappa_score

from cogbench.errors import UsageError
from cogbench.reference_eval.certifying import certify as cert
from cogbench.reference_eval.certifying import human_anchor as anchor
from cogbench.reference_eval.certifying.anchor_text import render_validation
from cogbench.reference_eval.certifying.certificate_text import render_card_block, render_certificate
from cogbench.reference_eval.certifying.verdict_archive import JudgedAnswers
from cogbench.reference_eval.labelling.labels_format import Label
from cogbench.reference_eval.recording.run_reader import schema, validator
from cogbench.schemas.features import COGBENCH_CATEGORIES

SAMPLE = "ab" * 32
CATEGORIES = list(COGBENCH_CATEGORIES)


def judged(model: str, judge: str, verdicts: list[int | None], per_image: int = 2) -> JudgedAnswers:
    """One model's description CoRs: unit n on image n // per_image, category n % 8, the judge's verdicts."""
    units = {}
    for n, verdict in enumerate(verdicts):
        category = CATEGORIES[n % len(CATEGORIES)]
        units[(f"i{n // per_image}", category, str(n))] = (f"i{n // per_image}", category, verdict)
    return JudgedAnswers("description", model, f"sha-{model}", judge, f"runs/{model}-{judge}", units)


def answers_id(model: str) -> str:
    return (model.encode().hex() + "0" * 12)[:12]


def write_labels(tmp_path, runs: list[JudgedAnswers], people: dict[str, list[int]], shared: dict[str, list[int]]):
    """A labels file (role A on every unit of ``people[model]``, role B on ``shared``) and its key."""
    lines = []
    for run in runs:
        for n, ((item, category, query), _) in enumerate(sorted(run.units.items(), key=lambda kv: int(kv[0][2]))):
            for role, labels in (("A", people[run.model]), ("B", shared.get(run.model, []))):
                if n < len(labels):
                    lines.append(
                        {
                            "format": "cogbench labels 1",
                            "sample": SAMPLE,
                            "unit": f"u{len(lines):04d}",
                            "task": "description",
                            "answers": answers_id(run.model),
                            "item_id": item,
                            "category": category,
                            "query": query,
                            "label": labels[n],
                            "labeller": "ann" if role == "A" else "bob",
                            "role": role,
                            "time": "2026-03-01T10:15:00.123Z",
                        }
                    )
    path = tmp_path / "labels.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    key = {
        "format": "cogbench labelling key 1",
        "sample": SAMPLE,
        "seed": 0,
        "answers": {
            answers_id(run.model): {
                "task": "description",
                "model": run.model,
                "answers_sha256": run.answers,
                "judge": run.judge,
                "run": run.where,
            }
            for run in runs
        },
    }
    (tmp_path / "key.json").write_text(json.dumps(key))
    return str(path), str(tmp_path / "key.json"), lines


def error_of(call) -> str:
    with pytest.raises(UsageError) as caught:
        call()
    return str(caught.value)


# --- joining labels to runs -------------------------------------------------------------------------------


def test_labels_that_do_not_match_the_runs_units_are_refused_naming_file_line_and_field(tmp_path):
    run = judged("m0", "judge", [1, 0, 1, 1])
    path, key, lines = write_labels(tmp_path, [run], {"m0": [1, 0, 1, 1]}, {})
    for field, value, expected in (
        ("item_id", "nope", f"{path}: record 2: field item_id: 'nope'"),
        ("query", "99", f"{path}: record 2: field query: '99'"),
        ("category", CATEGORIES[5], f"{path}: record 2: field category"),
        ("answers", "f" * 12, f"{path}: record 2: field answers: 'ffffffffffff' is not in the key {key}"),
        ("sample", "cd" * 32, f"{path}: record 2: field sample"),
    ):
        edited = [dict(line) for line in lines]
        edited[1][field] = value
        (tmp_path / "labels.jsonl").write_text("".join(json.dumps(line) + "\n" for line in edited))
        message = error_of(lambda: anchor.read_human_units([path], key, [run]))
        assert message.startswith(expected), message
        assert "\n" not in message
    # labels of answers no --run holds
    (tmp_path / "labels.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    other = judged("m1", "judge", [1, 0, 1, 1])
    assert f"{path}: record 1: field answers: no --run holds these answers" in error_of(
        lambda: anchor.read_human_units([path], key, [other])
    )
    # a run given with no label of its answers adds nothing: refused too
    units = anchor.read_human_units([path], key, [run])
    assert "--run runs/m1-judge: no label is of these answers" in error_of(
        lambda: anchor.check_runs_labelled(units, [run, other])
    )


def label(role: str, value: int, labeller: str = "x") -> Label:
    return Label(SAMPLE, "u0001", "description", "0" * 12, "i0", "c", "0", value, labeller, role, "t", "f:1")


def test_the_peoples_label_adjudicated_where_two_differ():
    unit = anchor.HumanUnit("description", "sha", ("i0", "c", "0"), "i0", "c")
    unit.labels = {"A": label("A", 1)}
    assert unit.label() == 1  # one labeller: theirs
    unit.labels["B"] = label("B", 1)
    assert unit.label() == 1  # two who agree
    unit.labels["B"] = label("B", 0)
    assert unit.label() is None  # two who differ, no adjudicator: left out
    unit.labels["adjudicator"] = label("adjudicator", 0)
    assert unit.label() == 0  # the adjudicator decides


# --- the figures --------------------------------------------------------------------------------------------

# Three models, 8 labelled CoRs each on 4 images; judge "good" follows the people but for one unit of m1;
# judge "yes" says right throughout. The people's labels of each model, then B's on the first 6 of each.
PEOPLE = {"m0": [1, 1, 1, 1, 0, 0, 1, 0], "m1": [1, 0, 1, 0, 0, 1, 0, 1], "m2": [0, 0, 0, 1, 0, 0, 0, 0]}
SECOND = {"m0": [1, 1, 0, 1, 0, 0], "m1": [1, 0, 1, 0, 0, 1], "m2": [0, 0, 0, 1, 1, 0]}


def good_verdicts(model: str) -> list[int]:
    verdicts = list(PEOPLE[model])
    if model == "m1":
        verdicts[1] = 1
    return verdicts


@pytest.fixture
def figures(tmp_path):
    runs = [judged(m, "good", good_verdicts(m)) for m in PEOPLE] + [judged(m, "yes", [1] * 8) for m in PEOPLE]
    path, key, _ = write_labels(tmp_path, runs[:3], PEOPLE, SECOND)
    units = anchor.read_human_units([path], key, runs)
    return anchor.validate(units, runs, 200, 0), runs


def test_validate_figures_equal_sklearn_and_scipy(figures):
    result, _ = figures
    (task,) = result["tasks"]
    # the sample: 24 units, 18 labelled twice; A and B differ on m0's 3rd and m2's 5th: no adjudicator, left out
    assert task["sample"] == {
        "units_labelled": 24,
        "units_shared": 18,
        "units_adjudicated": 2,
        "excluded_disagreement": 2,
        "units": 22,
        "images": 4,
        "models": 3,
        "labellers": ["ann", "bob"],
    }
    a = [v for m in PEOPLE for v in PEOPLE[m][:6]]
    b = [v for m in PEOPLE for v in SECOND[m]]
    people = task["human_human"]["agreement"]["overall"]
    assert people["kappa"] == round(cohen_kappa_score(a, b), 4)
    assert people["units"] == 18 and people["kappa_interval"] is None  # 4 images: under MIN_IMAGES, said why
    assert people["no_interval"] == "fewer than 80 images (3)"  # the shared units 0-5: images i0-i2
    good, yes = task["judges"]
    assert (good["judge"], yes["judge"]) == ("good", "yes")
    kept = [(m, n) for m in PEOPLE for n in range(8) if (m, n) not in {("m0", 2), ("m2", 4)}]
    truth = [PEOPLE[m][n] for m, n in kept]
    assert good["agreement"]["overall"]["kappa"] == round(
        cohen_kappa_score(truth, [good_verdicts(m)[n] for m, n in kept]), 4
    )
    # the constant judge "yes": kappa 0 (p_o = p_e = the people's share right, 9/22), its AC1 IS the always-right
    # baseline, and the better constant here is always WRONG (13 of 22 wrong), which it does not beat:
    # always right: p_o = 9/22; pi = 31/44; p_e = 2 * 31/44 * 13/44 = 0.416322; AC1 = -0.007231 / 0.583678 = -0.012389
    # always wrong: p_o = 13/22; pi = 9/44; p_e = 2 * 9/44 * 35/44 = 0.325413; AC1 = 0.265496 / 0.674587 = 0.393570
    overall = yes["agreement"]["overall"]
    assert overall["kappa"] == 0.0
    assert (overall["always_right_ac1"], overall["always_wrong_ac1"]) == (-0.0124, 0.3936)
    assert overall["ac1"] == overall["always_right_ac1"] and overall["ac1_margin"] == -0.406  # -0.012389 - 0.393570
    # "good" errs once (m1's 2nd): p_o = 21/22 = 0.954545; its shares right 9/22 and 10/22: pi = 19/44,
    # p_e = 2 * 19/44 * 25/44 = 0.490702; AC1 = 0.463843 / 0.509298 = 0.910751; margin 0.910751 - 0.393570 = 0.517181
    assert good["agreement"]["overall"]["ac1"] == 0.9108 and good["agreement"]["overall"]["ac1_margin"] == 0.5172
    # Kendall's tau-b of the models' scores: the people's shares right against the judge's, on the labelled units
    human = [sum(PEOPLE[m][n] for mm, n in kept if mm == m) / sum(mm == m for mm, _ in kept) for m in PEOPLE]
    judge = [sum(good_verdicts(m)[n] for mm, n in kept if mm == m) / sum(mm == m for mm, _ in kept) for m in PEOPLE]
    assert good["ranking"]["tau"] == round(kendalltau(human, judge).statistic, 4)
    assert good["ranking"]["models_in_order"] == ["m0", "m1", "m2"] and good["ranking"]["units_per_model"] == [7, 8, 7]
    assert good["parse_failures"] == {"units": 24, "no_verdict": 0, "share": 0.0}


def test_units_with_no_verdict_are_parse_failures_and_left_out_of_the_agreement(tmp_path):
    verdicts = [1, 0, None, 1, 1, 0, 1, None, 0, 1]  # 2 of 10 units with no verdict: 20%
    run = judged("m0", "judge", verdicts)
    labels = [1, 0, 1, 1, 1, 0, 1, 0]  # the first 8 units labelled, both units without a verdict among them
    path, key, _ = write_labels(tmp_path, [run], {"m0": labels}, {})
    (task,) = anchor.validate(anchor.read_human_units([path], key, [run]), [run], 50, 0)["tasks"]
    (figures,) = task["judges"]
    assert figures["parse_failures"] == {"units": 10, "no_verdict": 2, "share": 20.0}
    assert figures["no_verdict_labelled"] == 2 and figures["units"] == 6  # units 2 and 7 labelled, not judged
    assert figures["agreement"]["overall"]["confusion"] == [[2, 0], [0, 4]]


def test_validate_text_says_what_sample_every_number_is_over(figures):
    text = render_validation(figures[0])
    assert "description: a sample of 24 labelled units (18 labelled twice, 2 of them differing)" in text
    assert "22 units over 4 images have a people's label; 2 left out (A and B differ, no adjudicator's label)" in text
    assert "Judge yes: 22 labelled units over 4 images" in text
    assert (
        "No interval in 9 of the rows: each needs 80 images and 10 units of the rarer label (overall: fewer than 80 images (4))."
        in text
    )
    assert "-0.000" not in text  # kappa of -0.0 (p_o = p_e exactly) shows as 0.000
    assert "| overall | 22 | 4 |" in text


# --- the anchor's bars at their boundaries ----------------------------------------------------------------


def anchor_figures(lower: float | None, human: float | None, margin: float, failures: int, units: int) -> dict:
    overall = {
        "kappa": 0.9,
        "kappa_interval": None if lower is None else [lower, 0.95],
        "no_interval": "" if lower is not None else "fewer than 80 images (12)",
        "ac1": 0.9,
        "ac1_margin": margin,
        "always_right_ac1": 0.9 - margin,
        "always_wrong_ac1": -0.5,
        "units": 200,
        "images": 100,
    }
    return {
        "sample": {},
        "human_human": {"units": 50, "agreement": {"overall": {"kappa": human, "units": 50}}},
        "judge": {
            "agreement": {"overall": overall},
            "parse_failures": {"units": units, "no_verdict": failures, "share": round(100.0 * failures / units, 4)},
        },
    }


def results(figures: dict) -> dict[str, bool]:
    return {c["name"]: c["passed"] for c in anchor.anchor_criteria(figures, 0.10, 0.10, 2.0)}


@pytest.mark.parametrize(
    "lower, human, passed",
    [
        (0.70, 0.80, True),  # exactly people's kappa - 0.10 (0.8 - 0.1 is 0.7000000000000001 in binary): PASS
        (0.6999, 0.80, False),  # just below
        (0.7001, 0.80, True),
        (0.55, 0.65, True),
        (0.5499, 0.65, False),
        (None, 0.80, False),  # no interval (too few images): not shown to pass
        (0.9, None, False),  # no people-people kappa to anchor on
    ],
)
def test_kappa_lower_bound_against_peoples_kappa(lower, human, passed):
    assert results(anchor_figures(lower, human, 0.2, 0, 100))["human_kappa"] is passed


@pytest.mark.parametrize("margin, passed", [(0.10, True), (0.0999, False), (0.1001, True), (-0.01, False)])
def test_ac1_margin_over_the_better_constant_judge(margin, passed):
    assert results(anchor_figures(0.8, 0.8, margin, 0, 100))["ac1_margin"] is passed


@pytest.mark.parametrize(
    "failures, units, passed",
    [(2, 100, True), (1, 50, True), (3, 149, False), (201, 10000, False), (0, 10, True)],  # 2.0%, 2.0%, 2.013%, 2.01%
)
def test_parse_failures_at_most_two_percent(failures, units, passed):
    assert results(anchor_figures(0.8, 0.8, 0.2, failures, units))["parse_failures"] is passed


# --- certify with people's labels ---------------------------------------------------------------------------


def test_certify_with_labels_adds_the_anchor_its_bars_and_passes_only_on_them(tmp_path):
    runs = [judged(m, "good", good_verdicts(m)) for m in PEOPLE]
    refs = [judged(m, "official", good_verdicts(m)) for m in PEOPLE]
    path, key, _ = write_labels(tmp_path, runs, PEOPLE, SECOND)
    plain = cert.certify(refs, runs, cert.Bars(min_tau=0.0, min_kappa=0.8), 100, 0)
    assert [b["name"] for b in plain["bars"]] == ["min_kappa", "min_tau", "max_difference"]
    assert "labels" not in plain and "human_anchor" not in plain["tasks"][0]
    assert plain["status"] == "PASS"  # the candidate agrees with the official judge throughout
    result = cert.certify(refs, runs, cert.Bars(min_tau=0.0, min_kappa=0.8), 100, 0, ([path], key))
    assert [b["name"] for b in result["bars"]][3:] == ["human_kappa_margin", "min_ac1_margin", "max_parse_failures"]
    assert result["labels"] == {"files": [path], "key": key}
    (task,) = result["tasks"]
    named = {c["name"]: c for c in task["criteria"]}
    # 4 images: no interval for kappa, so the human anchor fails, saying why; the others pass
    assert (
        named["human_kappa"]["passed"] is False
        and "no interval: fewer than 80 images (4)" in named["human_kappa"]["detail"]
    )
    assert named["ac1_margin"]["passed"] and named["parse_failures"]["passed"]
    assert result["status"] == "FAIL"
    # labels of answers the candidate did not judge: refused, naming certify's own option
    assert "field answers: no --candidate holds these answers" in error_of(
        lambda: cert.certify(refs[:2], runs[:2], cert.Bars(), 100, 0, ([path], key))
    )
    problems = list(validator(schema("judge_certificate.schema.json")).iter_errors(json.loads(json.dumps(result))))
    assert not problems, problems[0].message
    text = render_certificate(result)
    assert "### Against people's labels (the human anchor)" in text
    assert "| lower end of the 95% interval of kappa against the people's labels | n/a |" in text
    card = render_card_block(result)
    assert "Human anchor: description: a sample of 24 labelled units" in card
    assert "human_kappa_margin = 0.1" in card


def test_report_re_derives_the_anchor_and_refuses_an_edited_figure(tmp_path):
    from cogbench.errors import CogbenchError
    from cogbench.reference_eval.certifying.certificate_report import report_section, verified_certificate
    from cogbench.reference_eval.certifying.verdict_archive import read_verdicts, write_archive

    write_archive([judged(m, "official", good_verdicts(m)) for m in PEOPLE], tmp_path / "ref.parquet")
    write_archive([judged(m, "good", good_verdicts(m)) for m in PEOPLE], tmp_path / "cand.parquet")
    refs, cands = read_verdicts(str(tmp_path / "ref.parquet")), read_verdicts(str(tmp_path / "cand.parquet"))
    path, key, _ = write_labels(tmp_path, cands, PEOPLE, SECOND)
    result = cert.certify(refs, cands, cert.Bars(), 100, 0, ([path], key))
    (tmp_path / "cert.json").write_text(json.dumps(result))
    assert verified_certificate(str(tmp_path / "cert.json")) == json.loads(json.dumps(result))
    section = "\n".join(report_section([], result, "cert.json"))
    assert "Human anchor: description: a sample of 24 labelled units" in section
    edited = json.loads(json.dumps(result))
    edited["tasks"][0]["human_anchor"]["judge"]["agreement"]["overall"]["ac1"] = 0.99
    (tmp_path / "edited.json").write_text(json.dumps(edited))
    with pytest.raises(CogbenchError) as caught:
        verified_certificate(str(tmp_path / "edited.json"))
    assert "field tasks.0.human_anchor.judge.agreement.overall.ac1: NOT verified: the file says 0.99" in str(
        caught.value
    )
    # a label changed since: the certificate no longer re-derives
    lines = Path(path).read_text().splitlines()
    lines[0] = lines[0].replace('"label": 1', '"label": 0')
    Path(path).write_text("\n".join(lines) + "\n")
    with pytest.raises(CogbenchError, match="NOT verified"):
        verified_certificate(str(tmp_path / "cert.json"))
