"""The static site of ``cogbench report --site``: leaderboard with significance groups, and every item behind it.

- ``site_writer``: the folder, its data scripts, images by sha256, the Space's README (page, script, style: ``assets/``).
- ``leaderboard``: per task and metric: values with 95% intervals, rank sets, pairs tested, the papers' rows.
- ``significance``: Holm's correction across pairs and the lettered significance groups.
- ``items``: every item from the build with each run's answer, and the viewer's filter flags.
"""
