"""``cogbench sweep run --ray``'s refusals, which need no Ray: options that do not apply, an address that is not one
(its credentials masked), and Ray not installed (one line naming what to install, exit 2); and
``cogbench.sweep(ray=...)``'s, the same in the same words, before anything is planned. The runs on a real
one-node Ray cluster are tests/test_sweep_ray.py (the ``ray`` tier, .ci/run-ray)."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

import cogbench
from cogbench.cli import main
from cogbench.errors import EXIT_USAGE, UsageError

from sweep_helpers import SECRET

# Each refusal as the command's options and as cogbench.sweep's arguments, and the one message both give.
REFUSALS = [
    (["--ray-num-cpus", "2"], {"ray_num_cpus": 2}, "--ray-num-cpus applies only with --ray ADDRESS"),
    (["--ray-num-gpus", "1"], {"ray_num_gpus": 1}, "--ray-num-gpus applies only with --ray ADDRESS"),
    (["--ray", "auto", "--jobs", "2"], {"ray": "auto", "jobs": 2}, "--jobs applies only without --ray"),
    (
        ["--ray", "auto", "--ray-num-gpus", "-1"],
        {"ray": "auto", "ray_num_gpus": -1},
        "argument --ray-num-gpus: -1 is not 0 or a positive number",
    ),
    (
        ["--ray", "auto", "--ray-num-cpus", "nan"],
        {"ray": "auto", "ray_num_cpus": float("nan")},
        "argument --ray-num-cpus: nan is not a finite number",
    ),
    (
        ["--ray", "http://127.0.0.1:6379"],
        {"ray": "http://127.0.0.1:6379"},
        "--ray 'http://127.0.0.1:6379': not a Ray address (auto, ray://",
    ),
    (
        ["--ray", "127.0.0.1"],
        {"ray": "127.0.0.1"},
        "--ray '127.0.0.1': not a Ray address (auto, ray://HOST:PORT or HOST:PORT)",
    ),
    (["--ray", "ray://"], {"ray": "ray://"}, "--ray 'ray://': not a Ray address"),
]


@pytest.mark.parametrize("extra, _, message", REFUSALS)
def test_options_that_do_not_apply_and_addresses_that_are_not_are_refused(extra, _, message, tmp_path, capsys):
    try:
        code = main(["sweep", "run", str(tmp_path), *extra])
    except SystemExit as stop:  # argparse's own refusal of a value
        code = stop.code
    assert code == EXIT_USAGE
    err = capsys.readouterr().err
    assert message in err.strip().splitlines()[-1]  # the one error line (after argparse's usage, for its own)


@pytest.mark.parametrize("_, arguments, message", REFUSALS)
def test_cogbench_sweep_refuses_them_in_the_same_words_before_planning(_, arguments, message, tmp_path):
    with pytest.raises(UsageError) as refused:
        cogbench.sweep(tmp_path / "no-spec.yaml", tmp_path / "sweep", **arguments)
    assert str(refused.value).startswith(message)
    assert not (tmp_path / "sweep").exists()  # refused before the spec was read or anything planned


def test_cogbench_sweep_refuses_ray_arguments_that_the_command_cannot_carry(tmp_path):
    for arguments, message in (
        ({"ray": 3}, "argument --ray: expected text, not int 3"),
        ({"ray": "auto", "ray_num_cpus": "x"}, "argument --ray-num-cpus: invalid resource_amount value: 'x'"),
        ({"ray": "auto", "run": False, "merge": False}, "sweep: ray=, ray_num_cpus= and ray_num_gpus= need run=True"),
    ):
        with pytest.raises(UsageError, match=re.escape(message)):
            cogbench.sweep(tmp_path / "no-spec.yaml", tmp_path / "sweep", **arguments)
    assert not (tmp_path / "sweep").exists()


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
    # cogbench.sweep: the same error, before anything is planned
    with pytest.raises(UsageError) as refused:
        cogbench.sweep(tmp_path / "no-spec.yaml", tmp_path / "sweep", ray=f"ray://user:{SECRET}@head:10001")
    assert f"error: {refused.value}\n" == err and not (tmp_path / "sweep").exists()


def test_cogbench_sweep_masks_the_address_in_its_refusal(tmp_path):
    address = f"https://user:{SECRET}@head:10001/?token={SECRET}"
    with pytest.raises(UsageError) as refused:
        cogbench.sweep(tmp_path / "no-spec.yaml", tmp_path / "sweep", ray=address)
    assert str(refused.value) == (
        "--ray 'https://***@head:10001/?token=***': not a Ray address (auto, ray://HOST:PORT or HOST:PORT)"
    )
    from cogbench.reference_eval.sweeping.run_options import RunMode

    assert SECRET not in repr(RunMode(ray=f"ray://user:{SECRET}@head:10001"))


PROBE = """
import contextlib, io, json, sys
asked = []
class Recorder:  # sees every import the interpreter looks for, whether or not the module is installed
    def find_spec(self, name, path=None, target=None):
        asked.append(name)
        return None
sys.meta_path.insert(0, Recorder())
import cogbench
from cogbench.cli import main
from cogbench.errors import UsageError
for call in json.loads(sys.argv[1]):
    asked.clear()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            main(call) if isinstance(call, list) else cogbench.sweep(**call)  # a command line, or sweep's arguments
        except (SystemExit, UsageError):
            pass
    print(json.dumps(sorted({m for m in asked if m.partition(".")[0] == "ray" or m.endswith("sweeping.on_ray")})))
"""


def probe(*argvs: list[str] | dict[str, str]) -> list[list[str]]:
    """The Ray modules (and ours) one fresh interpreter tried to import while running each ``cogbench ARGV`` (or
    ``cogbench.sweep(**ARGUMENTS)``)."""
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


def test_cogbench_sweep_imports_ray_only_with_ray(tmp_path):
    """Its refusals try no Ray (the sweep module, on_ray among it, is loaded on first use); ray= tries it."""
    spec, out = str(tmp_path / "no-spec.yaml"), str(tmp_path / "sweep")
    first, refused, bad_address, with_ray = probe(
        {"spec": spec, "out": out, "shards": 0},
        {"spec": spec, "out": out, "ray_num_cpus": "2"},
        {"spec": spec, "out": out, "ray": "http://head:6379"},
        {"spec": spec, "out": out, "ray": "auto"},
    )
    assert "ray" not in first and refused == bad_address == []
    assert "ray" in with_ray
