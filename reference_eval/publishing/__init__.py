"""Publishing: a run's results where the field collects them (Every Eval Ever records) and the check
of what a model repo already holds before a pull request adds to it."""
