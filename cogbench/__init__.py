"""cogbench: build, validate and score the CogBench and CODIS benchmarks.

The code lives in the top-level folders fixed by the design card and is
installed as subpackages of this package:

- ``cogbench.schemas``: the data model (JSON Schemas, Features, records, CoR grammar)
- ``cogbench.dataset_builders``: raw annotations -> Hugging Face dataset folders
- ``cogbench.validation``: integrity checks and the release gate
- ``cogbench.cards``: the release side (card, versions, publish)
- ``cogbench.reference_eval``: running models and scoring them

ARCHITECTURE.md at the repository root says which way imports flow.
"""

from importlib.metadata import PackageNotFoundError, version

# The distribution's name on PyPI ("cogbench" there is another project, whose
# version must never be reported as ours).
DISTRIBUTION = "cogbench-codis"

try:
    __version__ = version(DISTRIBUTION)
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0"
