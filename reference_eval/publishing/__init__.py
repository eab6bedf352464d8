"""Publishing: a run's results where the field collects them (``cogbench publish-results``).

- ``hub_results``: ``publish-results``: ``.eval_results/*.yaml`` per task and metric family, model-index, the pull request.
- ``details_dataset``: a run's per-item details as a Parquet dataset with its card.
- ``eee_records``: a run as an Every Eval Ever 0.3.0 record, written into the details dataset under ``eee/data/``.
- ``pr_audit``: what the model repo holds for each task on main and in open pull requests, before every pull request.
- ``cli``: ``publish-results``.
"""
