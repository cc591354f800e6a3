"""Running the app: in the foreground (CLI) or on a background thread (tests)."""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from lance_namespace import LanceNamespace

from .app import create_app
from .logs import configure_logging, log_http_stack
from .protocols import http_protocol


def _as_app(target: Any, **app_options: Any):
    return create_app(target, **app_options) if isinstance(target, LanceNamespace) else target


def server_options(host: str, log_level: str, **overrides: Any) -> dict[str, Any]:
    """uvicorn's options for a lance-ns server, of one process or of ``--workers``: these
    defaults, then ``overrides``; the HTTP protocol class is ours (:mod:`.protocols`)."""
    options = dict(
        host=host,
        log_level=log_level,
        access_log=False,  # the app logs each request with its latency
        lifespan="off",
        timeout_keep_alive=30,
    )
    options.update(overrides)
    options["http"] = http_protocol(options.get("http", "auto"))
    return options


def _config(app, host: str, log_level: str, **uvicorn_options: Any) -> uvicorn.Config:
    return uvicorn.Config(app, **server_options(host, log_level, **uvicorn_options))


def serve(
    target: Any,
    host: str = "127.0.0.1",
    port: int = 2333,
    *,
    log_level: str = "info",
    log_format: str = "text",
    uvicorn_options: dict | None = None,
    **app_options: Any,
) -> None:
    """Serve a namespace (or a ready ASGI app) until interrupted, logging each
    request (method, path, status, latency) at ``log_level`` info.  On SIGTERM or
    Ctrl-C uvicorn stops accepting, lets in-flight requests finish (up to
    ``timeout_graceful_shutdown`` seconds) and exits."""
    configure_logging(log_level, log_format)
    app = _as_app(target, **app_options)
    options = {**({"log_config": None} if log_format == "json" else {}), **(uvicorn_options or {})}
    log_http_stack(options)
    uvicorn.Server(_config(app, host, log_level, port=port, **options)).run()


@dataclass
class ServerHandle:
    """A server running on a background thread; ``stop()`` shuts it down."""

    url: str
    host: str
    port: int
    server: uvicorn.Server = field(repr=False)
    thread: threading.Thread = field(repr=False)

    def stop(self, timeout: float = 10.0, grace: float = 2.0) -> None:
        """Graceful for ``grace`` seconds (in-flight requests finish), then forced:
        idle keep-alive or half-open connections must not hold a test up."""
        self.server.should_exit = True
        self.thread.join(min(grace, timeout))
        if self.thread.is_alive():
            self.server.force_exit = True
            self.thread.join(timeout)

    def __enter__(self) -> "ServerHandle":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def run_server_in_thread(
    target: Any,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    log_level: str = "warning",
    startup_timeout: float = 15.0,
    uvicorn_options: dict | None = None,
    **app_options: Any,
) -> ServerHandle:
    """Start serving on a daemon thread; ``port=0`` picks a free port.

    The socket is bound here, before the thread starts, so the returned URL
    is final and no other process can take the port in between.
    """
    app = _as_app(target, **app_options)
    # proto must be IPPROTO_TCP (not 0): asyncio sets TCP_NODELAY on accepted
    # sockets only then; without it every response waits ~40 ms for delayed ACKs.
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    actual_port = sock.getsockname()[1]
    log_http_stack(uvicorn_options or {})
    server = uvicorn.Server(_config(app, host, log_level, port=actual_port, **(uvicorn_options or {})))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True, name="lance-ns-server")
    thread.start()
    deadline = time.monotonic() + startup_timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            sock.close()
            raise RuntimeError(f"the lance-ns server did not start on {host}:{actual_port}")
        time.sleep(0.01)
    shown = f"[{host}]" if ":" in host else host
    scheme = "https" if (uvicorn_options or {}).get("ssl_certfile") else "http"
    return ServerHandle(f"{scheme}://{shown}:{actual_port}", host, actual_port, server, thread)
