"""A real local HTTP server laid out like raw.githubusercontent.com for the pinned raw files.

Files are symbolic links into the real raw data (nothing copied), served on 127.0.0.1 by the
standard library's HTTP server; `cogbench fetch-raw --base-url URL` (or
``$COGBENCH_RAW_BASE_URL``) downloads from it as it would from GitHub.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from cogbench.dataset_builders.fetch import pinned_files


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def lay_out_mirror(real_raw_dir: Path, root: Path, sources: tuple[str, ...], copy: bool = False) -> Path:
    """``root/<repository>/<commit>/<path>`` for every pinned file of ``sources``."""
    for source in sources:
        pin = pinned_files()[source]
        for name, entry in pin["files"].items():
            target = root / pin["repository"] / pin["commit"] / entry["source"]
            target.parent.mkdir(parents=True, exist_ok=True)
            if copy:  # a test that tampers with the served file must not touch the real one
                target.write_bytes((real_raw_dir / source / name).read_bytes())
            else:
                target.symlink_to((real_raw_dir / source / name).resolve())
    return root


@contextlib.contextmanager
def serve(root: Path) -> Iterator[str]:
    """Serve ``root`` on 127.0.0.1; yields the base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
