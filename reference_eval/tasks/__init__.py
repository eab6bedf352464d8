"""Tasks: rows to queries (versioned prompts, one `Query` per model call) and the scorers that read the answers back: one scorer per task, and the bias probes (circular and blind scoring)."""
