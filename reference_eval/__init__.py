"""Running models on the configs and scoring them as the papers define (ARCHITECTURE.md: the map of its rooms).

Its top holds only ``cli`` (``score``, and the option groups it shares with ``eval``) and one
sub-package (room) per role, each naming its modules in its own docstring: ``loading``, ``answers``, ``tasks``,
``formats``, ``metrics``, ``backends``, ``judges``, ``harnesses``, ``run``, ``scoring``, ``api``, ``recording``,
``reports``, ``publishing``, ``verifying``, ``certifying``, ``explaining``, ``site``.
"""
