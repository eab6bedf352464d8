"""Every reader of a user's or a folder's file, fed arbitrary bytes and arbitrary JSON (hypothesis):
the only outcomes are success or a CogbenchError (a documented exit code) with a one-line message.

Readers: predictions in each format, scores.json, run.json, details.jsonl (recording.run_reader), the
build marker (claiming a build --out) and the manifest (verify_build). 500 examples each in the slow tier
(CI); COGBENCH_FUZZ_EXAMPLES sets more for a deeper search (2,000 each ran clean at 2c63525).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from conftest import REAL_RAW_DIR, needs_real_data
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cogbench.dataset_builders.output import MARKER_FILE, check_replaceable
from cogbench.errors import EXIT_CODES, CogbenchError
from cogbench.reference_eval.formats.official import OfficialIds, read_any_predictions
from cogbench.reference_eval.recording.run_reader import read_run
from cogbench.validation.integrity import verify_build

pytestmark = needs_real_data
EXAMPLES = settings(
    max_examples=int(os.environ.get("COGBENCH_FUZZ_EXAMPLES", "500")),
    deadline=None,
    suppress_health_check=list(HealthCheck),
    database=None,
)

scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
any_json = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12,
)


def mutated(document):
    """The real document with one value (at any depth) replaced by arbitrary JSON, or removed."""

    def paths(value, prefix=()):
        yield prefix
        items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        for key, child in items:
            yield from paths(child, (*prefix, key))

    every = list(paths(document))

    @st.composite
    def strategy(draw):
        copy = json.loads(json.dumps(document))
        path = draw(st.sampled_from(every))
        if not path:
            return draw(any_json)
        parent = copy
        for key in path[:-1]:
            parent = parent[key]
        if draw(st.booleans()) and isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent[path[-1]] = draw(any_json)
        return copy

    return strategy()


def contents(document):
    """Bytes to write: arbitrary bytes, arbitrary JSON, or the real document mutated."""
    as_text = st.one_of(any_json, mutated(document)).map(lambda v: json.dumps(v).encode())
    return st.one_of(st.binary(max_size=300), as_text, as_text)


def assert_documented(call) -> None:
    try:
        call()
    except CogbenchError as error:
        assert error.exit_code in EXIT_CODES and "\n" not in str(error), str(error)


@pytest.fixture(scope="module")
def folders(built_release, tmp_path_factory):
    """A real scored CODIS run of six pairs (small, so thousands of reads stay quick), with an eval-style run.json."""
    from cogbench.reference_eval.scoring.pipeline import ScoreOptions, run_scoring

    root = tmp_path_factory.mktemp("fuzz")
    pairs = json.loads((REAL_RAW_DIR / "codis" / "output_example.json").read_text())[:6]
    (root / "six.json").write_text(json.dumps(pairs))
    run_scoring(
        ScoreOptions(
            task="codis",
            dataset=str(built_release),
            out=str(root / "run"),
            resamples=20,
            predictions=str(root / "six.json"),
            allow_partial=True,
        )
    )
    (root / "run" / "run.json").write_text(
        json.dumps({"task": "codis", "model": "m", "prompt_id": "p", "dataset": "d", "dataset_revision": "r"})
    )
    return root


def fresh(folders: Path, name: str) -> Path:
    """A scratch copy of the real run folder (each example starts from the real files)."""
    scratch = Path(tempfile.mkdtemp(dir=folders))
    shutil.copytree(folders / "run", scratch / name)
    return scratch / name


@pytest.mark.parametrize("name", ["scores.json", "run.json", "details.jsonl"])
def test_run_folder_readers(name, folders):
    real = (folders / "run" / name).read_text()
    document = json.loads(real.splitlines()[0]) if name == "details.jsonl" else json.loads(real)
    run = fresh(folders, "r")
    original = (run / name).read_bytes()

    @EXAMPLES
    @given(contents(document))
    def check(data):
        if name == "details.jsonl":  # one line replaced, the others real
            data = data.replace(b"\n", b" ") + b"\n" + original.split(b"\n", 1)[1]
        (run / name).write_bytes(data)
        assert_documented(lambda: read_run(run))

    check()


@pytest.mark.parametrize(
    "suffix, task",
    [
        (".jsonl", "codis"),
        (".json", "codis"),
        (".jsonl", "vqa"),
        (".jsonl", "description"),
        (".tsv", "vqa"),
        (".xlsx", "vqa"),
    ],
)
def test_prediction_readers(suffix, task, folders):
    examples = {
        "codis": [{"id": "000", "output": {"output_1": "a", "output_2": "b"}}],
        "vqa": {
            "img_id": "x.jpg",
            "question": "q",
            "choice_a": "a",
            "choice_b": "b",
            "choice_c": "c",
            "choice_d": "d",
            "response": "A",
        },
        "description": {"task": "description", "item_id": "x", "output": "o"},
    }
    lmms = {"doc_id": 0, "doc": {"id": "000", "cogbench_query": 1}, "filtered_resps": ["x"], "resps": [["x"]]}
    path = Path(tempfile.mkdtemp(dir=folders)) / f"p{suffix}"

    @EXAMPLES
    @given(st.one_of(contents(examples[task]), contents(lmms)))
    def check(data):
        path.write_bytes(data)
        assert_documented(lambda: read_any_predictions(path, task, OfficialIds()))

    check()


def test_build_marker_and_manifest(folders):
    """A real build of the public CogBench samples (0.8 MB: each example hashes it all)."""
    from cogbench.cards.release import build_release

    build = Path(tempfile.mkdtemp(dir=folders)) / "build"
    build_release(REAL_RAW_DIR / "cogbench-samples", build)
    marker, manifest = json.loads((build / MARKER_FILE).read_text()), json.loads((build / "manifest.json").read_text())
    originals = {name: (build / name).read_bytes() for name in (MARKER_FILE, "manifest.json")}
    before = sorted(p.name for p in build.parent.iterdir())

    @EXAMPLES
    @given(
        st.sampled_from([MARKER_FILE, "manifest.json"]).flatmap(
            lambda name: st.tuples(st.just(name), contents(marker if name == MARKER_FILE else manifest))
        )
    )
    def check(case):
        name, data = case
        for original, value in originals.items():
            (build / original).write_bytes(value)
        (build / name).write_bytes(data)
        assert_documented(lambda: verify_build(build))
        assert_documented(lambda: check_replaceable(build))

    check()
    assert sorted(p.name for p in build.parent.iterdir()) == before  # nothing beside the build was touched
