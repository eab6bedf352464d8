"""The static site of ``cogbench report --site``: leaderboard with significance groups, and every item behind it."""
