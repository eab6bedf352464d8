"""The release side: the dataset card (templates beside this file), versions and diffs, and publishing.

``release.build_release`` composes build, validation gate and card into one release folder; ``publish`` uploads it.
"""
