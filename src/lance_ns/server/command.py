"""The server's command line, shared by ``python -m lance_ns.server`` and ``lance-ns serve``.

:data:`FLAGS` declares every serving flag once; :func:`add_arguments` (argparse)
and :func:`click_options` (the ``lance-ns serve`` command) are built from it, and
both front ends call :func:`run`, which serves a namespace from the parsed flags
(logging each request at ``--log-level``).  :func:`main` is the whole
``python -m lance_ns.server`` command.  Only how the namespace is chosen differs:
``--impl``/``--name``/``--prop`` here, the CLI's connection options there.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable

from ..limits import DEFAULT_MAX_NAME_BYTES, DEFAULT_MAX_PROPERTIES, DEFAULT_MAX_PROPERTY_BYTES, Limits

# the server's defaults live here, not in .app, so that building a parser imports no starlette/uvicorn
DEFAULT_MAX_BODY_BYTES = 256 * 1024 * 1024
DEFAULT_THREADS = 32
#: seconds a request waits for a free backend thread before it is answered 503 code 17 (with Retry-After)
DEFAULT_QUEUE_TIMEOUT = 30.0
#: seconds a client has to send a whole request body (a stalled upload is answered 408)
DEFAULT_BODY_TIMEOUT = 30.0
#: seconds a stopping server gives in-flight requests before it closes their connections
DEFAULT_GRACEFUL_TIMEOUT = 30.0
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s %(message)s"


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


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The serving flags (everything but how the namespace is chosen) on an argparse parser."""
    for f in FLAGS:
        if f.switch:
            p.add_argument(f.name, action="store_true", help=f.help)
        else:
            p.add_argument(f.name, type=f.type, default=f.default, choices=f.choices, metavar=f.metavar, help=f.help)


def click_options() -> list[Callable]:
    """The same flags as click options (for ``lance-ns serve``)."""
    import click

    options = []
    for f in FLAGS:
        if f.switch:
            options.append(click.option(f.name, f.dest, is_flag=True, default=False, help=f.help))
            continue
        kind = click.Choice(f.choices, case_sensitive=False) if f.choices else f.type if f.type in (int, float) else str
        options.append(click.option(f.name, f.dest, type=kind, default=f.default, metavar=f.metavar, help=f.help,
                                    show_default=False))
    return options


def credentials(args: Any) -> tuple[str | None, list[str] | None]:
    """(bearer token, x-api-key values): ``--auth-token``, else the variables the flags name."""
    token = getattr(args, "auth_token", None) or (os.environ.get(args.auth_token_env) if args.auth_token_env else None)
    keys = [k for k in os.environ.get(args.api_keys_env, "").split(",") if k] if args.api_keys_env else []
    return token or None, keys or None


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message (and the traceback, if any)."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            entry["exception"] = record.exc_text
        return json.dumps(entry, ensure_ascii=False)


JsonFormatter.converter = time.gmtime


def configure_logging(level: str, log_format: str = "text") -> None:
    """Send ``lance_ns`` records at ``level`` to stderr (as text lines or JSON objects),
    unless the host program has set logging up."""
    logger = logging.getLogger("lance_ns")
    logger.setLevel(level.upper())
    if not logger.handlers and not logging.getLogger().handlers:
        from ..redact import RedactingFilter

        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(JsonFormatter() if log_format == "json" else logging.Formatter(LOG_FORMAT))
        handler.addFilter(RedactingFilter())  # every lance_ns record, not only the server's
        logger.addHandler(handler)
        if log_format == "json":  # uvicorn's own lines (startup, shutdown, errors) as JSON too
            server_logger = logging.getLogger("uvicorn")
            server_logger.setLevel(level.upper())
            server_logger.addHandler(handler)
            server_logger.propagate = False


def tls_options(args: Any) -> dict:
    """uvicorn's TLS settings from ``--tls-cert/--tls-key/--tls-ca`` (empty: plain HTTP)."""
    import ssl

    from ..errors import InvalidInputError

    cert, key, ca = (getattr(args, n, None) for n in ("tls_cert", "tls_key", "tls_ca"))
    if not cert:
        if key or ca:
            raise InvalidInputError("--tls-key and --tls-ca need --tls-cert")
        return {}
    options: dict = {"ssl_certfile": cert, "ssl_keyfile": key}
    if ca:
        options.update(ssl_ca_certs=ca, ssl_cert_reqs=ssl.CERT_REQUIRED)
    return options


def http_stack(loop: str = "auto", http: str = "auto") -> tuple[str, str]:
    """(event loop, HTTP parser) uvicorn runs on with these settings: ``auto`` is
    uvloop and httptools where they are installed, else asyncio and h11 (uvicorn's rule)."""
    import importlib.util

    def found(module: str) -> bool:
        try:
            return importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):  # a module set to None in sys.modules: absent
            return False

    if loop == "auto":
        loop = "uvloop" if found("uvloop") else "asyncio"
    if http == "auto":
        http = "httptools" if found("httptools") else "h11"
    return loop, http


def log_http_stack(uvicorn_options: dict) -> None:
    """The start-up line naming the event loop and HTTP parser the server runs on."""
    import uvicorn

    asked = (uvicorn_options.get("loop", "auto"), uvicorn_options.get("http", "auto"))
    loop, http = http_stack(*asked)
    fell_back = asked == ("auto", "auto") and (loop, http) != ("uvloop", "httptools")  # not installed here
    slow = " (the fast stack is uvloop + httptools: pip install 'lance-ns[server]')" if fell_back else ""
    logging.getLogger("lance_ns.server").info("uvicorn %s on the %s event loop with the %s HTTP parser%s",
                                              uvicorn.__version__, loop, http, slow)


def scheme(args: Any) -> str:
    return "https" if getattr(args, "tls_cert", None) else "http"


def run(namespace, args: Any, opener: dict | None = None) -> None:
    """Serve ``namespace`` with the flags of :data:`FLAGS` until interrupted,
    then close it (``lance-ns serve`` and ``python -m lance_ns.server`` open it).

    ``opener`` says how to open the namespace again (``{"impl": ..., "properties":
    {...}}`` or ``{"name": ...}``): ``--workers`` above 1 opens it in every worker.
    """
    try:
        _serve(namespace, args, opener)
    finally:
        close = getattr(namespace, "close", None)  # a namespace not of lance_ns may have none
        if callable(close):
            close()


def _serve(namespace, args: Any, opener: dict | None) -> None:
    from ..errors import InvalidInputError

    auth_token, api_keys = credentials(args)
    limits = Limits(max_name_bytes=args.max_name_bytes, max_property_bytes=args.max_property_bytes,
                    max_properties=args.max_properties)
    app_options = dict(auth_token=auth_token, api_keys=api_keys, max_body_bytes=args.max_body_bytes,
                       max_decoded_bytes=args.max_decoded_bytes, body_timeout=args.body_timeout, limits=limits,
                       threads=args.threads, queue_timeout=args.queue_timeout, auth_file=args.auth_file, ui=not args.no_ui,
                       metrics=not getattr(args, "no_metrics", False))
    uvicorn_options = {**tls_options(args), "timeout_graceful_shutdown": args.graceful_timeout,
                       "loop": getattr(args, "loop", "auto"), "http": getattr(args, "http", "auto")}
    if args.workers < 1:
        raise InvalidInputError("--workers must be at least 1")
    if args.workers > 1:
        if opener is None:
            raise InvalidInputError("--workers needs a namespace every worker can open (--impl/--prop or a configuration)")
        if args.auth_file:
            from .auth import AuthFile

            AuthFile(args.auth_file)  # a broken file fails here, once, not in every worker
        from .workers import serve_workers

        serve_workers(args.workers, opener, host=args.host, port=args.port, log_level=args.log_level,
                      log_format=args.log_format, uvicorn_options=uvicorn_options, **app_options)
        return
    from .running import serve

    serve(namespace, host=args.host, port=args.port, log_level=args.log_level, log_format=args.log_format,
          uvicorn_options=uvicorn_options, **app_options)


def build_parser(prog: str = "python -m lance_ns.server") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description="Serve a Lance namespace over REST.")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--impl", help="implementation alias (dir, hive, glue, ...) or module:Class")
    src.add_argument("--name", "--config", dest="name",
                     help="a named configuration (config file / LANCE_NS__NAME__* variables)")
    p.add_argument("--prop", action="append", default=[], metavar="KEY=VALUE", help="implementation property")
    add_arguments(p)
    return p


def main(argv: list[str] | None = None) -> int:
    from ..config import connect, load_namespace
    from ..errors import LanceNamespaceError
    from ..redact import redact_text

    args = build_parser().parse_args(argv)
    props = {}
    for item in args.prop:
        key, sep, value = item.partition("=")
        if not sep:
            print(f"--prop needs KEY=VALUE, got {redact_text(item)!r}", file=sys.stderr)
            return 2
        props[key] = value
    try:
        ns = load_namespace(args.name) if args.name else connect(args.impl, props)
    except LanceNamespaceError as e:
        print(f"cannot open the namespace: {redact_text(str(e))}", file=sys.stderr)
        return 2
    opener = {"name": args.name} if args.name else {"impl": args.impl, "properties": props}
    try:
        run(ns, args, opener)
    except LanceNamespaceError as e:  # e.g. an auth file that does not parse
        print(f"cannot serve: {redact_text(str(e))}", file=sys.stderr)
        return 2
    return 0
