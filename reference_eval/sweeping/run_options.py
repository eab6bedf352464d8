"""How ``sweep run`` runs a sweep's shards: here, ``--jobs K`` cells at a time, or on a Ray cluster (``--ray ADDRESS``,
``--ray-num-cpus``, ``--ray-num-gpus``), and every refusal of those options, before any work.

``cogbench sweep run`` and ``cogbench.sweep`` both call ``run_mode`` (then ``running.run_sweep``), so the
Python API refuses what the command refuses, in the same words. An address is shown only masked
(``redaction.redact_text``). This module stays light: the command's parser reads its option types, and
nothing here imports Ray (``import_ray`` tries, only once an address was given and checked).
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass

from cogbench.errors import UsageError
from cogbench.option_types import finite
from cogbench.redaction import redact_text

RAY_NUM_CPUS = 1.0  # what each shard's Ray task reserves unless --ray-num-cpus / --ray-num-gpus say otherwise
RAY_NUM_GPUS = 0.0
RAY_ADDRESS_FORMS = "auto, ray://HOST:PORT or HOST:PORT"
RAY_HOST_PORT = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):[0-9]{1,5}$")


@dataclass(frozen=True)
class RunMode:
    """Where ``sweep run`` runs its shards: ``jobs`` cells at a time here (``ray`` None), or one Ray task per shard
    on the cluster at ``ray``, each reserving ``num_cpus`` CPUs and ``num_gpus`` GPUs."""

    jobs: int = 1
    ray: str | None = None  # the address as given (it may carry credentials): shown only through redact_text
    num_cpus: float = RAY_NUM_CPUS
    num_gpus: float = RAY_NUM_GPUS

    def __repr__(self) -> str:  # the address masked, as everywhere it is shown
        ray = None if self.ray is None else redact_text(self.ray)
        return f"RunMode(jobs={self.jobs}, ray={ray!r}, num_cpus={self.num_cpus:g}, num_gpus={self.num_gpus:g})"


def check_ray_address(address: str) -> str:
    """``auto``, ``ray://HOST:PORT`` (Ray Client) or ``HOST:PORT`` (the head node); anything else is refused, in one
    line with its credentials masked (cogbench/redaction.py)."""
    if address == "auto" or RAY_HOST_PORT.match(address):
        return address
    scheme, sep, rest = address.partition("://")
    if sep and scheme == "ray" and rest.strip("/"):
        return address
    raise UsageError(f"--ray '{redact_text(address)}': not a Ray address ({RAY_ADDRESS_FORMS})")


def import_ray() -> None:
    """Ray installed, or the one-line error (exit 2) that names the package to install."""
    try:
        import ray  # noqa: F401
    except ImportError:
        raise UsageError(
            "sweep run's --ray needs Ray (module 'ray' is not installed); install the Ray version your "
            f"cluster runs into this environment and on every node: `{sys.executable} -m pip install 'ray==VERSION'`"
        ) from None


def resource_amount(text: str) -> float:
    """A Ray resource request: 0 or more, fractions allowed (0.5 GPU), finite."""
    value = finite(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is not 0 or a positive number")
    return value


def run_mode(
    jobs: int | None = None,
    ray: str | None = None,
    ray_num_cpus: float | None = None,
    ray_num_gpus: float | None = None,
) -> RunMode:
    """``sweep run``'s options (each already its option's type; None: not given) checked together: the Ray
    resources only with an address, ``jobs`` only without one, the address one of Ray's forms, Ray installed."""
    if ray is None:
        for option, value in (("--ray-num-cpus", ray_num_cpus), ("--ray-num-gpus", ray_num_gpus)):
            if value is not None:
                raise UsageError(f"{option} applies only with --ray ADDRESS")
        return RunMode(jobs=jobs or 1)
    if jobs is not None:
        raise UsageError(
            "--jobs applies only without --ray (Ray runs as many shards at once as the cluster has room for)"
        )
    check_ray_address(ray)
    import_ray()
    return RunMode(
        ray=ray,
        num_cpus=RAY_NUM_CPUS if ray_num_cpus is None else ray_num_cpus,
        num_gpus=RAY_NUM_GPUS if ray_num_gpus is None else ray_num_gpus,
    )
