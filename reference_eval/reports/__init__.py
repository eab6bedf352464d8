"""Reports: finished runs shown to people (``cogbench compare``, ``cogbench report``), one module per view."""
