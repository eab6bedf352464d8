"""The prompts are the papers' own words, and each query gets the right one."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from cogbench.dataset_builders.load import load_config
from cogbench.reference_eval.tasks import prompts
from cogbench.reference_eval.tasks.queries import build_queries

from shared_files import missing_message, shared_path

PAPERS = shared_path("papers")
COGBENCH_FINAL = PAPERS / "000_6dc3e33e0e23f358.txt"
CODIS = PAPERS / "002_32deffa052033b7d.txt"


def _paper(path: Path) -> str:
    if not path.is_file():
        pytest.skip(missing_message(path, "the paper text"))
    return " ".join(path.read_text(encoding="utf-8").split())


def test_description_prompts_are_quoted_from_section_3_2_1():
    paper = _paper(COGBENCH_FINAL)
    spontaneous = re.search(r'Spontaneous Description mode, we prompt .*?: "(.*?)"', paper).group(1)
    directed = re.search(r'For the Directed Reasoning mode, the corresponding prompt is: "(.*?)"', paper).group(1)
    assert prompts.DESCRIPTION_SPONTANEOUS.text == spontaneous == "Describe this image in detail."
    assert prompts.DESCRIPTION_DIRECTED.text == directed
    assert prompts.template_for("description", "directed") is prompts.DESCRIPTION_DIRECTED


def test_codis_prompt_is_table_11_with_instructions_and_chain_of_thought():
    paper = _paper(CODIS)
    row = re.search(r"w/ DI w/ CoT (I'll give you an image .*?Question: \[QUESTION HERE\])", paper).group(1)
    as_template = prompts.CODIS_DI_COT.text.replace("{context}", "[CONTEXT HERE]").replace(
        "{question}", "[QUESTION HERE]"
    )
    assert as_template == row


def test_codis_asks_each_pair_twice_once_per_context(built_release):
    dataset = load_config(str(built_release), "codis").select(range(3))
    template, queries = build_queries("codis", dataset, "spontaneous")
    assert template is prompts.CODIS_DI_COT
    assert [(q.item_id, q.query) for q in queries] == [(r, n) for r in dataset["id"] for n in (1, 2)]
    first = dataset[0]
    assert queries[0].prompt.endswith(f"Context: {first['context_1']} Question: {first['question']}")
    assert queries[1].prompt.endswith(f"Context: {first['context_2']} Question: {first['question']}")


def test_vqa_prompt_lists_four_lettered_options_and_asks_for_the_letter(built_release):
    dataset = load_config(str(built_release), "vqa").select(range(2))
    _, queries = build_queries("vqa", dataset)
    row = dataset[1]
    lines = queries[1].prompt.split("\n")
    assert lines[0] == row["question"]
    assert lines[1:5] == [f"{letter}. {row[f'choice_{letter.lower()}']}" for letter in "ABCD"]
    assert "letter" in lines[5]
    assert queries[1].item_id == row["question_id"] and queries[1].query is None


def test_template_hash_pins_the_text():
    template = prompts.VQA_MULTIPLE_CHOICE
    assert template.sha256 == hashlib.sha256(template.text.encode("utf-8")).hexdigest()  # independently
    assert template.sha256 != prompts.PromptTemplate(template.id, template.text + " ").sha256
    ids = [
        t.id
        for t in (
            prompts.DESCRIPTION_SPONTANEOUS,
            prompts.DESCRIPTION_DIRECTED,
            prompts.VQA_MULTIPLE_CHOICE,
            prompts.CODIS_DI_COT,
        )
    ]
    assert len(set(ids)) == 4
