"""Running a config: the `eval` runner, its one-writer lock, provenance of what made a score, coverage labels (PARTIAL, SAMPLE), progress lines."""
