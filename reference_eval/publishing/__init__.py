"""Publishing: a run's results where the field collects them (``cogbench publish-results``: ``.eval_results``
files, the details dataset, Every Eval Ever records) and the check of what a model repo already holds."""
