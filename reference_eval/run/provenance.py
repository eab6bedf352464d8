"""What made a score, for scores.json: package, data, prompts, judge, models and thresholds.

A number in scores.json depends on all of these (the Recognition Score on the
spaCy pipeline, the embedder and the threshold; a judged score on the judge
model and how its replies were parsed), so each run records them. The API key
never appears: the judge endpoint is recorded by host, and told apart from another
endpoint on that host by a digest of its URL without credentials or query.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from cogbench.dataset_builders.load import dataset_revision
from cogbench.dataset_builders.raw import sha256_file
from cogbench.reference_eval.judges import codis as codis_judge
from cogbench.reference_eval.judges import cognition as cognition_judge
from cogbench.reference_eval.loading import model_checks
from cogbench.reference_eval.metrics import recognition, vqa


def folder_sha256(folder: Path) -> str:
    """One digest for a folder: its files' relative paths and contents, in sorted order."""
    return model_checks.files_sha256(folder, [p for p in folder.rglob("*") if p.is_file()])


def dataset_provenance(dataset: str, config: str, revision: str | None) -> dict[str, Any]:
    """Where the rows came from and the sha256 of each shard of the config that was read."""
    local = Path(dataset)
    if local.exists():
        shards = sorted((local / "data" / config).glob("*.parquet"))
        return {
            "source": "folder",
            "path": str(dataset),
            "revision": dataset_revision(dataset, revision),
            "shards": [{"file": p.relative_to(local).as_posix(), "sha256": sha256_file(p)} for p in shards],
        }
    return {"source": "hub", "repo": dataset, "revision": revision or "main", **_hub_shards(dataset, config, revision)}


def _hub_shards(repo_id: str, config: str, revision: str | None) -> dict[str, Any]:
    """The commit and the LFS sha256 of the config's shards, as the Hub states them (load_dataset fetched them)."""
    import huggingface_hub
    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE:
        return {"commit": None, "shards": [], "note": "offline: shard digests not looked up"}
    info = huggingface_hub.HfApi().dataset_info(repo_id, revision=revision, files_metadata=True, timeout=30.0)
    shards = [
        {"file": s.rfilename, "sha256": s.lfs.sha256 if s.lfs else None}
        for s in info.siblings or []
        if s.rfilename.startswith(f"data/{config}/")
    ]
    return {"commit": info.sha, "shards": sorted(shards, key=lambda s: s["file"])}


def _template(template_id: str, text: str, role: str) -> dict[str, str]:
    return {"id": template_id, "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(), "role": role}


def judge_templates(task: str, kind: str) -> list[dict[str, str]]:
    """The judge prompts a run used (their text is in judges/codis.py and judges/cognition.py); a panel
    has at least one LLM member (two or more members, each once, and ``rule`` the only other kind)."""
    if kind not in ("openai", "vllm", "panel"):
        return []
    if task == "codis":
        return [_template("codis-judge-table12", codis_judge.JUDGE_PROMPT, "judge")]
    if task == "description":
        return [
            _template(
                "cogbench-cognition-figure8", cognition_judge.FIGURE_8_HEAD + cognition_judge.ANSWER_FORMAT, "judge"
            ),
            _template(
                "cogbench-cognition-figure9", cognition_judge.FIGURE_9_HEAD + cognition_judge.ANSWER_FORMAT, "judge"
            ),
        ]
    return []


def model_templates(pairs: Iterable[tuple[str, str]]) -> list[dict[str, str]]:
    """The inference prompts the predictions name (project format only; official files carry none)."""
    return [{"id": pid, "sha256": sha, "role": "model"} for pid, sha in sorted(set(pairs)) if pid]


def answers_sha256(outputs: dict[Any, str]) -> str:
    """sha256 of the answers scored: (item id, query) and text, sorted, so the same answers give the same hash
    whatever file held them. Two scorings with one hash judged the same answers (``compare --judges``)."""
    rows = sorted(
        json.dumps([[str(part) for part in (key if isinstance(key, tuple) else (key,))], text], ensure_ascii=True)
        for key, text in outputs.items()
    )
    return hashlib.sha256("\n".join(rows).encode("ascii")).hexdigest()


def judge_provenance(kind: str, model: str | None, base_url: str | None, parsing: str) -> dict[str, Any]:
    if kind == "rule":
        return {
            "kind": "rule",
            "min_similarity": codis_judge.RULE_MIN_SIMILARITY,
            "scorer": "rapidfuzz.token_set_ratio",
        }
    if kind == "vllm":  # the weights' identity is added from the loaded judge (judges/vllm_judge.identity)
        return {"kind": "vllm", "model": model, "temperature": 0.0, "parsing": parsing}
    if kind != "openai":
        return {"kind": kind}
    url = urlparse((base_url or "https://api.openai.com/v1").rstrip("/"))
    return {
        "kind": "openai",
        "model": model,
        "endpoint_host": url.hostname,
        "endpoint_id": endpoint_id(base_url),
        "temperature": 0.0,
        "parsing": parsing,
    }


def endpoint_id(base_url: str | None) -> str:
    """Which endpoint judged, as the verdict cache tells them apart (scheme, host, port, path), as a digest:
    one model name at two endpoints is two judges, yet the URL itself stays out of scores.json."""
    url = urlparse((base_url or "https://api.openai.com/v1").rstrip("/"))
    port = url.port or {"http": 80, "https": 443}.get(url.scheme)
    where = f"{url.scheme}://{(url.hostname or '').lower()}:{port}{url.path}"
    return hashlib.sha256(where.encode("utf-8")).hexdigest()[:12]


def panel_provenance(
    members: Iterable[Any], parsing: str, rule: str, engines: dict[str, dict[str, Any]] | None = None
) -> dict[str, Any]:
    """A judge panel: each member as ``judge_provenance`` records one judge (host only, never the URL), a
    ``vllm:`` member with its loaded engine's identity (``engines``, by member name; judges/vllm_judge.identity)."""
    members, engines = list(members), engines or {}
    return {
        "kind": "panel",
        "model": " + ".join(m.name for m in members),
        "members": [
            {"name": m.name, **judge_provenance(m.kind, m.model, m.base_url, parsing), **engines.get(m.name, {})}
            for m in members
        ],
        "parsing": parsing,
        "rule": rule,
    }


def spacy_provenance(nlp, requested: str) -> dict[str, Any]:
    import spacy

    meta = nlp.meta
    folder = Path(nlp.path) if getattr(nlp, "path", None) else None
    return {
        "requested": requested,
        "pipeline": f"{meta.get('lang')}_{meta.get('name')}",
        "version": meta.get("version"),
        "spacy_version": spacy.__version__,
        "folder": str(folder) if folder else None,
        "components": list(nlp.pipe_names),
        "weights_sha256": model_checks.weights_sha256(folder) if folder else None,
    }


def embedder_provenance(requested: str, embedder=None) -> dict[str, Any]:
    """The embedder by name, pinned by its Hub commit (from the local cache) or the folder's digest,
    with the transformers class and weights digest of each module that loaded one."""
    folder = Path(requested).expanduser()
    if folder.is_dir():
        record = {"requested": requested, "folder_sha256": folder_sha256(folder)}
    else:
        import huggingface_hub

        cached = huggingface_hub.try_to_load_from_cache(requested, "config.json")
        commit = Path(cached).parent.name if isinstance(cached, str) else None
        record = {"requested": requested, "revision": commit}
    if embedder is not None:
        record["transformers"] = [
            model_checks.model_record(module.auto_model.name_or_path, type(module.auto_model).__name__)
            for module in embedder
            if hasattr(module, "auto_model")
        ]
    return record


def with_libraries(models: dict[str, Any]) -> dict[str, Any]:
    """The models' records and, when any model was used, the versions of the libraries that ran them."""
    return {**models, "libraries": model_checks.library_versions()} if models else models


def thresholds(task: str) -> dict[str, float]:
    if task == "description":
        return {"recognition_similarity": recognition.THRESHOLD}
    if task == "vqa":
        return {"vqa_fuzzy_min_score": vqa.FUZZY_MIN_SCORE, "vqa_fuzzy_min_margin": vqa.FUZZY_MIN_MARGIN}
    return {"codis_rule_min_similarity": codis_judge.RULE_MIN_SIMILARITY}
