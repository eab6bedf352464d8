"""Keep the resident memory of the image-streaming commands (build, validate, publish) flat.

glibc gives every thread that calls ``malloc`` an arena of its own (up to eight per
core) and each arena keeps the pages it freed. Decoding images on worker threads
and reading Parquet on Arrow's threads then leaves freed image buffers scattered
over many arenas, and resident memory creeps up with the number of images (CODIS
x10 built at 405 MB against 331 MB for CODIS; tests/benchmarks/build_memory.py).
Two arenas keep the decoding threads' buffers reused instead.

Called by the commands, never on import: a library user's process is theirs to tune.
"""

from __future__ import annotations

import ctypes
import sys

M_ARENA_MAX = -8  # glibc <malloc.h>
STREAMING_ARENAS = 2


def cap_malloc_arenas(arenas: int = STREAMING_ARENAS) -> bool:
    """Limit glibc's malloc arenas for the rest of this process; False where that is not glibc."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # no C library to ask, or one without mallopt
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    return mallopt(M_ARENA_MAX, arenas) == 1
