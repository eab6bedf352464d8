"""Stand-ins for trying cogbench with no real model or judge at hand: ``cogbench demo tiny-model`` (a random-weight
LLaVA) and ``cogbench demo server`` (a local OpenAI-compatible server answering one text). The tests use the same code."""
