"""Reports: finished runs shown to people (``cogbench compare``, ``cogbench report``), one module per view.

- ``summary``: the end-of-run table.
- ``compare``: two runs, paired.
- ``comparable``: when two runs may be compared (items, dataset, generation settings, judge).
- ``runs``: ``cogbench report`` over many runs: its tables and files.
- ``report_runs``: the runs loaded and labelled, their legends, descriptions and leaderboard.csv rows.
- ``report_charts``: which charts the runs get.
- ``tables``: the report's table cells ("best in column"), rendered to Markdown and HTML.
- ``charts``: drawing the charts.
- ``probe_sections``: the bias probes' sections (circular and blind scoring).
- ``published``: the papers' published numbers, from ``published_results.csv``.
- ``judge_agreement``: ``compare --judges``: two judges' scorings of the same answers; its tables and chart.
- ``gate``: ``compare --gate``: B against A with a bar on the drop, PASS or FAIL (a regression gate for CI).
- ``cli``: ``compare`` and ``report``.
"""
