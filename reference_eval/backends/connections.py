"""HTTP connections for the chat client: httpcore, the environment's proxy, TLS as httpx sets it up.

One ``httpcore.ConnectionPool`` of one connection per request in flight (``openai_api.ChatClient``
lends them out): a shared 64-connection pool spent most of a judge run's CPU in its lock. httpcore
is the HTTP/1.1 engine under httpx (and so under the OpenAI SDK); used directly it costs ~0.36 ms
of CPU per request against ~0.7 ms through ``httpx.Client`` and ~8 ms to import against ~54 ms
(httpx's import pulls in its command line's rich, click and pygments) in a `cogbench score`, whose
online judge has ~0.9 s to spend (tests/benchmarks/judge_throughput.py).

What httpx would take from the environment is taken here the same way: the proxy from
``urllib.request.getproxies`` (``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY``, any case; user and
password in its URL), ``NO_PROXY`` read by the standard library's ``proxy_bypass_environment`` (as
``requests`` and ``urllib`` read it), and the CA bundle from ``SSL_CERT_FILE`` or ``SSL_CERT_DIR``,
else certifi's. A ``socks5://`` proxy needs the ``socksio`` package, as it does for httpx.

A reply is read up to ``max_reply_bytes`` (``read_capped``; request files' lines too, in
``batch_files``), and a URL must be ASCII (``check_ascii``), as httpcore sends it.
"""

from __future__ import annotations

import os
import ssl
from typing import Any
from urllib.parse import unquote, urlparse
from urllib.request import getproxies, proxy_bypass_environment

from cogbench.errors import UsageError, echoed
from cogbench.reference_eval.backends.deadline import bounded_backend

# The most bytes one reply may take: an HTTP body, or one line of a response file (batch_files).
# A chat completion of the largest --max-new-tokens (option_types.MAX_NEW_TOKENS) is far smaller;
# a larger reply is a broken or hostile server, refused before it is read whole (a 1 GB reply
# once took 4.5 GB of memory). The environment variable lowers or raises it.
MAX_REPLY_BYTES_VARIABLE = "COGBENCH_MAX_REPLY_BYTES"
DEFAULT_MAX_REPLY_BYTES = 64 * 2**20


def max_reply_bytes() -> int:
    """The reply size cap: ``COGBENCH_MAX_REPLY_BYTES`` if set (a positive integer), else 64 MiB."""
    given = os.environ.get(MAX_REPLY_BYTES_VARIABLE, "").strip()
    if not given:
        return DEFAULT_MAX_REPLY_BYTES
    if not given.isdigit() or int(given) < 1:
        raise UsageError(f"{MAX_REPLY_BYTES_VARIABLE}={echoed(given)}: give a positive number of bytes")
    return int(given)


class ReplyTooLarge(Exception):
    """A reply body over the cap (``max_reply_bytes``); its message is the query's failure line."""

    def __init__(self, cap: int):
        super().__init__(f"reply larger than {cap:,} bytes (the cap; set {MAX_REPLY_BYTES_VARIABLE} to allow more)")


def read_capped(response: Any, cap: int) -> bytes:
    """A streamed httpcore response's body; past ``cap`` bytes ``ReplyTooLarge``, the rest never read
    (httpcore then closes the connection: its reply was not read to the end)."""
    content = bytearray()
    for chunk in response.iter_stream():
        content += chunk
        if len(content) > cap:
            raise ReplyTooLarge(cap)
    return bytes(content)


def tls_context(url: str) -> ssl.SSLContext | None:
    """The verifying TLS context for an ``https`` URL (None for ``http``: loading a CA bundle costs ~0.1 s)."""
    if urlparse(url).scheme != "https":
        return None
    if os.environ.get("SSL_CERT_FILE"):
        return ssl.create_default_context(cafile=os.environ["SSL_CERT_FILE"])
    if os.environ.get("SSL_CERT_DIR"):
        return ssl.create_default_context(capath=os.environ["SSL_CERT_DIR"])
    import certifi

    return ssl.create_default_context(cafile=certifi.where())


def check_ascii(url: str, what: str) -> None:
    """httpcore sends a URL as ASCII bytes and raises TypeError on any other character, deep inside
    the first request: refuse it now, naming the host's ASCII (``xn--``) form when there is one.
    Only the host and the rest after it are named (a proxy URL's credentials never are)."""
    parts = urlparse(url)
    host = parts.hostname or ""
    if not host.isascii():
        try:
            hint = f": give its ASCII form {host.encode('idna').decode('ascii')}"
        except UnicodeError:  # no IDNA form (a label too long, a character IDNA 2003 refuses)
            hint = ""
        raise UsageError(f"{what} host {echoed(host)} has characters other than ASCII{hint}")
    rest = parts._replace(scheme="", netloc="").geturl()
    if not rest.isascii():
        raise UsageError(f"{what} {echoed(rest)}: characters other than ASCII; percent-encode them (%C3%BC)")


def proxy_for(url: str) -> str | None:
    """The proxy URL the environment names for ``url``, or None (none named, or ``NO_PROXY`` covers its host)."""
    proxies = getproxies()
    parts = urlparse(url)
    proxy = proxies.get(parts.scheme) or proxies.get("all")
    if not proxy or proxy_bypass_environment(parts.netloc, proxies):
        return None
    return proxy if "://" in proxy else f"http://{proxy}"


def proxy_config(url: str) -> Any:
    """The ``httpcore.Proxy`` for requests to ``url`` (None: direct), checked now: a bad proxy is a usage error."""
    import httpcore

    proxy = proxy_for(url)
    if proxy is None:
        return None
    try:
        parts = urlparse(proxy)
        parts.port  # noqa: B018  (raises on a port that is not a number)
    except ValueError:  # the URL may hold a password: not repeated here
        raise UsageError("the proxy the environment names is not a URL (expected scheme://host:port)") from None
    if parts.scheme not in ("http", "https", "socks5", "socks5h"):
        raise UsageError(f"proxy {parts.scheme}://{parts.hostname}: expected an http, https or socks5 proxy URL")
    if parts.scheme.startswith("socks"):
        try:
            import socksio  # noqa: F401  (httpcore imports it only at the first request)
        except ImportError:
            raise UsageError("the proxy the environment names is a SOCKS proxy: pip install socksio") from None
    check_ascii(proxy, "the proxy the environment names:")
    # As UTF-8 bytes (RFC 7617): httpcore refuses a str holding other than ASCII.
    auth = (unquote(parts.username).encode(), unquote(parts.password or "").encode()) if parts.username else None
    bare = parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()  # credentials go in `auth` only
    return httpcore.Proxy(bare, auth=auth, ssl_context=tls_context(bare))


def single_connection(tls: ssl.SSLContext | None, proxy: Any) -> Any:
    """A pool of one keep-alive connection (through ``proxy``, from ``proxy_config``, if not None),
    whose every socket operation ends by the attempt's deadline (``deadline.attempt_deadline``)."""
    import httpcore

    return httpcore.ConnectionPool(
        ssl_context=tls,
        proxy=proxy,
        max_connections=1,
        max_keepalive_connections=1,
        network_backend=bounded_backend(),
    )
