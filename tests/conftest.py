"""Shared fixtures. The OpenAI-compatible test server lives in ``openai_server.py``."""

import os

import pytest

from openai_server import openai_server_fixture

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

openai_server = pytest.fixture(openai_server_fixture, name="openai_server")
