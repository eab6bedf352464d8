"""The invariance probe's pieces in process: the variants' pixels, the scores from hand-worked items, the
flip rate's interval coverage, the predictions' variant fields and the option's one-line error."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

from cogbench.errors import UsageError
from cogbench.reference_eval.formats.predictions import Prediction, read_predictions
from cogbench.reference_eval.metrics import intervals, small_sample
from cogbench.reference_eval.metrics.intervals import units_from_details
from cogbench.reference_eval.tasks import image_variants
from cogbench.reference_eval.tasks.image_variants import VARIANTS, parse_variants, variant_bytes
from cogbench.reference_eval.tasks.queries import Query


def _png(pixels: list[list[tuple[int, int, int]]]) -> dict:
    image = Image.new("RGB", (len(pixels[0]), len(pixels)))
    for y, row in enumerate(pixels):
        for x, value in enumerate(row):
            image.putpixel((x, y), value)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return {"bytes": buffer.getvalue(), "path": None}


def _decoded(name: str, value: dict) -> Image.Image:
    return Image.open(io.BytesIO(variant_bytes(name, value)[0])).convert("RGB")


GRID = [[(10 * x, 10 * y, 7) for x in range(5)] for y in range(4)]  # 5 wide, 4 high, every pixel its own


def test_shift2_moves_the_content_two_pixels_and_repeats_the_edge():
    shifted = _decoded("shift2", _png(GRID))
    assert shifted.size == (5, 4)
    for y in range(4):
        for x in range(5):  # pixel (x, y) shows what was at (x - 2, y - 2), the edge where that falls outside
            assert shifted.getpixel((x, y)) == GRID[max(y - 2, 0)][max(x - 2, 0)], (x, y)


def test_gamma08_maps_each_value_by_hand_worked_values():
    row = [[(0, 64, 128), (255, 0, 0)]]
    out = _decoded("gamma08", _png(row))
    # 255 (64/255)^0.8 = 84.38 -> 84; 255 (128/255)^0.8 = 146.93 -> 147; 0 and 255 stay
    assert out.getpixel((0, 0)) == (0, 84, 147) and out.getpixel((1, 0)) == (255, 0, 0)


def test_pad5_and_crop5_keep_the_size_and_pad_with_grey():
    value = _png([[(200, 10, 10)] * 40 for _ in range(20)])  # 40 x 20: margins of 1 (x) and 0 or 1 (y) pixels
    padded = _decoded("pad5", value)
    assert padded.size == (40, 20) and padded.getpixel((0, 10)) == (128, 128, 128)
    assert padded.getpixel((20, 10)) == (200, 10, 10)
    assert _decoded("crop5", value).size == (40, 20)


@pytest.mark.parametrize("name", list(VARIANTS))
def test_every_variant_is_bit_reproducible_and_keeps_the_size(name):
    value = _png([[((7 * x + 3 * y) % 256, (5 * x) % 256, (11 * y) % 256) for x in range(24)] for y in range(16)])
    first, mime = variant_bytes(name, value)
    assert variant_bytes(name, value)[0] == first  # no randomness: the same bytes again
    assert mime == ("image/jpeg" if name.startswith("jpeg") else "image/png")
    assert Image.open(io.BytesIO(first)).size == (24, 16)
    assert image_variants.variant_sha256(name, value) == __import__("hashlib").sha256(first).hexdigest()


def test_the_option_refuses_unknown_repeated_and_meaning_changing_variants():
    assert parse_variants("jpeg75,shift2") == ("jpeg75", "shift2")
    with pytest.raises(UsageError, match="not meaning-preserving .*left and right"):
        parse_variants("jpeg75,flip")
    with pytest.raises(UsageError, match="'blur9': not a variant; choose from jpeg75, jpeg30"):
        parse_variants("blur9")
    with pytest.raises(UsageError, match="named twice"):
        parse_variants("jpeg30,jpeg30")


def test_variant_queries_have_keys_of_their_own_and_name_their_variant():
    plain, shown = Query("q1", None, 0, "p"), Query("q1", None, 0, "p", variant="jpeg30")
    assert plain.key != shown.key and shown.name == "item q1 variant jpeg30" and plain.name == "item q1"


def test_a_plain_prediction_line_is_unchanged_and_a_variant_line_reads_back(tmp_path):
    plain = Prediction("vqa", "q1", "A")
    assert "variant" not in json.loads(plain.to_json())
    shown = Prediction("vqa", "q1", "B", variant="shift2", variant_image={"sha256": "ab" * 32, "pillow": "13.0.0"})
    path = tmp_path / "p.jsonl"
    path.write_text(plain.to_json() + "\n" + shown.to_json() + "\n")
    assert read_predictions(path) == [plain, shown]  # one key each: the variant tells them apart
    path.write_text(json.dumps({"task": "vqa", "item_id": "q1", "output": "A", "variant": "shift2"}) + "\n")
    with pytest.raises(UsageError, match="line 1.*field variant_image: not an object with the variant image's sha256"):
        read_predictions(path)


def _vqa(item, image, category, answer, extracted, entries):
    return {
        "item_id": item,
        "image_id": image,
        "category": category,
        "answer": answer,
        "extracted": extracted,
        "correct": extracted == answer,
        "correct_official": extracted == answer,
        "variants": [{"variant": n, "extracted": e, "correct": e == answer} for n, e in entries],
    }


def test_vqa_flip_rate_and_invariant_accuracy_from_hand_worked_items():
    details = [
        _vqa("q1", "i1", "event", "A", "A", [("jpeg30", "A"), ("shift2", "A")]),  # right, stable
        _vqa("q2", "i1", "event", "B", "B", [("jpeg30", "C"), ("shift2", "B")]),  # flips under jpeg30
        _vqa("q3", "i2", "location", "C", "D", [("jpeg30", "D"), ("shift2", None)]),  # wrong; no answer under shift2
        _vqa("q4", "i2", "location", "A", "A", [("jpeg30", "A")]),  # shift2 missing: not in the every-variant scores
    ]
    tables = intervals.metric_tables("vqa", details, ["event", "location"])
    pooled = {name: dict(zip(t.columns, t.pooled())) for name, t in tables.items()}
    assert pooled["flip_rate"]["overall"] == pytest.approx(100 * 2 / 3)  # q2, q3 of q1-q3
    assert pooled["accuracy_invariant"]["overall"] == pytest.approx(100 / 3)  # q1 only
    assert pooled["flip_rate_jpeg30"]["overall"] == 25.0  # q2 of four
    assert pooled["accuracy_jpeg30"]["overall"] == 50.0  # q1, q4
    assert pooled["flip_rate_shift2"]["overall"] == pytest.approx(100 / 3)  # q3 (D -> no answer) of three
    assert pooled["accuracy_shift2"]["overall"] == pytest.approx(200 / 3)
    assert pooled["flip_rate"]["event"] == 50.0 and pooled["flip_rate"]["location"] == 100.0
    assert "flip_rate" not in units_from_details("vqa", [{**d, "variants": []} for d in details])


def test_codis_scores_pairs_and_skips_missing_verdicts():
    def pair(item, base, under):
        return {
            "item_id": item,
            "image_id": "i" + item,
            "category": "cultural",
            "outputs_differ": True,
            "queries": [{"query": 1, "right": base[0]}, {"query": 2, "right": base[1]}],
            "variants": [{"variant": "jpeg75", "outputs": ["x", "y"], "rights": list(under)}],
        }

    details = [
        pair("1", (True, True), (True, False)),
        pair("2", (True, True), (True, True)),
        pair("3", (True, None), (False, False)),
    ]
    units = units_from_details("codis", details)
    assert [u.hits for u in units["acc_p_jpeg75"]] == [0.0, 1.0, 0.0]
    assert [u.hits for u in units["flip_rate_jpeg75"]] == [1.0, 0.0]  # pair 3's own verdict is missing
    assert [u.hits for u in units["acc_p_invariant"]] == [0.0, 1.0]
    assert [u.hits for u in units["flip_rate"]] == [1.0, 0.0]


def _flip_details(flips: np.ndarray) -> list[dict]:
    """Items (image k, item i) whose answer under jpeg30 flipped where ``flips[k, i]``."""
    return [
        _vqa(f"{k}-{i}", str(k), "event", "A", "A", [("jpeg30", "B" if flips[k, i] else "A")])
        for k in range(flips.shape[0])
        for i in range(flips.shape[1])
    ]


def test_the_flip_rate_interval_covers_the_true_rate_in_95_percent_of_draws():
    """Per-item flip probabilities known; 40 images drawn from a population of 400 (3 items each); the 95%
    interval scoring gives the pooled flip rate (Korn-Graubard over images) must cover the population's rate."""
    rng = np.random.default_rng(20250501)
    population, images, items = 400, 40, 3
    probability = rng.choice([0.02, 0.1, 0.3, 0.6], size=(population, items), p=[0.4, 0.3, 0.2, 0.1])
    truth = 100 * probability.mean()
    flips = rng.random((images, items)) < probability[rng.integers(0, population, images)]
    # scoring's own path (details -> units -> image table) gives the per-image hits the draws below use
    table = intervals.cluster_table(units_from_details("vqa", _flip_details(flips))["flip_rate"], [])
    order = np.argsort([int(c) for c in table.clusters])
    assert np.array_equal(table.hits[order, -1], flips.sum(axis=1)) and set(table.totals[:, -1]) == {items}
    draws, covered = 1000, 0
    for _ in range(draws):
        flips = rng.random((images, items)) < probability[rng.integers(0, population, images)]
        low, high = small_sample.korn_graubard(flips.sum(axis=1), np.full(images, items))
        covered += low <= truth <= high
    print(f"coverage {covered / draws:.3f} over {draws} draws")
    assert covered / draws >= 0.94, covered / draws


def test_an_unknown_variant_is_one_error_line_with_exit_2():
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "cogbench",
            "eval",
            "--task",
            "vqa",
            "--model",
            "openai:m",
            "--dataset",
            "x",
            "--image-variant",
            "jpeg75,hflip",
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .startswith("cogbench eval: error: argument --image-variant: hflip: not meaning-preserving")
    )
