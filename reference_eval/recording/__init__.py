"""Recording: a run folder's own files, written and read back, and what kind of run a record describes.

- ``run_files``: scores.json, details.jsonl and report.md written (``write_run``).
- ``file_names``: the names of the files ``score`` writes (``RUN_FILES``), light for the folder readers.
- ``panel_text``: report.md's "Judge panel" section.
- ``run_reader``: ``read_run``: the one reader of a run folder, schema-checked and recomputed from details.jsonl.
- ``run_kind``: a run's description mode, judge and parsing mode, as reports, charts and ``compare`` name them.
"""
