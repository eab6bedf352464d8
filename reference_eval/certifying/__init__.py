"""Certifying: judges as a whole (``cogbench judges``): may a replacement judge stand in for a retired one,
its certificate, and verdict archives. Deciding one verdict is ``judges/``."""
