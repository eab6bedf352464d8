"""Nothing of the user's lost, no mixed folders (issue 38 item 3).

``--write-requests`` removes or replaces only the shard names its manifest recorded; a second writer
into one request folder is refused while the first writes; a writer killed by SIGKILL between shards
leaves a folder its manifest describes, or no manifest; the request folder is never ``--out``; a
killed ``report``'s or ``score``'s temporaries are cleaned by the next one. The writers are real processes and the
real ``cogbench`` command.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path

from test_request_files import _argv
from test_runs_report import vqa_run

from cogbench.cli import main
from cogbench.errors import UsageError

# A writer in its own process, through the same lock and writer as the command; before the request
# numbered STOP it waits for the file GO (or, with KILL, kills itself): after its first shard.
WRITER = """
import os, signal, sys, time
from pathlib import Path
from cogbench.reference_eval.backends.batch_files import request, write_requests
from cogbench.reference_eval.run.request_files import request_folder_lock

folder, stop, go = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]

def requests():
    for number in range(4):
        if number == stop:
            if go == "KILL":
                os.kill(os.getpid(), signal.SIGKILL)
            Path(str(folder) + ".ready").touch()
            while not Path(go).exists():
                time.sleep(0.05)
        yield request(f"item{number}", {"model": "m", "messages": [{"role": "user", "content": str(number)}]})

with request_folder_lock(folder):
    write_requests(folder, requests(), 4, 2, {"kind": "test"})
"""


def _writer(folder: Path, go: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", WRITER, str(folder), "2", go], stderr=subprocess.PIPE, text=True)


def _shards(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.glob("requests-*-of-*.jsonl")}


def _described(folder: Path) -> dict[str, str] | None:
    """The manifest's shards and their sha256, or None without a manifest."""
    if not (folder / "manifest.json").exists():
        return None
    return {s["file"]: s["sha256"] for s in json.loads((folder / "manifest.json").read_text())["shards"]}


def test_a_users_files_named_like_shards_survive_a_rewrite(built_release, tmp_path, capsys):
    requests = tmp_path / "requests"
    assert main(_argv(built_release, tmp_path / "run", "--write-requests", str(requests), "--shards", "2")) == 0
    copy = requests / "requests-00001-of-00002 (copy).jsonl"
    mine = requests / "requests-00001-of-00009.jsonl"
    copy.write_bytes((requests / "requests-00001-of-00002.jsonl").read_bytes())
    mine.write_text("my own lines\n")
    assert main(_argv(built_release, tmp_path / "run", "--write-requests", str(requests), "--shards", "3")) == 0
    assert mine.read_text() == "my own lines\n" and copy.stat().st_size > 0
    assert set(_shards(requests)) == {*_described(requests), copy.name, mine.name}
    assert sorted(_described(requests)) == [f"requests-0000{i}-of-00003.jsonl" for i in (1, 2, 3)]

    # A file of the user's at a name the new set would take: refused, kept, and the folder still described.
    capsys.readouterr()
    taken = requests / "requests-00001-of-00001.jsonl"
    taken.write_text("mine too\n")
    assert main(_argv(built_release, tmp_path / "run", "--write-requests", str(requests))) == UsageError.exit_code
    error = capsys.readouterr().err.strip()
    assert error.startswith(f"error: {taken}: no manifest of this folder lists this file") and "\n" not in error
    assert taken.read_text() == "mine too\n" and len(_described(requests)) == 3


def test_a_second_writer_is_refused_while_the_first_writes(built_release, tmp_path, capsys):
    requests = tmp_path / "requests"
    first = _writer(requests, str(tmp_path / "go"))
    while not Path(f"{requests}.ready").exists():
        assert first.poll() is None, first.stderr.read()
        time.sleep(0.05)
    try:
        code = main(_argv(built_release, tmp_path / "run", "--write-requests", str(requests)))
        error = capsys.readouterr().err.strip().splitlines()[-1]  # after the dataset's progress lines, if any
    finally:
        (tmp_path / "go").touch()
    assert first.wait(60) == 0, first.stderr.read()
    assert code == UsageError.exit_code
    assert error.startswith(f"error: {requests}: another cogbench command is writing request files into this folder")
    assert f"pid {first.pid}" in error and error.endswith("wait for it to finish, or use another --write-requests")
    assert _described(requests) == _shards(requests) and len(_shards(requests)) == 2  # the first's set alone


def test_a_writer_killed_between_shards_leaves_no_manifest_naming_what_is_gone(built_release, tmp_path, capsys):
    requests = tmp_path / "requests"
    assert main(_argv(built_release, tmp_path / "run", "--write-requests", str(requests), "--shards", "3")) == 0
    assert len(_described(requests)) == 3
    killed = _writer(requests, "KILL")
    assert killed.wait(60) == -9
    described = _described(requests)
    assert described is None or all(_shards(requests).get(name) == sha for name, sha in described.items())
    # The next writer cleans up exactly what the killed one wrote, and the folder is described again.
    assert main(_argv(built_release, tmp_path / "run", "--write-requests", str(requests), "--shards", "2")) == 0
    assert _described(requests) == _shards(requests) and len(_shards(requests)) == 2
    assert not [p.name for p in requests.iterdir() if p.name.endswith(".tmp")]


def test_the_request_folder_is_never_out_nor_inside_it(built_release, real_raw_dir, tmp_path, capsys, monkeypatch):
    run = tmp_path / "run"
    for requests, where in ((run, "the same folder as"), (run / "requests", "inside"), (tmp_path, "around")):
        argv = _argv(built_release, run, "--write-requests", str(requests))
        assert main(argv) == UsageError.exit_code
        assert capsys.readouterr().err.strip() == (
            f"error: --write-requests {requests}: {where} --out {run}; give the request files a folder of their "
            f"own, such as {run}-requests"
        )
    assert not run.exists()
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    predictions = real_raw_dir / "codis" / "output_example.json"
    score = ["score", "--task", "codis", "--dataset", str(built_release), "--predictions", str(predictions)]
    assert main([*score, "--judge", "openai:j", "--out", str(run), "--write-requests", str(run)]) == 2
    assert capsys.readouterr().err.strip().startswith(f"error: --write-requests {run}: the same folder as --out")
    assert not run.exists()


def test_a_killed_reports_temporaries_are_cleaned_by_the_next_report(built_release, tmp_path, capsys):
    scored = vqa_run(built_release, tmp_path, "scored", right_every=2)
    out = tmp_path / "report"
    assert main(["report", str(scored), "--out", str(out)]) == 0
    # What a report killed while writing leaves: write_with's temporary, or an older version's .partial.
    left = [out / ".report.md.0123456789abcdef.tmp", out / ".radar_vqa.png.fedcba9876543210.tmp"]
    left.append(out / "report.html.partial")
    for path in left:
        path.write_text("half a file")
    assert main(["report", str(scored), "--out", str(out)]) == 0
    assert not [path.name for path in left if path.exists()]
    assert (out / "report.md").read_text().startswith("# cogbench report")


# `cogbench score` in its own process, killed by SIGKILL at the moment it would move its written scores.json
# temporary into place (the audit event of that os.replace): what a score killed mid-write leaves.
KILLED_SCORE = """
import os, signal, sys
def stop(event, args):
    if event == "os.rename" and str(args[0]).startswith(".scores.json."):
        os.kill(os.getpid(), signal.SIGKILL)
sys.addaudithook(stop)
from cogbench.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_killed_scores_temporaries_are_cleaned_by_the_next_score(built_release, tmp_path, capsys):
    predictions = tmp_path / "predictions.jsonl"
    vqa_run(built_release, tmp_path, "first", right_every=2)  # writes the predictions file beside it
    (tmp_path / "first.jsonl").rename(predictions)
    out = tmp_path / "run"
    argv = ["score", "--task", "vqa", "--dataset", str(built_release), "--predictions", str(predictions)]
    argv += ["--out", str(out), "--resamples", "100"]
    killed = subprocess.run([sys.executable, "-c", KILLED_SCORE, *argv], capture_output=True, text=True)
    assert killed.returncode == -9, killed.stderr
    left = sorted(out.glob(".*.tmp"))
    assert [p.name[: -len(".0123456789abcdef.tmp")] for p in left] == [".scores.json"]
    assert json.loads(left[0].read_text())["task"] == "vqa" and not (out / "scores.json").exists()
    # Named like a temporary but not cogbench's exact name (16 hex digits): the user's, kept.
    mine = out / ".scores.json.backup.tmp"
    mine.write_text("mine")
    legacy = out / "report.md.partial"  # an older version's fixed-name temporary
    legacy.write_text("half a file")
    assert main(argv) == 0
    assert not left[0].exists() and not legacy.exists() and mine.read_text() == "mine"
    assert json.loads((out / "scores.json").read_text())["task"] == "vqa"
    assert sorted(p.name for p in out.glob(".*.tmp")) == [mine.name]
