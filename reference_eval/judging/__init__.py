"""Judges as a whole: is a replacement judge good enough to stand in for a retired one (``cogbench judges``)."""
