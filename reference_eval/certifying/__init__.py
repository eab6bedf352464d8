"""Certifying: judges as a whole (``cogbench judges``). Deciding one verdict is ``judges/``.

- ``verdict_archive``: one model's verdicts by one judge, from a run folder or a Parquet verdict archive.
- ``certify``: may a candidate judge replace the retired official one (kappa, prevalence, score moves, PASS/FAIL).
- ``human_anchor``: people's labels joined to runs' verdicts; ``judges validate``'s figures and certify's human anchor.
- ``anchor_text``: the people's-labels figures as Markdown (``judges validate``, the certificate's human anchor).
- ``certificate_text``: the certificate's Markdown and a block for a dataset or model card.
- ``certificate_report``: ``report --certificate``: the certificate re-derived before use, and report's section.
- ``cli``: ``judges certify``, ``judges validate`` and ``judges archive``.
"""
