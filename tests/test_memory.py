"""The image-streaming commands cap glibc's malloc arenas (dataset_builders/memory.py)."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

from cogbench.dataset_builders.memory import cap_malloc_arenas

glibc_only = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="malloc arenas are a glibc feature")

# Threads that allocate at the same time, then glibc's own count of its heaps (arenas).
COUNT_ARENAS = r"""
import ctypes, sys, threading
from cogbench.dataset_builders.memory import cap_malloc_arenas
if sys.argv[1] == "cap":
    assert cap_malloc_arenas()
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = (ctypes.c_void_p,)
libc.fopen.restype = ctypes.c_void_p
libc.malloc_info.argtypes = (ctypes.c_int, ctypes.c_void_p)
barrier = threading.Barrier(8)
def work():
    blocks = [libc.malloc(4096) for _ in range(100)]
    barrier.wait()
    for block in blocks:
        libc.free(block)
threads = [threading.Thread(target=work) for _ in range(8)]
for thread in threads: thread.start()
for thread in threads: thread.join()
out = libc.fopen(sys.argv[2].encode(), b"w")
libc.malloc_info(0, out)
libc.fclose(ctypes.c_void_p(out))
"""


@glibc_only
def test_cap_malloc_arenas_limits_the_heaps_threads_get(tmp_path):
    counts = {}
    for mode in ("cap", "default"):
        info = tmp_path / f"{mode}.xml"
        subprocess.run([sys.executable, "-c", COUNT_ARENAS, mode, str(info)], check=True)
        counts[mode] = info.read_text().count("<heap nr=")
    assert counts["cap"] <= 2 < counts["default"], counts


@glibc_only
def test_cap_malloc_arenas_reports_success_on_glibc():
    assert cap_malloc_arenas() is True
