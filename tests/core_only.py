"""Run ``cogbench ARGS...`` as on the core install (README command 1), in this venv.

Every module of an installed distribution that the core requirements of
cogbench-codis do not pull in (their closure, extras of requirements included)
is hidden from the import system, so ``import scipy`` fails exactly as where it
was never installed, and ``importlib.util.find_spec`` answers None as there.
Used as a script: ``python tests/core_only.py score --task vqa ...``.
"""

from __future__ import annotations

import re
import sys
from importlib import metadata

from packaging.requirements import Requirement


def _key(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def core_distributions() -> set[str]:
    """cogbench-codis and what its core requirements pull in, transitively."""
    seen: set[tuple[str, frozenset]] = set()

    def visit(name: str, extras: set[str]) -> None:
        try:
            requirements = metadata.distribution(name).requires or []
        except metadata.PackageNotFoundError:
            return
        for text in requirements:
            requirement = Requirement(text)
            marker = requirement.marker
            if marker and not any(marker.evaluate({"extra": extra}) for extra in (extras or {""})):
                continue
            key = (_key(requirement.name), frozenset(requirement.extras))
            if key not in seen:
                seen.add(key)
                visit(requirement.name, requirement.extras)

    visit("cogbench-codis", set())
    return {name for name, _ in seen} | {"cogbench-codis"}


def hidden_modules() -> set[str]:
    """Top-level modules installed here only by distributions outside the core install."""
    core = core_distributions()
    return {
        module
        for module, dists in metadata.packages_distributions().items()
        if not any(_key(dist) in core for dist in dists) and module not in sys.stdlib_module_names
    }


class _Hide:
    """Wraps one import finder: hidden modules are not found; everything else as before."""

    def __init__(self, inner, hidden: set[str]):
        self.inner, self.hidden = inner, hidden

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in self.hidden or not hasattr(self.inner, "find_spec"):
            return None
        return self.inner.find_spec(name, path, target)

    def find_distributions(self, *args, **kwargs):
        return self.inner.find_distributions(*args, **kwargs) if hasattr(self.inner, "find_distributions") else []

    def invalidate_caches(self):
        if hasattr(self.inner, "invalidate_caches"):
            self.inner.invalidate_caches()


def hide_non_core() -> None:
    hidden = hidden_modules()
    sys.meta_path[:] = [_Hide(finder, hidden) for finder in sys.meta_path]
    for name in [name for name in sys.modules if name.partition(".")[0] in hidden]:
        del sys.modules[name]


if __name__ == "__main__":
    hide_non_core()
    from cogbench.cli import main

    sys.exit(main(sys.argv[1:]))
