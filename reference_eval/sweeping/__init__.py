"""Sweeping: many models, one spec (``cogbench sweep``, docs/sweeps.md): cells cut into shards, run, merged, tracked.

- ``spec``: sweep.yaml read and checked against ``schemas/sweep.schema.json``, expanded into its cells, each once.
- ``layout``: the sweep folder's files (``SWEEP_FILES``), its plan and each cell's record read back.
- ``scoring_models``: the spec's ``description:`` block: the spaCy pipeline and embedder its description cells score with.
- ``plan``: ``sweep plan``: the cells' shards by item id, the folder written, the cost printed.
- ``launchers``: the Slurm array script and the Kubernetes Indexed Job that run one shard per index.
- ``execute``: ``sweep run`` and ``sweep run-shard``: each shard an ``eval`` restricted to its items, resumable.
- ``on_ray``: ``sweep run --ray``: one Ray task per shard not yet done, each run on a node as ``run-shard`` runs it.
- ``run_options``: ``sweep run``'s options (``--jobs``, ``--ray``, its resources) checked together; light, no Ray.
- ``running``: ``sweep run``'s one function, here or on Ray, for the command and ``cogbench.sweep`` alike.
- ``merge``: ``sweep merge``: shards checked as one run and verified, joined into the cell's run folder.
- ``shared_verdicts``: a judged cell's judge asked once: the shards' verdict caches given to its merged run.
- ``shard_removal``: ``sweep merge --remove-shards``: a merged cell's shard folders removed once it verifies.
- ``ledger``: ``sweep status``: each cell's state and items, in a SQLite file rebuilt from the run folders; the board's rows.
- ``sweep_api``: ``cogbench.sweep``: plan, run and merge from Python, on the commands' code path.
- ``cli``: ``sweep`` and its subcommands.
"""
