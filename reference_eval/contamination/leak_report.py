"""leak-scan's output: ``leak-scan.json`` (everything), ``leak-scan.md`` and ``leak-scan.html`` (each match
with the benchmark image beside the corpus image, in the site's style: ``site/assets/style.css``, inlined)."""

from __future__ import annotations

import base64
import html
import io
import json
from dataclasses import asdict
from importlib import resources
from pathlib import Path
from typing import Any

from cogbench.dataset_builders.fingerprints import BENCHMARK_OF
from cogbench.dataset_builders.writes import write_file
from cogbench.reference_eval.contamination.scan import ScanResult

REPORT_FILES = ("leak-scan.json", "leak-scan.md", "leak-scan.html")
FAMILY_LABELS = {"phash": "pHash", "dhash": "dHash", "whash": "wHash", "pdq": "PDQ"}


def as_json(result: ScanResult) -> dict[str, Any]:
    data = asdict(result)
    for image in data["images"]:
        for match in image["matches"]:
            match.pop("thumb")
    data["flagged_images"] = len(result.flagged)
    data["matches"] = sum(image.found for image in result.images)
    return data


def summary(result: ScanResult) -> str:
    found = sum(image.found for image in result.images)
    unread = (
        f", {result.unreadable} unreadable (e.g. {', '.join(result.unreadable_examples)})" if result.unreadable else ""
    )
    return f"{result.scanned} corpus images scanned{unread} in {result.seconds} s: " + (
        f"{len(result.flagged)} benchmark image(s) have near duplicates ({found} match(es))"
        if found
        else "no near duplicates"
    )


def as_markdown(result: ScanResult) -> str:
    families = result.families
    lines = [
        "# leak-scan",
        "",
        f"Benchmark: `{result.dataset}`. Corpus: "
        + ", ".join(f"`{c['path']}` ({c['kind']})" for c in result.corpus)
        + ".",
        "",
        summary(result) + ".",
        "",
        "Thresholds (Hamming distance, flagged at or below any): "
        + ", ".join(f"{FAMILY_LABELS[f]} {result.thresholds[f]}" for f in families)
        + " (docs/contamination.md, calibration).",
        "",
    ]
    if result.flagged:
        header = ["benchmark image", "corpus", *(FAMILY_LABELS[f] for f in families), "resembles", "decision"]
        lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        for image in result.flagged:
            for match in image.matches:
                shown = match.corpus.replace("|", "\\|")
                cells = [f"{image.benchmark}/{image.image_id}", f"`{shown}`"]
                cells += [str(match.distances.get(f, "-")) for f in families]
                cells += [match.resembles, "exact copy" if match.exact else "near duplicate"]
                lines.append("| " + " | ".join(cells) + " |")
            if image.found > len(image.matches):
                lines.append(
                    f"| {image.benchmark}/{image.image_id} | ... and {image.found - len(image.matches)} more |"
                )
    return "\n".join(lines) + "\n"


def benchmark_thumbs(dataset: Path, wanted: set[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """The flagged benchmark images, small, from the build's shards (already verified by the scan)."""
    import pyarrow.parquet as pq
    from PIL import Image

    manifest = json.loads((dataset / "manifest.json").read_text(encoding="utf-8"))
    thumbs: dict[tuple[str, str], str] = {}
    for config, entry in sorted(manifest["configs"].items()):
        for name in sorted(entry["shards"]):
            for batch in pq.ParquetFile(dataset / name).iter_batches(columns=["image_id", "image"], batch_size=100):
                for image_id, image in zip(batch.column("image_id").to_pylist(), batch.column("image").to_pylist()):
                    key = (BENCHMARK_OF[config], image_id)
                    if key in wanted and key not in thumbs:
                        with Image.open(io.BytesIO(image["bytes"])) as opened:
                            small = opened.convert("RGB")
                        small.thumbnail((160, 160))
                        buffer = io.BytesIO()
                        small.save(buffer, format="JPEG", quality=80)
                        thumbs[key] = base64.b64encode(buffer.getvalue()).decode("ascii")
    return thumbs


def as_html(result: ScanResult) -> str:
    style = resources.files("cogbench.reference_eval.site.assets").joinpath("style.css").read_text(encoding="utf-8")
    wanted = {(image.benchmark, image.image_id) for image in result.flagged}
    thumbs = benchmark_thumbs(Path(result.dataset), wanted) if wanted else {}
    esc = html.escape
    families = result.families
    rows = []
    for image in result.flagged:
        source = thumbs.get((image.benchmark, image.image_id))
        ours = (
            f'<img src="data:image/jpeg;base64,{source}" alt="benchmark image {esc(image.image_id)}">' if source else ""
        )
        for match in image.matches:
            theirs = (
                f'<img src="data:image/jpeg;base64,{match.thumb}" alt="corpus image {esc(match.corpus)}">'
                if match.thumb
                else '<span class="note">no image (a corpus of hashes)</span>'
            )
            cells = "".join(f'<td class="num">{match.distances.get(f, "-")}</td>' for f in families)
            decision = "exact copy" if match.exact else "near duplicate"
            rows.append(
                f"<tr><td>{ours}<br>{esc(image.benchmark)}/{esc(image.image_id)}</td><td>{theirs}<br>"
                f"<code>{esc(match.corpus)}</code></td>{cells}<td>{esc(match.resembles)}</td>"
                f'<td class="verdict-bad">{decision}</td></tr>'
            )
    header = "".join(f'<th scope="col">{FAMILY_LABELS[f]} (&le; {result.thresholds[f]})</th>' for f in families)
    table = (
        f'<table><caption class="sr-only">near duplicates</caption><thead><tr><th scope="col">benchmark image</th>'
        f'<th scope="col">corpus image</th>{header}<th scope="col">resembles</th><th scope="col">decision</th></tr>'
        f"</thead><tbody>{''.join(rows)}</tbody></table>"
        if rows
        else '<p class="verdict-ok">No near duplicates.</p>'
    )
    corpus = ", ".join(f"<code>{esc(c['path'])}</code> ({esc(c['kind'])})" for c in result.corpus)
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n<title>cogbench leak-scan</title>\n'
        f"<style>\n{style}\ntd img{{max-width:160px;max-height:160px;border:1px solid var(--line)}}\n</style>\n</head>\n"
        '<body>\n<a class="skip" href="#main">Skip to content</a>\n<header><h1>cogbench leak-scan</h1></header>\n'
        f'<main id="main" tabindex="-1">\n<p class="rule">Benchmark <code>{esc(result.dataset)}</code>; corpus {corpus}.</p>\n'
        f'<p id="summary">{esc(summary(result))}.</p>\n{table}\n'
        '<p class="note">Hamming distances per hash family; a pair is flagged when any family is at or below its '
        "threshold. Perceptual hashes find near duplicates (re-encoded, resized, recoloured, flipped copies), not "
        "re-photographed or regenerated scenes.</p>\n</main>\n"
        "<footer>cogbench leak-scan; thresholds and their calibration: docs/contamination.md</footer>\n</body>\n</html>\n"
    )


def write_report(out: Path, result: ScanResult) -> list[str]:
    write_file(out / "leak-scan.json", json.dumps(as_json(result), indent=2, ensure_ascii=False) + "\n")
    write_file(out / "leak-scan.md", as_markdown(result))
    write_file(out / "leak-scan.html", as_html(result))
    return list(REPORT_FILES)
