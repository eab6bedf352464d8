"""Metrics: the papers' scores, one module per paper metric, each citing the section that defines it.

They turn verdicts and extracted answers into numbers; ``aggregate`` pools them overall and per category.
"""
