"""Record-level checks on the builder's typed records: chains of reasoning,
four options, paired contexts and identity. Each returns findings; the
release-level ones also return statistics for the report.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from statistics import mean, median

from rapidfuzz import fuzz

from cogbench.schemas.text import comparison_key, visible
from cogbench.schemas.vocabulary import ANSWER_LETTERS, CHOICE_COLUMNS, COGBENCH_CATEGORIES, ID_COLUMN
from cogbench.validation.findings import Finding, finding

NEAR_DUPLICATE_RATIO = 95  # rapidfuzz ratio (0-100) at which two options are near-duplicates
ANSWER_SKEW_P = 0.01  # chi-square p-value below which the answer letters are "far from uniform"
LENGTH_OUTLIER_FACTOR = 2.0  # correct option >= 2x or <= 1/2 of the distractors' mean length
_FINAL_PUNCTUATION = re.compile(r"[\s.,;:!?。，！？]+$")


def normalise(text: str) -> str:
    """``text.comparison_key`` (Unicode form, invisibles, case, spaces) without final punctuation:
    how options, questions, contexts and answers are compared."""
    return _FINAL_PUNCTUATION.sub("", comparison_key(text))


def chi_square_sf(statistic: float, degrees: int) -> float:
    """P(X >= statistic) for a chi-square variable with integer degrees of freedom.

    Closed form of the regularised upper incomplete gamma function for integer
    and half-integer shape, so the check needs no scipy.
    """
    half = statistic / 2.0
    if degrees % 2 == 0:
        term, total = 1.0, 1.0
        for i in range(1, degrees // 2):
            term *= half / i
            total += term
        return math.exp(-half) * total
    total = math.erfc(math.sqrt(half))
    term = math.sqrt(half) / math.gamma(1.5)
    for i in range(1, (degrees + 1) // 2):
        total += math.exp(-half) * term
        term *= half / (i + 0.5)
    return min(1.0, total)


# ------------------------------------------------------------------ CoR


def check_cors(shown: str, records: list) -> list[Finding]:
    """Within-image duplicates and circular chains (CogBench final paper, Appendix A / Figure 6)."""
    found = []
    for record in records:
        first_chain, first_conclusion = {}, {}
        for category in COGBENCH_CATEGORIES:
            for index, chain in enumerate(record.cors[category]):
                where = f"cors.{category}[{index}]"
                premises = [normalise(p) for p in chain.premises]
                conclusion = normalise(chain.conclusion)
                repeated = [p for p, n in Counter(premises).items() if n > 1]
                if repeated:
                    found.append(
                        finding(
                            "cor.duplicate_premise",
                            shown,
                            record.image_id,
                            where,
                            f"premise {repeated[0]!r} appears twice",
                        )
                    )
                if conclusion in premises:
                    found.append(
                        finding(
                            "cor.conclusion_is_premise",
                            shown,
                            record.image_id,
                            where,
                            f"conclusion {chain.conclusion!r} repeats a premise",
                        )
                    )
                key = (tuple(premises), conclusion)
                if key in first_chain:
                    found.append(
                        finding(
                            "cor.duplicate_chain", shown, record.image_id, where, f"same chain as {first_chain[key]}"
                        )
                    )
                    continue
                first_chain[key] = where
                if conclusion in first_conclusion:
                    found.append(
                        finding(
                            "cor.duplicate_conclusion",
                            shown,
                            record.image_id,
                            where,
                            f"conclusion {chain.conclusion!r} also ends {first_conclusion[conclusion]}",
                        )
                    )
                else:
                    first_conclusion[conclusion] = where
    return found


# -------------------------------------------------------------- options


def check_options(shown: str, records: list, described_images: set[str] | None) -> tuple[list[Finding], dict]:
    """Four distinct non-empty options per question, and release-level answer balance.

    The length check follows the question-generation prompt of the CogBench
    final paper (Figure 7), which asks that the correct option be neither much
    longer nor much shorter than the distractors.
    """
    found = []
    for record in records:
        rid = record.question_id
        if described_images is not None and record.image_id not in described_images:
            found.append(
                finding(
                    "options.unknown_image",
                    shown,
                    rid,
                    "img_id",
                    f"image id {record.image_id!r} has no description record",
                )
            )
        normalised = [normalise(choice) for choice in record.choices]
        for column, choice in zip(CHOICE_COLUMNS, record.choices):
            if not visible(choice).strip():
                found.append(finding("options.empty", shown, rid, column, "option is empty"))
        for i in range(4):
            for j in range(i + 1, 4):
                if not normalised[i] or not normalised[j]:
                    continue
                pair = f"{CHOICE_COLUMNS[i]}/{CHOICE_COLUMNS[j]}"
                if normalised[i] == normalised[j]:
                    found.append(
                        finding("options.duplicate", shown, rid, pair, f"options are equal: {record.choices[i]!r}")
                    )
                elif (score := fuzz.ratio(normalised[i], normalised[j])) >= NEAR_DUPLICATE_RATIO:
                    found.append(
                        finding(
                            "options.near_duplicate",
                            shown,
                            rid,
                            pair,
                            f"ratio {score:.1f}: {record.choices[i]!r} ~ {record.choices[j]!r}",
                        )
                    )
        correct = ANSWER_LETTERS.index(record.answer)
        distractor_mean = mean(len(c) for k, c in enumerate(record.choices) if k != correct)
        ratio = len(record.choices[correct]) / distractor_mean if distractor_mean else float("inf")
        if ratio >= LENGTH_OUTLIER_FACTOR or ratio <= 1 / LENGTH_OUTLIER_FACTOR:
            found.append(
                finding(
                    "options.length_outlier",
                    shown,
                    rid,
                    CHOICE_COLUMNS[correct],
                    f"correct option is {ratio:.2f}x the distractors' mean length",
                )
            )
    letters = Counter(record.answer for record in records)
    observed = [letters.get(letter, 0) for letter in ANSWER_LETTERS]
    stats = {"answers": dict(zip(ANSWER_LETTERS, observed))}
    if records:
        expected = len(records) / 4
        statistic = sum((n - expected) ** 2 / expected for n in observed)
        p_value = chi_square_sf(statistic, 3)
        stats.update(chi_square=round(statistic, 4), p_value=p_value)
        stats["summary"] = f"answers {stats['answers']}, chi-square {statistic:.3f} (3 df), p = {p_value:.4g}"
        if p_value < ANSWER_SKEW_P:
            found.append(finding("options.answer_skew", shown, None, "answer", stats["summary"]))
    return found, stats


# ---------------------------------------------------------------- pairs


def check_pairs(shown: str, records: list) -> tuple[list[Finding], dict]:
    """CODIS pairs: two different contexts that lead to two different answers
    (CODIS paper, Section 3: a pair whose answers agree cannot test context use)."""
    found, similarity = [], {}
    for record in records:
        for column in ("context_1", "context_2", "answer_1", "answer_2"):
            if not visible(getattr(record, column)).strip():
                found.append(finding("pairs.empty", shown, record.id, column, f"{column} is empty"))
        if normalise(record.context_1) == normalise(record.context_2):
            found.append(
                finding("pairs.same_context", shown, record.id, "context", f"both contexts read {record.context_1!r}")
            )
        if normalise(record.answer_1) == normalise(record.answer_2):
            found.append(
                finding("pairs.same_answer", shown, record.id, "answer", f"both answers read {record.answer_1!r}")
            )
        similarity[record.id] = round(fuzz.ratio(record.context_1, record.context_2), 1)
    stats = {"per_pair": similarity}
    if similarity:
        top = sorted(similarity.items(), key=lambda item: -item[1])[:5]
        values = list(similarity.values())
        stats["summary"] = (
            f"context similarity (rapidfuzz ratio) min {min(values)}, median {median(values)}, max {max(values)}; "
            f"most similar: {', '.join(f'{pid} ({score})' for pid, score in top)}"
        )
    return found, stats


# -------------------------------------------------------------- identity


def check_identity(config: str, shown: str, records: list) -> list[Finding]:
    """Unique ids; no question asked twice about one image.

    CODIS asks some questions twice on one image with different contexts by
    design (45 such pairs in CODIS 1.0); only a repeat with the same contexts
    is an error there.
    """
    found, seen_ids = [], {}
    id_column = ID_COLUMN[config]
    for position, record in enumerate(records):
        record_id = getattr(record, id_column)
        key = comparison_key(record_id)  # "a1", "A1 " and "a\u200b1" are one id
        if key in seen_ids:
            found.append(
                finding(
                    "identity.duplicate_id",
                    shown,
                    record_id,
                    id_column,
                    f"id already used by the record at position {seen_ids[key]}",
                )
            )
        else:
            seen_ids[key] = position
    if config == "description":
        return found
    by_question = defaultdict(list)
    for record in records:
        by_question[(record.image_id, normalise(record.question))].append(record)
    for group in by_question.values():
        for later in group[1:]:
            first = group[0]
            later_id = getattr(later, id_column)
            if config == "codis" and normalise(first.context_1 + "\n" + first.context_2) != normalise(
                later.context_1 + "\n" + later.context_2
            ):
                found.append(
                    finding(
                        "identity.repeated_question",
                        shown,
                        later_id,
                        "question",
                        f"also asked in {first.id} with other contexts",
                    )
                )
            else:
                found.append(
                    finding(
                        "identity.duplicate_question",
                        shown,
                        later_id,
                        "question",
                        f"same question for image {later.image_id!r} as {getattr(first, id_column)}",
                    )
                )
    return found
