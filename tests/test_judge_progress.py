"""The LLM judge's progress bar: on a terminal's stderr only, and tqdm imported only then.

A child process judges three prompts against a real local server, once with stderr on a
pseudo-terminal (the bar is drawn: done/total, cache hits, failures) and once with stderr a pipe
(nothing drawn, and tqdm never imported: it is most of a judged run's start).
"""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
import textwrap

from openai_server import OpenAIServer, Reply

CHILD = textwrap.dedent(
    """
    import sys
    from cogbench.reference_eval.backends.openai_api import ChatSettings
    from cogbench.reference_eval.judges.llm import LLMJudge

    judge = LLMJudge(ChatSettings(model="bench", base_url=sys.argv[1]), sys.argv[2])
    replies = judge.ask(["one", "two", "three"], accept=lambda prompt, reply: True)
    judge.close()
    print("judged", sum(r.error is None for r in replies), "tqdm" in sys.modules, flush=True)
    """
)


def run_child(base_url: str, cache: str, on_terminal: bool) -> tuple[str, str]:
    """(stdout, stderr) of the child; stderr a pseudo-terminal when asked."""
    env = {**os.environ, "OPENAI_API_KEY": "test"}
    if not on_terminal:
        done = subprocess.run(
            [sys.executable, "-c", CHILD, base_url, cache], capture_output=True, text=True, env=env, check=True
        )
        return done.stdout, done.stderr
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 120, 0, 0))  # a terminal 120 wide
    with subprocess.Popen(
        [sys.executable, "-c", CHILD, base_url, cache], stdout=subprocess.PIPE, stderr=follower, text=True, env=env
    ) as child:
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the child closed its end
                break
            if not chunk:
                break
            chunks.append(chunk)
        stdout = child.stdout.read() if child.stdout else ""
        assert child.wait() == 0
    os.close(leader)
    return stdout, b"".join(chunks).decode(errors="replace")


def test_the_bar_is_drawn_on_a_terminal_and_tqdm_is_loaded_only_then(tmp_path):
    with OpenAIServer(lambda request: Reply(text="right")) as server:
        out, err = run_child(server.base_url, str(tmp_path / "a.sqlite"), on_terminal=True)
        assert out.split() == ["judged", "3", "True"]
        assert "judge bench" in err and "3/3" in err and "failed=0" in err
        out, err = run_child(server.base_url, str(tmp_path / "b.sqlite"), on_terminal=False)
        assert out.split() == ["judged", "3", "False"]
        assert err == ""
