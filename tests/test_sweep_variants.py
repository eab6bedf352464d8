"""The invariance probe as a sweep axis (``axes.image_variants``): each value a cell, named in its id, passed to its
shards' ``eval --image-variant``, merged with the variant predictions into a run that verifies and equals the
unsharded ``eval --image-variant`` of the cell byte for byte."""

from __future__ import annotations

import base64
import json

import pytest

from cogbench.cli import main
from cogbench.errors import UsageError
from cogbench.reference_eval.sweeping.spec import read_spec

from openai_server import Reply
from sweep_helpers import plan_and_run, write_spec

PLAIN = "vqa--m--thinking-auto--tokens-default--judge-default"


def test_the_axis_makes_cells_named_by_their_variants_and_none_for_descriptions(tmp_path):
    axes = {"image_variants": ["none", "jpeg30,shift2"]}
    spec = write_spec(tmp_path, tmp_path, [{"model": "openai:m"}], tasks=["vqa", "description"], axes=axes)
    cells = {cell.id: cell.image_variants for cell in read_spec(spec).cells}
    assert cells == {
        PLAIN: (),
        f"{PLAIN}--variants-jpeg30+shift2": ("jpeg30", "shift2"),
        "description--m--thinking-auto--tokens-default--judge-default": (),  # a description has no answer to flip
    }
    assert "image_variants" not in read_spec(spec).cells[0].record()  # plans without variants stay as they were


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("blur", "axes.image_variants[1]: 'blur': not a variant; choose from jpeg75"),
        ("flip", "axes.image_variants[1]: flip: not meaning-preserving (a horizontal flip swaps left and right"),
        ("jpeg30,jpeg30", "axes.image_variants[1]: 'jpeg30,jpeg30': a variant named twice"),
    ],
)
def test_a_value_eval_would_refuse_is_refused_in_one_line_naming_its_field(tmp_path, value, says):
    spec = write_spec(tmp_path, tmp_path, [{"model": "openai:m"}], axes={"image_variants": ["none", value]})
    with pytest.raises(UsageError) as caught:
        read_spec(spec)
    assert str(caught.value).startswith(f"{spec}: field ") and says in str(caught.value)


def reads_jpeg(request) -> Reply:
    """A model that answers A on a JPEG image (the build's, jpeg30) and B on a PNG one (shift2)."""
    part = next(p for p in request.messages[0]["content"] if p["type"] == "image_url")
    image = base64.b64decode(part["image_url"]["url"].split(",", 1)[1])
    return Reply(text="A" if image[:3] == b"\xff\xd8\xff" else "B")


def test_a_variant_cell_runs_merges_verifies_and_equals_its_unsharded_eval(
    openai_server, built_release, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    server = openai_server(reads_jpeg)
    models = [{"model": "openai:m", "base_url": server.base_url}]
    monkeypatch.chdir(tmp_path)
    axes = {"image_variants": ["none", "shift2"]}
    sweep = plan_and_run(main, capsys, tmp_path / "a", built_release, models, limit=3, axes=axes)
    sweep = sweep.relative_to(tmp_path)
    cell = f"{PLAIN}--variants-shift2"
    assert len(server.chat_requests) == 3 + 2 * 3  # the images, then the images and their shift2 variants
    assert main(["sweep", "status", str(sweep)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "cells: 0 queued, 0 running, 2 done, 0 failed, 0 missing"
    assert main(["sweep", "merge", str(sweep)]) == 0, capsys.readouterr().err
    run = sweep / "cells" / cell / "run"
    lines = [json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines()]
    assert [line.get("variant") for line in lines] == [None, "shift2"] * 3  # each item's, from both shards
    scores = json.loads((run / "score" / "scores.json").read_text())
    assert scores["image_variants"]["names"] == ["shift2"]
    assert scores["metrics"]["flip_rate_shift2"]["overall_partial"] == 100  # A on every image, B on every variant
    assert "image_variants" not in json.loads((sweep / "cells" / PLAIN / "run" / "score" / "scores.json").read_text())

    monkeypatch.chdir(tmp_path / "a")  # the same cell unsharded, to the same relative path from another folder
    argv = ["eval", "--task", "vqa", "--model", "openai:m", "--base-url", server.base_url, "--dataset"]
    argv += [str(built_release), "--limit", "3", "--image-variant", "shift2", "--out", str(run)]
    assert main(argv) == 0
    for name in ("score/scores.json", "score/details.jsonl", "run.json"):
        assert (tmp_path / "a" / run / name).read_bytes() == (tmp_path / run / name).read_bytes(), name
