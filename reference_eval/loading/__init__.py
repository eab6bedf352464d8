"""Checked model loading: every model a command loads (VLMs, embedders, NLI and BERTScore judges) is verified and described for provenance."""
