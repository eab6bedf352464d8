"""The Python API: cogbench's commands as functions returning results (``evaluation``), and a training callback (``training``)."""
