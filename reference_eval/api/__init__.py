"""The Python API: cogbench's commands as functions returning results.

- ``evaluation``: ``evaluate``, ``score``, ``compare``, ``verify`` returning a ``Result``; ``run_evaluation``, ``score_run``.
- ``training``: ``CogbenchCallback``, a ``transformers.TrainerCallback`` evaluating the model in training.
- ``rescoring``: ``rescore``: an eval run's verified answers scored on a corrected build, no model called.
- ``image_changes``: the items whose image a new build changed since the run's (errata or hashes).
- ``arguments``: the API's arguments checked by the commands' own option types, as the command line checks them.
- ``commands``: the ``score``, ``rescore`` and ``verify`` handlers: options, the API's function, printed lines.
- ``cli``: the ``rescore`` command's parser.
"""
