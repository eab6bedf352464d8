"""``validate(path)``: every check on a raw folder or a built release.

Used by ``cogbench validate``, by ``cogbench build`` (before writing and before
publishing its output) and by the release tooling.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from cogbench.dataset_builders.build import MANIFEST_FILE
from cogbench.dataset_builders.output import MARKER_FILE
from cogbench.dataset_builders.raw import RAW_LAYOUT, RawSources, find_sources
from cogbench.dataset_builders.read import RawRead
from cogbench.errors import CogbenchError, UsageError
from cogbench.validation.checks import check_cors, check_identity, check_options, check_pairs
from cogbench.validation.contents import Contents, contents_of, read_built, read_raw
from cogbench.validation.counts import OWN_MANIFEST, check_counts, choose_expected
from cogbench.validation.findings import ValidationReport, finding
from cogbench.validation.fingerprint_checks import check_fingerprints
from cogbench.validation.images import MAX_PIXELS, check_images, check_orphans, check_released
from cogbench.validation.integrity import check_release, load_manifest_findings


def is_built_folder(path: Path) -> bool:
    """A build's marker or manifest, or a card beside data/: checked as a build, never as raw data."""
    if (path / MARKER_FILE).is_file() or (path / MANIFEST_FILE).is_file():
        return True
    return (path / "README.md").is_file() and (path / "data").is_dir()


def validate(
    path: str | os.PathLike,
    expected: str | os.PathLike | None = "auto",
    *,
    max_pixels: int = MAX_PIXELS,
    strict: bool = False,
    recompute_hashes: bool = True,
) -> ValidationReport:
    """Validate a raw-data folder or a built folder; never raises on bad data.

    ``expected``: a path (or shipped name such as ``codis-1.0``) of an
    expected-counts file, ``None`` to skip the count check, or ``"auto"`` for
    the counts the data declares: a built folder's own declaration
    (``choose_expected``), else the shipped files that fit the source folders.
    A built folder is also checked for tampering (``integrity.check_release``) and its fingerprints against
    its images; ``recompute_hashes=False`` leaves out recomputing their pHashes (the build's own gate: it
    computed them a moment before; 2.8 s of CPU for the public build's 221 images).
    """
    path = Path(path)
    if not path.exists():
        raise UsageError(f"{path} does not exist")
    if path.is_file():
        raise UsageError(
            f"{path} is a file; validate checks a folder: {RAW_LAYOUT}; or a folder written by "
            f"`cogbench build`{_folder_hint(path.parent)}"
        )
    built = is_built_folder(path)
    sources = None if built else find_sources(path)
    contents = read_built(path, max_pixels) if sources is None else read_raw(sources)
    report = check_contents(contents, expected, max_pixels)
    if sources is None:
        report.findings += check_release(path, contents.records)
        manifest, _ = load_manifest_findings(path)
        report.findings += check_fingerprints(path, manifest, recompute_hashes) if manifest is not None else []
    else:
        report.findings += check_released(sources)
    report.strict = strict
    return report


def _folder_hint(folder: Path) -> str:
    """The folder holding a raw file, when it is one validate reads: what the user probably meant."""
    try:
        find_sources(folder)
    except UsageError:
        return ""
    return f" (this file's folder is one: `cogbench validate {folder}`)"


def validate_sources(sources: RawSources, expected: str | os.PathLike | None = None) -> ValidationReport:
    """The same checks on raw folders already found."""
    report = check_contents(read_raw(sources), expected, MAX_PIXELS)
    report.findings += check_released(sources)
    return report


def validate_read(read: RawRead, expected: str | os.PathLike | None = None) -> ValidationReport:
    """The same checks on what the one raw reader returned (the builder's entry point: read once)."""
    return check_contents(contents_of(read), expected, MAX_PIXELS)


def check_contents(contents: Contents, expected, max_pixels: int) -> ValidationReport:
    started = time.perf_counter()
    report = ValidationReport(path=str(contents.path), kind=contents.kind, findings=list(contents.findings))
    records, shown = contents.records, contents.shown
    if "description" in records:
        report.findings += check_cors(shown["description"], records["description"])
        report.findings += check_identity("description", shown["description"], records["description"])
    if "vqa" in records:
        described = {r.image_id for r in records["description"]} if "description" in records else None
        found, report.stats["vqa_answers"] = check_options(shown["vqa"], records["vqa"], described)
        report.findings += found + check_identity("vqa", shown["vqa"], records["vqa"])
    if "codis" in records:
        found, report.stats["codis_context_similarity"] = check_pairs(shown["codis"], records["codis"])
        report.findings += found + check_identity("codis", shown["codis"], records["codis"])
    found, report.stats["images"] = contents.image_results or check_images(contents.images, max_pixels)
    report.findings += found + check_orphans(contents.image_folders, contents.images)
    chosen, report.stats["counts_compared_with"] = choose_expected(contents, expected)
    if str(expected) == "auto" and not chosen and contents.declared_expected != OWN_MANIFEST:
        report.findings.append(
            finding(
                "counts.not_checked",
                str(contents.path),
                None,
                None,
                "no shipped expected-counts file fits these source folders",
            )
        )
    report.stats["expected_counts"] = [name for name, _ in chosen]
    report.findings += check_counts(records, shown, chosen)
    report.stats["seconds"] = round(time.perf_counter() - started, 3)
    return report


class ValidationFailed(CogbenchError):
    """A release with errors; the message lists them (shown without traceback)."""

    def __init__(self, what: str, report: ValidationReport, limit: int = 50):
        self.report = report
        errors = report.errors
        self.problems = [str(error) for error in errors]
        listed = "\n  ".join(str(f) for f in errors[:limit])
        more = f"\n  ... and {len(errors) - limit} more" if len(errors) > limit else ""
        super().__init__(f"{len(errors)} validation error(s) in {what}:\n  {listed}{more}")


def require_valid(report: ValidationReport, what: str) -> ValidationReport:
    if not report.ok:
        raise ValidationFailed(what, report)
    return report
