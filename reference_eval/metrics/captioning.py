"""Traditional image-captioning metrics of the Description task (CogBench final paper, Appendix E, Table 7).

The paper follows Krause et al. (2017, image paragraph captioning), who score
with the COCO caption evaluation code: METEOR, CIDEr (the code's CIDEr-D) and
BLEU-1..4 of each generated description against the one annotated reference
``description`` of its image, after the code's Stanford PTB tokenizer
(lower-cased, punctuation removed). This module calls that code, as packaged
on PyPI (``pycocoevalcap``), unchanged. BLEU is corpus-level (the code's
``Bleu(4)`` returns the corpus score), CIDEr is the mean over images with IDF
taken over the scored images' references, METEOR is the code's aggregate.
Values are on the code's scale (0-1 for BLEU and METEOR, 0-10 for CIDEr), as in
Table 7.

The tokenizer and METEOR run Java: without a ``java`` on PATH this stops with
an error that says so, before any work is done.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping

from cogbench.errors import CogbenchError

# Table 7's column order and the names pycocoevalcap gives its scores.
CAPTIONING_METRICS = ("METEOR", "CIDEr", "Bleu_1", "Bleu_2", "Bleu_3", "Bleu_4")
COLUMN_LABEL = {
    "METEOR": "METEOR",
    "CIDEr": "CIDEr",
    "Bleu_1": "BLEU-1",
    "Bleu_2": "BLEU-2",
    "Bleu_3": "BLEU-3",
    "Bleu_4": "BLEU-4",
}


def require_java() -> str:
    """The ``java`` executable, or an error telling the user how to get one."""
    java = shutil.which("java")
    if java is None:
        raise CogbenchError(
            "captioning metrics (CogBench Appendix E) need a Java runtime for pycocoevalcap's PTB tokenizer "
            "and METEOR, and no `java` is on PATH; install one (Debian/Ubuntu: apt-get install -y "
            "default-jre-headless) or leave out --metrics captioning"
        )
    return java


def tokenize(texts: Mapping[str, str]) -> dict[str, list[str]]:
    """The COCO code's PTB tokenization of one text per id (newlines become spaces, as the code does)."""
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

    require_java()
    tokens: dict[str, list[str]] = PTBTokenizer().tokenize({key: [{"caption": text}] for key, text in texts.items()})
    return tokens


def captioning_scores(references: Mapping[str, str], candidates: Mapping[str, str]) -> dict[str, object]:
    """Table 7's six scores over the ids of ``candidates``, and each id's own scores.

    Returns ``{"overall": {metric: value}, "per_item": {id: {metric: value}}}``.
    An empty candidate is scored as the reference code scores it (zero on every
    metric, nothing added to the corpus but its reference); it is not left out.
    """
    from pycocoevalcap.bleu.bleu import Bleu
    from pycocoevalcap.cider.cider import Cider
    from pycocoevalcap.meteor.meteor import Meteor

    require_java()
    ids = [str(key) for key in candidates]
    missing = [key for key in ids if key not in references]
    if missing:
        raise CogbenchError(f"captioning metrics: no reference description for item(s) {', '.join(missing[:5])}")
    if not ids:
        raise CogbenchError("captioning metrics: nothing to score")
    gts = tokenize({key: references[key] for key in ids})
    res = tokenize({key: candidates[key] for key in ids})
    # An empty description goes to the code as it is: its METEOR is 0 and it adds only its reference's
    # length to the corpus statistics. A placeholder token would add a hypothesis word and change the
    # corpus METEOR of every other item.
    overall: dict[str, float] = {}
    per_item: dict[str, dict[str, float]] = {key: {} for key in ids}
    bleu, bleu_items = Bleu(4).compute_score(gts, res, verbose=0)
    for n in range(4):
        overall[f"Bleu_{n + 1}"] = float(bleu[n])
        for key, value in zip(ids, bleu_items[n]):
            per_item[key][f"Bleu_{n + 1}"] = float(value)
    cider, cider_items = Cider().compute_score(gts, res)
    overall["CIDEr"] = float(cider)
    for key, value in zip(ids, cider_items):
        per_item[key]["CIDEr"] = float(value)
    meteor_scorer = Meteor()  # one Java process; the wrapper ends it when the object goes
    meteor, meteor_items = meteor_scorer.compute_score(gts, res)
    del meteor_scorer
    overall["METEOR"] = float(meteor)
    for key, value in zip(ids, meteor_items):
        per_item[key]["METEOR"] = float(value)
    order = {name: i for i, name in enumerate(CAPTIONING_METRICS)}
    return {
        "overall": dict(sorted(overall.items(), key=lambda kv: order[kv[0]])),
        "per_item": {key: dict(sorted(v.items(), key=lambda kv: order[kv[0]])) for key, v in per_item.items()},
    }
