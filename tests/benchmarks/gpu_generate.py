"""Generation throughput: one query at a time versus this package's batched hf path.

A full-size Qwen2.5-VL-7B-Instruct (its public config, written out below;
random bf16 weights, nothing downloaded) and the real Qwen2.5-VL processor
from the shared ``models/`` folder answer one CODIS query (context 1) on each of 64
distinct real images of the built ``codis`` config, generating exactly
``--new-tokens`` tokens per query (EOS ignored). The same
``hf_backend.answer_queries`` runs with batch size 1 (what the official
scripts and most harnesses do), 16 and 32, in one process, and the script
prints per setting: queries/s, generated tokens/s, peak GPU memory, and the
share of the decode roofline (decode steps per second achieved over
measured memory bandwidth / bytes of weights read per step). Prefill time is
included in the rates. Target: batch 16/32 >= 8x batch 1.

    # on a GPU machine (needs torchvision for the Qwen processor)
    .venv/bin/python tests/benchmarks/gpu_generate.py
    # smoke test anywhere: tiny random LLaVA on CPU, few images, few tokens
    .venv/bin/python tests/benchmarks/gpu_generate.py --tiny --images 8 --new-tokens 16 --batch-sizes 1,4
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402
from shared_files import raw_data_dir, shared_path  # noqa: E402

from cogbench.cards.release import build_release  # noqa: E402
from cogbench.dataset_builders.load import load_config  # noqa: E402
from cogbench.reference_eval.backends import hf as hf_backend  # noqa: E402
from cogbench.reference_eval.tasks import build_queries, undecoded_images  # noqa: E402

PROCESSOR_DIR = shared_path("models", "qwen2.5-vl-7b-instruct-processor")

# Qwen/Qwen2.5-VL-7B-Instruct config.json (public), the fields that shape compute.
QWEN2_5_VL_7B = {
    "text_config": {
        "vocab_size": 152064, "hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28,
        "num_attention_heads": 28, "num_key_value_heads": 4, "hidden_act": "silu", "rms_norm_eps": 1e-06,
        "max_position_embeddings": 128000, "use_sliding_window": False, "sliding_window": 32768,
        "max_window_layers": 28, "tie_word_embeddings": False,
        "rope_parameters": {"rope_type": "default", "mrope_section": [16, 24, 24], "rope_theta": 1000000.0},
        "bos_token_id": 151643, "eos_token_id": 151645,
    },
    "vision_config": {
        "depth": 32, "hidden_size": 1280, "intermediate_size": 3420, "num_heads": 16, "in_channels": 3,
        "out_hidden_size": 3584, "patch_size": 14, "spatial_merge_size": 2, "temporal_patch_size": 2,
        "window_size": 112, "fullatt_block_indexes": [7, 15, 23, 31], "tokens_per_second": 2, "hidden_act": "silu",
    },
    "image_token_id": 151655, "video_token_id": 151656,
    "vision_start_token_id": 151652, "vision_end_token_id": 151653,
}


def full_size_model() -> hf_backend.LoadedModel:
    from transformers import AutoProcessor, Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration

    device = torch.device("cuda")
    processor = AutoProcessor.from_pretrained(PROCESSOR_DIR)
    processor.tokenizer.padding_side = "left"
    config = Qwen2_5_VLConfig(**QWEN2_5_VL_7B)
    torch.manual_seed(0)
    with device:
        model = Qwen2_5_VLForConditionalGeneration._from_config(config, dtype=torch.bfloat16, attn_implementation="sdpa")
    model.eval()
    model.generation_config.eos_token_id = 151645
    model.generation_config.pad_token_id = processor.tokenizer.pad_token_id
    return hf_backend.LoadedModel(processor, model, device, torch.bfloat16)


def tiny_model(work: Path) -> hf_backend.LoadedModel:
    from tiny_models import build_tiny_llava

    return hf_backend.load_model(hf_backend.HFSettings(model=str(build_tiny_llava(work / "tiny-llava")), device="cpu"))


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", help="built dataset folder (default: build ../shared/data into a temp folder)")
    parser.add_argument("--images", type=int, default=64)
    parser.add_argument("--new-tokens", type=int, default=256)
    parser.add_argument("--batch-sizes", default="1,16,32")
    parser.add_argument("--num-workers", type=int, default=4)
    parser.add_argument("--tiny", action="store_true", help="tiny random LLaVA on CPU: a smoke test of this script")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

    with tempfile.TemporaryDirectory(prefix="gpu-generate-") as temporary:
        work = Path(temporary)
        dataset_dir = args.dataset or str(build_release(raw_data_dir(), work / "release").out)
        dataset, queries = distinct_image_queries(load_config(dataset_dir, "codis"), args.images)
        images = undecoded_images(dataset)
        loaded = tiny_model(work) if args.tiny else full_size_model()
        weight_bytes = sum(p.numel() * p.element_size() for p in loaded.model.parameters())
        bandwidth = memory_bandwidth_bytes_per_second(loaded.device)
        print(f"model: {'tiny LLaVA (CPU)' if args.tiny else 'Qwen2.5-VL-7B, random bf16 weights'}, "
              f"{weight_bytes / 2**30:.2f} GiB of weights; device {loaded.device}"
              + (f" ({torch.cuda.get_device_name(loaded.device)})" if loaded.device.type == "cuda" else ""))
        if bandwidth:
            print(f"measured memory bandwidth: {bandwidth / 1e9:.0f} GB/s; "
                  f"decode roofline: {bandwidth / weight_bytes:.1f} steps/s")
        print(f"{len(queries)} queries on distinct images, {args.new_tokens} new tokens each (EOS ignored)\n")

        def run(batch_size: int, some: list) -> tuple[float, int]:
            settings = hf_backend.HFSettings(
                model="benchmark", batch_size=batch_size, max_new_tokens=args.new_tokens, ignore_eos=True,
                num_workers=args.num_workers,
            )
            if loaded.device.type == "cuda":
                torch.cuda.synchronize(loaded.device)
            started = time.perf_counter()
            answers = [a for batch in hf_backend.answer_queries(loaded, settings, some, images) for a in batch]
            if loaded.device.type == "cuda":
                torch.cuda.synchronize(loaded.device)
            generated = sum(a.generated_tokens for a in answers)
            assert generated == len(some) * args.new_tokens, "EOS must be ignored: every query generates the same count"
            return time.perf_counter() - started, generated

        run(2, queries[:2])  # warm-up: kernels, allocator, worker start-up
        header = f"{'batch':>5} {'seconds':>8} {'queries/s':>10} {'tokens/s':>10} {'peak GiB':>9} {'roofline':>9} {'speed-up':>9}"
        print(header)
        baseline = None
        for batch_size in [int(b) for b in args.batch_sizes.split(",")]:
            if loaded.device.type == "cuda":
                torch.cuda.empty_cache()
                torch.cuda.reset_peak_memory_stats(loaded.device)
            seconds, generated = run(batch_size, queries)
            rate = len(queries) / seconds
            baseline = baseline or rate
            steps = -(-len(queries) // batch_size) * args.new_tokens  # decode steps: one per token per batch
            roofline = f"{steps / seconds / (bandwidth / weight_bytes):9.1%}" if bandwidth else f"{'n/a':>9}"
            peak = f"{torch.cuda.max_memory_allocated(loaded.device) / 2**30:9.1f}" if loaded.device.type == "cuda" else f"{'n/a':>9}"
            print(f"{batch_size:>5} {seconds:8.1f} {rate:10.2f} {generated / seconds:10.1f} {peak} {roofline} {rate / baseline:8.1f}x")


if __name__ == "__main__":
    main()
