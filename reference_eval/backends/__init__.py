"""Model backends: each turns queries (prompt + image) into answers, one module per way of running a model.

``hf`` runs transformers models locally; ``openai_chat`` calls any OpenAI-compatible endpoint through ``openai_api``.
"""
