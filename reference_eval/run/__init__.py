"""Running a config: ``cogbench eval``, from queries to predictions, and what its numbers cover.

- ``runner``: queries -> backend -> predictions, resumable (``_backend``: a new backend's branch).
- ``eval_command``: the parsed options as settings, the run, then its score.
- ``folder``: the run folder's files (``run.json`` checked on resume, per-rank shards, their merge).
- ``ranks``: data parallelism under torchrun.
- ``request_files``: ``--write-requests``: the queries ``--out`` still lacks as request files.
- ``completeness``: what a run's numbers cover (PARTIAL (n/N), SAMPLE) and failure lines.
- ``progress``: tqdm on a terminal, a plain line every 10 s elsewhere.
- ``lock``: one writer per run folder (and per request folder).
- ``provenance``: what made a score: package version, data read, prompts, judge, models, thresholds.
- ``cli``: the ``eval`` subcommand's options.
"""
