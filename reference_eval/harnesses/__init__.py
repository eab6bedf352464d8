"""Meeting the evaluation harnesses people already run: exports for lmms-eval and VLMEvalKit.

Reading their outputs back is a prediction format (``formats/harness.py``).
"""
