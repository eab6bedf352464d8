"""Running models on the configs and scoring them as the papers define.

Orchestration lives here (``cli``, ``runner`` for ``eval``, ``scoring`` for
``score``, ``report``, ``tasks`` and ``prompts``); the parts it wires together
live in one sub-package per role:

- ``backends/``: ways of running a model (one module per backend);
- ``judges/``: deciding whether an output is right (LLM judge, offline rules);
- ``metrics/``: the papers' scores, one module per metric, plus pooling;
- ``formats/``: prediction files, ours and the authors' official ones.
"""
