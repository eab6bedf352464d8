"""File formats of predictions: this project's JSONL (``predictions``) and the authors' official files (``official``).

Readers and writers only; nothing here runs a model or scores.
"""
