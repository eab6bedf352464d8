"""fetch-raw against a real local HTTP server that mirrors raw.githubusercontent.com."""

from __future__ import annotations

import hashlib
import socket

import pytest

from cogbench.cli import main
from cogbench.dataset_builders.fetch import fetch_source, pinned_files
from cogbench.errors import CogbenchError

from raw_mirror import lay_out_mirror, serve


@pytest.fixture
def mirror(tmp_path, real_raw_dir):
    """The samples served on 127.0.0.1 like raw.githubusercontent.com (copies: one test tampers)."""
    root = lay_out_mirror(real_raw_dir, tmp_path / "mirror", ("cogbench-samples",), copy=True)
    with serve(root) as url:
        yield root, url


def test_fetch_downloads_and_verifies_then_resumes(mirror, tmp_path, capsys):
    _, url = mirror
    dest = tmp_path / "raw"
    assert main(["fetch-raw", "cogbench-samples", "--dest", str(dest), "--base-url", url]) == 0
    pin = pinned_files()["cogbench-samples"]
    for name, entry in pin["files"].items():
        assert hashlib.sha256((dest / "cogbench-samples" / name).read_bytes()).hexdigest() == entry["sha256"]
    assert "8 downloaded, 0 already present" in capsys.readouterr().out

    (dest / "cogbench-samples" / "cogbench_vqa.json").write_text("[]")  # damaged since
    report = fetch_source("cogbench-samples", dest, base_url=url, show_progress=False)
    assert (report.downloaded, report.kept) == (1, 7)


def test_fetch_rejects_a_file_whose_hash_differs(mirror, tmp_path):
    root, url = mirror
    pin = pinned_files()["cogbench-samples"]
    tampered = root / pin["repository"] / pin["commit"] / "samples" / "cogbench_vqa.json"
    tampered.write_text("[]")
    with pytest.raises(CogbenchError, match="does not match the pinned"):
        fetch_source("cogbench-samples", tmp_path / "raw", base_url=url, show_progress=False)
    assert not (tmp_path / "raw" / "cogbench-samples" / "cogbench_vqa.json").exists()
    assert not [p for p in (tmp_path / "raw").rglob("*") if p.name.endswith((".part", ".tmp"))]


def test_fetch_offline_is_a_clear_message(tmp_path, capsys):
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    code = main(["fetch-raw", "codis", "--dest", str(tmp_path), "--base-url", f"http://127.0.0.1:{port}"])
    err = capsys.readouterr().err
    assert code == 1
    assert "Are you offline?" in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []  # no empty codis/ left behind (issue 32 item 7)
    for argv in (["codis"], []):  # a new --dest, one source or all: no empty folder either
        assert (
            main(["fetch-raw", *argv, "--dest", str(tmp_path / "raw"), "--base-url", f"http://127.0.0.1:{port}"]) == 1
        )
        assert not (tmp_path / "raw").exists()


def test_full_cogbench_explains_the_data_agreement(capsys):
    assert main(["fetch-raw", "cogbench"]) == 2
    assert "data use agreement" in capsys.readouterr().err


def test_pins_match_the_shared_data(real_raw_dir):
    for source, pin in pinned_files().items():
        for name, entry in pin["files"].items():
            path = real_raw_dir / source / name
            assert path.stat().st_size == entry["bytes"], name
