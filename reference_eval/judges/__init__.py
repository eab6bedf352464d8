"""Judges: decide whether one model output is right, one module per benchmark's judging rules.

- ``llm``: the LLM judge and its verdict cache, online or through request files.
- ``retirement``: a judge past its shutdown date, or not listed by its endpoint, refused before its first request.
- ``panel``: several judges on the same items: members, their endpoints and keys, the majority rule.
- ``vllm_judge``: an open-weight judge in the process, its verdict constrained, its identity recorded.
- ``constraints``: each official judge prompt's structured-output constraint.
- ``codis``: CODIS's judge prompt, reply parsing and offline rules.
- ``cognition``: CogBench's Cognition judge prompt, reply parsing and offline rules.
- ``codis_equality``: semantic equality of two CODIS outputs, asked of an LLM judge (output variability).
- ``verdicts``: a judge's reply read as a verdict (``tolerant``, ``official``, ``constrained``).
- ``offline``: the offline Cognition judges (ROUGE-L, BERTScore, NLI).
"""
