"""A tiny random-weight LLaVA: a real architecture (CLIP vision tower + Qwen2 text model) with random weights.

Nothing of it is trained, so its answers are noise; it shows the whole ``eval`` path (processor, chat
template, ``generate``, scoring) on a CPU in seconds. Its tokenizer and chat template are Qwen2.5-VL's,
read from a local folder or downloaded from the Hub (the tokenizer files only, a few MB), so prompts go
through the same processor and template code as a released model's. ``cogbench demo tiny-model`` writes
one; the tests build theirs with the same function.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cogbench.errors import UsageError

TOKENIZER = "Qwen/Qwen2.5-VL-7B-Instruct"  # the Hub repo whose tokenizer and chat template the tiny model reuses
IMAGE_TOKEN = "<|image_pad|>"
# What save_pretrained writes for the model and its processor (the command's output folder: claim_output).
MODEL_FILES = ("*.json", "*.jinja", "*.safetensors", "*.txt", "*.model")


def tokenizer_and_chat_template(source: str | Path) -> tuple[Any, str]:
    """The tokenizer of ``source`` (a folder, or a Hub repo id) and its chat template.

    A folder's ``chat_template.json`` comes first (Qwen2.5-VL keeps its template there), then the one
    the tokenizer itself carries (``tokenizer_config.json``).
    """
    from transformers import AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(str(source))
    except (OSError, ValueError) as error:
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise UsageError(
            f"--tokenizer {source}: cannot load a tokenizer ({reason}); name a folder holding Qwen2.5-VL's "
            f"tokenizer files (vocab.json, merges.txt, tokenizer_config.json), or the Hub repo {TOKENIZER} "
            "where the Hub can be reached"
        ) from None
    local = Path(source) / "chat_template.json"
    template = json.loads(local.read_text(encoding="utf-8"))["chat_template"] if local.is_file() else None
    template = template or tokenizer.chat_template
    if not isinstance(template, str) or not template:
        raise UsageError(f"--tokenizer {source}: no chat template (chat_template.json or tokenizer_config.json)")
    return tokenizer, template


def build_tiny_llava(
    out_dir: str | Path, tokenizer: str | Path = TOKENIZER, seed: int = 0, chat_template: str | None = None
) -> Path:
    """Write a random-weight LLaVA (CLIP vision tower + Qwen2 text model) and its processor into ``out_dir``.

    ``tokenizer``: a folder or Hub repo with Qwen2.5-VL's tokenizer; ``chat_template``: another template
    than the tokenizer's own.
    """
    loaded, template = tokenizer_and_chat_template(tokenizer)
    return write_tiny_llava(out_dir, loaded, chat_template or template, seed)


def write_tiny_llava(out_dir: str | Path, loaded: Any, template: str, seed: int = 0) -> Path:
    """``build_tiny_llava`` with its tokenizer already loaded (``tokenizer_and_chat_template``)."""
    import torch
    from transformers import (
        CLIPVisionConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
        Qwen2Config,
    )
    from transformers.models.clip.image_processing_pil_clip import CLIPImageProcessorPil

    image_processor = CLIPImageProcessorPil(size={"shortest_edge": 56}, crop_size={"height": 56, "width": 56})
    processor = LlavaProcessor(
        image_processor=image_processor,
        tokenizer=loaded,
        patch_size=14,
        vision_feature_select_strategy="default",
        image_token=IMAGE_TOKEN,
        num_additional_image_tokens=1,  # CLIP's CLS token
        chat_template=template,
    )
    vision = CLIPVisionConfig(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        image_size=56,
        patch_size=14,
        projection_dim=32,
    )
    text = Qwen2Config(
        vocab_size=len(loaded),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        bos_token_id=loaded.convert_tokens_to_ids("<|endoftext|>"),
        eos_token_id=loaded.convert_tokens_to_ids("<|im_end|>"),
        pad_token_id=loaded.convert_tokens_to_ids("<|endoftext|>"),
        tie_word_embeddings=True,
        initializer_range=0.5,  # large random weights: varied, non-degenerate greedy text
    )
    config = LlavaConfig(
        vision_config=vision,
        text_config=text,
        image_token_index=loaded.convert_tokens_to_ids(IMAGE_TOKEN),
        vision_feature_select_strategy="default",
        vision_feature_layer=-1,
    )
    torch.manual_seed(seed)
    model = LlavaForConditionalGeneration(config).eval()
    model.generation_config.eos_token_id = text.eos_token_id
    model.generation_config.pad_token_id = text.pad_token_id
    out_dir = Path(out_dir)
    model.save_pretrained(out_dir)
    processor.save_pretrained(out_dir)
    return out_dir
