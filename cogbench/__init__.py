"""cogbench: build, validate and score the CogBench and CODIS benchmarks (the core, which every room may import).

The code lives in the top-level folders, installed as subpackages of this package (ARCHITECTURE.md: the map):
``cogbench.schemas`` (the data model), ``cogbench.dataset_builders`` (raw files -> dataset folders),
``cogbench.validation`` (checks and the release gate), ``cogbench.cards`` (the release side) and
``cogbench.reference_eval`` (running models and scoring them). This folder holds the core and the command:

- ``errors``: error types and their exit codes; every refusal is one ``error:`` line.
- ``option_types``: the value types of command-line options, each refusing nonsense in one line.
- ``redaction``: credentials in URLs and printed command lines shown as ``***``.
- ``jsonl``: JSON Lines split at ``\n`` only, the one way every JSONL file is read.
- ``numbers``: ``fixed``, the one rounding rule of every number shown (command line, report.md, the site).
- ``cli``: the ``cogbench`` command, collecting each folder's ``cli.register`` (``COMMAND_MODULES``).
- ``__main__``: ``python -m cogbench``.

The Python API (``cogbench.evaluate``, ``score``, ``compare``, ``verify``, ``Result``, ``rescore`` with
its ``Rescored``, ``explain``, ``sweep`` with its ``SweepResult``, and the training callback ``CogbenchCallback``) lives in ``cogbench.reference_eval.api`` and is named
here lazily: nothing of it is imported until it is used.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

# The distribution's name on PyPI ("cogbench" there is another project, whose
# version must never be reported as ours).
DISTRIBUTION = "cogbench-codis"
__version__: str  # read on first use, by __getattr__ below


def _installed_version() -> str:
    """The installed distribution's version; read on first use of ``__version__`` (``importlib.metadata``
    costs more than the rest of ``cogbench --help``)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:  # running from a source tree that is not installed
        return "0.0.0"


# The Python API (``reference_eval/api``), loaded on first use so that ``import cogbench`` stays
# light and the core install (``cogbench build``) never imports torch or datasets' scoring stack.
_API = {
    "evaluate": "cogbench.reference_eval.api.evaluation",
    "score": "cogbench.reference_eval.api.evaluation",
    "compare": "cogbench.reference_eval.api.evaluation",
    "verify": "cogbench.reference_eval.api.evaluation",
    "Result": "cogbench.reference_eval.api.evaluation",
    "CogbenchCallback": "cogbench.reference_eval.api.training",
    "rescore": "cogbench.reference_eval.api.rescoring",
    "Rescored": "cogbench.reference_eval.api.rescoring",
    "explain": "cogbench.reference_eval.explaining.explain_api",  # explaining/ sits above api/ (ARCHITECTURE.md)
    "sweep": "cogbench.reference_eval.sweeping.sweep_api",  # sweeping/ sits above api/ too
    "SweepResult": "cogbench.reference_eval.sweeping.sweep_api",
}
__all__ = [
    "DISTRIBUTION",
    "CogbenchCallback",
    "Rescored",
    "Result",
    "SweepResult",
    "__version__",
    "compare",
    "evaluate",
    "explain",
    "rescore",
    "score",
    "sweep",
    "verify",
]

if TYPE_CHECKING:
    from cogbench.reference_eval.api.evaluation import Result, compare, evaluate, score, verify
    from cogbench.reference_eval.api.rescoring import Rescored, rescore
    from cogbench.reference_eval.api.training import CogbenchCallback
    from cogbench.reference_eval.explaining.explain_api import explain
    from cogbench.reference_eval.sweeping.sweep_api import SweepResult, sweep


def __getattr__(name: str) -> Any:
    """``cogbench.evaluate`` and the rest of the API (and ``__version__``), loaded when first named."""
    if name == "__version__":
        globals()[name] = _installed_version()
        return globals()[name]
    if name not in _API:
        raise AttributeError(f"module 'cogbench' has no attribute {name!r}")
    value = getattr(import_module(_API[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_API, "__version__"})
