"""File formats of predictions: readers and writers only; nothing here runs a model or scores.

- ``predictions``: this project's predictions.jsonl.
- ``official``: the authors' official prediction files.
- ``harness``: lmms-eval ``--log_samples`` (each ``doc_id`` checked) and VLMEvalKit ``.xlsx``/``.tsv`` outputs.
"""
