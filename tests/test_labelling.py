"""`cogbench label` (issue 52 part 1) on real runs: the page folder is blind, its key lives outside it, the sample
is stratified and seeded, labels join back to the runs' verdicts, and `labels dataset` writes a Hub-ready folder."""

from __future__ import annotations

import json
import re

import pyarrow.parquet as pq
import pytest
from conftest import needs_real_data
from labelling_helpers import CODIS_MODEL, DESCRIBER, RULE_MODEL, details, labelling_runs, secrets_of

from cogbench.cli import main
from cogbench.errors import UsageError
from cogbench.reference_eval.certifying.verdict_archive import from_run
from cogbench.reference_eval.labelling.dataset import write_labels_dataset
from cogbench.reference_eval.labelling.labels_format import read_key, read_labels, read_sample
from cogbench.reference_eval.labelling.page import write_label_page
from cogbench.reference_eval.recording.run_reader import read_run

UNIT_FIELDS = {"unit", "task", "answers", "item_id", "category", "query", "shared", "image", "ask", "category_label"}
CODIS_FIELDS = UNIT_FIELDS | {"question", "context", "reference", "answer"}
DESCRIPTION_FIELDS = UNIT_FIELDS | {"item", "answer"}


@pytest.fixture(scope="module")
def labelled(built_release, tmp_path_factory):
    root = tmp_path_factory.mktemp("labelling")
    runs = labelling_runs(built_release, root)
    page = root / "page"
    result = write_label_page([str(r) for r in runs.values()], page, seed=11, per_stratum=4, shared_share=0.25)
    return runs, page, result


def page_units(page):
    text = (page / "data" / "units.js").read_text()
    return json.loads(text.removeprefix("window.COGBENCH_LABEL=").removesuffix(";\n"))


@needs_real_data
def test_the_page_folder_holds_no_verdict_score_model_or_judge_reply(labelled):
    runs, page, result = labelled
    secrets = secrets_of(runs)
    assert len([s for s in secrets if "(JREPLY" in s]) > 500  # one per distinct judge prompt
    files = [p for p in page.rglob("*") if p.is_file() and p.suffix not in (".jpg", ".png")]
    assert {p.name for p in files} >= {"index.html", "label.js", "units.js", "sample.json", ".cogbench-output.json"}
    for path in files:
        text = path.read_text()
        leaked = sorted(s for s in secrets if s in text)
        assert leaked == [], (path.name, leaked[:3])
    data = page_units(page)
    for unit in data["units"]:  # exactly what a labeller needs, nothing else (no verdict, no score, no judge)
        assert set(unit) == (CODIS_FIELDS if unit["task"] == "codis" else DESCRIPTION_FIELDS), unit["unit"]
    assert set(data) == {"sample", "protocol", "units"}
    key_sample, entries = read_key(page.parent / "page.key.json")
    assert key_sample == data["sample"] == read_sample(page)["sample"] == result["sample"]
    assert sorted(e.model for e in entries.values()) == sorted([CODIS_MODEL, RULE_MODEL, DESCRIBER])
    assert not any(p.name.endswith("key.json") for p in page.rglob("*"))


@needs_real_data
def test_the_sample_is_stratified_seeded_and_shared_by_its_share(labelled, built_release):
    runs, page, _ = labelled
    sample = read_sample(page)
    by_stratum: dict[tuple, list] = {}
    for unit in sample["units"]:
        by_stratum.setdefault((unit["task"], unit["category"], unit["answers"]), []).append(unit)
    codis_categories = {d["category"] for d in details(runs["llm"])}
    cor_categories = {c["category"] for d in details(runs["described"]) for c in d["cognition_rouge"]}
    assert len(by_stratum) == 2 * len(codis_categories) + len(cor_categories)
    for stratum in sample["strata"]:
        units = by_stratum[(stratum["task"], stratum["category"], stratum["answers"])]
        assert stratum["drawn"] == len(units) == min(4, stratum["units"])
        assert stratum["shared"] == sum(u["shared"] for u in units) == int(0.25 * len(units) + 0.5)
    again = page.parent / "again"
    write_label_page(
        [str(r) for r in runs.values()],
        again,
        key=page.parent / "page.key.json",
        seed=11,
        per_stratum=4,
        shared_share=0.25,
    )
    assert read_sample(again)["units"] == sample["units"]  # same key, same seed: the same sample, ids kept
    other = page.parent / "other"
    write_label_page([str(r) for r in runs.values()], other, seed=12, per_stratum=4, shared_share=0.25)
    assert [u["item_id"] for u in read_sample(other)["units"]] != [u["item_id"] for u in sample["units"]]


def judged_labels(runs, page) -> list[dict]:
    """A labels file's lines for every unit of the page, each labelled as its run's judge decided."""
    data = page_units(page)
    _, entries = read_key(page.parent / "page.key.json")
    by_model = {from_run(read_run(run)).model: from_run(read_run(run)) for run in runs.values()}
    return [
        {
            "format": "cogbench labels 1",
            "sample": data["sample"],
            **{k: unit[k] for k in ("unit", "task", "answers", "item_id", "category", "query")},
            "label": by_model[entries[unit["answers"]].model].units[(unit["item_id"], unit["category"], unit["query"])][
                2
            ],
            "labeller": "ann",
            "role": "A",
            "time": "2026-03-01T10:00:00.000Z",
        }
        for unit in data["units"]
    ]


@needs_real_data
def test_each_unit_shows_what_its_judge_saw_and_labels_join_its_verdicts(labelled, tmp_path):
    runs, page, _ = labelled
    data = page_units(page)
    _, entries = read_key(page.parent / "page.key.json")
    by_model = {from_run(read_run(run)).model: from_run(read_run(run)) for run in runs.values()}
    for unit in data["units"]:
        entry = entries[unit["answers"]]
        judged = by_model[entry.model]
        assert judged.answers == entry.answers_sha256
        key = (unit["item_id"], unit["category"], unit["query"])
        assert key in judged.units
        if unit["task"] == "codis":
            detail = next(
                d
                for d in details(runs["llm" if entry.model == CODIS_MODEL else "rule"])
                if d["item_id"] == unit["item_id"]
            )
            query = detail["queries"][int(unit["query"]) - 1]
            assert (unit["answer"], unit["reference"]) == (query["output"], query["answer"])
    lines = judged_labels(runs, page)
    path = tmp_path / "labels.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    labels = read_labels(path)
    out = tmp_path / "dataset"
    write_labels_dataset([path], page, page.parent / "page.key.json", out)
    table = pq.read_table(out / "data" / "labels.parquet").to_pylist()
    assert len(table) == len(lines)
    for row, label in zip(table, labels):  # unblinded: each row joins its run's verdict on the archive's key
        judged = by_model[row["model"]]
        assert row["answers_sha256"] == judged.answers and row["label"] == judged.units[label.key][2]
    card = (out / "README.md").read_text()
    assert "path: data/labels.parquet" in card and "seed 11" in card and "**sample**" in card
    assert re.search(rf"\| codis \| {CODIS_MODEL} \| \d+ \| \d+ \| 0 \| 0 \|", card)


@needs_real_data
def test_the_labels_dataset_uploads_to_the_hub_and_loads_back(labelled, hub, api, tmp_path):
    """docs/labelling.md's upload (``HfApi.upload_folder``, what ``huggingface-cli upload`` calls) of the folder as
    written, on a real local Hub server; downloaded again, ``load_dataset`` reads the rows the card's config names."""
    import datasets
    from huggingface_hub import snapshot_download

    runs, page, _ = labelled
    path = tmp_path / "labels.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in judged_labels(runs, page)))
    out = tmp_path / "dataset"
    write_labels_dataset([path], page, page.parent / "page.key.json", out)
    api.create_repo("me/labels", repo_type="dataset")
    api.upload_folder(folder_path=out, repo_id="me/labels", repo_type="dataset")
    assert sorted(hub.repos["me/labels"].files) == sorted(
        p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()
    )
    for name, data in hub.repos["me/labels"].files.items():
        assert data == (out / name).read_bytes(), name
    copy = snapshot_download("me/labels", repo_type="dataset", endpoint=hub.endpoint, local_dir=tmp_path / "copy")
    rows = datasets.load_dataset(copy, split="train").to_list()
    assert rows == pq.read_table(out / "data" / "labels.parquet").to_pylist()


@needs_real_data
def test_the_page_and_key_are_written_only_where_cogbench_may(labelled, tmp_path):
    runs, page, _ = labelled
    run = str(runs["rule"])
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    with pytest.raises(UsageError, match="nothing cogbench wrote"):
        write_label_page([run], foreign)
    with pytest.raises(UsageError, match="--key .*inside"):
        write_label_page([run], tmp_path / "p1", key=page / "k.json")
    (tmp_path / "mine.json").write_text("{}")
    with pytest.raises(UsageError, match="not a labelling key cogbench wrote"):
        write_label_page([run], tmp_path / "p2", key=tmp_path / "mine.json")
    assert (foreign / "notes.txt").read_text() == "mine" and (tmp_path / "mine.json").read_text() == "{}"
    with pytest.raises(UsageError, match="the same answers twice"):
        write_label_page([run, run], tmp_path / "p3")
    assert (
        main(["label", run, "--out", str(page), "--per-stratum", "1", "--key", str(page.parent / "page.key.json")]) == 0
    )
