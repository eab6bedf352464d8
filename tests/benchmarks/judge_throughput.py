"""Judge throughput on all 706 CODIS queries against the local server at 100 ms per call.

One call at a time (as the official scripts do) versus this package's judge
(concurrent, de-duplicated, fresh cache), side by side in one run.

    .venv/bin/python tests/benchmarks/judge_throughput.py [--concurrency 8]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from openai_server import OpenAIServer, Reply  # noqa: E402
from shared_files import raw_data_dir  # noqa: E402

from cogbench.reference_eval.backends.openai_api import ChatClient, ChatSettings, text_message  # noqa: E402
from cogbench.reference_eval.judges import codis  # noqa: E402
from cogbench.reference_eval.judges.llm import LLMJudge  # noqa: E402

DATA = raw_data_dir() / "codis"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--latency", type=float, default=0.1)
    args = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "benchmark")
    pairs = {p["id"]: p for p in json.loads((DATA / "data.json").read_text())}
    outputs = json.loads((DATA / "output_example.json").read_text())
    prompts = [
        codis.judge_prompt(pairs[o["id"]]["question"], pairs[o["id"]]["answer"][f"answer_{q}"], o["output"][f"output_{q}"])
        for o in outputs for q in (1, 2)
    ]
    with OpenAIServer(lambda request: Reply(text="right", delay_seconds=args.latency)) as server:
        serial = ChatSettings(model="bench", base_url=server.base_url, concurrency=1)
        start = time.perf_counter()
        with ChatClient(serial) as client:
            for prompt in prompts:
                assert client.complete(text_message(prompt)).ok
        one_at_a_time = time.perf_counter() - start
        sent_serial = len(server.chat_requests)

        with tempfile.TemporaryDirectory() as folder:
            judge = LLMJudge(ChatSettings(model="bench", base_url=server.base_url, concurrency=args.concurrency),
                             Path(folder) / "cache.sqlite")
            start = time.perf_counter()
            replies = judge.ask(prompts, accept=lambda prompt, reply: codis.parse_verdict(reply) is not None)
            package = time.perf_counter() - start
            judge.close()
        assert all(reply.text == "right" for reply in replies)
        sent_package = len(server.chat_requests) - sent_serial
    print(f"{len(prompts)} CODIS judge queries, {args.latency * 1000:.0f} ms per call")
    print(f"one call at a time : {one_at_a_time:7.2f} s  ({sent_serial} calls)")
    print(f"cogbench judge     : {package:7.2f} s  ({sent_package} calls, concurrency {args.concurrency}, "
          "identical prompts sent once)")
    print(f"speed-up           : {one_at_a_time / package:7.1f}x")


if __name__ == "__main__":
    main()
