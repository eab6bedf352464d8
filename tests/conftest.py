"""Shared test fixtures.

Tests read the real raw data from ``../shared/data`` (or ``$COGBENCH_SHARED/data``,
or ``$COGBENCH_RAW_DIR``; see ``shared_files.py``) when it is there, and otherwise a small synthetic raw folder in the authors'
formats, generated here. Nothing in the test run may reach the network.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

# Set before any Hugging Face library is imported by a test module.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
if "HF_HOME" not in os.environ:
    # A fresh cache per run (datasets' Arrow files of the built images: ~0.7 GB), removed when the run
    # ends: left behind, one per pytest process, they filled CI's disk. Subprocesses inherit it.
    os.environ["HF_HOME"] = tempfile.mkdtemp(prefix="cogbench-hf-home-")
    atexit.register(shutil.rmtree, os.environ["HF_HOME"], ignore_errors=True)
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from hub_server import LocalHub, local_hub_api
from openai_server import openai_server_fixture
from shared_files import REPO_ROOT, in_ci, missing_message, missing_shared_parts, raw_data_dir, skip_or_fail  # noqa: F401
from synthetic_raw import write_synthetic_raw
from tiers import pytest_collection_modifyitems, pytest_ignore_collect  # noqa: F401  (the tiers: tests/tiers.py)


def _real_raw_dir() -> Path | None:
    candidate = raw_data_dir()
    if (candidate / "codis" / "data.json").is_file() and (
        candidate / "cogbench-samples" / "cogbench_vqa.json"
    ).is_file():
        return candidate.resolve()
    return None


REAL_RAW_DIR = _real_raw_dir()
MISSING_RAW = f"the real raw data is not present: {raw_data_dir()} (set COGBENCH_RAW_DIR or COGBENCH_SHARED)"
needs_real_data = pytest.mark.skipif(REAL_RAW_DIR is None, reason=MISSING_RAW)


def pytest_sessionstart(session):
    """Under ``CI=true`` an incomplete shared folder stops the run loudly instead of skipping ~180 tests."""
    missing = missing_shared_parts()
    if in_ci() and (missing or REAL_RAW_DIR is None):
        names = ", ".join(str(path) for path in missing) or MISSING_RAW
        pytest.exit(f"CI=true but the shared folder is incomplete: missing {names} (set COGBENCH_SHARED)", returncode=1)


@pytest.fixture(scope="session")
def real_raw_dir() -> Path:
    if REAL_RAW_DIR is None:
        skip_or_fail(MISSING_RAW)
    return REAL_RAW_DIR


@pytest.fixture(scope="session")
def raw_dir(tmp_path_factory) -> Path:
    """The real raw data when present, else a synthetic folder in the same layout."""
    if REAL_RAW_DIR is not None:
        return REAL_RAW_DIR
    return write_synthetic_raw(tmp_path_factory.mktemp("synthetic-raw"))


@pytest.fixture
def synthetic_raw(tmp_path) -> Path:
    """A small, writable raw folder in the authors' layouts, for mutation tests."""
    return write_synthetic_raw(tmp_path / "raw")


@pytest.fixture(scope="session")
def built_release(raw_dir, tmp_path_factory) -> Path:
    """``raw_dir`` built once per test session; treat it as read-only."""
    from cogbench.cards.release import build_release

    out = tmp_path_factory.mktemp("release") / "cogbench"
    build_release(raw_dir, out)
    return out


@pytest.fixture
def hub():
    """A real local Hub server (hub_server.py); ``api`` is the real ``HfApi`` pointed at it."""
    with LocalHub() as server:
        yield server


@pytest.fixture
def api(hub, monkeypatch):
    return local_hub_api(hub, monkeypatch)


# A real local HTTP server speaking the OpenAI chat-completions API (see openai_server.py).
openai_server = pytest.fixture(openai_server_fixture, name="openai_server")


@pytest.fixture(scope="session")
def vllm_tiny_model(tmp_path_factory) -> Path:
    """The tiny Qwen2.5-VL that the real-vLLM tests serve, built once for all their modules (vllm_helpers)."""
    from vllm_helpers import build_served_model

    return build_served_model(tmp_path_factory.mktemp("vllm-model") / "model")


@pytest.fixture(scope="session")
def plain_vllm_server(vllm_tiny_model, tmp_path_factory):
    """`vllm serve` on that model without a reasoning parser, one for test_vllm_server.py and
    test_vllm_judge_engines.py: each start of the engine costs about 100 s on 2 cores (.ci/run-vllm)."""
    from vllm_helpers import VLLMServer

    server = VLLMServer(os.environ["COGBENCH_VLLM_PYTHON"], vllm_tiny_model, tmp_path_factory.mktemp("vllm"))
    print(f"vLLM ready in {server.start():.0f} s")
    yield server
    server.kill()


@pytest.fixture(scope="session")
def tiny_llava(tmp_path_factory) -> Path:
    """A random-weight LLaVA with the real Qwen2.5-VL tokenizer and chat template (see tiny_models.py)."""
    from tiny_models import QWEN_PROCESSOR_DIR, build_tiny_llava

    if not QWEN_PROCESSOR_DIR.is_dir():
        pytest.skip(missing_message(QWEN_PROCESSOR_DIR, "the Qwen2.5-VL tokenizer files"))
    return build_tiny_llava(tmp_path_factory.mktemp("tiny-llava"))
