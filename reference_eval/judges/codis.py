"""The two CODIS judges: is one output right for its query's ground truth?

The metrics they feed (Acc_p, Acc_q) are defined in ``metrics.codis``.

- the paper's GPT-4 judge (Appendix G, Table 12), sent through ``LLMJudge``;
- ``rule``, offline: extract the final answer of the output and call it right
  when, by rapidfuzz, it is nearer to its own ground truth than to the pair's
  other one (ties are wrong: the output does not tell the contexts apart), and
  near enough to it at all (token-set ratio >= ``RULE_MIN_SIMILARITY``), so that
  an answer unrelated to both is not right by noise.
"""

from __future__ import annotations

from rapidfuzz import fuzz

from cogbench.reference_eval.judges.verdicts import judge_answer, parse_right_wrong
from cogbench.reference_eval.metrics.codis import final_answer, normalize_answer

# CODIS paper, Appendix G, Table 12 (verbatim; [..HERE] placeholders filled in
# by ``judge_prompt``).
JUDGE_PROMPT = (
    "Please evaluate the output of models based on the given question and groundtruth and tell me whether "
    "the output is right.\n"
    "Please pay attention to the following rules:\n"
    "1. The output contains rationale of the reasoning process and answer which is summarized from the "
    "reasoning process. Please extract the answer from the output and make your judgement only based on "
    "answer, NOT rationale.\n"
    "2. The answer is right if it follows the question in meaning and is consistent with the groundtruth.\n"
    "3. Do not be too strict about the answer. Format different from the groundtruth and minor grammar "
    "issues are allowed.\n"
    'If you think the answer is correct according to the groundtruth, please output "right", otherwise '
    'output "wrong". You can only print "right" or "wrong" and nothing else.\n'
    "Here is the question: [QUESTION HERE]\n"
    "Here is the groundtruth: [GROUNDTRUTH HERE]\n"
    "Here is the output: [OUTPUT HERE]"
)


RULE_MIN_SIMILARITY = 60.0


def judge_prompt(question: str, groundtruth: str, output: str) -> str:
    return (
        JUDGE_PROMPT.replace("[QUESTION HERE]", question)
        .replace("[GROUNDTRUTH HERE]", groundtruth)
        .replace("[OUTPUT HERE]", output)
    )


def parse_verdict(reply: str, mode: str = "tolerant") -> bool | None:
    """``right`` -> True, ``wrong`` -> False, unusable -> None (``verdicts.parse_right_wrong`` on the
    reply's final answer, ``verdicts.judge_answer``)."""
    answer = judge_answer(reply)
    return parse_right_wrong(answer, mode) if answer is not None else None


def rule_verdict(output: str, own_answer: str, other_answer: str) -> bool:
    """Right when the final answer is nearer to its own ground truth than to the other one.

    Nearness is rapidfuzz's token-set ratio, ties broken by the plain ratio, so
    "not appropriate" is told apart from "appropriate".
    """
    answer = normalize_answer(final_answer(output))

    def nearness(truth: str) -> tuple[float, float]:
        truth = normalize_answer(truth)
        return (fuzz.token_set_ratio(answer, truth), fuzz.ratio(answer, truth))

    own = nearness(own_answer)
    return own[0] >= RULE_MIN_SIMILARITY and own > nearness(other_answer)
