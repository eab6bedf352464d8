"""Data parallelism across processes: under ``torchrun`` / ``accelerate launch`` each rank takes
every WORLD_SIZE-th query and writes its own shard; rank 0 merges after a barrier (gloo, so the
barrier needs no GPU memory). torch is imported only when there is more than one rank.
"""

from __future__ import annotations

import os
from datetime import timedelta

from cogbench.reference_eval.tasks.queries import Query


def distributed_rank() -> tuple[int, int]:
    """(rank, world size) as torchrun and accelerate launch set them; (0, 1) otherwise."""
    return int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1"))


def join_process_group(world: int) -> None:
    if world > 1:
        import torch.distributed as dist

        if not dist.is_initialized():
            # gloo: the barrier needs no GPU memory, and a long timeout lets a
            # rank wait for slower ranks for as long as generation takes.
            dist.init_process_group("gloo", timeout=timedelta(days=2))


def barrier(world: int) -> None:
    if world > 1:
        import torch.distributed as dist

        dist.barrier()


def leave_process_group(world: int) -> None:
    if world > 1:
        import torch.distributed as dist

        if dist.is_initialized():
            dist.destroy_process_group()


def rank_queries(queries: list[Query], rank: int, world: int) -> list[Query]:
    """The queries this rank is responsible for."""
    return [q for index, q in enumerate(queries) if index % world == rank]
