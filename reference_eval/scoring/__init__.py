"""The `score` command's pipeline (predictions -> judges -> metrics -> scores.json) and the papers' further measurements (analyses)."""
