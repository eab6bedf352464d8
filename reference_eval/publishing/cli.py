"""``cogbench publish-results``: a run's results (``.eval_results/*.yaml``) proposed to a model repo, with its details.

The code the command runs is imported when it runs.
"""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    publish = subparsers.add_parser(
        "publish-results",
        help="open a pull request adding a run's results (.eval_results/*.yaml) to a model repo, with its details",
        description=(
            "Verify each run (its numbers recomputed from details.jsonl), push its per-item details as a Parquet "
            "dataset to --details-repo, and open a pull request on --model-repo adding one .eval_results/TASK.yaml "
            "per task and metric family, pinned to the dataset commit the run read, after checking what the repo holds "
            "for each task on main and in open pull requests (same value: skipped; another value: refused without "
            "--allow-conflict); each run's Every Eval Ever record goes into the details dataset. PARTIAL and SAMPLE runs, runs "
            "on a local build naming no Hub repo, and edited runs are refused. Exit codes: 0 done; 1 error (edited "
            "run or build, Hub failure); 2 usage error or refused run."
        ),
    )
    publish.add_argument("runs", nargs="+", metavar="RUN", help="score folder or eval run folder, one per task")
    publish.add_argument("--model-repo", required=True, metavar="ORG/MODEL", help="the model repo the results are for")
    publish.add_argument(
        "--details-repo", required=True, metavar="ORG/NAME", help="dataset repo for the per-item details (created)"
    )
    publish.add_argument("--dry-run", action="store_true", help="write the files to --out and push nothing")
    publish.add_argument("--out", help="folder for .eval_results/, model-index.yaml and details/ (default: none)")
    publish.add_argument(
        "--no-pr", action="store_true", help="commit to the model repo's main branch instead of opening a pull request"
    )
    publish.add_argument(
        "--allow-conflict",
        action="store_true",
        help="open the pull request even where main or an open pull request holds another value for the same task "
        "(default: such a result is shown beside ours and nothing is pushed)",
    )
    publish.add_argument(
        "--results-source",
        choices=("details", "eee"),
        default="details",
        help="what each .eval_results file's source.url names: the details dataset (default) or the run's Every "
        "Eval Ever record in it (details/eee/data/...)",
    )
    publish.set_defaults(func=run_publish_results)


def run_publish_results(args: argparse.Namespace) -> int:
    from cogbench.reference_eval.publishing.hub_results import publish_results

    return publish_results(args)
