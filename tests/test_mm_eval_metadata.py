"""metadata.json of real builds: every prompt exactly as the evaluator sends it, its provenance checked
against the papers and the authors' scripts, hashed in the marker, caught by validate when edited."""

from __future__ import annotations

import hashlib
import json
import re
import shutil

import pytest

from cogbench.cards.release import build_release
from cogbench.cli import main
from cogbench.dataset_builders.load import load_config
from cogbench.dataset_builders.output import MARKER_FILE
from cogbench.reference_eval.tasks.queries import build_queries
from cogbench.validation import validate
from cogbench.validation.integrity import BuildNotVerified, verify_build

from shared_files import require_shared

jinja2 = pytest.importorskip("jinja2")

PAPERS = {"CogBench paper": "000_6dc3e33e0e23f358.txt", "CODIS paper": "002_32deffa052033b7d.txt"}
# How each template's options select it in build_queries (the evaluator's own path).
QUERY_OPTIONS = {
    "cogbench-description-spontaneous-v1": ("description", {"mode": "spontaneous"}),
    "cogbench-description-directed-v1": ("description", {"mode": "directed"}),
    "cogbench-vqa-letter-v1": ("vqa", {}),
    "codis-di-cot-v1": ("codis", {}),
    "codis-no-context-cot-v1": ("codis", {"no_context": True}),
}


def metadata_of(folder) -> dict:
    return json.loads((folder / "metadata.json").read_text(encoding="utf-8"))


def jinja_prompts(template: str, config: str, rows: list[dict]) -> list[str]:
    """Every prompt of a config rendered by Jinja itself from the dataset's rows, in build_queries' order."""
    render = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True).from_string(template)
    if config != "codis":
        return [render.render(**row) for row in rows]
    return [render.render(**row, context=row[f"context_{n}"]) for row in rows for n in (1, 2)]


def test_every_template_is_the_one_the_evaluator_renders_for_every_real_row(real_raw_dir, built_release):
    metadata = metadata_of(built_release)
    assert list(metadata["subsets"]) == ["description", "vqa", "codis"]
    seen = set()
    for config, subset in metadata["subsets"].items():
        rows = load_config(str(built_release), config).remove_columns("image")
        dataset = load_config(str(built_release), config)
        # the default first: the template `cogbench eval` sends unless an option picks another
        assert subset["prompt_template"] == subset["prompt_templates"][0]["prompt_template"]
        assert build_queries(config, dataset.select(range(1)))[0].id == subset["prompt_templates"][0]["id"]
        assert subset["prompt_templates"][0]["eval_option"] in ("", "--mode spontaneous")
        for entry in subset["prompt_templates"]:
            task, options = QUERY_OPTIONS[entry["id"]]
            assert task == config
            template, queries = build_queries(config, dataset, **options)
            assert (entry["id"], entry["text"]) == (template.id, template.text)
            assert entry["sha256"] == hashlib.sha256(entry["text"].encode("utf-8")).hexdigest()
            assert entry["prompt_template"].startswith("<image>")  # mm-eval: the image before the text
            jinja = entry["prompt_template"].removeprefix("<image>")
            assert jinja_prompts(jinja, config, rows.to_list()) == [query.prompt for query in queries]
            seen.add(entry["id"])
        assert subset["rows"] == json.loads((built_release / "manifest.json").read_text())["configs"][config]["rows"]
    assert seen == set(QUERY_OPTIONS)


def test_tier_1_templates_are_quoted_from_the_section_they_cite(built_release):
    templates = [
        entry for subset in metadata_of(built_release)["subsets"].values() for entry in subset["prompt_templates"]
    ]
    tiers = {entry["id"]: entry["prompt_template_source"]["notes"].split(":")[0] for entry in templates}
    assert tiers == {
        "cogbench-description-spontaneous-v1": "Tier 1",
        "cogbench-description-directed-v1": "Tier 1",
        "cogbench-vqa-letter-v1": "No tier",
        "codis-di-cot-v1": "Tier 1",
        "codis-no-context-cot-v1": "No tier",
    }
    for entry in templates:
        source = entry["prompt_template_source"]
        paper_name = next(name for name in PAPERS if source["reference"].startswith(name))
        lines = require_shared("papers", PAPERS[paper_name], what="the paper text").read_text().splitlines()
        paper = " ".join(" ".join(lines).split())
        # the paper's placeholders of CODIS Table 11 for the template's fields
        quoted = entry["text"].replace("{context}", "[CONTEXT HERE]").replace("{question}", "[QUESTION HERE]")
        assert (quoted in paper) == (source["origin"] == "official"), entry["id"]
        # every section, appendix, table and quoted name the reference cites is in that paper
        reference = source["reference"]
        headings = re.findall(r"(?:Section|Appendix) ([\dA-Z][\d.]*)", reference)
        assert headings and all(any(line.startswith(f"{h} ") for line in lines) for h in headings), reference
        assert all(f"Table {n}:" in paper for n in re.findall(r"Table (\d+)", reference)), reference
        assert all(name in paper for name in re.findall(r"'([^']+)'", reference)), reference


def test_scoring_scripts_are_the_authors_at_the_release_commit(built_release):
    shared_readme = require_shared("README.md", what="the shared folder's README").read_text()
    oracle_copy = {"xiujiesong/CogBench": "oracles/cogbench", "THUNLP-MT/CODIS": "oracles/codis"}
    for config, subset in metadata_of(built_release)["subsets"].items():
        assert subset["authors_scoring_scripts"], config
        for url in subset["authors_scoring_scripts"]:
            repo, commit, path = re.fullmatch(
                r"https://github.com/([^/]+/[^/]+)/blob/([0-9a-f]{40})/(.+)", url
            ).groups()
            assert f"github.com/{repo}, commit {commit}" in shared_readme
            copy = path.removeprefix("data/")  # CODIS's data/eval.py is oracles/codis/eval.py
            require_shared(oracle_copy[repo], copy, what="the authors' scoring script")


def test_metadata_json_is_hashed_listed_and_valid(built_release):
    manifest = json.loads((built_release / "manifest.json").read_text())
    assert "metadata.json" in manifest["metadata_files"]
    marker = json.loads((built_release / MARKER_FILE).read_text())
    assert (
        marker["sha256"]["metadata.json"] == hashlib.sha256((built_release / "metadata.json").read_bytes()).hexdigest()
    )
    metadata = metadata_of(built_release)
    assert metadata["name"] == "CogBench and CODIS" and metadata["license"] == ["apache-2.0", "other"]
    assert metadata["source_releases"] == {name: e["release"] for name, e in manifest["raw_release"].items()}
    assert not validate(built_release).errors


def test_a_codis_only_build_describes_codis_alone(real_raw_dir, tmp_path):
    out = build_release(real_raw_dir / "codis", tmp_path / "codis").out
    metadata = metadata_of(out)
    assert (metadata["name"], list(metadata["subsets"]), metadata["license"]) == ("CODIS", ["codis"], "apache-2.0")
    assert metadata["license_name"] is None and list(metadata["source_releases"]) == ["codis"]
    assert not validate(out).errors


@pytest.mark.parametrize("damage", ["edited", "edited with the marker's hash forged", "deleted"])
def test_validate_and_every_reader_refuse_a_changed_metadata_json(built_release, tmp_path, capsys, damage):
    folder = shutil.copytree(built_release, tmp_path / "build")
    path = folder / "metadata.json"
    if damage == "deleted":
        path.unlink()
    else:
        path.write_text(path.read_text().replace("Describe this image in detail.", "Describe this image."))
    if damage == "edited with the marker's hash forged":
        marker = json.loads((folder / MARKER_FILE).read_text())
        marker["sha256"]["metadata.json"] = hashlib.sha256(path.read_bytes()).hexdigest()
        (folder / MARKER_FILE).write_text(json.dumps(marker))
    code = main(["validate", str(folder)])
    out = capsys.readouterr().out
    expected = {
        "edited": {"files.edited", "mm_eval.mismatch"},
        "edited with the marker's hash forged": {"mm_eval.mismatch"},
        "deleted": {"files.missing"},
    }[damage]
    errors = [line.strip() for line in out.splitlines() if line.strip().startswith("error ")]
    assert code == 1 and "Traceback" not in out
    assert {line.split()[1].rstrip(":") for line in errors} == expected
    assert all(line.split()[2] == "metadata.json:" for line in errors)
    with pytest.raises(BuildNotVerified, match="metadata.json"):
        verify_build(folder)
