"""Verifying: every number of a finished run re-derived from its per-item details (``cogbench verify``).

- ``verify``: scores.json, report.md and ``.eval_results`` recomputed from the details; differences with their items.
- ``verify_result``: what it found: equal, differing, and the fields only stated.
- ``verify_rederive``: counts, coverage, interval settings, hashes, judge identity, analyses re-derived.
- ``verify_panel``: a judge panel's verdicts, members' scores and agreement re-derived.
- ``verify_sources``: run.json against predictions.jsonl, and with ``--dataset`` ids and answers against the build.
- ``verify_variants``: the invariance probe's entries against their predictions, and their images made again from the build.
- ``item_checks``: the fields of a details line that follow from its others, to name the items behind a difference.
- ``result_source``: an ``.eval_results`` file's details downloaded from the configured Hub only.
- ``eee_check``: ``verify RECORD.json``: an EEE record's score, interval and counts re-derived from its own rows.
- ``run_inputs``: what ``report --site`` and ``explain`` read: run folders, details datasets, ``.eval_results``, verified.
- ``cli``: ``verify``.
"""
