"""The names of the files `cogbench score` writes, in a module of their own: the run folder's readers
(``run/folder``, and through it ``sweep status``) need the names without run_files' heavy imports."""

# Every file `cogbench score` writes in its --out (dataset_builders.output.claim_output).
RUN_FILES = (
    "scores.json",
    "details.jsonl",
    "report.md",
    "judge_cache.sqlite",
    # Temporaries of versions before dataset_builders/writes.py (what a crash of one left is still ours).
    "scores.json.partial",
    "details.jsonl.partial",
    "report.md.partial",
    "judge_cache.sqlite-*",
)
# Removed by the next score as write_with's temporaries are (remove_temporaries).
LEGACY_TEMPORARIES = ("scores.json.partial", "details.jsonl.partial", "report.md.partial")
