"""Generation throughput: one query at a time versus this package's batched hf path.

GPU mode (default): a full-size Qwen2.5-VL-7B-Instruct (its public config,
written out below; random bf16 weights, nothing downloaded) and the real
Qwen2.5-VL processor from the shared ``models/`` folder answer one CODIS query
(context 1) on each of 64 distinct real images of the built ``codis`` config,
generating exactly ``--new-tokens`` tokens per query (EOS ignored), at batch
size 1 (what the official scripts and most harnesses do), 16, 32 and 64.
Printed per setting: queries/s, generated tokens/s, peak GPU memory, and the
share of the decode roofline (decode steps per second achieved over measured
memory bandwidth / bytes of weights read per step). Target: batch 16/32 >= 8x
batch 1. Not measured yet: no GPU has been available to the project.

The ``vllm:`` path (``--engines hf,vllm``, the GPU default; needs vllm installed beside
cogbench) runs the same 64 queries through ``backends/vllm_offline`` on the same
configuration: a folder holding the 7B config written from ``QWEN2_5_VL_7B`` and the
processor files of ``models/`` (its generation_config.json left out, so that vLLM's defaults
are as plain as the hf path's greedy), loaded with vLLM's ``load_format="dummy"`` (random
weights, nothing written or downloaded), bf16, EOS ignored, in chunks of each batch size
(vLLM batches continuously inside a chunk). Printed per chunk size: queries/s, tokens/s, the
GPU memory in use by all processes at the end (vLLM reserves ``--gpu-memory-utilization``)
and the ratio to hf batch 1. The hf model is freed before vLLM starts.

CPU mode (``--cpu``): the tiny random-weight LLaVA, Qwen2.5-VL and
LLaVA-OneVision of tests/tiny_models.py (the last two need torchvision: run
it in .venv-vision) on 32 real CODIS images, 32 new tokens each (EOS ignored),
batch 1 versus 4, 8 and 16; printed: queries/s, tokens/s, the share of wall
time spent preprocessing images (decoding + the processor, timed in the
process: ``--num-workers 0``), and the ratio to batch 1.

Both modes: every setting first runs once untimed (warm-up: the first pass at
a new batch shape pays one-off costs), then ``--repeats`` timed runs; min and
median are printed, ratios are against batch 1 (the stated baseline) whatever
the order of ``--batch-sizes``. DataLoader workers never exceed the CPU cores.

    # on a GPU machine (needs torchvision for the Qwen processor, and vllm for the vllm: rows)
    python tests/benchmarks/gpu_generate.py
    # CPU measurement (this machine)
    .venv-vision/bin/python tests/benchmarks/gpu_generate.py --cpu
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch

from cogbench.cards.release import build_release
from cogbench.dataset_builders.load import load_config
from cogbench.reference_eval.backends import hf as hf_backend
from cogbench.reference_eval.tasks.queries import build_queries, undecoded_images

from shared_files import raw_data_dir, shared_path

PROCESSOR_DIR = shared_path("models", "qwen2.5-vl-7b-instruct-processor")

# Qwen/Qwen2.5-VL-7B-Instruct config.json (public), the fields that shape compute.
QWEN2_5_VL_7B = {
    "text_config": {
        "vocab_size": 152064,
        "hidden_size": 3584,
        "intermediate_size": 18944,
        "num_hidden_layers": 28,
        "num_attention_heads": 28,
        "num_key_value_heads": 4,
        "hidden_act": "silu",
        "rms_norm_eps": 1e-06,
        "max_position_embeddings": 128000,
        "use_sliding_window": False,
        "sliding_window": 32768,
        "max_window_layers": 28,
        "tie_word_embeddings": False,
        "rope_parameters": {"rope_type": "default", "mrope_section": [16, 24, 24], "rope_theta": 1000000.0},
        "bos_token_id": 151643,
        "eos_token_id": 151645,
    },
    "vision_config": {
        "depth": 32,
        "hidden_size": 1280,
        "intermediate_size": 3420,
        "num_heads": 16,
        "in_channels": 3,
        "out_hidden_size": 3584,
        "patch_size": 14,
        "spatial_merge_size": 2,
        "temporal_patch_size": 2,
        "window_size": 112,
        "fullatt_block_indexes": [7, 15, 23, 31],
        "tokens_per_second": 2,
        "hidden_act": "silu",
    },
    "image_token_id": 151655,
    "video_token_id": 151656,
    "vision_start_token_id": 151652,
    "vision_end_token_id": 151653,
}


def full_size_model() -> hf_backend.LoadedModel:
    from transformers import AutoProcessor, Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration

    device = torch.device("cuda")
    processor = AutoProcessor.from_pretrained(PROCESSOR_DIR)
    processor.tokenizer.padding_side = "left"
    config = Qwen2_5_VLConfig(**QWEN2_5_VL_7B)
    torch.manual_seed(0)
    with device:
        model = Qwen2_5_VLForConditionalGeneration._from_config(
            config, dtype=torch.bfloat16, attn_implementation="sdpa"
        )
    model.eval()
    model.generation_config.eos_token_id = 151645
    model.generation_config.pad_token_id = processor.tokenizer.pad_token_id
    return hf_backend.LoadedModel(processor, model, device, torch.bfloat16)


def full_size_vllm_folder(work: Path) -> Path:
    """The 7B config and the real processor files: what vLLM reads when its weights are ``dummy``."""
    from transformers import Qwen2_5_VLConfig

    folder = work / "qwen2.5-vl-7b-dummy-weights"
    keep = shutil.ignore_patterns("config.json", "generation_config.json", "LICENSE", "README.md")
    shutil.copytree(PROCESSOR_DIR, folder, ignore=keep)
    config = Qwen2_5_VLConfig(**QWEN2_5_VL_7B)
    config.architectures = ["Qwen2_5_VLForConditionalGeneration"]
    config.save_pretrained(folder)
    json.loads((folder / "config.json").read_text())  # written whole
    return folder


def measure_vllm(folder: Path, queries, images, args, chunk_sizes, baseline, load_format="auto", **engine) -> None:
    """The vllm: backend (in this process) on ``folder``: one warm-up pass, then ``--repeats`` per chunk size."""
    from vllm import LLM

    from cogbench.reference_eval.backends import vllm_offline

    options = vllm_offline.EngineOptions(**engine)
    settings = vllm_offline.VLLMSettings(str(folder), args.new_tokens, ignore_eos=True, engine=options)
    started = time.perf_counter()
    llm = LLM(model=str(folder), load_format=load_format, **options.llm_arguments())  # dummy: random weights
    print(f"\nvllm: {folder.name}, engine ready in {time.perf_counter() - started:.1f} s; {options}")
    print(
        f"{'chunk':>5} {'warm-up':>7} {'s min':>7} {'s median':>8} {'queries/s':>9} {'tokens/s':>9} {'GPU GiB':>8} {'x hf b1':>8}"
    )
    for chunk in chunk_sizes:
        chunked = dataclasses.replace(settings, chunk_size=chunk)
        warm_up = vllm_pass(llm, chunked, queries, images)
        runs = [vllm_pass(llm, chunked, queries, images) for _ in range(args.repeats)]
        best, median = min(runs), statistics.median(runs)
        used = f"{'n/a':>8}"
        if torch.cuda.is_available():
            free, total = torch.cuda.mem_get_info()
            used = f"{(total - free) / 2**30:8.1f}"
        ratio = f"{baseline / best:7.2f}x" if baseline else f"{'-':>8}"
        print(
            f"{chunk:>5} {warm_up:7.2f} {best:7.2f} {median:8.2f} {len(queries) / best:9.2f} "
            f"{len(queries) * args.new_tokens / best:9.1f} {used} {ratio}"
        )


def vllm_pass(llm, settings, queries, images) -> float:
    """Seconds of one pass of the vllm: backend over ``queries`` (every query answered, EOS ignored)."""
    from cogbench.reference_eval.backends import vllm_offline

    failures: list[str] = []
    started = time.perf_counter()
    answers = [a for batch in vllm_offline.answer_queries(llm, settings, queries, images, failures) for a in batch]
    seconds = time.perf_counter() - started
    assert not failures and sum(a.generated_tokens for a in answers) == len(queries) * settings.max_new_tokens
    return seconds


def tiny_models_on_cpu(work: Path) -> list[tuple[str, hf_backend.LoadedModel]]:
    import tiny_models

    builders = [("tiny LLaVA", tiny_models.build_tiny_llava)]
    if importlib.util.find_spec("torchvision") is not None:
        builders += [
            ("tiny Qwen2.5-VL", tiny_models.build_tiny_qwen2_5_vl),
            ("tiny LLaVA-OneVision", tiny_models.build_tiny_llava_onevision),
        ]
    else:
        print("torchvision missing: Qwen2.5-VL and LLaVA-OneVision left out (run in .venv-vision)")
    return [
        (
            name,
            hf_backend.load_model(hf_backend.HFSettings(model=str(build(work / name.replace(" ", "-"))), device="cpu")),
        )
        for name, build in builders
    ]


def memory_bandwidth_bytes_per_second(device: torch.device) -> float | None:
    """Device-to-device copy of 2 GiB: bytes read plus bytes written over time."""
    if device.type != "cuda":
        return None
    source = torch.empty(1 << 30, dtype=torch.uint8, device=device)
    source.fill_(1)
    target = torch.empty_like(source)
    target.copy_(source)
    torch.cuda.synchronize(device)
    repeats = 10
    started = time.perf_counter()
    for _ in range(repeats):
        target.copy_(source)
    torch.cuda.synchronize(device)
    seconds = time.perf_counter() - started
    del source, target
    return 2 * (1 << 30) * repeats / seconds


def distinct_image_queries(dataset, count: int):
    """One query (context 1) for each of the first ``count`` rows with an image not seen before."""
    seen, rows = set(), []
    for index, image_id in enumerate(dataset["image_id"]):
        if image_id not in seen:
            seen.add(image_id)
            rows.append(index)
        if len(rows) == count:
            break
    subset = dataset.select(rows)
    _, queries = build_queries("codis", subset)
    return subset, [q for q in queries if q.query == 1]


class PreprocessTimer:
    """Wraps ``hf_backend.prepare_batch`` (image decoding + processor) and sums its time in this process."""

    def __init__(self):
        self.seconds = 0.0
        self._real = hf_backend.prepare_batch

    def __call__(self, *args, **kwargs):
        started = time.perf_counter()
        try:
            return self._real(*args, **kwargs)
        finally:
            self.seconds += time.perf_counter() - started


def run_once(loaded, settings, queries, images, timer: PreprocessTimer) -> tuple[float, float]:
    """(seconds, preprocessing seconds) of one pass of the package's batched path."""
    synchronize = torch.cuda.synchronize if loaded.device.type == "cuda" else (lambda device: None)
    synchronize(loaded.device)
    timer.seconds = 0.0
    started = time.perf_counter()
    answers = [a for batch in hf_backend.answer_queries(loaded, settings, queries, images) for a in batch]
    synchronize(loaded.device)
    seconds = time.perf_counter() - started
    assert sum(a.generated_tokens for a in answers) == len(queries) * settings.max_new_tokens, "EOS must be ignored"
    return seconds, timer.seconds


def measure(name, loaded, queries, images, args, batch_sizes) -> float | None:
    """Prints the hf table; returns batch 1's best seconds (the baseline), if measured."""
    weight_bytes = sum(p.numel() * p.element_size() for p in loaded.model.parameters())
    bandwidth = memory_bandwidth_bytes_per_second(loaded.device)
    print(
        f"\nmodel: {name}, {weight_bytes / 2**20:.1f} MiB of weights; device {loaded.device}"
        + (f" ({torch.cuda.get_device_name(loaded.device)})" if loaded.device.type == "cuda" else "")
    )
    if bandwidth:
        print(
            f"measured memory bandwidth: {bandwidth / 1e9:.0f} GB/s; decode roofline: {bandwidth / weight_bytes:.1f} steps/s"
        )
    print(
        f"{'batch':>5} {'warm-up':>7} {'s min':>7} {'s median':>8} {'queries/s':>9} {'tokens/s':>9} {'preproc':>7} "
        f"{'peak GiB':>8} {'roofline':>8} {'x batch 1':>9}"
    )
    timer = PreprocessTimer()
    hf_backend.prepare_batch = timer  # PreparedBatches looks it up at call time
    rows = {}
    try:
        for batch_size in batch_sizes:
            settings = hf_backend.HFSettings(
                model="benchmark",
                batch_size=batch_size,
                max_new_tokens=args.new_tokens,
                ignore_eos=True,
                num_workers=args.num_workers,
            )
            if loaded.device.type == "cuda":
                torch.cuda.empty_cache()
                torch.cuda.reset_peak_memory_stats(loaded.device)
            warm_up, _ = run_once(loaded, settings, queries, images, timer)  # warm-up, not in the statistics
            rows[batch_size] = [run_once(loaded, settings, queries, images, timer) for _ in range(args.repeats)]
            runs = rows[batch_size]
            best = min(seconds for seconds, _ in runs)
            median = statistics.median(seconds for seconds, _ in runs)
            share = statistics.median(pre / seconds for seconds, pre in runs)
            steps = -(-len(queries) // batch_size) * args.new_tokens  # decode steps: one per token per batch
            roofline = f"{steps / best / (bandwidth / weight_bytes):8.1%}" if bandwidth else f"{'n/a':>8}"
            peak = (
                f"{torch.cuda.max_memory_allocated(loaded.device) / 2**30:8.1f}"
                if loaded.device.type == "cuda"
                else f"{'n/a':>8}"
            )
            baseline = min(seconds for seconds, _ in rows[1]) if 1 in rows else None
            ratio = f"{baseline / best:8.2f}x" if baseline else f"{'-':>9}"
            print(
                f"{batch_size:>5} {warm_up:7.2f} {best:7.2f} {median:8.2f} {len(queries) / best:9.2f} "
                f"{len(queries) * args.new_tokens / best:9.1f} {share:7.0%} {peak} {roofline} {ratio}"
            )
    finally:
        hf_backend.prepare_batch = timer._real
    return min(seconds for seconds, _ in rows[1]) if 1 in rows else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", help="built dataset folder (default: build ../shared/data into a temp folder)")
    parser.add_argument("--cpu", action="store_true", help="tiny random-weight models on CPU (a real measurement)")
    parser.add_argument("--images", type=int, help="default: 64 (GPU), 32 (--cpu)")
    parser.add_argument("--new-tokens", type=int, help="default: 256 (GPU), 32 (--cpu)")
    parser.add_argument("--batch-sizes", help="default: 1,16,32,64 (GPU), 1,4,8,16 (--cpu); 1 is the baseline")
    parser.add_argument("--num-workers", type=int, help="default: min(4, cores) (GPU), 0 (--cpu, timed in process)")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per setting, after one warm-up")
    parser.add_argument("--threads", type=int, default=1, help="torch threads in --cpu mode (see below)")
    parser.add_argument(
        "--engines",
        help="hf, vllm or hf,vllm (default: hf,vllm on GPU, hf with --cpu; vllm on CPU: the tiny Qwen2.5-VL)",
    )
    args = parser.parse_args()
    engines = (args.engines or ("hf" if args.cpu else "hf,vllm")).split(",")
    cores = len(os.sched_getaffinity(0))
    args.images = args.images or (32 if args.cpu else 64)
    args.new_tokens = args.new_tokens or (32 if args.cpu else 256)
    args.num_workers = min(cores, args.num_workers if args.num_workers is not None else (0 if args.cpu else 4))
    batch_sizes = [int(b) for b in (args.batch_sizes or ("1,4,8,16" if args.cpu else "1,16,32,64")).split(",")]
    batch_sizes = sorted(set(batch_sizes), key=lambda b: (b != 1, batch_sizes.index(b)))  # the baseline first
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    if args.cpu:
        # One intra-op thread: on a shared 2-core machine, OpenMP threads that outnumber the free
        # cores spin at every barrier; measured there, 32 tokens of the tiny LLaVA took 13 s with
        # 2 threads against 2.6 s with 1.
        torch.set_num_threads(args.threads)

    with tempfile.TemporaryDirectory(prefix="gpu-generate-") as temporary:
        work = Path(temporary)
        dataset_dir = args.dataset or str(build_release(raw_data_dir(), work / "release").out)
        dataset, queries = distinct_image_queries(load_config(dataset_dir, "codis"), args.images)
        images = undecoded_images(dataset)
        print(
            f"{len(queries)} queries on distinct real CODIS images, {args.new_tokens} new tokens each (EOS ignored); "
            f"{cores} CPU cores, {torch.get_num_threads()} torch threads, {args.num_workers} DataLoader workers; "
            f"one warm-up + {args.repeats} timed runs per setting"
        )
        baselines = {}  # hf batch 1 per model: vllm's rows are compared with the same architecture's
        if "hf" in engines:
            models = (
                tiny_models_on_cpu(work) if args.cpu else [("Qwen2.5-VL-7B, random bf16 weights", full_size_model())]
            )
            for name, loaded in models:
                baselines[name] = measure(name, loaded, queries, images, args, batch_sizes)
            del models, loaded
            if torch.cuda.is_available():
                torch.cuda.empty_cache()  # the hf model's memory back before vLLM takes its share
        if "vllm" in engines and args.cpu:
            import tiny_models

            folder = tiny_models.build_tiny_qwen2_5_vl(work / "tiny-qwen-vllm", hidden_size=128)
            cpu = {"dtype": "float32", "enforce_eager": True, "max_model_len": 4096}
            measure_vllm(folder, queries, images, args, batch_sizes, baselines.get("tiny Qwen2.5-VL"), **cpu)
        elif "vllm" in engines:
            gpu = {"dtype": "bfloat16", "max_model_len": 8192, "gpu_memory_utilization": 0.85, "load_format": "dummy"}
            baseline = baselines.get("Qwen2.5-VL-7B, random bf16 weights")
            measure_vllm(full_size_vllm_folder(work), queries, images, args, batch_sizes, baseline, **gpu)


if __name__ == "__main__":
    main()
