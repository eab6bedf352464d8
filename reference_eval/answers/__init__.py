"""What a model's reply answers: its final answer apart from its reasoning, and why it stopped."""
