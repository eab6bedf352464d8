"""``cogbench label`` (the blind labelling page) and ``cogbench labels`` (``check`` an export, build the ``dataset``).

The code each command runs is imported when it runs.
"""

from __future__ import annotations

import argparse
import functools

from cogbench.option_types import non_negative_int, positive_int


def _fraction(text: str) -> float:
    from cogbench.option_types import finite

    value = finite(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a share from 0 to 1")
    return value


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "label",
        help="write a blind labelling page for a sample of runs' judged units (docs/labelling.md)",
        description="Draw a sample of the runs' judged units (CODIS queries, description CoRs), stratified by "
        "task, category and answers with a seed, and write DIR: a static page that shows one unit at a time "
        "(image, question or reasoning item, one model's answer) and asks the task's yes/no question. DIR holds no "
        "verdict, score, model name or judge reply; the key naming each run's opaque id is written outside it.",
    )
    parser.add_argument("runs", nargs="+", metavar="RUN", help="score folders (codis or description, judged)")
    parser.add_argument("--out", required=True, metavar="DIR", help="the page's folder (new, empty or its own)")
    parser.add_argument(
        "--key", metavar="FILE", help="the blinding key, outside DIR (default: DIR.key.json beside DIR)"
    )
    parser.add_argument("--seed", type=non_negative_int, default=0, help="the sample's seed (default: %(default)s)")
    parser.add_argument(
        "--per-stratum",
        type=positive_int,
        default=10,
        help="units drawn per task, category and run (all when it holds fewer) (default: %(default)s)",
    )
    parser.add_argument(
        "--shared",
        type=_fraction,
        default=0.2,
        help="share of each stratum's drawn units also given to the second labeller, role B (default: %(default)s)",
    )
    parser.set_defaults(func=run_label)
    labels = subparsers.add_parser(
        "labels",
        help="people's labels: check an exported labels file, build the labels dataset (docs/labelling.md)",
        description="People's labels of a labelling sample (docs/labelling.md): `check` exported files, "
        "`dataset` turns them into a Parquet + card folder ready for the Hub.",
    )
    commands = labels.add_subparsers(
        dest="labels_command",
        required=True,
        metavar="SUBCOMMAND",
        help="check or dataset",
        parser_class=functools.partial(argparse.ArgumentParser, epilog=labels.epilog),
    )
    check = commands.add_parser(
        "check",
        help="check labels files against the format and, with --sample, against the page's sample",
        description="Each line against schemas/labels.schema.json; with --sample DIR every label names a unit "
        "of DIR/sample.json with its key, role B only the shared units. One error: line naming file, line, field.",
    )
    check.add_argument("files", nargs="+", metavar="LABELS", help="labels files (JSON Lines) the page exported")
    check.add_argument("--sample", metavar="DIR", help="the page's folder, whose sample.json the labels belong to")
    check.set_defaults(func=run_check)
    dataset = commands.add_parser(
        "dataset",
        help="build the labels dataset: Parquet and a card, the key's models and answers_sha256 joined in",
        description="Checked labels of one sample, unblinded with its key (each run's model and answers_sha256, "
        "so any later judge's run of the same answers joins them), written to DIR as data/labels.parquet, "
        "sample.json and README.md (the card: protocol, seed, counts): a folder ready for the Hub.",
    )
    dataset.add_argument("files", nargs="+", metavar="LABELS", help="labels files (JSON Lines) the page exported")
    dataset.add_argument("--sample", required=True, metavar="DIR", help="the labelling page's folder")
    dataset.add_argument("--key", metavar="FILE", help="its blinding key (default: DIR.key.json beside DIR)")
    dataset.add_argument("--out", required=True, metavar="OUT", help="the dataset folder (new, empty or its own)")
    dataset.set_defaults(func=run_dataset)


def run_label(args: argparse.Namespace) -> int:
    from pathlib import Path

    from cogbench.reference_eval.labelling.page import write_label_page

    key = Path(args.key) if args.key else None
    result = write_label_page(args.runs, Path(args.out), key, args.seed, args.per_stratum, args.shared)
    print(
        f"wrote {result['units']} unit(s) ({result['shared']} shared with role B) to {result['folder']}; "
        f"open {result['folder']}/index.html"
    )
    print(f"the blinding key is {result['key']}: keep it from the labellers")
    return 0


def run_check(args: argparse.Namespace) -> int:
    from pathlib import Path

    from cogbench.reference_eval.labelling.labels_format import check_against_sample, read_labels, read_sample

    sample = read_sample(Path(args.sample)) if args.sample else None
    for name in args.files:
        labels = read_labels(Path(name))
        if sample is not None:
            check_against_sample(labels, sample, f"{args.sample}/sample.json")
        people = sorted({(label.labeller, label.role) for label in labels})
        who = ", ".join(f"{labeller} (role {role})" for labeller, role in people)
        print(f"{name}: {len(labels)} label(s) by {who}: valid")
    return 0


def run_dataset(args: argparse.Namespace) -> int:
    from pathlib import Path

    from cogbench.reference_eval.labelling.dataset import write_labels_dataset
    from cogbench.reference_eval.labelling.page import default_key

    sample = Path(args.sample)
    key = Path(args.key) if args.key else default_key(sample)
    result = write_labels_dataset([Path(f) for f in args.files], sample, key, Path(args.out))
    print(f"wrote {result['labels']} label(s) of {result['units']} unit(s) by {result['labellers']} to {args.out}")
    return 0
