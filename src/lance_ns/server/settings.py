"""The server's settings, declared once.

:class:`ServerSettings` is what an app serves with: each field is one setting with
its default, its help text and the flag that sets it.  From it come the serving
flags of :data:`FLAGS` (``python -m lance_ns.server`` builds argparse options from
them, ``lance-ns serve`` click ones), :meth:`ServerSettings.from_args` (parsed flags
-> settings), ``create_app``'s and ``NamespaceApp``'s keyword options and what
``--workers`` hands each worker process.  A new setting is one new field here.
The other flags (where to listen, TLS, processes, logging) configure the process,
not the app.  Importing this module imports no starlette/uvicorn.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import Any, Callable

from ..limits import DEFAULT_MAX_NAME_BYTES, DEFAULT_MAX_PROPERTIES, DEFAULT_MAX_PROPERTY_BYTES, Limits

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
    """One serving flag: argparse and click options are both built from :data:`FLAGS`."""

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


def _setting(default: Any, flag: str | None, help: str, type: Callable[[str], Any] = str, *,
             metavar: str | None = None, via: str | None = None) -> Any:
    """A :class:`ServerSettings` field and its flag; a ``--no-...`` flag turns an on/off
    setting off.  A setting without a flag of its own names the flags it comes from (``via``)."""
    switch = bool(flag and flag.startswith("--no-"))
    option = None if flag is None else Flag(flag, help, type, False if switch else default, metavar=metavar, switch=switch)
    return dataclasses.field(default=default, metadata={"flag": option, "via": via, "help": help})


@dataclass(frozen=True)
class ServerSettings:
    """What the app serves with.  Every field is set by its flag (``metadata["flag"]``)
    or, for the three that are not, by the flags its ``metadata["via"]`` names."""

    threads: int | None = _setting(
        None, "--threads", "backend calls run at once, each on a thread of its own, so that a slow call never "
        f"stalls the event loop (default: the backend's own size, {DEFAULT_THREADS} for remote catalogs)", int)
    queue_timeout: float = _setting(
        DEFAULT_QUEUE_TIMEOUT, "--queue-timeout", "seconds a request waits for a free backend thread; then HTTP 503 "
        f"code 17 with Retry-After (default {DEFAULT_QUEUE_TIMEOUT:g})", float)
    max_body_bytes: int = _setting(
        DEFAULT_MAX_BODY_BYTES, "--max-body-bytes", "larger request bodies get HTTP 413 code 13 (default 256 MiB)", int)
    max_decoded_bytes: int | None = _setting(
        None, "--max-decoded-bytes", "an Arrow body that decodes to more gets HTTP 413 code 13 (default: "
        "--max-body-bytes)", int)
    body_timeout: float = _setting(
        DEFAULT_BODY_TIMEOUT, "--body-timeout", "seconds to receive a whole request body, else HTTP 408 code 13 "
        f"(default {DEFAULT_BODY_TIMEOUT:g})", float)
    max_name_bytes: int = _setting(
        DEFAULT_MAX_NAME_BYTES, "--max-name-bytes", "longest identifier component in UTF-8 bytes "
        f"(default {DEFAULT_MAX_NAME_BYTES})", int)
    max_property_bytes: int = _setting(
        DEFAULT_MAX_PROPERTY_BYTES, "--max-property-bytes", "longest property key or value in UTF-8 bytes "
        f"(default {DEFAULT_MAX_PROPERTY_BYTES})", int)
    max_properties: int = _setting(
        DEFAULT_MAX_PROPERTIES, "--max-properties", f"most properties in one request (default {DEFAULT_MAX_PROPERTIES})",
        int)
    auth_token: str | None = _setting(
        None, "--auth-token", f"bearer token clients must send (better: ${AUTH_TOKEN_ENV} or --auth-token-env); "
        "never printed", metavar="TOKEN")
    api_keys: tuple[str, ...] = _setting((), None, "x-api-key values clients may send", via="--api-keys-env")
    auth_file: str | None = _setting(
        None, "--auth-file", "TOML file of principals (token or token_sha256, read/write/admin grants on namespace "
        "prefixes); re-read when it changes", metavar="FILE")
    ui: bool = _setting(True, "--no-ui", "do not serve the catalog browser at /ui/")
    metrics: bool = _setting(
        True, "--no-metrics", "do not keep Prometheus metrics (no /metrics; saves their few microseconds per request)")
    log_requests: bool = _setting(True, None, "log a line per request", via="--log-level")

    @classmethod
    def of(cls, settings: "ServerSettings | None" = None, **options: Any) -> "ServerSettings":
        """``settings`` (default: the defaults) with ``options`` changed; unknown names are a
        TypeError.  ``limits=Limits(...)`` (the Python API's) sets the three name/property limits."""
        limits = options.pop("limits", None)
        if limits is not None:
            options.update(max_name_bytes=limits.max_name_bytes, max_property_bytes=limits.max_property_bytes,
                           max_properties=limits.max_properties)
        if "api_keys" in options:  # any iterable (a list from JSON, None)
            options["api_keys"] = tuple(k for k in options["api_keys"] or () if k)
        return dataclasses.replace(settings or cls(), **options)

    @classmethod
    def from_args(cls, args: Any) -> "ServerSettings":
        """The settings of parsed serving flags (argparse's namespace or click's values)."""
        values: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            flag = f.metadata["flag"]
            if flag is not None:
                value = getattr(args, flag.dest, flag.default)
                values[f.name] = not value if flag.switch else value
        values["auth_token"], values["api_keys"] = credentials(args)
        # below info no request line is written anyway: skip building it
        values["log_requests"] = getattr(args, "log_level", "info") in ("debug", "info")
        return cls.of(**values)

    @property
    def limits(self) -> Limits:
        return Limits(max_name_bytes=self.max_name_bytes, max_property_bytes=self.max_property_bytes,
                      max_properties=self.max_properties)

    def __repr__(self) -> str:  # never the token or keys (a settings object may be logged)
        shown = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        shown.update(auth_token="***" if self.auth_token else None, api_keys=("***",) * len(self.api_keys))
        return f"ServerSettings({', '.join(f'{k}={v!r}' for k, v in shown.items())})"


def credentials(args: Any) -> tuple[str | None, list[str] | None]:
    """(bearer token, x-api-key values): ``--auth-token``, else the variables the flags name."""
    token = getattr(args, "auth_token", None) or (os.environ.get(args.auth_token_env) if args.auth_token_env else None)
    keys = [k for k in os.environ.get(args.api_keys_env, "").split(",") if k] if args.api_keys_env else []
    return token or None, keys or None


#: every app setting's flag, in declaration order
SETTING_FLAGS: tuple[Flag, ...] = tuple(f.metadata["flag"] for f in dataclasses.fields(ServerSettings)
                                        if f.metadata["flag"] is not None)

FLAGS: tuple[Flag, ...] = (
    Flag("--host", "address to bind (default 127.0.0.1)", default="127.0.0.1"),
    Flag("--port", "port (default 2333, the spec's)", int, 2333),
    *SETTING_FLAGS,
    Flag("--auth-token-env", f"environment variable holding the bearer token (default {AUTH_TOKEN_ENV})",
         default=AUTH_TOKEN_ENV, metavar="VAR"),
    Flag("--api-keys-env", f"environment variable holding comma-separated x-api-key values (default {API_KEYS_ENV})",
         default=API_KEYS_ENV, metavar="VAR"),
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
    Flag("--graceful-timeout", f"on SIGTERM/Ctrl-C, seconds in-flight requests get to finish (default {DEFAULT_GRACEFUL_TIMEOUT:g})",
         float, DEFAULT_GRACEFUL_TIMEOUT),
)  # fmt: skip
"""The serving flags of ``python -m lance_ns.server`` and ``lance-ns serve``: the app
settings' (:data:`SETTING_FLAGS`) and the process's."""
