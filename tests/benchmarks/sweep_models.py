"""The stand-in models of tests/benchmarks/sweep_many.py: twelve behaviours of a vision-language model behind one
loopback OpenAI-compatible server (tests/openai_server.py), told apart by the request's ``model``.

Each behaviour answers VQA, CODIS and description queries from the build's own ground truth, read from its
Parquet files: a VQA question by its text and first option, a CODIS query by its context and question (the
prompt's ``Context: ... Question: ...``), a description by the sha256 of the image's base64 bytes (cogbench sends
an image's stored bytes, openai_chat.py). ``right`` answers every query right, ``wrong`` gives another option or the
other context's answer, and the rest fail as models do: slowly, thinking aloud, refusing, stopping at the token
limit, replying nothing, rambling, failing now and then with HTTP 500 (retried), replying gibberish.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import re
import threading
from pathlib import Path
from typing import Any

from openai_server import Reply

BEHAVIOURS = (
    "right",
    "wrong",
    "always-a",
    "slow",
    "thinking-inline",
    "thinking-field",
    "refusing",
    "length",
    "empty",
    "verbose",
    "flaky",
    "gibberish",
)
REFUSAL = "I'm sorry, but I can't help with identifying details in this image."
CODIS_PROMPT = re.compile(r"Context: (.*) Question: (.*)\Z", re.S)


class Truth:
    """The right reply to every query of a build, and a wrong one."""

    def __init__(self, build: Path):
        import pyarrow.parquet as pq

        def table(config: str, columns: list[str]) -> list[dict[str, Any]]:
            files = sorted((build / "data" / config).glob("*.parquet"))
            return [row for path in files for row in pq.read_table(path, columns=columns).to_pylist()]

        self.vqa = {  # the answer column is the option's index (a ClassLabel)
            (row["question"], row["choice_a"]): "ABCD"[row["answer"]]
            for row in table("vqa", ["question", "choice_a", "answer"])
        }
        self.codis: dict[tuple[str, str], tuple[str, str]] = {}
        for row in table("codis", ["question", "context_1", "context_2", "answer_1", "answer_2"]):
            self.codis[(row["context_1"], row["question"])] = (row["answer_1"], row["answer_2"])
            self.codis[(row["context_2"], row["question"])] = (row["answer_2"], row["answer_1"])
        rows = table("description", ["image", "description"])
        self.description = {
            hashlib.sha256(base64.b64encode(row["image"]["bytes"])).hexdigest(): row["description"] for row in rows
        }
        self.descriptions = [row["description"] for row in rows]

    def query(self, request) -> tuple[str, str, str]:
        """The query's task, its right reply and a wrong one."""
        text = request.prompt_text
        match = CODIS_PROMPT.search(text)
        if match:
            right, other = self.codis[(match.group(1), match.group(2))]
            return "codis", right, other
        lines = text.split("\n")
        if len(lines) > 1 and lines[1].startswith("A. "):
            right = self.vqa[(lines[0], lines[1][3:])]
            return "vqa", right, "ABCD"[("ABCD".index(right) + 1) % 4]
        right = self.description[hashlib.sha256(image_data(request).encode()).hexdigest()]
        return "description", right, self.descriptions[(self.descriptions.index(right) + 1) % len(self.descriptions)]


def image_data(request) -> str:
    for message in request.messages:
        for part in message.get("content") if isinstance(message.get("content"), list) else []:
            if part.get("type") == "image_url":
                return part["image_url"]["url"].partition("base64,")[2]
    return ""


def codis_reply(answer: str) -> str:
    """The prompt's two parts: reasoning, a newline, the answer in a word or phrase."""
    return f"The context and the image point one way.\n{answer}"


class Models:
    """The responder of the one server: the behaviour is the model name's part before ``-NN``."""

    def __init__(self, build: Path, slow_seconds: float):
        self.truth = Truth(build)
        self.slow_seconds = slow_seconds
        self._counts: dict[str, itertools.count] = {}
        self._lock = threading.Lock()
        self.errors: list[str] = []

    def __call__(self, request) -> Reply:
        try:
            return self.reply(request)
        except Exception as error:  # a stand-in's own bug: counted and shown, never a model's behaviour
            with self._lock:
                self.errors.append(f"{type(error).__name__}: {error}")
            return Reply(status=500)

    def reply(self, request) -> Reply:
        model = str(request.body.get("model", ""))
        behaviour = model.rpartition("-")[0]
        task, right, wrong = self.truth.query(request)
        answer = codis_reply(right) if task == "codis" else right
        if behaviour == "right":
            return Reply(text=answer)
        if behaviour == "wrong":
            return Reply(text=codis_reply(wrong) if task == "codis" else wrong)
        if behaviour == "always-a":
            return Reply(text={"vqa": "A", "codis": codis_reply("in the morning"), "description": "A photo."}[task])
        if behaviour == "slow":
            return Reply(text=answer, delay_seconds=self.slow_seconds)
        if behaviour == "thinking-inline":
            return Reply(
                text=f"<think>{'Let me look at the image again. ' * 40}</think>{answer}", completion_tokens=400
            )
        if behaviour == "thinking-field":
            message = {"role": "assistant", "content": answer, "reasoning_content": "First, the scene. " * 40}
            return Reply(message=message, completion_tokens=400)
        if behaviour == "refusing":
            return Reply(text=REFUSAL)
        if behaviour == "length":
            return Reply(text="Let me think about this carefully", finish_reason="length", completion_tokens=2048)
        if behaviour == "empty":
            return Reply(text="")
        if behaviour == "verbose":
            return Reply(text=f"{'There is much to say here. ' * 30}\n{answer}", completion_tokens=300)
        if behaviour == "flaky":
            with self._lock:
                number = next(self._counts.setdefault(model, itertools.count()))
            return Reply(status=500) if number % 7 == 3 else Reply(text=answer)
        if behaviour == "gibberish":
            return Reply(text="zxq vrrp ## 42 ~~")
        return Reply(status=404, text=f"no model {model}")


def model_entries(count: int, base_url: str) -> list[dict[str, Any]]:
    """``count`` models, the behaviours in turn: ``right-00``, ``wrong-01``, ... ``right-12``, ..."""
    entries = []
    for number in range(count):
        behaviour = BEHAVIOURS[number % len(BEHAVIOURS)]
        entry: dict[str, Any] = {"model": f"openai:{behaviour}-{number:02d}", "base_url": base_url}
        if behaviour.startswith("thinking"):
            entry["thinking"] = "on"
        entries.append(entry)
    return entries
