"""The ``hf:`` model backend: any transformers image-text-to-text model, batched.

How a batch is made, and why:

- the model's own processor and chat template build every prompt (one image,
  then the text), so each model sees its native input format;
- queries are sorted by estimated prompt length (text tokens + image tokens)
  and cut into batches of neighbours, so little compute goes to padding;
- padding is on the left with an attention mask, and decoding is greedy, so a
  query's answer does not depend on what else is in its batch;
- image decoding and preprocessing run in ``DataLoader`` worker processes, one
  batch ahead of the GPU;
- a reply that ends without EOS used the whole ``max_new_tokens``: its finish reason is ``length``
  (a thinking model cut inside its reasoning), else ``stop``, as OpenAI-compatible servers say;
- ``thinking`` on/off reaches the chat template as ``enable_thinking`` (Qwen3-style templates read
  it; a template that does not is rendered the same, Jinja ignores unused variables); ``auto``
  passes nothing, so the template's own default holds. Each answer records whether the rendered
  generation prompt ended in an opening think tag (``think_opened``): scoring then knows whether a
  reply without tags is reasoning or answer (answers/reasoning.py);
- on CUDA: bfloat16 weights, SDPA attention, ``torch.inference_mode``.
  On CPU: float32 (slow, but that is how the tests run);
- a batch that runs out of memory (``torch.OutOfMemoryError``) is split in
  half and retried, down to one query; the largest size that then worked is
  kept for the rest of the run (``BatchLimit``), so one long prompt costs one
  retry, not a crash. Greedy answers do not depend on the batch, so they stay
  the same. A single query that still does not fit is an error naming it.

Imported only by ``cogbench eval`` (torch and transformers load here).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

import torch

from cogbench.errors import CogbenchError
from cogbench.reference_eval.answers.reasoning import prompt_opens_think
from cogbench.reference_eval.loading.model_checks import load_checked
from cogbench.reference_eval.tasks.queries import Answer, Query, image_size, query_image


@dataclass(frozen=True)
class HFSettings:
    model: str  # Hub id or local folder
    batch_size: int = 16
    max_new_tokens: int = 512
    ignore_eos: bool = False  # always generate max_new_tokens (benchmarks only)
    device: str | None = None  # None: this rank's CUDA device if any, else CPU
    trust_remote_code: bool = False
    num_workers: int = 2  # image decoding/preprocessing processes
    thinking: str = "auto"  # "on"/"off": the chat template's ``enable_thinking``; "auto": its default


@dataclass
class LoadedModel:
    processor: Any
    model: Any
    device: torch.device
    dtype: torch.dtype


def pick_device(requested: str | None) -> torch.device:
    if requested:
        return torch.device(requested)
    if torch.cuda.is_available():
        return torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
    return torch.device("cpu")


def pick_dtype(device: torch.device) -> torch.dtype:
    return torch.bfloat16 if device.type == "cuda" else torch.float32


def load_model(settings: HFSettings) -> LoadedModel:
    """Processor and model from a Hub id or folder, ready for batched greedy decoding."""
    from transformers import AutoModelForImageTextToText, AutoProcessor

    device = pick_device(settings.device)
    dtype = pick_dtype(device)
    processor = AutoProcessor.from_pretrained(settings.model, trust_remote_code=settings.trust_remote_code)
    _ready_for_batches(processor, settings.model)
    # Checked: a checkpoint with missing weights is refused before any query (model_checks).
    model = load_checked(
        AutoModelForImageTextToText,
        settings.model,
        dtype=dtype,
        attn_implementation="sdpa",
        trust_remote_code=settings.trust_remote_code,
    )
    model.to(device).eval()
    return LoadedModel(processor, model, device, dtype)


def _ready_for_batches(processor, name: str) -> None:
    """Left padding (batched generation) and a pad token; a chat template is needed to build prompts."""
    tokenizer = processor.tokenizer
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    if not getattr(processor, "chat_template", None):
        raise ValueError(f"{name}: the processor has no chat template; cannot build prompts")


def use_loaded(model, processor) -> LoadedModel:
    """An already-loaded model and its processor (the Python API, a training callback), used where they are.

    The model is put in eval mode and the tokenizer pads on the left; the caller restores both
    (``reference_eval/api``), since a training loop shares them.
    """
    _ready_for_batches(processor, type(model).__name__)
    model.eval()
    return LoadedModel(processor, model, model.device, model.dtype)


def template_options(thinking: str = "auto") -> dict[str, Any]:
    """Extra chat-template variables: ``enable_thinking`` when the thinking setting is on or off."""
    return {"enable_thinking": thinking == "on"} if thinking in ("on", "off") else {}


def chat_prompt(processor, prompt: str, with_image: bool = True, thinking: str = "auto") -> str:
    """One user turn (the image, then the prompt) through the model's chat template; no image for a blind query."""
    content = [{"type": "image"}] if with_image else []
    messages = [{"role": "user", "content": [*content, {"type": "text", "text": prompt}]}]
    return processor.apply_chat_template(
        messages, add_generation_prompt=True, tokenize=False, **template_options(thinking)
    )


def _image_tokens(processor, width: int, height: int) -> int:
    """Image tokens the processor will insert for this size (0 when it cannot say)."""
    counter = getattr(processor, "_get_num_multimodal_tokens", None)
    if counter is None:
        return 0
    try:
        return int(counter(image_sizes=[(height, width)]).num_image_tokens[0])
    except Exception:  # processors differ in what they support; the estimate is only for sorting
        return 0


def length_sorted_batches(
    queries: list[Query], images, processor, batch_size: int, thinking: str = "auto"
) -> list[list[Query]]:
    """Batches of queries with similar prompt lengths, longest first (memory errors show early)."""
    tokenizer = processor.tokenizer
    lengths = {}
    for query in queries:
        prompt = chat_prompt(processor, query.prompt, query.with_image, thinking)
        text_tokens = len(tokenizer(prompt, add_special_tokens=False)["input_ids"])
        lengths[query.key] = text_tokens
        if query.with_image:
            width, height = image_size(images[query.row]["image"])
            lengths[query.key] += _image_tokens(processor, width, height)
    ordered = sorted(queries, key=lambda q: -lengths[q.key])
    return [ordered[start : start + batch_size] for start in range(0, len(ordered), batch_size)]


class PreparedBatches(torch.utils.data.Dataset):
    """Batch ``i`` as model inputs: images decoded and processed (runs in a worker)."""

    def __init__(self, batches: list[list[Query]], images, processor, thinking: str = "auto"):
        self.batches = batches
        self.images = images
        self.processor = processor
        self.thinking = thinking

    def __len__(self) -> int:
        return len(self.batches)

    def __getitem__(self, index: int):
        return index, prepare_batch(self.batches[index], self.images, self.processor, self.thinking)


def prepare_batch(batch: list[Query], images, processor, thinking: str = "auto"):
    """One batch as model inputs: images decoded, prompts templated, padded on the left."""
    pictures = [query_image(query, images) for query in batch if query.with_image]
    texts = [chat_prompt(processor, query.prompt, query.with_image, thinking) for query in batch]
    return processor(text=texts, images=pictures or None, return_tensors="pt", padding=True)


@dataclass
class BatchLimit:
    """The largest batch that fits: starts at the requested size, halves on out-of-memory.

    ``on_cut(size)`` is called once each time a smaller size has worked after a
    cut (the runner records it in ``run.json`` and prints it).
    """

    size: int
    on_cut: Callable[[int], None] | None = None
    cut_pending: bool = False

    def halve(self, failed_size: int) -> None:
        self.size = min(self.size, max(1, failed_size // 2))
        self.cut_pending = True

    def worked(self) -> None:
        if self.cut_pending:
            self.cut_pending = False
            if self.on_cut is not None:
                self.on_cut(self.size)


def generation_config(loaded: LoadedModel, settings: HFSettings):
    """Greedy decoding; the model's own EOS ids, its sampling defaults dropped."""
    from transformers import GenerationConfig

    own = loaded.model.generation_config
    tokenizer = loaded.processor.tokenizer
    config = GenerationConfig(
        do_sample=False,
        num_beams=1,
        max_new_tokens=settings.max_new_tokens,
        eos_token_id=own.eos_token_id if own.eos_token_id is not None else tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=own.bos_token_id,
    )
    if settings.ignore_eos:
        config.min_new_tokens = settings.max_new_tokens
    return config


def recorded_settings(settings: HFSettings, loaded: tuple[Any, Any] | None = None) -> dict[str, Any]:
    """What goes into every prediction's ``generation`` field (batch size excluded: it must not matter).

    ``loaded``: an already-loaded (model, processor), whose own dtype is what runs.
    """
    dtype = loaded[0].dtype if loaded is not None else pick_dtype(pick_device(settings.device))
    return {
        "backend": "hf",
        "decoding": "greedy",
        "max_new_tokens": settings.max_new_tokens,
        "ignore_eos": settings.ignore_eos,
        "dtype": str(dtype).removeprefix("torch."),
        "attention": "sdpa",
        "thinking": settings.thinking,
    }


def _eos_ids(config) -> set[int]:
    eos = config.eos_token_id
    return set(eos) if isinstance(eos, (list, tuple)) else ({eos} if eos is not None else set())


def _generated_counts(new_tokens: torch.Tensor, eos_ids: set[int]) -> list[tuple[int, str]]:
    """Tokens each row really generated (up to and including its first EOS) and why it stopped:
    ``stop`` at an EOS, ``length`` when the row ran to the budget without one."""
    counts = []
    for row in new_tokens.tolist():
        count, finish = len(row), "length"
        for position, token in enumerate(row):
            if token in eos_ids:
                count, finish = position + 1, "stop"
                break
        counts.append((count, finish))
    return counts


def _generate_texts(loaded: LoadedModel, config, inputs) -> tuple[list[str], list[tuple[int, str]]]:
    # Floating-point inputs (pixel values) take the model's dtype; ids and masks keep theirs.
    inputs = inputs.to(loaded.device, dtype=loaded.dtype, non_blocking=True)
    output_ids = loaded.model.generate(**inputs, generation_config=config)
    new_tokens = output_ids[:, inputs["input_ids"].shape[1] :].cpu()
    texts = loaded.processor.tokenizer.batch_decode(new_tokens, skip_special_tokens=True)
    return texts, _generated_counts(new_tokens, _eos_ids(config))


def _release_memory(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.empty_cache()


def _answers_fitting(
    loaded, config, batch: list[Query], inputs, images, limit: BatchLimit, thinking: str = "auto"
) -> Iterator[list[Answer]]:
    """Answers for ``batch``, split in halves (inputs rebuilt here) while it runs out of memory."""
    if inputs is not None and len(batch) <= limit.size:
        started = time.perf_counter()
        try:
            texts, counts = _generate_texts(loaded, config, inputs)
        except torch.OutOfMemoryError:
            _release_memory(loaded.device)
            if len(batch) == 1:
                query = batch[0]
                raise CogbenchError(
                    f"{query.name}: out of memory on {loaded.device} even alone "
                    "(batch size 1); everything answered before it is saved: free memory, lower --max-new-tokens "
                    "or use a larger device, then run the same command again to resume"
                ) from None
            limit.halve(len(batch))
        else:
            limit.worked()
            seconds = (time.perf_counter() - started) / len(texts)
            yield [
                Answer(query, text.strip(), seconds, count, finish_reason=finish)
                for query, text, (count, finish) in zip(batch, texts, counts)
            ]
            return
    start = 0
    while start < len(batch):  # the size may shrink again inside a part
        part = batch[start : start + limit.size]
        inputs = prepare_batch(part, images, loaded.processor, thinking)
        yield from _answers_fitting(loaded, config, part, inputs, images, limit, thinking)
        start += len(part)


def answer_queries(
    loaded: LoadedModel,
    settings: HFSettings,
    queries: list[Query],
    images,
    on_batch_cut: Callable[[int], None] | None = None,
) -> Iterator[list[Answer]]:
    """Generate for ``queries`` batch by batch; ``images`` is the undecoded image column.

    ``on_batch_cut(size)`` hears the batch size kept after an out-of-memory split.
    """
    if not queries:
        return
    opened = template_opens_think(loaded.processor, settings.thinking)
    batches = length_sorted_batches(queries, images, loaded.processor, settings.batch_size, settings.thinking)
    loader = torch.utils.data.DataLoader(
        PreparedBatches(batches, images, loaded.processor, settings.thinking),
        batch_size=None,  # items are whole batches already
        shuffle=False,
        num_workers=settings.num_workers,
        pin_memory=loaded.device.type == "cuda",
        prefetch_factor=2 if settings.num_workers > 0 else None,
        persistent_workers=False,
    )
    config = generation_config(loaded, settings)
    limit = BatchLimit(settings.batch_size, on_batch_cut)
    with torch.inference_mode():
        for index, inputs in loader:
            for answers in _answers_fitting(loaded, config, batches[index], inputs, images, limit, settings.thinking):
                yield [replace(answer, think_opened=opened) for answer in answers]


def template_opens_think(processor, thinking: str = "auto") -> bool:
    """Whether the chat template's generation prompt, with this thinking setting, ends in an opening think tag
    (DeepSeek-R1's, Qwen3-Thinking's ``<think>``): then every reply begins inside the block."""
    return prompt_opens_think(chat_prompt(processor, "", False, thinking))
