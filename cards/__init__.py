"""The release side: the dataset card (templates beside this file), versions and diffs, and publishing.

- ``card``: the card rendered from the templates and the manifest.
- ``versions``: diff of two builds, the version bump, the changelog.
- ``errata``: the fields a new build changed, old and new value and reason (``diff --errata``, ``build --errata``).
- ``release``: ``build_release``: build + validation gate + card into one release folder.
- ``publish``: upload a release to the Hub as a tagged version.
- ``cli``: ``build``, ``diff`` and ``publish``.
"""
