"""``cogbench sweep run --ray``'s refusals, which need no Ray: options that do not apply, an address that is not one
(its credentials masked), and Ray not installed (one line naming what to install, exit 2). The runs on a real
one-node Ray cluster are tests/test_sweep_ray.py (the ``ray`` tier, .ci/run-ray)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from cogbench.cli import main
from cogbench.errors import EXIT_USAGE

from sweep_helpers import SECRET


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--ray-num-cpus", "2"], "error: --ray-num-cpus applies only with --ray ADDRESS"),
        (["--ray-num-gpus", "1"], "error: --ray-num-gpus applies only with --ray ADDRESS"),
        (["--ray", "auto", "--jobs", "2"], "error: --jobs applies only without --ray"),
        (["--ray", "auto", "--ray-num-gpus", "-1"], "argument --ray-num-gpus: -1 is not 0 or a positive number"),
        (["--ray", "auto", "--ray-num-cpus", "nan"], "argument --ray-num-cpus: nan is not a finite number"),
        (["--ray", "http://127.0.0.1:6379"], "error: --ray 'http://127.0.0.1:6379': not a Ray address (auto, ray://"),
        (["--ray", "127.0.0.1"], "error: --ray '127.0.0.1': not a Ray address (auto, ray://HOST:PORT or HOST:PORT)"),
        (["--ray", "ray://"], "error: --ray 'ray://': not a Ray address"),
    ],
)
def test_options_that_do_not_apply_and_addresses_that_are_not_are_refused(extra, message, tmp_path, capsys):
    try:
        code = main(["sweep", "run", str(tmp_path), *extra])
    except SystemExit as stop:  # argparse's own refusal of a value
        code = stop.code
    assert code == EXIT_USAGE
    err = capsys.readouterr().err
    assert message in err.strip().splitlines()[-1]  # the one error line (after argparse's usage, for its own)


def test_an_address_that_carries_credentials_is_masked_in_the_refusal(tmp_path, capsys):
    assert main(["sweep", "run", str(tmp_path), "--ray", f"https://user:{SECRET}@head:10001/?token={SECRET}"]) == 2
    err = capsys.readouterr().err
    assert SECRET not in err
    assert (
        err
        == "error: --ray 'https://***@head:10001/?token=***': not a Ray address (auto, ray://HOST:PORT or HOST:PORT)\n"
    )


def test_without_ray_installed_the_error_names_the_package_in_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails as where it was never installed
    code = main(["sweep", "run", str(tmp_path), "--ray", f"ray://user:{SECRET}@head:10001"])
    err = capsys.readouterr().err
    assert code == EXIT_USAGE
    assert err.startswith("error: sweep run's --ray needs Ray (module 'ray' is not installed); ")
    assert "-m pip install 'ray==VERSION'" in err and len(err.splitlines()) == 1 and SECRET not in err


PROBE = """
import contextlib, io, json, sys
asked = []
class Recorder:  # sees every import the interpreter looks for, whether or not the module is installed
    def find_spec(self, name, path=None, target=None):
        asked.append(name)
        return None
sys.meta_path.insert(0, Recorder())
from cogbench.cli import main
for argv in json.loads(sys.argv[1]):
    asked.clear()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            main(argv)
        except SystemExit:
            pass
    print(json.dumps(sorted({m for m in asked if m.partition(".")[0] == "ray" or m.endswith("sweeping.on_ray")})))
"""


def probe(*argvs: list[str]) -> list[list[str]]:
    """The Ray modules (and ours) one fresh interpreter tried to import while running each ``cogbench ARGV``."""
    run = subprocess.run([sys.executable, "-c", PROBE, json.dumps(argvs)], capture_output=True, text=True, check=True)
    return [json.loads(line) for line in run.stdout.splitlines()]


def test_ray_is_imported_only_with_ray(tmp_path):
    """Help and the refusals without --ray never try to import Ray; --ray does (the probe can fail), after the
    address is checked (a refused one tries nothing)."""
    help_, refused, bad_address, with_ray = probe(
        ["sweep", "run", "--help"],
        ["sweep", "run", str(tmp_path), "--ray-num-cpus", "2"],
        ["sweep", "run", str(tmp_path), "--ray", "http://head:6379"],
        ["sweep", "run", str(tmp_path), "--ray", "auto"],
    )
    assert help_ == refused == bad_address == []
    assert "ray" in with_ray
