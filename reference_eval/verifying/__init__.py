"""Verifying: every number of a finished run, details dataset, ``.eval_results`` file or EEE record re-derived
from its per-item details (``cogbench verify``), and the inputs other commands read only once verified."""
