"""Output variability of a CODIS model (CODIS paper, Section 4.2, Table 4).

Each query is asked twice, with its context and without it (``cogbench eval
--task codis --no-context``); output variability is the share of queries whose
two outputs differ: (1/n_q) * sum_i (O_nc^i != O_c^i).

The paper judges "differ" by hand, on the semantic level. This module gives
the offline reading: the two extracted final answers differ after
normalisation (case, spaces, punctuation), the same comparison context
awareness uses (``metrics.codis.outputs_differ``), which is stricter about
wording than a person is. ``judges.codis_equality`` gives an LLM's semantic
judgement beside it.
"""

from __future__ import annotations

from cogbench.reference_eval.metrics.codis import outputs_differ


def output_changed(with_context: str, without_context: str) -> bool:
    """One query's term of the sum: its final answers with and without context differ."""
    return outputs_differ(with_context, without_context)
