"""Model backends: each turns queries (prompt + image) into answers, one module per way of running a model.

- ``hf``: transformers models in the process.
- ``openai_chat``: any OpenAI-compatible endpoint, online or through request files.
- ``vllm_offline``: vLLM's offline ``LLM`` in the process, on ``openai_chat``'s conversations.
- ``openai_api``: the shared OpenAI-compatible client (plain ``httpcore``; ``chat_body``, the one request body).
- ``concurrency``: the client's adaptive limit of requests in flight.
- ``connections``: one connection per request in flight, through the proxy; replies read up to a cap.
- ``deadline``: each whole attempt ends at its timeout, however slowly the server sends.
- ``openai_replies``: a completion read as content, reasoning, finish reason and tokens.
- ``batch_files``: request files any engine runs (OpenAI Batch JSONL shards + manifest) and their output read back.
- ``hub``: is an ``hf:`` model on the Hub?
- ``model_list``: ``GET /models`` of an OpenAI-compatible endpoint.
"""
