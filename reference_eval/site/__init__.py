"""The static site of ``cogbench report --site``: the leaderboard, every item behind it, and a sweep's board.

- ``site_writer``: the folder, its data scripts, images by sha256, the Space's README (page, script, style: ``assets/``).
- ``leaderboard``: per task and metric: values with 95% intervals, rank sets, pairs tested, the papers' rows.
- ``significance``: Holm's correction across pairs and the lettered significance groups.
- ``items``: every item from the build with each run's answer, and the viewer's filter flags.
- ``board``: a sweep's board (``report SWEEP_DIR --site``): coverage, best settings, groups over verified cells.
- ``board_health``: a cell's model health (unparsed, truncated, empty, judge failures, latency) from its run.
"""
