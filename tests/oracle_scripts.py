"""The authors' evaluation scripts in ``../shared/oracles``, loaded unchanged, with local stand-ins.

Each script is executed from its own file (never copied or edited). What a
script hard-codes is supplied from outside: ``recognition_score.py`` loads
``en_core_web_sm`` and ``/path/to/all-mpnet-base-v2`` at import, so
``spacy.load`` and ``SentenceTransformer`` are replaced (pytest's monkeypatch)
for the moment the file runs; ``cognition_gpt_eval.py`` builds its client with
``base_url = "Set your URL here."``, so the module's ``OpenAI`` name is
replaced by one that points at the local judge server; CODIS ``eval.py`` reads
``OPENAI_BASE_URL`` like every ``openai`` client. A missing oracle skips the
test naming the file (``shared_files``).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from shared_files import require_shared


def oracle_file(*parts: str) -> Path:
    return require_shared("oracles", *parts, what=f"the authors' script oracles/{'/'.join(parts)}")


def load_oracle(*parts: str) -> ModuleType:
    """Execute the script as a module named ``oracle_<stem>`` (its ``__main__`` block does not run)."""
    path = oracle_file(*parts)
    spec = importlib.util.spec_from_file_location(f"oracle_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cognition_gpt_eval() -> ModuleType:
    return load_oracle("cogbench", "eval", "cognition_gpt_eval.py")


def authors_output_parse(reply: str, count: int, module: ModuleType) -> list[int] | None:
    """Key point j's verdict as the authors' ``evaluator`` takes it: ``output_parse(reply.strip())[str(j)]``."""
    parsed = module.output_parse(reply.strip())
    try:
        return [parsed[str(j)] for j in range(1, count + 1)]
    except KeyError:  # the evaluator retries the reply
        return None


def recognition_score(monkeypatch, spacy_model: Path, embedder: str) -> ModuleType:
    """``recognition_score.py`` with the given spaCy pipeline and sentence embedder as its two loaders."""
    import sentence_transformers
    import spacy

    real_load, real_model = spacy.load, sentence_transformers.SentenceTransformer
    with monkeypatch.context() as patch:
        patch.setattr(spacy, "load", lambda name, *a, **k: real_load(spacy_model))
        patch.setattr(
            sentence_transformers, "SentenceTransformer", lambda name, *a, **k: real_model(embedder, device="cpu")
        )
        return load_oracle("cogbench", "eval", "recognition_score.py")


def run_codis_eval(data_json: Path, outputs: Path, base_url: str) -> dict[str, dict[str, float]]:
    """Run CODIS ``eval.py`` as its authors do (a process, environment variables); its printed Acc_p/Acc_q."""
    env = dict(
        os.environ,
        OPENAI_API_KEY="sk-oracle-test",
        OPENAI_BASE_URL=base_url,
        ANSWER_PATH=str(data_json),
        OUTPUT_PATH=str(outputs),
    )
    done = subprocess.run(
        [sys.executable, str(oracle_file("codis", "eval.py"))], env=env, capture_output=True, text=True, timeout=600
    )
    if done.returncode:
        raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "eval.py failed")
    tables: dict[str, dict[str, float]] = {}
    current = None
    for line in done.stdout.splitlines():
        if line in ("Acc_p", "Acc_q"):
            current = tables.setdefault(line, {})
        elif ": " in line and current is not None:
            name, value = line.rsplit(": ", 1)
            current[name] = float(value)
    return tables


def run_vqa_accuracy(predictions: Path) -> dict[str, float]:
    """Run ``vqa_accuracy.py`` on a ``.json``/``.jsonl`` file; its printed accuracies (fractions)."""
    script = oracle_file("cogbench", "eval", "vqa_accuracy.py")
    done = subprocess.run(
        [sys.executable, str(script), "--model_output_file_path", str(predictions)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if done.returncode:
        raise RuntimeError(done.stderr.strip().splitlines()[-1])
    line = done.stdout.strip().splitlines()[-1]
    return {name.strip(): float(value) for name, value in (part.split(": ") for part in line.split(", "))}


def write_jsonl(path: Path, records) -> Path:
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path
