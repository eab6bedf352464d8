"""Meeting the evaluation harnesses people already run: exports for lmms-eval and VLMEvalKit.

Reading their outputs back is a prediction format (``formats/harness.py``).

- ``lmms_eval``: the lmms-eval task folder writer (the tasks read the data).
- ``lmms_eval_tasks``: the functions its ``utils*.py`` re-export, and ``task_docs`` for reading samples back.
- ``vlmevalkit``: VLMEvalKit's custom-MCQ TSV.
- ``cli``: ``export``.
"""
