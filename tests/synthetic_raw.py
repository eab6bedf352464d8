"""A small raw-data folder in the authors' exact formats, made from scratch.

It stands in for ``../shared/data`` where that is absent and gives mutation
tests a cheap writable copy. Counts: 3 CogBench images, 6 questions, 4 CODIS
pairs over 3 images.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

from PIL import Image

REASONING_KEYS = (
    "Special Time Reasoning",
    "Location Reasoning",
    "Character Reasoning",
    "Character Relationship Reasoning",
    "Event Reasoning",
    "Event Relationship Reasoning",
    "Next Moment Event Reasoning",
    "Mental State Reasoning",
)


def _jpeg(color: tuple[int, int, int], size=(48, 32)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, color).save(buffer, format="JPEG", quality=90)
    return buffer.getvalue()


def write_json(path: Path, data) -> None:
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")


def write_synthetic_raw(root: Path) -> Path:
    cogbench = root / "cogbench-samples"
    codis = root / "codis"
    (cogbench / "images").mkdir(parents=True)
    (codis / "images").mkdir(parents=True)

    description = {}
    for number, image_id in enumerate(("kitchen", "street", "park")):
        (cogbench / "images" / f"{image_id}.jpg").write_bytes(_jpeg((40 * number, 100, 200)))
        record = {"Image Name": f"{image_id}.jpg", "Entities": ["woman", "boy", f"thing{number}"]}
        for key in REASONING_KEYS:
            record[key] = ["None"]
        record["Location Reasoning"] = [
            f"There is a sink {number}. + There are cabinets. -> The people are in place {number}."
        ]
        record["Event Reasoning"] = [
            f"The boy climbs {number}. -> The boy steals cookies {number}.",
            f"The woman washes dishes {number}. + The water runs. -> The sink overflows {number}.",
        ]
        record["Description"] = [f"A woman and a boy are in place {number}. The boy steals cookies {number}."]
        description[image_id] = record
    write_json(cogbench / "cogbench_description.json", description)

    vqa = []
    for number, image_id in enumerate(("kitchen", "street", "park")):
        for category, answer in (("location", "A"), ("event", "C")):
            vqa.append(
                {
                    "question": f"What is happening in picture {image_id} ({category})?",
                    "choice_a": f"Option one {number}.",
                    "choice_b": f"Option two {number}.",
                    "choice_c": f"Option three {number}.",
                    "choice_d": f"Option four {number}.",
                    "answer": answer,
                    "img_id": image_id,
                    "category": category,
                }
            )
    write_json(cogbench / "cogbench_vqa.json", vqa)

    pairs = []
    categories = ("Location and Orientation", "Temporal Information", "Cultural Background", "Attributes")
    for number, category in enumerate(categories):
        image_name = f"{number % 3:010d}.jpg"
        (codis / "images" / image_name).write_bytes(_jpeg((200, 30 * number, 60)))
        pairs.append(
            {
                "id": f"{number:03d}",
                "image_id": image_name,
                "question": f"Is it morning or evening in scene {number}?",
                "context": {"context_1": f"The sun is rising {number}.", "context_2": f"The sun is setting {number}."},
                "answer": {"answer_1": "Morning.", "answer_2": "Evening."},
                "category": category,
            }
        )
    write_json(codis / "data.json", pairs)
    return root
