"""Judges: decide whether one model output is right, one module per benchmark's judging rules.

``llm`` sends prompts to an LLM judge (with its verdict cache); ``codis`` and ``cognition`` hold each paper's judge prompt, reply parsing and offline rules.
"""
