"""``cogbench export``: the benchmark as lmms-eval tasks or a VLMEvalKit TSV."""

from __future__ import annotations

import argparse
from pathlib import Path

from cogbench.option_types import token_count
from cogbench.reference_eval.metrics.recognition import PAPER_EMBEDDER, PAPER_SPACY_MODEL
from cogbench.reference_eval.tasks.queries import DEFAULT_MAX_NEW_TOKENS

FORMATS = ("lmms-eval", "vlmevalkit")


def export_files() -> tuple[str, ...]:
    """Every file `cogbench export` writes in its --out (dataset_builders.output.claim_output), by exact
    name: any other YAML there (a stale task declaring the same name) is refused, never left beside."""
    from cogbench.reference_eval.harnesses.lmms_eval import TASKS
    from cogbench.reference_eval.harnesses.vlmevalkit import DATASET_NAME

    return ("utils.py", "utils_description.py", "README.md", *(f"{name}.yaml" for name in TASKS), f"{DATASET_NAME}.tsv")


def default_export_dir(format_name: str, dataset: str, revision: str | None) -> Path:
    """exports/FORMAT-DATASET[-REVISION]: exports of different datasets never share a folder."""
    name = Path(dataset).name or "dataset"
    return Path("exports") / "-".join(part.replace("/", "_") for part in (format_name, name, revision) if part)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "export",
        help="export the benchmark for lmms-eval (task folder) or VLMEvalKit (custom MCQ TSV)",
        description="Write an lmms-eval task folder (cogbench_description_spontaneous, cogbench_description_directed, "
        "cogbench_vqa, cogbench_codis: this package's prompts and scorers) or a VLMEvalKit custom-MCQ TSV of the vqa config, from a built folder or a Hub repo id "
        "(pinned with --revision). Score their outputs with `cogbench score --predictions`.",
    )
    parser.add_argument("--format", required=True, choices=FORMATS, help="which harness to export for")
    parser.add_argument("--dataset", required=True, help="built dataset folder or Hugging Face repo id")
    parser.add_argument("--revision", help="Hub revision (tag, branch or commit) of --dataset (default: main)")
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="output folder (default: exports/FORMAT-DATASET, with -REVISION when given)",
    )
    parser.add_argument(
        "--spacy-model",
        default=PAPER_SPACY_MODEL,
        help="spaCy pipeline name or path the description tasks' Recognition Score uses (lmms-eval)",
    )
    parser.add_argument(
        "--embedder",
        default=PAPER_EMBEDDER,
        help="sentence-transformers model name or path of the Recognition Score (lmms-eval)",
    )
    parser.add_argument(
        "--max-new-tokens",
        type=token_count,
        help="generated tokens per query at most, for every task (lmms-eval; default: `cogbench eval`'s per task, "
        + ", ".join(f"{task} {tokens}" for task, tokens in DEFAULT_MAX_NEW_TOKENS.items())
        + ")",
    )
    parser.add_argument(
        "--dataset-path",
        help="what the lmms-eval tasks pass to load_dataset (default: the build's Hub repo at its "
        "release tag when it has one, else its shards by paths relative to the task folder)",
    )
    lmms_eval_only = ("format", ("lmms-eval",))
    parser.set_defaults(
        func=run_export,
        only_for={
            "spacy_model": lmms_eval_only,
            "embedder": lmms_eval_only,
            "dataset_path": lmms_eval_only,
            "max_new_tokens": lmms_eval_only,
        },
    )


def run_export(args: argparse.Namespace) -> int:
    from cogbench.dataset_builders.output import check_apart, claim_output
    from cogbench.reference_eval.harnesses.lmms_eval import (
        dataset_location,
        export_lmms_eval,
        exported_tasks,
        model_reference,
    )
    from cogbench.reference_eval.harnesses.vlmevalkit import DATASET_NAME, export_vlmevalkit
    from cogbench.reference_eval.metrics.recognition import check_models
    from cogbench.validation.integrity import load_verified

    out = args.out or default_export_dir(args.format, args.dataset, args.revision)
    check_apart(out, "--out", [("--dataset", args.dataset)])  # before the build is read
    vqa = load_verified(args.dataset, "vqa", args.revision)  # fails early, as a usage error, on a bad --dataset
    claim_output(out, "export", export_files(), create=False, reads=[("--dataset", args.dataset)])  # before any work
    if args.format == "lmms-eval":  # a missing model fails here, before the folder or any file is written
        args.spacy_model, args.embedder = model_reference(args.spacy_model), model_reference(args.embedder)
        check_models(args.spacy_model, args.embedder)
    claim_output(out, "export", export_files(), reads=[("--dataset", args.dataset)])
    revision = f" --revision {args.revision}" if args.revision else ""
    dataset = Path(args.dataset).resolve() if Path(args.dataset).exists() else args.dataset  # from any folder
    if args.format == "vlmevalkit":
        path = export_vlmevalkit(vqa, out)
        print(f"wrote {path} ({len(vqa)} questions)")
        print(
            "run (in VLMEvalKit's folder; a template: MODEL is a model name VLMEvalKit knows): "
            f'cp {path.resolve()} "${{LMUData:?set LMUData to the VLMEvalKit data folder}}/" '
            f"&& python run.py --data {DATASET_NAME} --model MODEL"
        )
        print(
            "score (a template: MODEL as above, VLMEVALKIT its folder, where it writes outputs/MODEL/MODEL_"
            f"{DATASET_NAME}.xlsx): cogbench score --task vqa --dataset {dataset}{revision} "
            f"--predictions VLMEVALKIT/outputs/MODEL/MODEL_{DATASET_NAME}.xlsx --out runs/vqa-vlmevalkit-MODEL"
        )
        return 0
    location = dataset_location(args.dataset, args.revision, out, args.dataset_path)
    files = export_lmms_eval(
        location, out, args.spacy_model, args.embedder, models_checked=True, tokens=args.max_new_tokens
    )
    print(f"wrote {len(files)} files to {out}: {', '.join(f.name for f in files)}; data: {location.describe()}")
    print(
        "run (a template: MODEL and ARGS are your lmms-eval model and its --model_args, OUT a new folder): "
        f"lmms-eval --include_path {out.resolve()} --tasks {','.join(exported_tasks(location))} --model MODEL "
        "--model_args ARGS --log_samples --output_path OUT"
    )
    print(
        "score (a template: OUT as above; lmms-eval writes OUT/MODEL_DIR/DATE_samples_TASK.jsonl): "
        f"cogbench score --task codis --dataset {dataset}{revision} "
        "--predictions OUT/MODEL_DIR/DATE_samples_cogbench_codis.jsonl --out runs/codis-lmms-eval"
    )
    return 0
