"""``cogbench sweep``: many models, one spec (docs/sweeps.md): ``plan``, ``run``, ``run-shard``, ``merge``, ``status``.

The code each command runs is imported when it runs, so ``cogbench --help`` stays light.
"""

from __future__ import annotations

import argparse
import functools
from pathlib import Path

from cogbench.option_types import non_negative_int, positive_int
from cogbench.reference_eval.sweeping.run_options import RAY_NUM_CPUS, RAY_NUM_GPUS, resource_amount

LAUNCHERS_DEFAULT_IMAGE = "cogbench:latest"  # launchers.DEFAULT_IMAGE (not imported: registration stays light)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "sweep",
        help="many models, one spec: plan a sweep's cells and shards, run them here or on Slurm or Kubernetes, merge",
        description="A sweep (docs/sweeps.md): the cells of a spec (models x tasks x settings), each an ordinary "
        "`eval` run cut into shards. `plan` writes the sweep folder and prints the cost; `run` runs every shard "
        "here, `run-shard` one (a Slurm array task, a Kubernetes completion index); `merge` joins each cell's shards "
        "into its run, verified; `status` shows each cell.",
    )
    commands = parser.add_subparsers(
        dest="sweep_command",
        required=True,
        metavar="SUBCOMMAND",
        help="plan, run, run-shard, merge or status",
        parser_class=functools.partial(argparse.ArgumentParser, epilog=parser.epilog),
    )
    plan = commands.add_parser(
        "plan",
        help="write the sweep folder: one subfolder per cell and its shards, a Slurm script, a Kubernetes Job",
        description="Read SPEC (sweep.yaml, schemas/sweep.schema.json), check it, and write DIR: each cell's "
        "settings and shards (its item ids cut into --shards parts), the Slurm array script and the Kubernetes "
        "Indexed Job manifest that run each shard with `sweep run-shard`, and the ledger. Prints "
        "the cost before anything runs: cells, queries, judge calls, cells already complete. An existing DIR is "
        "planned again only for the same plan.",
    )
    plan.add_argument("spec", metavar="SPEC", help="the sweep spec (YAML)")
    plan.add_argument("--out", required=True, metavar="DIR", help="the sweep folder (new, empty, or this plan's)")
    plan.add_argument(
        "--shards",
        type=positive_int,
        default=1,
        help="shards per cell (fewer when a cell has fewer items) (default: 1)",
    )
    plan.add_argument(
        "--image",
        default=LAUNCHERS_DEFAULT_IMAGE,
        help=f"the container image of the Kubernetes Job, with cogbench installed (default: {LAUNCHERS_DEFAULT_IMAGE})",
    )
    plan.set_defaults(func=run_plan)
    run = commands.add_parser(
        "run",
        help="run every shard on this machine, --jobs cells at a time, or on a Ray cluster (--ray); resumable",
        description="Run every shard of DIR here: each is `eval` restricted to its items, then scored. A shard "
        "already done is skipped, and one stopped anywhere (Ctrl-C, kill -9) resumes item by item: run the same "
        "command again. With --ray ADDRESS each shard not yet done is one Ray task on that cluster, run on a node "
        "as `run-shard` runs it (the folder on a file system the nodes share; docs/sweeps.md). Exit codes: 0 every "
        "shard done; 1 a shard failed; 2 usage error (also: --ray without Ray installed); 3 some model or judge "
        "queries failed (what succeeded is saved; run again to retry them).",
    )
    run.add_argument("folder", metavar="DIR", help="a folder written by `cogbench sweep plan`")
    run.add_argument(
        "--jobs",
        type=positive_int,
        default=None,
        help="cells run at the same time, each in a worker process; the description cells one after another in one "
        "of them, which loads their scoring models (default: 1, here; not with --ray)",
    )
    run.add_argument(
        "--ray",
        metavar="ADDRESS",
        default=None,
        help="run one Ray task per shard not yet done on the Ray cluster at ADDRESS: auto, ray://HOST:PORT or "
        "HOST:PORT; the sweep folder must be on a file system every node shares, at the same path, and cogbench "
        "installed on every node (default: none, every shard on this machine)",
    )
    run.add_argument(
        "--ray-num-cpus",
        metavar="N",
        type=resource_amount,
        default=None,
        help=f"CPUs each shard's Ray task reserves (default: {RAY_NUM_CPUS:g}; only with --ray)",
    )
    run.add_argument(
        "--ray-num-gpus",
        metavar="N",
        type=resource_amount,
        default=None,
        help=f"GPUs each shard's Ray task reserves, for a model served on the node (default: {RAY_NUM_GPUS:g}; only "
        "with --ray)",
    )
    run.set_defaults(func=run_run)
    shard = commands.add_parser(
        "run-shard",
        help="run one shard (a Slurm array task, a Kubernetes completion index)",
        description="Run the shard at --index, or at SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX when --index "
        "is not given: what the Slurm script and the Kubernetes Job of `sweep plan` run. Resumable, as `run`.",
    )
    shard.add_argument("folder", metavar="DIR", help="a folder written by `cogbench sweep plan`")
    shard.add_argument(
        "--index", type=non_negative_int, help="the shard (default: SLURM_ARRAY_TASK_ID, else JOB_COMPLETION_INDEX)"
    )
    shard.set_defaults(func=run_run_shard)
    merge = commands.add_parser(
        "merge",
        help="join each cell's shards into the cell's run folder, verified; refuses shards that are not one run",
        description="For each cell: check every shard with `verify`, refuse (one line naming both sides) shards of "
        "different builds, prompts, generation settings, judges or cogbench versions, or an item answered twice "
        "with different outputs; then write cells/CELL/run, an ordinary eval run folder, scored (an LLM judge's "
        "verdicts taken from the shards' caches: it is asked nothing again) and verified. The shards are kept "
        "unless --remove-shards asks. Exit codes: 0 every cell merged; 1 a cell refused or not verified; 2 usage "
        "error (also: with --remove-shards, a shard folder holding a file not written by cogbench).",
    )
    merge.add_argument("folder", metavar="DIR", help="a folder written by `cogbench sweep plan`")
    merge.add_argument("--cell", action="append", default=[], help="only this cell (repeatable) (default: every cell)")
    merge.add_argument(
        "--remove-shards",
        action="store_true",
        help="once a cell's merged run verifies (verified again just before), remove its shard folders: only files "
        "`eval` wrote there (a shard holding any other file is refused, nothing removed); resumable, and a cell "
        "whose shards are removed is never merged or run again (default: keep them)",
    )
    merge.set_defaults(func=run_merge)
    status = commands.add_parser(
        "status",
        help="each cell: queued, running, done, failed or missing, items done/total, merged",
        description="Rebuild DIR/status.sqlite from the run folders (they are the truth; the ledger can be "
        "deleted) and print each cell's state, items done/total, shards done and whether it is merged.",
    )
    status.add_argument("folder", metavar="DIR", help="a folder written by `cogbench sweep plan`")
    status.set_defaults(func=run_status)


def run_plan(args: argparse.Namespace) -> int:
    from cogbench.reference_eval.sweeping.plan import plan_sweep

    cost = plan_sweep(args.spec, Path(args.out), args.shards, args.image)
    print("\n".join(cost.lines()))
    print(
        f"planned {args.out}: run it here with `cogbench sweep run {args.out}`, or submit {args.out}/slurm.sh "
        f"or {args.out}/kubernetes-job.yaml"
    )
    return 0


def run_run(args: argparse.Namespace) -> int:
    from cogbench.reference_eval.sweeping.run_options import run_mode

    mode = run_mode(args.jobs, args.ray, args.ray_num_cpus, args.ray_num_gpus)  # every refusal before any work
    from cogbench.reference_eval.sweeping.execute import finish
    from cogbench.reference_eval.sweeping.running import run_sweep

    return finish(run_sweep(Path(args.folder), mode))


def run_run_shard(args: argparse.Namespace) -> int:
    from cogbench.reference_eval.sweeping.execute import finish, run_shard

    outcome = run_shard(Path(args.folder), args.index)
    print(outcome.line())
    return finish([outcome])


def run_merge(args: argparse.Namespace) -> int:
    from cogbench.reference_eval.sweeping.merge import merge_sweep

    print("\n".join(merge_sweep(Path(args.folder), tuple(args.cell), args.remove_shards)))
    return 0


def run_status(args: argparse.Namespace) -> int:
    from cogbench.reference_eval.sweeping.ledger import status_lines

    print("\n".join(status_lines(Path(args.folder))))
    return 0
