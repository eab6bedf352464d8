"""The hf backend through the real processor, chat template and generate(), on CPU in float32."""

from __future__ import annotations

from cogbench.dataset_builders.load import load_config
from cogbench.reference_eval.backends import hf as hf_backend
from cogbench.reference_eval.tasks.queries import build_queries, undecoded_images


def _answers(model_dir, dataset, task, batch_size, max_new_tokens=16, num_workers=0):
    settings = hf_backend.HFSettings(
        model=str(model_dir), batch_size=batch_size, max_new_tokens=max_new_tokens, num_workers=num_workers
    )
    loaded = hf_backend.load_model(settings)
    _, queries = build_queries(task, dataset)
    batches = list(hf_backend.answer_queries(loaded, settings, queries, undecoded_images(dataset)))
    return loaded, queries, batches


def _texts(batches):
    return {
        answer.query.key[:2]: answer.output for batch in batches for answer in batch
    }  # (item, query): no variants here


def test_prompt_goes_through_the_models_chat_template_with_its_image_tokens(tiny_llava, built_release):
    dataset = load_config(str(built_release), "vqa").select(range(1))
    loaded, queries, _ = _answers(tiny_llava, dataset, "vqa", batch_size=1, max_new_tokens=1)
    text = hf_backend.chat_prompt(loaded.processor, queries[0].prompt)
    assert text.startswith("<|im_start|>system\n")
    assert f"<|im_start|>user\n<|vision_start|><|image_pad|><|vision_end|>{queries[0].prompt}<|im_end|>\n" in text
    assert text.endswith("<|im_start|>assistant\n")
    batch = hf_backend.PreparedBatches([queries], undecoded_images(dataset), loaded.processor)[0][1]
    image_token = loaded.model.config.image_token_index
    assert int((batch["input_ids"] == image_token).sum()) == 16  # 4 x 4 CLIP patches of a 56 px crop


def test_batched_greedy_text_equals_one_at_a_time(tiny_llava, built_release):
    """Left padding + attention masks: a query's answer must not depend on its batch mates."""
    dataset = load_config(str(built_release), "vqa").select(range(7))
    loaded, _queries, single = _answers(tiny_llava, dataset, "vqa", batch_size=1)
    _, _, batched = _answers(tiny_llava, dataset, "vqa", batch_size=4, num_workers=1)
    assert [len(b) for b in batched] == [4, 3]
    # The batches really were padded: their prompts have different lengths.
    tokenizer = loaded.processor.tokenizer
    lengths = [
        len(tokenizer(hf_backend.chat_prompt(loaded.processor, a.query.prompt))["input_ids"]) for a in batched[0]
    ]
    assert len(set(lengths)) > 1
    assert _texts(batched) == _texts(single)
    assert len(set(_texts(single).values())) > 1  # the model says different things to different queries


def test_the_image_reaches_the_model(tiny_llava, built_release):
    """Same prompt, different pictures: the random model's answers differ."""
    from tiny_models import same_prompt_other_image

    dataset, first_id = same_prompt_other_image(built_release)
    _, queries, batches = _answers(tiny_llava, dataset, "codis", batch_size=4)
    assert queries[0].prompt == queries[2].prompt
    texts = _texts(batches)
    assert texts[(first_id, 1)] != texts[("copy", 1)]


def test_batches_hold_neighbours_in_prompt_length_longest_first(tiny_llava, built_release):
    dataset = load_config(str(built_release), "vqa").select(range(12))
    loaded = hf_backend.load_model(hf_backend.HFSettings(model=str(tiny_llava)))
    _, queries = build_queries("vqa", dataset)
    batches = hf_backend.length_sorted_batches(queries, undecoded_images(dataset), loaded.processor, batch_size=5)
    assert [len(b) for b in batches] == [5, 5, 2]
    assert sorted(q.key for b in batches for q in b) == sorted(q.key for q in queries)
    tokenizer = loaded.processor.tokenizer
    lengths = [
        len(tokenizer(hf_backend.chat_prompt(loaded.processor, q.prompt))["input_ids"]) for b in batches for q in b
    ]
    assert lengths == sorted(lengths, reverse=True) and lengths[0] > lengths[-1]
