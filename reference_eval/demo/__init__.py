"""Stand-ins for trying cogbench with no real model or judge at hand; the tests use the same code.

- ``tiny_model``: a random-weight LLaVA with Qwen2.5-VL's tokenizer and chat template (``cogbench demo tiny-model``).
- ``stand_in_server``: a real local OpenAI-compatible server answering one text (``cogbench demo server``).
- ``cli``: the ``cogbench demo`` commands.
"""
