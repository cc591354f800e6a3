"""The server's settings, declared once: defaults and the serving flags that
``python -m lance_ns.server`` (argparse) and ``lance-ns serve`` (click) both build
their options from.  Importing it imports no starlette/uvicorn."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ..limits import DEFAULT_MAX_NAME_BYTES, DEFAULT_MAX_PROPERTIES, DEFAULT_MAX_PROPERTY_BYTES

DEFAULT_MAX_BODY_BYTES = 256 * 1024 * 1024
DEFAULT_THREADS = 32
#: seconds a request waits for a free backend thread before it is answered 503 code 17 (with Retry-After)
DEFAULT_QUEUE_TIMEOUT = 30.0
#: seconds a client has to send a whole request body (a stalled upload is answered 408)
DEFAULT_BODY_TIMEOUT = 30.0
#: seconds a stopping server gives in-flight requests before it closes their connections
DEFAULT_GRACEFUL_TIMEOUT = 30.0


AUTH_TOKEN_ENV = "LANCE_NS_AUTH_TOKEN"
API_KEYS_ENV = "LANCE_NS_API_KEYS"


@dataclass(frozen=True)
class Flag:
    """One serving flag, declared once: argparse (``python -m lance_ns.server``) and
    click (``lance-ns serve``) both build their options from :data:`FLAGS`."""

    name: str
    help: str
    type: Callable[[str], Any] = str
    default: Any = None
    choices: tuple[str, ...] | None = None
    metavar: str | None = None
    #: an on/off switch (``--no-ui``): present means True, takes no value
    switch: bool = False

    @property
    def dest(self) -> str:
        return self.name.lstrip("-").replace("-", "_")


FLAGS: tuple[Flag, ...] = (
    Flag("--host", "address to bind (default 127.0.0.1)", default="127.0.0.1"),
    Flag("--port", "port (default 2333, the spec's)", int, 2333),
    Flag("--threads", "backend calls run at once, each on a thread of its own, so that a slow call never stalls "
         f"the event loop (default: the backend's own size, {DEFAULT_THREADS} for remote catalogs)", int),
    Flag("--queue-timeout", "seconds a request waits for a free backend thread; then HTTP 503 code 17 with "
         f"Retry-After (default {DEFAULT_QUEUE_TIMEOUT:g})", float, DEFAULT_QUEUE_TIMEOUT),
    Flag("--max-body-bytes", "larger request bodies get HTTP 413 code 13 (default 256 MiB)", int, DEFAULT_MAX_BODY_BYTES),
    Flag("--max-decoded-bytes", "an Arrow body that decodes to more gets HTTP 413 code 13 (default: --max-body-bytes)", int),
    Flag("--body-timeout", f"seconds to receive a whole request body, else HTTP 408 code 13 (default {DEFAULT_BODY_TIMEOUT:g})",
         float, DEFAULT_BODY_TIMEOUT),
    Flag("--max-name-bytes", f"longest identifier component in UTF-8 bytes (default {DEFAULT_MAX_NAME_BYTES})",
         int, DEFAULT_MAX_NAME_BYTES),
    Flag("--max-property-bytes", f"longest property key or value in UTF-8 bytes (default {DEFAULT_MAX_PROPERTY_BYTES})",
         int, DEFAULT_MAX_PROPERTY_BYTES),
    Flag("--max-properties", f"most properties in one request (default {DEFAULT_MAX_PROPERTIES})", int, DEFAULT_MAX_PROPERTIES),
    Flag("--auth-token", f"bearer token clients must send (better: ${AUTH_TOKEN_ENV} or --auth-token-env); never printed",
         metavar="TOKEN"),
    Flag("--auth-token-env", f"environment variable holding the bearer token (default {AUTH_TOKEN_ENV})",
         default=AUTH_TOKEN_ENV, metavar="VAR"),
    Flag("--api-keys-env", f"environment variable holding comma-separated x-api-key values (default {API_KEYS_ENV})",
         default=API_KEYS_ENV, metavar="VAR"),
    Flag("--auth-file", "TOML file of principals (token or token_sha256, read/write/admin grants on namespace "
         "prefixes); re-read when it changes", metavar="FILE"),
    Flag("--tls-cert", "serve HTTPS with this certificate (PEM, chain included)", metavar="FILE"),
    Flag("--tls-key", "the certificate's private key (PEM; default: inside --tls-cert)", metavar="FILE"),
    Flag("--tls-ca", "require client certificates signed by these CAs (PEM bundle): mutual TLS", metavar="FILE"),
    Flag("--loop", "event loop: uvloop when installed (the server extra), else asyncio (default auto)", str.lower, "auto",
         ("auto", "uvloop", "asyncio")),
    Flag("--http", "HTTP parser: httptools when installed (the server extra), else h11 (default auto)", str.lower, "auto",
         ("auto", "httptools", "h11")),
    Flag("--workers", "processes serving the one backend (default 1); correct because its commits are conditional",
         int, 1),
    Flag("--log-level", "info logs every request with its status and latency (default info)", str.lower, "info",
         ("debug", "info", "warning", "error")),
    Flag("--log-format", "text lines or one JSON object per line (default text)", str.lower, "text", ("text", "json")),
    Flag("--no-ui", "do not serve the catalog browser at /ui/", switch=True, default=False),
    Flag("--no-metrics", "do not keep Prometheus metrics (no /metrics; saves their few microseconds per request)",
         switch=True, default=False),
    Flag("--graceful-timeout", f"on SIGTERM/Ctrl-C, seconds in-flight requests get to finish (default {DEFAULT_GRACEFUL_TIMEOUT:g})",
         float, DEFAULT_GRACEFUL_TIMEOUT),
)  # fmt: skip
