"""``cogbench label RUN... --out DIR``: a blind labelling page for a sample of the runs' judged units.

DIR is a static page in the site's style (the site's stylesheet, read as a file, and the page's own), working from
the disk and offline: its data is a script (``data/units.js``; a ``file://`` page may not ``fetch`` JSON), images
are the build's bytes under ``images/<sha256>.<format>``. DIR holds no verdict, score, model name, judge or judge
reply: the runs are named by opaque ids whose key is written outside DIR (``DIR.key.json`` by default), which
``judges validate`` and ``labels dataset`` read. Progress stays in the browser (``localStorage``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from cogbench import __version__
from cogbench.dataset_builders.output import check_option_file, claim_output, record_written
from cogbench.dataset_builders.writes import ImageFiles, write_file
from cogbench.errors import UsageError
from cogbench.reference_eval.labelling import sample as sampling
from cogbench.reference_eval.labelling.labels_format import KEY_FORMAT, SAMPLE_FILE, read_key
from cogbench.reference_eval.recording.run_reader import read_run
from cogbench.validation.integrity import load_verified

ASSETS = ("index.html", "label.js", "label.css")
LABEL_FILES = ("README.md", *ASSETS, "style.css", SAMPLE_FILE, "data/units.js", "images/*")
ID_COLUMN = {"description": "image_id", "codis": "id"}
README = """# cogbench labelling page

Written by `cogbench label` (cogbench {version}): {units} unit(s) of {tasks}, seed {seed}, sample {sample}.
Open `index.html` in a browser (it works from the disk, offline). Type your labeller id once and choose your role:
A labels every unit, B (the second labeller) only the {shared} shared ones. Keys: 1 yes, 2 no, arrows move, U undoes.
Your labels stay in this browser; **Export** downloads them as JSON Lines. `sample.json` holds the seed and protocol.
"""


def default_key(out: Path) -> Path:
    """Where the blinding key goes by default: beside the page folder, never in it."""
    return out.parent / f"{out.name}.key.json"


def _previous_key(path: Path) -> dict:
    """An earlier key at ``path`` (its ids are kept); a file there that is not one is refused, never replaced."""
    if not path.exists():
        return {}
    try:
        given = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        given = None
    if not isinstance(given, dict) or given.get("format") != KEY_FORMAT:
        raise UsageError(f"--key {path}: exists and is not a labelling key cogbench wrote; refusing to replace it")
    return read_key(path)[1]


def _rows(dataset: str, task: str) -> dict[str, dict[str, Any]]:
    import datasets

    data = load_verified(dataset, task)
    data = data.cast_column("image", datasets.Image(decode=False))
    return {str(row[ID_COLUMN[task]]): row for row in data.to_list()}


def write_label_page(
    paths: Sequence[str],
    out: Path,
    key: Path | None = None,
    seed: int = 0,
    per_stratum: int = 10,
    shared_share: float = 0.2,
) -> dict[str, Any]:
    """Read and verify the runs, draw the sample, write the page into ``out`` and the key to ``key``."""
    key = key or default_key(out)
    reads = [("RUN_DIR", path) for path in paths]
    claim_output(out, "label", LABEL_FILES, create=False, reads=reads)
    check_option_file(key, "--key", reads=reads)
    if Path(key).resolve().is_relative_to(out.resolve()):
        raise UsageError(f"--key {key}: inside --out {out}; the key must stay outside the page labellers are given")
    previous = _previous_key(key)
    runs = [read_run(path) for path in paths]
    datasets_used = sorted({run.scores["dataset"] for run in runs})
    if len(datasets_used) != 1 or not Path(datasets_used[0]).is_dir():
        raise UsageError(
            f"the runs were scored on {', '.join(datasets_used)}; give runs scored on one local build (the page "
            "shows its images)"
        )
    ids = sampling.answer_ids(runs, previous)
    claim_output(out, "label", LABEL_FILES, reads=reads)
    images = ImageFiles(out)
    write_image = images.write

    rows: dict[str, dict[str, dict[str, Any]]] = {}
    units: list[sampling.Unit] = []
    for run in runs:
        task = run.scores["task"]
        if task not in rows:
            rows[task] = _rows(datasets_used[0], task)
        units += sampling.run_units(run, ids[str(run.folder)], rows[task])
    drawn, strata = sampling.draw(units, per_stratum, shared_share, seed)
    for unit in drawn:  # only the drawn units' images are copied
        raw = unit.content.get("image")
        unit.content["image"] = write_image(raw) if isinstance(raw, bytes) else None
    version = runs[0].scores.get("dataset_revision")
    document = sampling.manifest(drawn, strata, seed, per_stratum, shared_share, version)
    page = {
        "sample": document["sample"],
        "protocol": document["protocol"],
        "units": [{**u.record(), **u.content} for u in drawn],
    }
    write_file(out / SAMPLE_FILE, json.dumps(document, indent=2, ensure_ascii=False) + "\n", root=out)
    text = json.dumps(page, ensure_ascii=False, separators=(",", ":"))
    write_file(out / "data" / "units.js", f"window.COGBENCH_LABEL={text};\n", root=out)
    here = resources.files("cogbench.reference_eval.labelling")
    for name in ASSETS:
        write_file(out / name, here.joinpath("assets", name).read_bytes(), root=out)
    # the site's stylesheet, read as a file: the page looks like the site (no code of the site room is imported)
    write_file(
        out / "style.css", resources.files("cogbench.reference_eval.site").joinpath("assets", "style.css").read_bytes()
    )
    tasks = ", ".join(sorted({u.task for u in drawn})) or "no task"
    shared = sum(u.shared for u in drawn)
    readme = README.format(
        version=__version__, units=len(drawn), tasks=tasks, seed=seed, sample=document["sample"][:12], shared=shared
    )
    write_file(out / "README.md", readme, root=out)
    write_file(Path(key), json.dumps(sampling.key_document(document["sample"], seed, runs, ids), indent=2) + "\n")
    written = ["README.md", *ASSETS, "style.css", SAMPLE_FILE, "data/units.js", *(f"images/{n}" for n in images.names)]
    removed, kept = record_written(out, LABEL_FILES, written)
    return {
        "units": len(drawn),
        "shared": shared,
        "sample": document["sample"],
        "folder": str(out),
        "key": str(key),
        "removed": removed,
        "kept": kept,
    }
