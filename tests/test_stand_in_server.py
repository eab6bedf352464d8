"""The stand-in OpenAI server (``cogbench demo server``, the tests' loopback server) stays quiet when a
client hangs up: a bound attempt giving up or a process exiting resets the connection, and socketserver's
traceback on stderr broke a one-line-error test in CI (``test_judge_cache_that_is_not_sqlite``)."""

from __future__ import annotations

import socket
import struct
import time

from openai_server import OpenAIServer, Reply


def test_a_client_that_resets_its_connection_prints_no_traceback(capfd):
    with OpenAIServer(lambda request: Reply(text="right")) as server:
        host, port = server._httpd.server_address[:2]
        for _ in range(3):
            client = socket.create_connection((host, port))
            client.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: 100\r\n\r\n{")
            time.sleep(0.05)
            # SO_LINGER 0: close() sends RST, so the handler's read fails with ConnectionResetError.
            client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            client.close()
        time.sleep(0.5)
    err = capfd.readouterr().err
    assert "Traceback" not in err and "ConnectionResetError" not in err, err
