"""Reports: finished runs shown to people, one module per view.

``run`` (scores.json, details.jsonl, report.md of one run), ``summary`` (the end-of-run table), ``compare`` (two runs,
paired), ``runs`` (``cogbench report`` over many runs, with ``tables``, ``charts``, ``probes`` and the papers'
``published`` numbers).
"""
