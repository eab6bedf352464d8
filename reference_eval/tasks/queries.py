"""Tasks: turn the rows of a loaded config into the queries a model answers.

This is the "task" of the task / model / metric split: it knows the dataset's
columns and the prompts, and nothing about models. Queries carry the row index
rather than the image, so that images are decoded later, in the data-loading
workers, next to the model.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, replace

from cogbench.reference_eval.tasks.image_variants import open_variant
from cogbench.reference_eval.tasks.prompts import PromptTemplate, template_for
from cogbench.schemas.vocabulary import CHOICE_COLUMNS, ID_COLUMN

DESCRIPTION_MODES = ("spontaneous", "directed")
ROTATIONS = (0, 1, 2, 3)  # circular VQA (eval --circular); scored by ``metrics.circular``

# Generated tokens per query at most, by task (`eval --max-new-tokens` overrides): a description
# is a paragraph or more (CogBench Section 3.2.1), a VQA reply a letter with perhaps a sentence
# around it, a CODIS reply a short chain of thought and its answer (CODIS Table 11's prompt).
DEFAULT_MAX_NEW_TOKENS = {"description": 1024, "vqa": 32, "codis": 512}
# With `eval --thinking on`, every task's default: the reasoning comes before the answer and is far
# longer than it. 32768 is the output length the Qwen3 model cards recommend for thinking mode
# ("Best Practices: Adequate Output Length ... 32,768 tokens for most queries"); a budget of 32 or
# 512 would cut nearly every reply inside its reasoning (counted as truncated, no answer).
THINKING_MAX_NEW_TOKENS = 32768


def rotate(choices, answer: int, rotation: int) -> tuple[list, int]:
    """Rotation r puts original option (i + r) mod n at position i; returns the options and the right one's new position."""
    n = len(choices)
    return [choices[(i + rotation) % n] for i in range(n)], (answer - rotation) % n


@dataclass(frozen=True)
class Query:
    """One request to a model: a prompt about one image."""

    item_id: str
    query: int | None  # 1 or 2 for the two contexts of a CODIS pair, 0-3 for a circular VQA rotation, else None
    row: int  # index of the dataset row that holds the image
    prompt: str
    with_image: bool = True  # False for the blind baseline (eval --no-image)
    variant: str | None = (
        None  # the image variant it shows (eval --image-variant, tasks.image_variants); None: the image
    )

    @property
    def key(self) -> tuple[str, int | None, str | None]:
        return (self.item_id, self.query, self.variant)

    @property
    def name(self) -> str:
        """How failure lines name it: ``item ID`` and, for a CODIS context or a rotation, ``query N``; a variant."""
        return (
            f"item {self.item_id}"
            + (f" query {self.query}" if self.query is not None else "")
            + (f" variant {self.variant}" if self.variant is not None else "")
        )


@dataclass(frozen=True)
class Answer:
    """A model's reply to one query, with what it cost."""

    query: Query
    output: str  # the reply text as the model wrote it (an inline think block included)
    seconds: float  # wall time of its batch divided by the batch's size
    generated_tokens: int | None  # None when the backend cannot tell
    # A thinking model's reasoning from a separate field of the reply (`reasoning_content`,
    # `reasoning`), why generation stopped ("stop", "length", or "" when the backend cannot tell)
    # and the reasoning tokens where reported: `answers.reasoning.split_reply` reads all three.
    reasoning: str = ""
    finish_reason: str = ""
    reasoning_tokens: int | None = None
    # Whether the chat template's generation prompt opened a think block (the reply begins inside it);
    # None where the backend did not render the template (`answers.reasoning.thinking_state`).
    think_opened: bool | None = None
    refusal: str = ""  # an API's `message.refusal` (the openai: backend); "" when none was given


def build_queries(
    task: str,
    dataset,
    mode: str = "spontaneous",
    circular: bool = False,
    with_image: bool = True,
    no_context: bool = False,
    variants: tuple[str, ...] = (),
) -> tuple[PromptTemplate, list[Query]]:
    """All queries of a config in dataset order, and the template they use.

    ``circular`` (VQA): each question four times, options rotated (``metrics.circular``), query = rotation.
    ``with_image=False``: the same prompts, sent without the image (blind baseline).
    ``no_context`` (codis): both queries of a pair are asked without their
    context (CODIS Section 4.2), so each query's with- and without-context
    answers can be compared; they share one prompt and keep their numbers.
    ``variants`` (vqa, codis): each item's queries again on each image variant, right after the item's own.
    """
    template = template_for(task, mode, no_context)
    text_columns = [name for name in dataset.column_names if name != "image"]
    rows = dataset.select_columns(text_columns)
    id_column = ID_COLUMN[task]
    queries: list[Query] = []
    for index, row in enumerate(rows):
        start = len(queries)
        item_id = str(row[id_column])
        if task == "description":
            queries.append(Query(item_id, None, index, template.render(), with_image))
        elif task == "vqa":
            choices = [row[name] for name in CHOICE_COLUMNS]
            for rotation in ROTATIONS if circular else (None,):
                shown = rotate(choices, 0, rotation)[0] if rotation is not None else choices
                prompt = template.render(question=row["question"], **dict(zip(CHOICE_COLUMNS, shown)))
                queries.append(Query(item_id, rotation, index, prompt, with_image))
        else:  # codis: one query per context
            for number in (1, 2):
                context = {} if no_context else {"context": row[f"context_{number}"]}
                prompt = template.render(question=row["question"], **context)
                queries.append(Query(item_id, number, index, prompt, with_image))
        own = queries[start:]
        queries += [replace(q, variant=name) for name in variants for q in own]
    return template, queries


def undecoded_images(dataset):
    """The image column as raw bytes/paths, so that decoding can happen in workers."""
    import datasets

    return dataset.select_columns(["image"]).cast_column("image", datasets.Image(decode=False))


def open_image(value: dict):
    """Decode one undecoded ``datasets.Image`` value into an RGB PIL image."""
    from PIL import Image

    if value.get("bytes") is not None:
        image = Image.open(io.BytesIO(value["bytes"]))
    else:
        image = Image.open(value["path"])
    return image.convert("RGB")


def query_image(query: Query, images):
    """The RGB PIL image ``query`` shows: its row's image, or that image's variant (``tasks.image_variants``)."""
    value = images[query.row]["image"]
    return open_variant(query.variant, value) if query.variant is not None else open_image(value)


def image_size(value: dict) -> tuple[int, int]:
    """Width and height from the image header alone (no pixel decoding)."""
    from PIL import Image

    source = io.BytesIO(value["bytes"]) if value.get("bytes") is not None else value["path"]
    with Image.open(source) as image:
        return image.size
