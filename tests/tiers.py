"""The suite's tiers (issue 49): what README's command 2 runs, and what `.ci/run` runs after it.

The **default tier** is every test not marked ``slow`` or ``browser``: pyproject.toml's ``addopts`` holds
``-m "not slow and not browser"``, so ``pytest`` alone runs it. It keeps every test that checks a number
against the authors' scripts or the papers. The two other tiers are markers, each run by ``.ci/run``
after command 2 (a later ``-m`` replaces the one in ``addopts``):

    pytest -m slow        # slow by nature: whole-run end-to-end files, doc blocks, mutation runners
    pytest -m browser     # a real Chromium (Playwright) on the reports and sites
    pytest -m ""          # everything

A test may carry ``@pytest.mark.slow`` itself; whole files (and single tests) are given their tier in
``TIER_OF`` below, so that moving a file between tiers is a one-line change and the test files need no
edit; docs/testing.md ("Tiers") says what each tier takes. ``tests/test_tiers.py`` checks that every entry
names a test file or function and that a test is in one tier only.
"""

from __future__ import annotations

import pytest

TIERS = ("slow", "browser")  # markers, described in pyproject.toml's [tool.pytest.ini_options]
DEFAULT_TIER = "not slow and not browser"  # pyproject.toml's addopts -m: the default tier

# node id (a file, or a file's test function without parameters) -> its tier. A function's entry wins
# over its file's.
TIER_OF: dict[str, str] = {
    # A real Chromium (Playwright) opens what cogbench writes: reports, sites, certificates.
    "tests/test_report_html.py": "browser",
    "tests/test_site_browser.py": "browser",
    "tests/test_labelling_browser.py": "browser",
    "tests/test_site_panel_browser.py": "browser",
    "tests/test_leak_scan_page.py": "browser",
    "tests/test_variant_site_browser.py": "browser",
    "tests/test_sweep_board_run.py::test_the_filter_keeps_the_models_complete_on_the_tasks_ticked": "browser",
    "tests/test_rounding.py::test_a_tie_reads_the_same_on_the_command_line_in_report_md_and_on_the_site": "browser",
    "tests/test_report_certificate.py::test_the_certificate_section_shows_its_verdict_and_figures_in_the_window": "browser",
    "tests/test_report_certificate.py::test_the_explain_section_fits_the_window": "browser",
    # Files that run cogbench end to end many times (builds, whole eval runs, the tiny model, real local
    # servers, CLI subprocesses, hypothesis over run folders): each over ~20 s of one core, measured in
    # docs/testing.md "Tiers". The checks against the authors' scripts and the papers (test_oracle_*,
    # test_published, test_thinking_replies, test_thinking_safe_rule, test_verdicts, the metric files)
    # stay in the default tier.
    "tests/test_bounded_inputs.py": "slow",
    "tests/test_build.py": "slow",
    "tests/test_captioning.py": "slow",
    "tests/test_charts.py": "slow",
    "tests/test_codis_analyses.py": "slow",
    "tests/test_concurrency.py": "slow",
    "tests/test_core_install.py": "slow",
    "tests/test_coverage_labels.py": "slow",
    "tests/test_croissant.py": "slow",
    "tests/test_demo.py": "slow",
    "tests/test_details_dataset.py": "slow",
    "tests/test_doc_blocks.py": "slow",
    "tests/test_eee_records.py": "slow",
    "tests/test_eval_run.py": "slow",
    "tests/test_explain.py": "slow",
    "tests/test_explain_inputs.py": "slow",
    "tests/test_explain_report.py": "slow",
    "tests/test_explain_vqa.py": "slow",
    "tests/test_first_hour.py": "slow",
    "tests/test_first_hour_runs.py": "slow",
    "tests/test_fuzz_readers.py": "slow",
    "tests/test_harnesses.py": "slow",
    "tests/test_hf_backend.py": "slow",
    "tests/test_hf_out_of_memory.py": "slow",
    "tests/test_hints.py": "slow",
    "tests/test_hub_results.py": "slow",
    "tests/test_image_variant_runs.py": "slow",
    "tests/test_intervals.py": "slow",
    "tests/test_judge_agreement.py": "slow",
    "tests/test_judge_certify.py": "slow",
    "tests/test_labelling.py": "slow",
    "tests/test_judge_failures.py": "slow",
    "tests/test_judge_panel.py": "slow",
    "tests/test_judge_progress.py": "slow",
    "tests/test_judge_request_files.py": "slow",
    "tests/test_judge_retirement.py": "slow",
    "tests/test_line_separators.py": "slow",
    "tests/test_lmms_eval_cli.py": "slow",
    "tests/test_lmms_eval_thinking.py": "slow",
    "tests/test_model_checks.py": "slow",
    "tests/test_no_write_through_links.py": "slow",
    "tests/test_offline_judges.py": "slow",
    "tests/test_openai_backend.py": "slow",
    "tests/test_output_folders.py": "slow",
    "tests/test_pr_audit.py": "slow",
    "tests/test_probes.py": "slow",
    "tests/test_provenance.py": "slow",
    "tests/test_publish.py": "slow",
    "tests/test_python_api.py": "slow",
    "tests/test_record_shapes.py": "slow",
    "tests/test_release.py": "slow",
    "tests/test_release_integrity.py": "slow",
    "tests/test_report_certificate.py": "slow",
    "tests/test_report_run_kind.py": "slow",
    "tests/test_request_files.py": "slow",
    "tests/test_request_folders.py": "slow",
    "tests/test_rescore.py": "slow",
    "tests/test_run_lock.py": "slow",
    "tests/test_runs_report.py": "slow",
    "tests/test_score.py": "slow",
    "tests/test_secret_specs.py": "slow",
    "tests/test_secrets_stay_home.py": "slow",
    "tests/test_sweep_api.py": "slow",
    "tests/test_sweep_board_run.py": "slow",  # a sweep of 8 cells run, merged and its board built
    "tests/test_sweep_lanes.py": "slow",  # spawned workers, one loading the Recognition Score's models
    "tests/test_sweep_judge_cache.py": "slow",  # judged sweeps run and merged, an unsharded eval beside them
    "tests/test_sweep_remove_shards.py": "slow",  # a sweep run, then merged and its shards removed, in 8 copies
    "tests/test_sweep_variants.py::test_a_variant_cell_runs_merges_verifies_and_equals_its_unsharded_eval": "slow",
    "tests/test_site_inputs.py": "slow",
    "tests/test_thinking_compare.py": "slow",
    "tests/test_thinking_hf.py": "slow",
    "tests/test_thinking_judge.py": "slow",
    "tests/test_thinking_openai.py": "slow",
    "tests/test_training_callback.py": "slow",
    "tests/test_untrusted_inputs.py": "slow",
    "tests/test_verify.py": "slow",
    "tests/test_verify_edits.py": "slow",
    "tests/test_verify_llm.py": "slow",
    "tests/test_verify_stated.py": "slow",
}


def tier_of(nodeid: str) -> str | None:
    """The tier this table gives a test's node id: by its function (parameters dropped), else by its file."""
    path, _, name = nodeid.partition("::")
    return TIER_OF.get(f"{path}::{name.split('[', 1)[0]}") or TIER_OF.get(path)


def pytest_ignore_collect(collection_path, config: pytest.Config) -> bool | None:
    """In the default tier, a file wholly in another tier is not even imported: each worker then loads
    less (about 150 MB and a fifth of the collection time less, docs/testing.md "Tiers")."""
    if config.option.markexpr != DEFAULT_TIER:
        return None
    try:
        nodeid = collection_path.relative_to(config.rootpath).as_posix()
    except ValueError:
        return None
    return True if TIER_OF.get(nodeid) in TIERS else None


@pytest.hookimpl(tryfirst=True)  # before pytest's own -m deselection reads the markers
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        tier = tier_of(item.nodeid)
        if tier is not None:
            item.add_marker(tier)
        marked = sorted({mark.name for mark in item.iter_markers() if mark.name in TIERS})
        if len(marked) > 1:
            raise pytest.UsageError(f"{item.nodeid} is in more than one tier: {', '.join(marked)} (tests/tiers.py)")
