"""Small vision-language models built in the tests: real architectures, random weights.

Nothing is downloaded. The tiny LLaVA (``cogbench demo tiny-model``'s, built by the package's own code) uses
the CLIP image processor's PIL backend (no torchvision) and the real Qwen2.5-VL tokenizer and chat template
from the shared ``models/`` folder (see ``shared_files.py``), so prompts go through the same processor, chat
template and ``generate`` code as a released model's.
"""

from __future__ import annotations

import json
from pathlib import Path

from cogbench.reference_eval.demo.tiny_model import IMAGE_TOKEN, tokenizer_and_chat_template
from cogbench.reference_eval.demo.tiny_model import build_tiny_llava as demo_tiny_llava

from shared_files import shared_path

QWEN_PROCESSOR_DIR = shared_path("models", "qwen2.5-vl-7b-instruct-processor")


def qwen_tokenizer_and_chat_template():
    """The real Qwen2.5-VL tokenizer and chat template, for the tiny models that reuse them."""
    return tokenizer_and_chat_template(QWEN_PROCESSOR_DIR)


def same_prompt_other_image(built_release):
    """Two CODIS rows with the same question and contexts but different images (ids: the first's, "copy")."""
    from datasets import concatenate_datasets

    from cogbench.dataset_builders.load import load_config

    codis = load_config(str(built_release), "codis")
    first = codis.select([0])
    other = next(i for i, image_id in enumerate(codis["image_id"]) if image_id != first[0]["image_id"])
    same_text = codis.select([other]).map(
        lambda row: {k: first[0][k] for k in ("id", "question", "context_1", "context_2")} | {"id": "copy"}
    )
    return concatenate_datasets([first, same_text]), first[0]["id"]


def thinking_chat_template() -> str:
    """The Qwen2.5-VL chat template with Qwen3's thinking switch in its generation prompt:
    ``enable_thinking`` true opens a think block (``<think>\\n``, as Qwen3-VL Thinking's template does),
    false writes an empty one (``<think>\\n\\n</think>\\n\\n``, Qwen3's), unset writes nothing."""
    template = json.loads((QWEN_PROCESSOR_DIR / "chat_template.json").read_text())["chat_template"]
    prompt = "{% if add_generation_prompt %}<|im_start|>assistant\n"
    assert prompt in template
    return template.replace(
        prompt,
        prompt + "{% if enable_thinking is defined and enable_thinking %}<think>\n"
        "{% elif enable_thinking is defined %}<think>\n\n</think>\n\n{% endif %}",
    )


def opened_think_chat_template() -> str:
    """The Qwen2.5-VL chat template whose generation prompt always opens a think block (``<think>\\n``, no
    switch), as DeepSeek-R1's and Qwen3-Thinking-2507's do: a reply carries only ``...</think>answer``."""
    template = json.loads((QWEN_PROCESSOR_DIR / "chat_template.json").read_text())["chat_template"]
    prompt = "{% if add_generation_prompt %}<|im_start|>assistant\n"
    assert prompt in template
    return template.replace(prompt, prompt + "<think>\n")


def build_tiny_llava(out_dir: Path, seed: int = 0, chat_template: str | None = None) -> Path:
    """The random-weight LLaVA of ``cogbench demo tiny-model`` (one copy: ``cogbench.reference_eval.demo``), with the
    shared Qwen2.5-VL tokenizer files (``chat_template``: another template than Qwen2.5-VL's)."""
    return demo_tiny_llava(out_dir, QWEN_PROCESSOR_DIR, seed, chat_template)


def build_tiny_qwen2_5_vl(out_dir: Path, seed: int = 0, hidden_size: int = 64) -> Path:
    """A random-weight Qwen2.5-VL with the real Qwen2.5-VL processor files (needs torchvision to load).

    ``hidden_size=128`` is the variant served by vLLM in CI (.ci/run-vllm): its attention heads of 32.
    """
    import shutil

    import torch
    from transformers import Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration

    real = json.loads((QWEN_PROCESSOR_DIR / "config.json").read_text())
    config = Qwen2_5_VLConfig(
        text_config={
            "vocab_size": real["vocab_size"],
            "hidden_size": hidden_size,
            "intermediate_size": 2 * hidden_size,
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "initializer_range": 0.5,
            # The three mrope sections cover the head's frequency pairs (8 of head_dim 16 at hidden size 64).
            "rope_parameters": {
                "rope_type": "default",
                "mrope_section": _mrope_sections(hidden_size // 8),
                "rope_theta": 1000000.0,
            },
            "bos_token_id": real["bos_token_id"],
            "eos_token_id": real["eos_token_id"],
            "pad_token_id": 151643,
        },
        vision_config={
            "depth": 2,
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_heads": 2,
            "out_hidden_size": hidden_size,
            "fullatt_block_indexes": [1],
            "window_size": 112,
        },
        image_token_id=real["image_token_id"],
        video_token_id=real["video_token_id"],
        vision_start_token_id=real["vision_start_token_id"],
        vision_end_token_id=real["vision_end_token_id"],
    )
    torch.manual_seed(seed)
    model = Qwen2_5_VLForConditionalGeneration(config).eval()
    model.generation_config.eos_token_id = real["eos_token_id"]
    model.generation_config.pad_token_id = 151643
    out_dir = Path(out_dir)
    model.save_pretrained(out_dir)
    for name in ("chat_template.json", "preprocessor_config.json", "tokenizer_config.json", "vocab.json", "merges.txt"):
        shutil.copy(QWEN_PROCESSOR_DIR / name, out_dir / name)
    # Small images keep the CPU test quick: at most 16 x 16 patches of 14 px.
    preprocessor = json.loads((out_dir / "preprocessor_config.json").read_text())
    preprocessor["max_pixels"] = 224 * 224
    (out_dir / "preprocessor_config.json").write_text(json.dumps(preprocessor))
    return out_dir


def _mrope_sections(pairs: int) -> list[int]:
    """Temporal, height and width sections of Qwen2.5-VL's multimodal rotary embedding, summing to ``pairs``."""
    temporal = pairs // 4
    height = (pairs - temporal) // 2
    return [temporal, height, pairs - temporal - height]


def build_tiny_llava_onevision(out_dir: Path, seed: int = 0) -> Path:
    """A random-weight LLaVA-OneVision (SigLIP + Qwen2, anyres tiling) at 28 px tiles (needs torchvision)."""
    import torch
    from transformers import (
        LlavaOnevisionConfig,
        LlavaOnevisionForConditionalGeneration,
        LlavaOnevisionProcessor,
        Qwen2Config,
        SiglipVisionConfig,
    )
    from transformers.models.llava_onevision.image_processing_llava_onevision import LlavaOnevisionImageProcessor
    from transformers.models.llava_onevision.video_processing_llava_onevision import LlavaOnevisionVideoProcessor

    tokenizer, chat_template = qwen_tokenizer_and_chat_template()
    tile, patch = 28, 14
    pinpoints = [[tile, tile], [tile, 2 * tile], [2 * tile, tile], [2 * tile, 2 * tile]]
    processor = LlavaOnevisionProcessor(
        image_processor=LlavaOnevisionImageProcessor(
            size={"height": tile, "width": tile}, image_grid_pinpoints=pinpoints
        ),
        tokenizer=tokenizer,
        video_processor=LlavaOnevisionVideoProcessor(size={"height": tile, "width": tile}),
        num_image_tokens=(tile // patch) ** 2,
        vision_feature_select_strategy="full",
        image_token=IMAGE_TOKEN,
        video_token="<|video_pad|>",
        chat_template=chat_template,
    )
    config = LlavaOnevisionConfig(
        vision_config=SiglipVisionConfig(
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=2,
            image_size=tile,
            patch_size=patch,
        ),
        text_config=Qwen2Config(
            vocab_size=len(tokenizer),
            hidden_size=64,
            intermediate_size=128,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            initializer_range=0.5,
            eos_token_id=tokenizer.convert_tokens_to_ids("<|im_end|>"),
            pad_token_id=tokenizer.convert_tokens_to_ids("<|endoftext|>"),
        ),
        image_token_index=tokenizer.convert_tokens_to_ids(IMAGE_TOKEN),
        video_token_index=tokenizer.convert_tokens_to_ids("<|video_pad|>"),
        vision_feature_select_strategy="full",
        image_grid_pinpoints=pinpoints,
        vision_aspect_ratio="anyres_max_9",
    )
    torch.manual_seed(seed)
    model = LlavaOnevisionForConditionalGeneration(config).eval()
    model.generation_config.eos_token_id = config.text_config.eos_token_id
    model.generation_config.pad_token_id = config.text_config.pad_token_id
    out_dir = Path(out_dir)
    model.save_pretrained(out_dir)
    processor.save_pretrained(out_dir)
    return out_dir


# SmolVLM's chat template (HuggingFaceTB/SmolVLM-Instruct, chat_template.json): "User:<image>...".
SMOLVLM_CHAT_TEMPLATE = (
    "<|im_start|>{% for message in messages %}{{message['role'] | capitalize}}"
    "{% if message['content'][0]['type'] == 'image' %}{{':'}}{% else %}{{': '}}{% endif %}"
    "{% for line in message['content'] %}{% if line['type'] == 'text' %}{{line['text']}}"
    "{% elif line['type'] == 'image' %}{{ '<image>' }}{% endif %}{% endfor %}<end_of_utterance>\n{% endfor %}"
    "{% if add_generation_prompt %}{{ 'Assistant:' }}{% endif %}"
)


def build_tiny_idefics3(out_dir: Path, seed: int = 0) -> Path:
    """A random-weight Idefics3 (SmolVLM's architecture: SigLIP tiles + pixel shuffle + Llama) at 56 px tiles."""
    import torch
    from transformers import Idefics3Config, Idefics3ForConditionalGeneration, Idefics3Processor
    from transformers.models.idefics3.image_processing_idefics3 import Idefics3ImageProcessor

    tokenizer, _ = qwen_tokenizer_and_chat_template()
    tokenizer.add_special_tokens(
        {"additional_special_tokens": ["<fake_token_around_image>", "<image>", "<global-img>", "<end_of_utterance>"]}
    )
    tile, patch, scale = 56, 14, 2
    processor = Idefics3Processor(
        # Images up to 2 x 2 tiles of 56 px plus the global view.
        image_processor=Idefics3ImageProcessor(size={"longest_edge": 2 * tile}, max_image_size={"longest_edge": tile}),
        tokenizer=tokenizer,
        image_seq_len=(tile // patch) ** 2 // scale**2,
        chat_template=SMOLVLM_CHAT_TEMPLATE,
    )
    eos = tokenizer.convert_tokens_to_ids("<end_of_utterance>")
    config = Idefics3Config(
        vision_config={
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_hidden_layers": 2,
            "num_attention_heads": 2,
            "image_size": tile,
            "patch_size": patch,
        },
        text_config={
            "model_type": "llama",
            "vocab_size": len(tokenizer),
            "hidden_size": 64,
            "intermediate_size": 128,
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "initializer_range": 0.5,
            "eos_token_id": eos,
            "pad_token_id": tokenizer.convert_tokens_to_ids("<|endoftext|>"),
            "bos_token_id": None,
        },
        image_token_id=tokenizer.convert_tokens_to_ids("<image>"),
        scale_factor=scale,
    )
    torch.manual_seed(seed)
    model = Idefics3ForConditionalGeneration(config).eval()
    model.generation_config.eos_token_id = eos
    model.generation_config.pad_token_id = config.text_config.pad_token_id
    out_dir = Path(out_dir)
    model.save_pretrained(out_dir)
    processor.save_pretrained(out_dir)
    return out_dir
