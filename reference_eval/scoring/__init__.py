"""Scoring: the ``score`` command's pipeline (predictions -> judges -> metrics -> scores.json).

- ``pipeline``: predictions -> judges -> metrics -> scores, written through ``recording``.
- ``options``: its options (``ScoreOptions``).
- ``judge_setup``: the judge from the options, their rules, its liveness check and request files.
- ``analyses``: the papers' further measurements.
- ``variant_scoring``: the invariance probe: each image variant's answers scored and kept on the items.
"""
