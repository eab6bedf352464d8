"""Why does my number differ? Two scorings explained stage by stage (``cogbench explain``), a run beside the papers."""
