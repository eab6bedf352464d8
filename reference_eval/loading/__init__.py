"""Checked model loading: every model a command loads is verified and described for provenance.

- ``model_checks``: missing or wrong-shape weights refuse the run (exit 2); folder, class, weights sha256, versions.
"""
