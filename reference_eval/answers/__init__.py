"""What a model's reply answers: its final answer apart from its reasoning, and why it stopped.

- ``reasoning``: a reply's final answer apart from inline think blocks or a reasoning field, and its status (``answered``, ``cut``, ``truncated``, ``empty``).
- ``reply_details``: how each scored answer's reply is kept in details.jsonl, and the run's answer counts from them.
"""
