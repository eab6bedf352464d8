"""The openai backend against a real local OpenAI-compatible server."""

from __future__ import annotations

import base64
import io
import threading

from PIL import Image

from cogbench.cli import main
from cogbench.dataset_builders.load import load_config
from cogbench.reference_eval.formats.predictions import read_predictions

from openai_server import Reply

SECRET = "sk-test-do-not-leak-1234567890"


def _eval_argv(server, dataset, out, *extra):
    return [
        "eval",
        "--task",
        "codis",
        "--model",
        "openai:served-model",
        "--base-url",
        server.base_url,
        "--dataset",
        str(dataset),
        "--out",
        str(out),
        "--limit",
        "3",
        "--concurrency",
        "4",
        "--max-new-tokens",
        "64",
        "--no-score",
        *extra,
    ]


def test_images_arrive_inline_and_retries_recover(openai_server, built_release, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    failed_once: set[str] = set()
    lock = threading.Lock()

    def responder(request):
        text = request.messages[0]["content"][1]["text"]
        with lock:  # every query's first request fails: 500 or 429
            if text not in failed_once:
                failed_once.add(text)
                return Reply(status=500 if len(failed_once) % 2 else 429)
        return Reply(text=f"reasoning\nanswer to: {text[-40:]}", completion_tokens=7)

    server = openai_server(responder)
    out = tmp_path / "run"
    assert main(_eval_argv(server, built_release, out, "--max-attempts", "3")) == 0

    dataset = load_config(str(built_release), "codis").select(range(3))
    predictions = read_predictions(out / "predictions.jsonl")
    assert [(p.item_id, p.query) for p in predictions] == [(i, q) for i in dataset["id"] for q in (1, 2)]
    assert all(p.output.startswith("reasoning\nanswer to: ") for p in predictions)
    assert predictions[0].generation["backend"] == "openai"

    requests = server.chat_requests
    assert len(requests) == 12  # six queries, each failed once then answered
    assert {r.headers["authorization"] for r in requests} == {f"Bearer {SECRET}"}
    assert {r.body["model"] for r in requests} == {"served-model"}
    assert {r.body["max_tokens"] for r in requests} == {64} and {r.body["temperature"] for r in requests} == {0.0}
    sizes = {row_id: image.size for row_id, image in zip(dataset["id"], dataset["image"])}
    for request in requests:
        image_part, text_part = request.messages[0]["content"]
        header, encoded = image_part["image_url"]["url"].split(",", 1)
        assert header == "data:image/jpeg;base64"
        picture = Image.open(io.BytesIO(base64.b64decode(encoded)))
        assert picture.size in sizes.values()
        assert text_part["text"].startswith("I'll give you an image and some additional context")

    # The key goes to the server only: not to the output, not to any file of the run.
    captured = capsys.readouterr()
    assert SECRET not in captured.out + captured.err
    for path in out.rglob("*"):
        if path.is_file():
            assert SECRET not in path.read_text(encoding="utf-8", errors="replace")


def test_a_query_that_keeps_failing_is_kept_for_the_next_run(
    openai_server, built_release, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    broken = {"on": True}

    def responder(request):
        text = request.messages[0]["content"][1]["text"]
        if broken["on"] and "Context: My hand is moving downwards." in text:
            return Reply(status=503)
        return Reply(text="fine")

    server = openai_server(responder)
    out = tmp_path / "run"
    assert main(_eval_argv(server, built_release, out, "--max-attempts", "2")) == 3
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith("error: 1 of 6 model queries failed (most common: HTTP 503 after 2 attempts, 1 times)")
    assert "first: item 000 query 2" in error
    assert len(read_predictions(out / "shards" / "rank-0.jsonl")) == 5
    assert not (out / "predictions.jsonl").exists()
    # --allow-failures: exit 0, what there is merged and exported, the failure still on stderr.
    assert main(_eval_argv(server, built_release, out, "--max-attempts", "1", "--allow-failures")) == 0
    assert "warning: 1 of 6 model queries failed" in capsys.readouterr().err
    assert len(read_predictions(out / "predictions.jsonl")) == 5

    broken["on"] = False
    before = len(server.chat_requests)
    assert main(_eval_argv(server, built_release, out, "--max-attempts", "2")) == 0
    assert len(server.chat_requests) == before + 1  # only the missing query is asked again
    assert len(read_predictions(out / "predictions.jsonl")) == 6


def test_no_key_is_a_usage_error(openai_server, built_release, tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server = openai_server(lambda request: Reply(text="x"))
    assert main(_eval_argv(server, built_release, tmp_path / "run")) == 2
    assert "OPENAI_API_KEY" in capsys.readouterr().err
    assert server.chat_requests == []


def test_every_query_carries_its_own_image_and_a_pair_shares_one_encoding(built_release):
    from cogbench.reference_eval.backends.openai_chat import conversations
    from cogbench.reference_eval.tasks.queries import build_queries, undecoded_images

    dataset = load_config(str(built_release), "codis").select(range(4))
    _, queries = build_queries("codis", dataset, "spontaneous", False, True, False)
    images = undecoded_images(dataset)
    built = list(conversations(queries, images))
    assert len(built) == len(queries) == 8
    for query, messages in zip(queries, built):
        image_part, text_part = messages[0]["content"]
        encoded = image_part["image_url"]["url"].split(",", 1)[1]
        assert base64.b64decode(encoded) == images[query.row]["image"]["bytes"]  # this query's row, byte for byte
        assert text_part["text"] == query.prompt
    # The two contexts of one CODIS image: one base64 part, not two (memory and CPU per request).
    assert built[0][0]["content"][0] is built[1][0]["content"][0]
    assert built[1][0]["content"][0] is not built[2][0]["content"][0]
    assert [q.row for q in queries] == [0, 0, 1, 1, 2, 2, 3, 3]


def test_a_reply_with_lone_surrogates_is_kept_and_the_run_completes_and_resumes(
    openai_server, built_release, tmp_path, monkeypatch, capsys
):
    """Some servers turn broken UTF-8 into "\\ud800" escapes: each lone surrogate is stored as U+FFFD."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    server = openai_server(lambda request: Reply(text="left \ud800 or \udfff right"))
    out = tmp_path / "run"
    assert main(_eval_argv(server, built_release, out)) == 0
    outputs = [p.output for p in read_predictions(out / "predictions.jsonl")]
    assert outputs == ["left \ufffd or \ufffd right"] * 6  # three rows, two queries each
    assert "\ufffd" in (out / "predictions.jsonl").read_text(encoding="utf-8")
    sent = len(server.chat_requests)
    assert main(_eval_argv(server, built_release, out)) == 0  # resumes: nothing is asked again
    assert len(server.chat_requests) == sent == 6
    capsys.readouterr()


def test_an_interrupted_run_says_the_same_command_resumes_it(
    openai_server, built_release, tmp_path, monkeypatch, capsys
):
    """Issue 32 item 8: Ctrl-C (a real SIGINT) during eval: one line saying the same command resumes; it does."""
    import signal
    import threading

    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    asked = []
    main_thread = threading.main_thread().ident

    def responder(request):
        asked.append(request)
        if len(asked) == 4:  # Ctrl-C reaches the main thread, as a terminal's does
            signal.pthread_kill(main_thread, signal.SIGINT)
        return Reply(text="fine")

    server = openai_server(responder)
    argv = _eval_argv(server, built_release, tmp_path / "run", "--concurrency", "1", "--no-score")
    # Python's own SIGINT handler and an unblocked SIGINT, as a fresh `cogbench` process has them
    # (tests that ran before in this process may have changed either).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    try:
        assert main(argv) == 130
    finally:
        signal.signal(signal.SIGINT, previous)
    assert capsys.readouterr().err.splitlines()[-1] == (
        "interrupted: what was generated is saved; run the same command again to resume where it stopped"
    )
    before = len(asked)
    assert main(argv) == 0
    assert "already done" in capsys.readouterr().out
    assert 0 < len(asked) - before < 6  # resumed: only what was missing was asked again


def test_a_failure_line_of_a_query_without_a_number_names_only_its_item(
    openai_server, built_release, tmp_path, monkeypatch, capsys
):
    """Issue 32 item 8: a VQA question has no query number: "item X", never "item X query None"."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    server = openai_server(lambda request: Reply(status=503))
    argv = _eval_argv(server, built_release, tmp_path / "run", "--max-attempts", "1", "--limit", "1")
    argv[argv.index("codis")] = "vqa"
    assert main(argv) == 3
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert "first: item " in error and "None" not in error, error
