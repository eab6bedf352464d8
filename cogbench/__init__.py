"""cogbench: build, validate and score the CogBench and CODIS benchmarks.

The code lives in the top-level folders fixed by the design card and is
installed as subpackages of this package:

- ``cogbench.dataset_builders``: raw annotations -> Hugging Face dataset folders
- ``cogbench.schemas``: JSON Schemas of raw and built records
- ``cogbench.validation``: integrity checks and the release gate
- ``cogbench.reference_eval``: running models and scoring them
- ``cogbench.cards``: dataset card templates
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("cogbench")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0"
