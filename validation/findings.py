"""Findings and the report: what every check returns, as plain data.

A finding has a stable ``code`` (listed in ``CHECKS`` with its check family
and severity, and in README.md), and a location: ``file`` (a raw file or a
config name), ``record`` (an id) and ``field``.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from cogbench.errors import locate

SEVERITIES = ("error", "warning", "info")

# code -> (check family, severity, what it means). The one list of codes.
CHECKS: dict[str, tuple[str, str, str]] = {
    "json.invalid": ("schema", "error", "file is not valid UTF-8 JSON, repeats a key, or nests absurdly deep"),
    "schema.raw": ("schema", "error", "raw record violates its JSON Schema (schemas/raw_*.schema.json)"),
    "schema.built": ("schema", "error", "built record violates its JSON Schema (schemas/<config>.schema.json)"),
    "schema.unloadable": ("schema", "error", "a built config cannot be loaded with load_dataset"),
    "text.empty": ("schema", "error", "a text field or id is empty, only whitespace, or only invisible characters"),
    "text.unencodable": ("schema", "error", "text that cannot be encoded as UTF-8 (a lone surrogate)"),
    "text.control": ("schema", "error", "text holding a control character such as NUL"),
    "text.bad_id": (
        "schema",
        "error",
        "an id longer than 200 characters, with surrounding spaces, invisible characters or a non-NFC form",
    ),
    "cor.syntax": (
        "cor",
        "error",
        "chain of reasoning does not read 'A1 + ... + An -> B' (no empty, dangling or doubled '+' premise)",
    ),
    "cor.none_mixed": ("cor", "error", "'None' is not the sole entry of its category"),
    "cor.conclusion_is_premise": ("cor", "error", "conclusion merely repeats one of its premises"),
    "cor.duplicate_premise": ("cor", "warning", "the same premise twice in one chain"),
    "cor.duplicate_conclusion": ("cor", "warning", "the same conclusion in two chains of one image"),
    "cor.duplicate_chain": ("cor", "warning", "the same chain twice in one image"),
    "options.empty": ("options", "error", "an option is empty"),
    "options.duplicate": ("options", "error", "two options equal after normalising case, spaces, final punctuation"),
    "options.near_duplicate": ("options", "warning", "two options with rapidfuzz ratio >= 95"),
    "options.unknown_image": ("options", "error", "question's image id has no description record"),
    "options.answer_skew": ("options", "warning", "answer letters far from uniform (chi-square p < 0.01)"),
    "options.length_outlier": (
        "options",
        "warning",
        "correct option at least twice or at most half the distractors' mean length",
    ),
    "pairs.empty": ("pairs", "error", "a context or answer is empty"),
    "pairs.same_context": ("pairs", "error", "the two contexts are equal after normalisation"),
    "pairs.same_answer": ("pairs", "error", "the two answers are equal after normalisation"),
    "image.missing": ("images", "error", "image id names no file"),
    "image.unsafe_id": ("images", "error", "image id would escape the images folder"),
    "image.undecodable": ("images", "error", "Pillow cannot verify or load the image"),
    "image.too_large": ("images", "error", "image exceeds the pixel limit (decompression bomb guard)"),
    "image.orphan": ("images", "warning", "image file referenced by no record"),
    "image.duplicate": ("images", "warning", "two image ids with byte-identical content"),
    "image.not_released": (
        "images",
        "warning",
        "a raw image whose sha256 differs from the authors' release (raw_files.json), though it may still decode",
    ),
    "identity.duplicate_id": (
        "identity",
        "error",
        "an id used by more than one record (compared after NFC, case, zero-width and space normalisation)",
    ),
    "identity.duplicate_question": (
        "identity",
        "error",
        "the same question twice for one image (CODIS: with the same contexts)",
    ),
    "identity.repeated_question": (
        "identity",
        "info",
        "CODIS question repeated on one image with other contexts (by design)",
    ),
    "counts.mismatch": ("counts", "error", "a count differs from the expected-counts file"),
    "counts.config_missing": ("counts", "error", "the expected-counts file names a config that is absent"),
    "counts.not_checked": ("counts", "info", "no expected-counts file fits this data; counts not compared"),
    "files.missing": (
        "release",
        "error",
        "a file the build writes (manifest, marker, croissant.json, eval.yaml, metadata.json, a listed shard) is missing",
    ),
    "files.stray": (
        "release",
        "error",
        "a file in a built folder that the build does not write; publish never uploads it",
    ),
    "files.size_mismatch": ("release", "error", "a shard's or fingerprints.parquet's size differs from the manifest"),
    "files.hash_mismatch": ("release", "error", "a shard's or fingerprints.parquet's sha256 differs from the manifest"),
    "fingerprints.mismatch": (
        "release",
        "error",
        "fingerprints.parquet: schema, one row per image, sha256 or recomputed pHash differ from the shards' images",
    ),
    "fingerprints.not_rechecked": (
        "release",
        "info",
        "fingerprints.parquet's pHashes not recomputed: imagehash (the fingerprints extra) is not installed",
    ),
    "files.edited": (
        "release",
        "error",
        "the manifest or card changed after the build (sha256 differs from the build marker's)",
    ),
    "files.unverified": (
        "release",
        "error",
        "the build marker records no sha256 of the manifest, card or croissant.json (older cogbench or edited marker)",
    ),
    "manifest.invalid": (
        "release",
        "error",
        "manifest.json is not JSON, or lacks configs/shards, or names a path outside data/<config>/",
    ),
    "manifest.mismatch": (
        "release",
        "error",
        "the manifest's rows, counts or configs differ from the data in the shards",
    ),
    "card.mismatch": ("release", "error", "the card's YAML configs or split sizes differ from the build"),
    "card.licence": ("release", "error", "the card's licence or gating differs from what the data present requires"),
    "croissant.mismatch": (
        "release",
        "error",
        "croissant.json differs from the Croissant metadata the build renders from its manifest",
    ),
    "eval_yaml.mismatch": (
        "release",
        "error",
        "eval.yaml breaks its JSON Schema or differs from the benchmark tasks the build renders from its manifest",
    ),
    "mm_eval.mismatch": (
        "release",
        "error",
        "metadata.json differs from the prompt templates and provenance the build renders from its manifest",
    ),
}
FAMILIES = ("schema", "cor", "options", "pairs", "images", "identity", "counts", "release")


@dataclass(frozen=True)
class Finding:
    code: str
    severity: str
    file: str
    record: str | None
    field: str | None
    message: str

    @property
    def location(self) -> str:
        return locate(self.file, self.record, self.field)

    def __str__(self) -> str:
        return f"{self.severity} {self.code}: {self.location}: {self.message}"


def finding(code: str, file: str, record: str | None, field_name: str | None, message: str) -> Finding:
    """A finding with the severity its code is registered with."""
    return Finding(code, CHECKS[code][1], str(file), None if record is None else str(record), field_name, message)


@dataclass
class ValidationReport:
    """All findings of one validation, plus statistics reviewers read (not judged)."""

    path: str
    kind: str  # "raw" or "built"
    findings: list[Finding] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    strict: bool = False  # --strict: warnings fail the validation too

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "error"]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "warning"]

    @property
    def ok(self) -> bool:
        return not self.errors and not (self.strict and self.warnings)

    def summary(self) -> str:
        infos = len(self.findings) - len(self.errors) - len(self.warnings)
        verdict = "OK" if self.ok else "FAILED"
        if self.strict and not self.errors and self.warnings:
            verdict = "FAILED (--strict: warnings count as errors)"
        return f"{verdict}: {len(self.errors)} error(s), {len(self.warnings)} warning(s), {infos} info"

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "kind": self.kind,
            "ok": self.ok,
            "strict": self.strict,
            # Every severity, zeros included: a script reads counts["error"] without guessing.
            "counts": {severity: Counter(f.severity for f in self.findings)[severity] for severity in SEVERITIES},
            "findings": [asdict(f) for f in self.findings],
            "stats": self.stats,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)

    def to_text(self, per_code_limit: int = 20, verbose: bool = False) -> str:
        """Findings grouped by check family, then code; long groups are cut, info folded unless verbose."""
        lines = [f"validated {self.kind} data at {self.path}"]
        for family in FAMILIES:
            in_family = [f for f in self.findings if CHECKS[f.code][0] == family]
            if family == "release" and self.kind != "built":
                continue  # tamper checks apply to built folders only
            shown = in_family if verbose else [f for f in in_family if f.severity != "info"]
            head = "ok" if not in_family else f"{len(in_family)} finding(s)"
            if family == "counts":
                compared = self.stats.get("counts_compared_with", "")
                head = ("skipped" if compared.startswith("skipped") and not in_family else head) + (
                    f" - expected counts: {compared}" if compared else ""
                )
            lines.append(f"\n[{family}] {head}")
            folded = len(in_family) - len(shown)
            if folded:
                lines.append(f"  {folded} info finding(s) by design, not listed (--verbose lists them)")
            for code in sorted({f.code for f in shown}):
                of_code = [f for f in shown if f.code == code]
                for item in of_code[:per_code_limit]:
                    lines.append(f"  {item}")
                if len(of_code) > per_code_limit:
                    lines.append(f"  ... and {len(of_code) - per_code_limit} more {code}")
        for name, value in self.stats.items():
            if isinstance(value, dict) and "summary" in value:
                lines.append(f"\n{name}: {value['summary']}")
        lines.append("\n" + self.summary())
        return "\n".join(lines)
