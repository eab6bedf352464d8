"""The ``vllm:`` judge (issue 40 item 1) where vLLM is not needed: its spec, the one-line refusal where
vLLM is missing (a panel member alike), the structured-output constraint of each official prompt (every reply it allows reads
as the same verdicts in both parsing modes), and the judge's identity (weights sha256 by hand)."""

from __future__ import annotations

import hashlib
import itertools
import re
from importlib.util import find_spec

import pytest

from cogbench.cli import main
from cogbench.errors import UsageError
from cogbench.reference_eval.judges import codis as codis_judge
from cogbench.reference_eval.judges import cognition as cognition_judge
from cogbench.reference_eval.judges import vllm_judge
from cogbench.reference_eval.judges.panel import parse_member, parse_members

from shared_files import codis_example


def test_spec_splits_a_hub_revision():
    assert vllm_judge.split_spec("Qwen/Qwen2.5-72B-Instruct@abc123") == ("Qwen/Qwen2.5-72B-Instruct", "abc123")
    assert vllm_judge.split_spec("/models/judge") == ("/models/judge", None)
    with pytest.raises(UsageError, match="vllm:ORG/NAME@REVISION"):
        vllm_judge.split_spec("org/name@")


@pytest.mark.skipif(find_spec("vllm") is not None, reason="vllm is installed here")
@pytest.mark.parametrize("judges", [["vllm:/models/judge"], ["rule", "vllm:/models/judge"]], ids=["alone", "panel"])
def test_without_vllm_the_judge_is_refused_in_one_line_before_any_work(built_release, tmp_path, capsys, judges):
    argv = ["score", "--task", "codis", "--dataset", str(built_release), "--predictions", str(codis_example())]
    argv += [w for judge in judges for w in ("--judge", judge)] + ["--judge-engine-arg", "dtype=float32"]
    assert main([*argv, "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --judge vllm: needs vllm installed") and err.count("\n") == 1
    assert not (tmp_path / "run").exists()


def test_a_panel_member_may_be_an_in_process_vllm_judge_its_at_a_revision_not_an_endpoint():
    member = parse_member("vllm:org/judge@abc123", "http://default/v1", "description")
    assert (member.name, member.kind, member.model, member.base_url) == (
        "vllm:org/judge@abc123",
        "vllm",
        "org/judge@abc123",
        None,
    )
    with pytest.raises(UsageError, match="vllm:ORG/NAME@REVISION"):
        parse_member("vllm:org/judge@", None, "codis")
    with pytest.raises(UsageError, match="given twice"):
        parse_members(["vllm:/models/judge", "rule", "vllm:/models/judge"], None, "codis")


def test_the_codis_constraint_is_the_official_labels_read_alike_in_both_modes():
    prompt = codis_judge.judge_prompt("Where is it?", "left", "On the left.")
    assert vllm_judge.constraint(prompt) == {"choice": ["right", "wrong"]}
    for label in ("right", "wrong"):
        assert codis_judge.parse_verdict(label, "official") is codis_judge.parse_verdict(label, "tolerant")


@pytest.mark.parametrize("figure", [8, 9])
def test_the_cognition_constraint_allows_exactly_the_numbered_verdicts(figure):
    make = cognition_judge.figure8_prompt if figure == 8 else cognition_judge.figure9_prompt
    prompt = make("A boy in the snow.", ["The boy is happy.", "It is winter.", "He plays."])
    pattern = re.compile(vllm_judge.constraint(prompt)["regex"])
    for verdicts in itertools.product((0, 1), repeat=3):
        reply = " ".join(f"{n}. [{v}]" for n, v in enumerate(verdicts, 1))
        assert pattern.fullmatch(reply)
        for mode in ("official", "tolerant"):
            assert cognition_judge.parse_verdicts(reply, 3, mode) == list(verdicts)
    for wrong in ("1. [1] 2. [0]", "1. [1] 2. [2] 3. [0]", "1. [1] 2. [0] 3. [0] 4. [1]", "right"):
        assert not pattern.fullmatch(wrong)
    assert vllm_judge.constraint("Is the answer the same?") is None  # an analysis' own prompt: free


def test_identity_names_the_folder_and_its_weights_by_sha256(tmp_path):
    folder = tmp_path / "judge"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(b"weights-a")
    (folder / "config.json").write_text("{}")
    found = vllm_judge.identity(str(folder), None, "0.32.0")
    inner = hashlib.sha256(b"weights-a").hexdigest()
    expected = hashlib.sha256(f"model.safetensors\0{inner}\n".encode()).hexdigest()
    assert found["folder"] == str(folder.resolve()) and found["weights_sha256"] == expected
    assert found["engine"] == "vllm" and found["engine_version"] == "0.32.0"
    assert found["sampling"]["temperature"] == 0.0
    hub = vllm_judge.identity("no-such-org/no-such-judge", "v1", None)
    assert (hub["repo"], hub["revision"], hub["commit"], hub["weights_sha256"]) == (
        "no-such-org/no-such-judge",
        "v1",
        None,
        None,
    )
