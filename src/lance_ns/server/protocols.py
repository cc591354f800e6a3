"""uvicorn's HTTP protocols, with idle TLS connections closed at once on shutdown.

On SIGTERM uvicorn closes each idle keep-alive connection and waits, up to
``--graceful-timeout``, until every connection is gone.  Over TLS a close first waits
for the client's close_notify, for up to 30 s (asyncio's and uvloop's default, which
uvicorn gives no way to set).  A client that keeps an idle pooled connection without
reading it (urllib3's pool: any Python client between calls) answers none, so one such
client held ``lance-ns serve --tls-cert`` for the whole grace period (30 s, as long as
Kubernetes' own before it kills).  An idle connection has nothing left to send: it is
aborted instead, which its client sees as a closed keep-alive connection, as after
``timeout_keep_alive``.  A connection in the middle of a request finishes it first, as
before.
"""

from __future__ import annotations

from uvicorn.protocols.http.h11_impl import H11Protocol


def _idle(protocol) -> bool:
    cycle = protocol.cycle
    return cycle is None or cycle.response_complete


def _shutdown(protocol, shutdown) -> None:
    idle = _idle(protocol)
    shutdown()
    if idle and protocol.transport.get_extra_info("sslcontext") is not None:
        protocol.transport.abort()


class H11(H11Protocol):
    def shutdown(self) -> None:
        _shutdown(self, super().shutdown)


try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
except ImportError:  # (httptools not installed: the server extra brings it)
    HttpTools = None
else:

    class HttpTools(HttpToolsProtocol):
        def shutdown(self) -> None:
            _shutdown(self, super().shutdown)


def http_protocol(name: str):
    """The protocol class for uvicorn's ``http`` option ``name`` (auto, h11, httptools);
    any other value is passed on as given."""
    if name == "auto":
        return HttpTools or H11
    return {"h11": H11, "httptools": HttpTools or "httptools"}.get(name, name)
