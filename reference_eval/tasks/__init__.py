"""Tasks: rows to queries, and the scorers that read the answers back.

- ``prompts``: the template each task runs with (the templates themselves: ``schemas/prompt_templates``).
- ``image_variants``: the invariance probe's fixed Pillow transforms (``eval --image-variant``).
- ``queries``: rows -> ``Query`` (one model call), and the ``Answer`` a backend returns.
- ``scorers``: one scorer per task (``SCORERS``): answers -> details lines and scores.
- ``probes``: the bias probes (circular and blind scoring).
"""
