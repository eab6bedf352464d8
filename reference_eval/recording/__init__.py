"""Recording: a run folder's own files, written (scores.json, details.jsonl, report.md) and read back
schema-checked, and what kind of run a record describes."""
