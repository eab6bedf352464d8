"""Recognition Score of the CogBench Description task.

Definition (CogBench final paper, Section 3.2.1): extract the nouns of the
generated description with spaCy, embed the annotated [Entities] and the nouns
with sentence-transformers (all-mpnet-base-v2 in the paper), and count an
entity as recognised when its cosine similarity with any noun is greater than
0.6. The score is recognised entities / annotated entities over all images
(``recognition_micro``, the paper's number). ``recognition_macro``, the mean of
the per-image ratios, is reported beside it as an extra.

Every distinct string (entity or noun) is embedded once per run, in batches,
instead of once per image as the official script does; cosine similarity of
normalised vectors is a dot product.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cogbench.errors import UsageError
from cogbench.reference_eval.loading.model_checks import check_reloaded

if TYPE_CHECKING:  # for annotations only: spaCy and sentence-transformers load when a score needs them
    from sentence_transformers import SentenceTransformer
    from spacy.language import Language

# The paper's models (CogBench Section 3.2.1): `cogbench score`'s and `export`'s defaults.
PAPER_SPACY_MODEL = "en_core_web_sm"
PAPER_EMBEDDER = "sentence-transformers/all-mpnet-base-v2"
THRESHOLD = 0.6  # Section 3.2.1: "greater than a threshold (0.6 in this paper)"
NOUN_TAGS = ("NOUN", "PROPN")


@dataclass(frozen=True)
class EntityMatch:
    entity: str
    noun: str | None  # the most similar noun, None when the description has no nouns
    similarity: float
    recognized: bool


def load_noun_tagger(name_or_path: str) -> Language:
    """spaCy pipeline by package name or folder; a clear message when it is not installed or tags no POS."""
    import spacy

    try:
        nlp = spacy.load(name_or_path, exclude=["parser", "ner", "lemmatizer", "textcat"])
    except OSError as error:
        if _given_as_path(name_or_path):  # `spacy download` takes package names only
            fix = (
                "give --spacy-model a folder holding a spaCy pipeline (config.cfg, meta.json), or install the "
                "paper's by name: `python -m spacy download en_core_web_sm` and --spacy-model en_core_web_sm"
            )
        else:
            fix = f"install it with `python -m spacy download {name_or_path}` or pass --spacy-model PATH to a pipeline folder"
        raise UsageError(f"cannot load spaCy model {name_or_path!r} ({str(error).splitlines()[0]}); {fix}") from None
    check_pos_tagging(nlp, name_or_path)
    return nlp


def _given_as_path(name_or_path: str) -> bool:
    """A spaCy model given as a folder (it exists, or is written like a path): package names have no separator."""
    return os.sep in name_or_path or name_or_path.startswith((".", "~")) or os.path.exists(name_or_path)


def check_pos_tagging(nlp: Language, name_or_path: str) -> None:
    """The nouns come from ``token.pos_``: refuse a pipeline that sets no POS or whose tagger is not trained.

    A probe sentence goes through the pipeline: a missing tagger/morphologizer
    leaves every ``pos_`` empty, an untrained one raises or tags nothing useful.
    """
    probe = "The dog sleeps on the red sofa."
    try:
        tags = [token.pos_ for token in nlp(probe)]
    except Exception as error:  # an uninitialised component raises from thinc
        raise UsageError(
            f"{name_or_path}: spaCy pipeline {nlp.pipe_names} fails on a probe sentence "
            f"({type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''})"
        ) from None
    if not any(tag in NOUN_TAGS for tag in tags):
        raise UsageError(
            f"{name_or_path}: spaCy pipeline {nlp.pipe_names} finds no noun in {probe!r} "
            "(it needs a trained tagger + attribute_ruler or morphologizer that sets token.pos)"
        )


def load_embedder(name_or_path: str) -> SentenceTransformer:
    """sentence-transformers model by Hub name or folder; a clear message when it cannot be had."""
    from sentence_transformers import SentenceTransformer

    try:
        embedder = SentenceTransformer(name_or_path)
    except (OSError, ValueError) as error:
        raise UsageError(
            f"cannot load embedder {name_or_path!r} ({str(error).splitlines()[0] if str(error) else type(error).__name__}); "
            "it is downloaded from the Hugging Face Hub on first use (needs network, HF_HUB_OFFLINE unset), "
            "or pass --embedder PATH to a downloaded sentence-transformers folder"
        ) from None
    for module in embedder:
        if hasattr(module, "auto_model"):
            auto_model: Any = module.auto_model  # a transformers model (torch types it Tensor | Module)
            check_reloaded(auto_model, auto_model.name_or_path)
    return embedder


@dataclass(frozen=True)
class RecognitionModels:
    """The Recognition Score's two models, loaded, with the names or paths they were loaded from."""

    spacy_model: str
    embedder_name: str
    nlp: Any
    embedder: Any


def check_models(spacy_model: str, embedder: str) -> RecognitionModels:
    """Load the Recognition Score's two models now, through the loaders above, and return them.

    Called before the work that needs them (``eval --task description`` before
    its first query, ``export --format lmms-eval`` before writing, the exported
    task at import), so a missing model fails in the first seconds with the
    install command, not after every description has been generated. The caller
    that scores later hands them on, so each is loaded once per command.
    """
    return RecognitionModels(spacy_model, embedder, load_noun_tagger(spacy_model), load_embedder(embedder))


def normalize_noun(text: str) -> str:
    return " ".join(text.lower().strip(" \t\n.,;:!?\"'()[]").split())


# spaCy refuses a text over nlp.max_length (1,000,000 characters, E088): a longer description is
# tagged in pieces of at most this many, cut at a space (the tagger looks a few tokens around each).
PIECE_CHARACTERS = 100_000


def pieces(text: str, size: int = PIECE_CHARACTERS) -> list[str]:
    """``text`` cut into consecutive pieces of at most ``size`` characters, at a space where there is one."""
    cut_up = []
    while len(text) > size:
        cut = text.rfind(" ", 1, size)
        cut = size if cut < 1 else cut
        cut_up.append(text[:cut])
        text = text[cut:]
    return [*cut_up, text]


def extract_nouns(nlp: Language, descriptions: Sequence[str], batch_size: int = 32) -> list[list[str]]:
    """Per description: its NOUN and PROPN tokens, lower-cased, de-duplicated, in order of appearance."""
    seen: list[dict[str, None]] = [{} for _ in descriptions]
    parts = ((piece, index) for index, text in enumerate(descriptions) for piece in pieces(text))
    for doc, index in nlp.pipe(parts, batch_size=batch_size, as_tuples=True):
        for token in doc:
            if token.pos_ in NOUN_TAGS:
                noun = normalize_noun(token.text)
                if noun:
                    seen[index].setdefault(noun, None)
    return [list(nouns) for nouns in seen]


def embed_distinct(embedder: SentenceTransformer, strings: Iterable[str], batch_size: int = 64) -> dict[str, Any]:
    """Unit vectors for each distinct string, computed once, in batches."""
    distinct = list(dict.fromkeys(strings))
    if not distinct:
        return {}
    vectors = embedder.encode(
        distinct, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
    )
    return dict(zip(distinct, vectors))


def match_entities(entities: Sequence[str], nouns: Sequence[str], vectors: dict[str, Any]) -> list[EntityMatch]:
    """For each entity, its most similar noun and whether the similarity exceeds the threshold."""
    import numpy as np

    if not nouns:
        return [EntityMatch(entity, None, 0.0, False) for entity in entities]
    noun_matrix = np.stack([vectors[noun] for noun in nouns])
    matches = []
    for entity in entities:
        similarities = noun_matrix @ vectors[entity]
        best = int(np.argmax(similarities))
        similarity = float(similarities[best])
        matches.append(EntityMatch(entity, nouns[best], round(similarity, 6), similarity > THRESHOLD))
    return matches


def recognition_matches(
    nlp: Language,
    embedder: SentenceTransformer,
    entities_per_image: Sequence[Sequence[str]],
    descriptions: Sequence[str],
    batch_size: int = 64,
) -> list[list[EntityMatch]]:
    """The batched path: tag all descriptions, embed every distinct string once, then match."""
    nouns_per_image = extract_nouns(nlp, descriptions)
    strings = [e for entities in entities_per_image for e in entities] + [n for nouns in nouns_per_image for n in nouns]
    vectors = embed_distinct(embedder, strings, batch_size)
    return [match_entities(entities, nouns, vectors) for entities, nouns in zip(entities_per_image, nouns_per_image)]


def recognition_scores(matches_per_image: Sequence[Sequence[EntityMatch]]) -> dict[str, float | None]:
    """Micro (Section 3.2.1: over all images) and macro (mean per image) scores, in percent."""
    annotated = sum(len(matches) for matches in matches_per_image)
    recognized = sum(m.recognized for matches in matches_per_image for m in matches)
    ratios = [sum(m.recognized for m in matches) / len(matches) for matches in matches_per_image if matches]
    return {
        "recognition_micro": 100.0 * recognized / annotated if annotated else None,
        "recognition_macro": 100.0 * sum(ratios) / len(ratios) if ratios else None,
    }
