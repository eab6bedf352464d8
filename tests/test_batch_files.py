"""Batch API output lines read back (backends/batch_files.py), one line shape at a time: fast, no dataset.

The lines are written here as the Batch API documents them (``response.status_code``, ``response.body``,
``error``), so each expectation follows from the line itself, not from our reader.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from pathlib import Path

import pytest

from cogbench.dataset_builders.output import OUTPUT_MARKER
from cogbench.errors import CogbenchError, UsageError
from cogbench.reference_eval.backends.batch_files import (
    URL,
    Request,
    Response,
    body_hash,
    read_responses,
    refuse_foreign,
    request,
    write_requests,
)


def answered(custom_id: str, text: str, status: int = 200, tokens: int = 3) -> dict:
    body = {"choices": [{"message": {"role": "assistant", "content": text}}], "usage": {"completion_tokens": tokens}}
    return {"custom_id": custom_id, "response": {"status_code": status, "body": body}, "error": None}


def failed(custom_id: str, message: str) -> dict:
    return {"custom_id": custom_id, "response": None, "error": {"code": "server_error", "message": message}}


def write_lines(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


@pytest.mark.parametrize("error_first", [False, True])
def test_an_error_line_never_replaces_an_answer_for_the_same_custom_id(tmp_path, error_first):
    """A retried request leaves an error and an answer in the output, in either order: the answer is kept."""
    lines = [answered("item-1@abc", "The cat."), failed("item-1@abc", "engine died")]
    path = write_lines(tmp_path / "out.jsonl", lines[::-1] if error_first else lines)
    (response,) = read_responses([str(path)]).values()
    assert (response.text, response.error, response.completion_tokens) == ("The cat.", None, 3)
    assert response.where == f"{path} line {2 if error_first else 1}"


def test_two_errors_for_one_custom_id_keep_the_first(tmp_path):
    path = write_lines(tmp_path / "out.jsonl", [failed("q@1", "first"), failed("q@1", "second")])
    assert read_responses([str(path)])["q@1"].error == "engine error: first"


def test_a_response_whose_http_status_is_not_200_is_an_error_even_with_a_body(tmp_path):
    """vLLM's run-batch and the Batch API put a failed request's status beside a body; its text is no answer."""
    path = write_lines(
        tmp_path / "out.jsonl",
        [answered("a@1", "rate limited", status=429), answered("b@2", "fine"), answered("c@3", "oops", status=500)],
    )
    responses = read_responses([str(path)])
    assert {name: (r.text, r.error) for name, r in responses.items()} == {
        "a@1": (None, "HTTP 429"),
        "b@2": ("fine", None),
        "c@3": (None, "HTTP 500"),
    }


def test_a_response_whose_status_is_null_is_an_error(tmp_path):
    record = answered("a@1", "The dog.")
    record["response"]["status_code"] = None
    path = write_lines(tmp_path / "out.jsonl", [record])
    assert read_responses([str(path)])["a@1"].error == "HTTP None"


def test_a_response_without_a_status_is_read_as_200(tmp_path):
    record = answered("a@1", "The dog.")
    del record["response"]["status_code"]
    path = write_lines(tmp_path / "out.jsonl", [record])
    assert read_responses([str(path)])["a@1"].text == "The dog."


def test_the_same_answer_twice_is_kept_once_and_two_answers_are_refused(tmp_path):
    # two equal texts read from two lines are two str objects: compared by value
    same = write_lines(tmp_path / "same.jsonl", [answered("a@1", "The cat sits."), answered("a@1", "The cat sits.")])
    assert read_responses([str(same)])["a@1"].where == f"{same} line 1"
    for texts in (["x", "y"], ["y", "x"]):
        different = write_lines(tmp_path / "different.jsonl", [answered("a@1", text) for text in texts])
        with pytest.raises(
            CogbenchError, match=r"line 2: custom_id 'a@1' answered twice, differently \(also at .* line 1\)"
        ):
            read_responses([str(different)])


# --- request files written (write_requests) and the hash that names a body ------------------------------------


def test_the_body_hash_is_of_canonical_json_in_utf8_whatever_the_key_order():
    # printf '{"a":1,"b":"\xc3\xa9"}' | sha256sum | cut -c1-16
    assert body_hash({"b": "é", "a": 1}) == body_hash({"a": 1, "b": "é"}) == "09ad9fd2fb648cb2"
    line = json.loads(request("item-7", {"a": 1, "b": "é"}).line())
    assert line == {"custom_id": "item-7@09ad9fd2fb648cb2", "method": "POST", "url": URL, "body": {"a": 1, "b": "é"}}


def test_requests_and_responses_are_frozen():
    """A response read is evidence of what the engine said; nothing downstream may edit it."""
    for record in (request("a", {}), Response("a@1", "x", None, "f line 1")):
        with pytest.raises(dataclasses.FrozenInstanceError):
            record.custom_id = "b@2"


def requests_of(count: int) -> list[Request]:
    return [request(f"item-{n}", {"n": n}) for n in range(count)]


def test_requests_are_split_into_shards_of_equal_size_with_each_file_hashed(tmp_path):
    out = tmp_path / "requests"
    manifest = write_requests(out, requests_of(5), 5, 2, {"model": "m"})
    files = sorted(p.name for p in out.iterdir())
    assert files == [OUTPUT_MARKER, "manifest.json", "requests-00001-of-00002.jsonl", "requests-00002-of-00002.jsonl"]
    first, second = (out / files[2]).read_bytes(), (out / files[3]).read_bytes()
    assert [json.loads(x)["custom_id"].split("@")[0] for x in (first + second).splitlines()] == [
        f"item-{n}" for n in range(5)
    ]
    assert manifest == {
        "format": "openai-batch-v1",
        "url": "/v1/chat/completions",
        "model": "m",
        "requests": 5,
        "shards": [
            {"file": files[2], "requests": 3, "sha256": hashlib.sha256(first).hexdigest()},
            {"file": files[3], "requests": 2, "sha256": hashlib.sha256(second).hexdigest()},
        ],
    }
    text = (out / "manifest.json").read_text()
    assert json.loads(text) == manifest and text.endswith("}\n")
    # indented by 2, keys sorted
    assert [line.split('"')[1] for line in text.splitlines() if line.startswith('  "')] == [
        "format",
        "model",
        "requests",
        "shards",
        "url",
    ]
    # The same folder again, fewer requests than shards asked: one shard each, the old shards gone.
    again = write_requests(out, requests_of(3), 3, 4, {"model": "m"})
    assert [s["file"] for s in again["shards"]] == [f"requests-0000{n}-of-00003.jsonl" for n in (1, 2, 3)]
    assert [s["requests"] for s in again["shards"]] == [1, 1, 1]
    assert sorted(p.name for p in out.glob("requests-*")) == [s["file"] for s in again["shards"]]


@pytest.mark.parametrize(
    "count, shards, sizes",
    [(7, 2, [4, 3]), (7, 3, [3, 2, 2]), (8, 3, [3, 3, 2]), (3, 1, [3]), (1, 5, [1]), (0, 2, [0])],
)
def test_shard_sizes_differ_by_one_at_most_and_the_first_are_larger(tmp_path, count, shards, sizes):
    manifest = write_requests(tmp_path / "r", requests_of(count), count, shards, {})
    assert [s["requests"] for s in manifest["shards"]] == sizes
    lines = [line for s in manifest["shards"] for line in (tmp_path / "r" / s["file"]).read_text().splitlines()]
    assert [json.loads(line)["body"]["n"] for line in lines] == list(range(count))


@pytest.mark.parametrize("shards", [0, -1])
def test_no_shards_is_a_usage_error(tmp_path, shards):
    with pytest.raises(UsageError, match=rf"^--shards {shards}: give a positive number$"):
        write_requests(tmp_path / "r", requests_of(1), 1, shards, {})


# --- output files found and their lines read ---------------------------------------------------------------


def test_a_folder_gives_its_jsonl_and_json_files_in_name_order_without_the_manifest(tmp_path):
    folder = tmp_path / "out"
    folder.mkdir()
    write_lines(folder / "b.json", [answered("b@1", "two")])  # Ray Data writes JSON lines as *.json
    write_lines(folder / "a.jsonl", [answered("a@1", "one")])
    write_lines(folder / "part-0.json", [answered("c@1", "three")])  # a name sorting after manifest.json
    (folder / "manifest.json").write_text("{}")
    (folder / "notes.txt").write_text("not read")
    (folder / "sub.jsonl").mkdir()
    responses = read_responses([str(folder)])
    assert [(r.custom_id, r.where) for r in responses.values()] == [
        ("a@1", f"{folder / 'a.jsonl'} line 1"),
        ("b@1", f"{folder / 'b.json'} line 1"),
        ("c@1", f"{folder / 'part-0.json'} line 1"),
    ]


def test_missing_files_and_empty_folders_are_usage_errors(tmp_path):
    with pytest.raises(UsageError, match=r"no such file or folder$"):
        read_responses([str(tmp_path / "absent.jsonl")])
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "manifest.json").write_text("{}")
    with pytest.raises(UsageError, match=r"empty: no \.jsonl or \.json file in this folder$"):
        read_responses([str(tmp_path / "empty")])


@pytest.mark.parametrize(
    "line, message",
    [
        ("{not json", "line 2: not valid JSON; expected a Batch API output line"),
        ('["a@1"]', "line 2: no custom_id; expected a Batch API output line"),
        ('{"custom_id": 7}', "line 2: no custom_id; expected a Batch API output line"),
        (
            '{"custom_id": "a@1", "body": {}}',
            "line 2: custom_id 'a@1' is a request line, not a response; give the output files",
        ),
    ],
)
def test_a_line_that_is_no_output_line_is_refused_by_file_and_line(tmp_path, line, message):
    path = tmp_path / "out.jsonl"
    path.write_text("\n" + line + "\n")  # a blank first line is skipped, still counted
    with pytest.raises(CogbenchError, match=re.escape(f"{path} {message}")):
        read_responses([str(path)])


@pytest.mark.parametrize(
    "record, error",
    [
        ({"error": {"code": "rate_limit"}}, "engine error: rate_limit"),
        ({"error": {"message": "died", "code": "x"}}, "engine error: died"),
        ({"error": "plain text"}, "engine error: plain text"),
        ({"response": None}, "no response"),
        ({"response": "text"}, "no response"),
        ({"response": {"status_code": 200, "body": {"choices": []}}}, "reply has no message content"),
    ],
)
def test_each_kind_of_failed_line_keeps_its_reason(tmp_path, record, error):
    path = write_lines(tmp_path / "out.jsonl", [{"custom_id": "a@1", **record}])
    response = read_responses([str(path)])["a@1"]
    assert (response.text, response.error, response.completion_tokens) == (None, error, 0)


# --- responses this run did not ask for (refuse_foreign) -------------------------------------------------


def test_a_response_this_run_did_not_ask_is_refused_by_name(tmp_path):
    expected = ["item-1@aaaa", "item-2@bbbb"]
    path = write_lines(tmp_path / "out.jsonl", [answered("item-1@aaaa", "x"), answered("item-2@cccc", "y")])
    refuse_foreign(read_responses([str(path)]), ["item-1@aaaa", "item-2@cccc", "item-3@ffff"])  # all asked
    with pytest.raises(CogbenchError) as other_settings:
        refuse_foreign(read_responses([str(path)]), expected)
    assert str(other_settings.value) == (
        f"{path} line 2: custom_id 'item-2@cccc' was written for other settings or another dataset "
        "(this run asks item-2 with another request body); refusing it"
    )
    foreign = write_lines(
        tmp_path / "foreign.jsonl", [answered(f"item-{n}@dddd", "x") for n in (9, 8, 7)] + [answered(expected[0], "z")]
    )
    with pytest.raises(CogbenchError) as unknown:
        refuse_foreign(read_responses([str(foreign)]), expected)
    assert str(unknown.value) == (
        f"{foreign} line 1: custom_id 'item-9@dddd' answers a request this run did not write; "
        "refusing it (2 more such response(s))"
    )
    refuse_foreign({}, expected)  # nothing read, nothing refused


@pytest.mark.parametrize("count", [1, 2, 3, 4])
def test_the_refusal_counts_the_other_foreign_responses(tmp_path, count):
    path = write_lines(tmp_path / "out.jsonl", [answered(f"item-{n}@dddd", "x") for n in range(count)])
    with pytest.raises(CogbenchError) as error:
        refuse_foreign(read_responses([str(path)]), ["item-0@aaaa"])
    more = {1: "", 2: " (1 more such response(s))", 3: " (2 more such response(s))", 4: " (3 more such response(s))"}
    assert str(error.value).endswith(f"refusing it{more[count]}")


# --- a folder rewritten: what is refused, removed and recorded -------------------------------------------


def shard(index: int, of: int) -> str:
    return f"requests-{index:05d}-of-{of:05d}.jsonl"


def test_shard_named_files_no_manifest_lists_are_refused_by_the_first_name(tmp_path):
    out = tmp_path / "r"
    write_requests(out, requests_of(1), 1, 1, {})
    for index in (1, 2):  # a user's copies, named as the 3-shard writing would name its files
        (out / shard(index, 3)).write_text("mine\n")
    with pytest.raises(UsageError) as refused:
        write_requests(out, requests_of(3), 3, 3, {})
    assert str(refused.value) == (
        f"{out / shard(1, 3)}: no manifest of this folder lists this file (a copy of yours?); refusing to "
        "replace it: move it away or choose another --write-requests"
    )
    assert (out / shard(2, 3)).read_text() == "mine\n"


def failing(count: int):
    """Requests that stop with an error after ``count``: a writer killed part way."""
    yield from requests_of(count)
    raise RuntimeError("stopped")


def test_a_failed_writer_records_every_name_it_may_leave_and_the_next_removes_only_those(tmp_path):
    out = tmp_path / "r"
    write_requests(out, requests_of(4), 4, 2, {})
    old = {name: (out / name).read_bytes() for name in (shard(1, 2), shard(2, 2))}
    # Rewritten as the same 2 shards, stopped at once: the old shards stay (each is replaced when its
    # new one is whole), the manifest is gone, and the writing record names the old and new names.
    with pytest.raises(RuntimeError):
        write_requests(out, failing(0), 4, 2, {})
    assert {name: (out / name).read_bytes() for name in old} == old and not (out / "manifest.json").exists()
    # Then as 3 shards, stopped at once: the 2 old shards removed (no manifest lists them now: the
    # writing record does), and the record names all 5, the old and the new.
    with pytest.raises(RuntimeError):
        write_requests(out, failing(0), 3, 3, {})
    every = sorted([shard(1, 2), shard(2, 2), shard(1, 3), shard(2, 3), shard(3, 3)])
    assert json.loads((out / ".requests-writing.json").read_text()) == {"files": every}
    assert sorted(p.name for p in out.glob("requests-*")) == []
    # Then as 2 shards again, stopped at once: the record still names all 5 (the 3-shard names were
    # never written, and removing them finds nothing: no error).
    with pytest.raises(RuntimeError):
        write_requests(out, failing(0), 2, 2, {})
    assert json.loads((out / ".requests-writing.json").read_text()) == {"files": every}
    assert write_requests(out, requests_of(2), 2, 2, {})["requests"] == 2
    assert sorted(p.name for p in out.glob("requests-*")) == [shard(1, 2), shard(2, 2)]


def test_a_manifest_edited_to_list_a_file_of_another_shape_never_reaches_it(tmp_path):
    out = tmp_path / "r"
    write_requests(out, requests_of(1), 1, 1, {})
    (out / "requests-1-of-1.jsonl").write_text("mine\n")  # a request-file name, not one cogbench writes
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["shards"] += [{"file": "requests-1-of-1.jsonl"}, {"file": 7}]
    (out / "manifest.json").write_text(json.dumps(manifest))
    write_requests(out, requests_of(2), 2, 2, {})
    assert (out / "requests-1-of-1.jsonl").read_text() == "mine\n"
    assert not (out / shard(1, 1)).exists()


# --- bytes and sizes of the lines read ---------------------------------------------------------------------


def test_a_line_that_is_not_utf8_names_its_first_bad_byte_counting_from_1(tmp_path):
    path = tmp_path / "out.jsonl"
    path.write_bytes(b'{"a\xff": 1}\n')  # bytes 1-3 are {"a, byte 4 is 0xff
    with pytest.raises(CogbenchError) as error:
        read_responses([str(path)])
    assert str(error.value) == f"{path} line 1: not UTF-8 text (byte 4); expected a Batch API output line"


@pytest.mark.parametrize(
    "length, shown",
    [(199, "x" * 199), (200, "x" * 200), (201, "x" * 197 + "..."), (202, "x" * 197 + "...")],
)
def test_an_engine_error_is_kept_to_200_characters(tmp_path, length, shown):
    path = write_lines(tmp_path / "out.jsonl", [failed("a@1", "x" * length)])
    assert read_responses([str(path)])["a@1"].error == f"engine error: {shown}"


def sized(length: int, newline: bool = True, custom_id: str = "b@1") -> bytes:
    """An answered output line of exactly ``length`` bytes (before its newline)."""
    bare = len(json.dumps(answered(custom_id, "")))
    line = json.dumps(answered(custom_id, "x" * (length - bare))).encode()
    assert len(line) == length
    return line + (b"\n" if newline else b"")


# Odd caps (cap | 1 == cap), one whose cap + 1 CPython caches as a small int and one past them (the
# identity of len(line) and cap + 1 then differs): only == compares them right in both.
@pytest.mark.parametrize("cap", [201, 1001])
@pytest.mark.parametrize(
    "last, refused",
    [
        ((0, True), None),  # a line and its newline may take cap + 1 bytes
        ((0, False), None),  # the last line without its newline: cap bytes
        ((1, True), 2),  # cap + 1 bytes before the newline: one too many
        ((1, False), 2),  # cap + 1 bytes at the end of the file, no newline
        ((500, True), 2),
    ],
)
def test_a_line_longer_than_the_cap_is_refused_by_number(tmp_path, monkeypatch, cap, last, refused):
    monkeypatch.setenv("COGBENCH_MAX_REPLY_BYTES", str(cap))
    path = tmp_path / "out.jsonl"
    over, newline = last
    # the first line with its newline exactly cap bytes
    path.write_bytes(sized(cap - 1, custom_id="a@1") + sized(cap + over, newline))
    if refused is None:
        assert [r.where for r in read_responses([str(path)]).values()] == [f"{path} line 1", f"{path} line 2"]
        return
    with pytest.raises(CogbenchError) as error:
        read_responses([str(path)])
    assert str(error.value) == (
        f"{path} line {refused}: longer than {cap:,} bytes, the most one reply may take "
        "(set COGBENCH_MAX_REPLY_BYTES to allow more); not read further"
    )
