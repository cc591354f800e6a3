"""The server's command line, shared by ``python -m lance_ns.server`` and ``lance-ns serve``.

:func:`add_arguments` adds the serving flags to any parser, :func:`run` serves
a namespace from the parsed flags (logging each request at ``--log-level``),
:func:`main` is the whole ``python -m lance_ns.server`` command.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys

from ..limits import DEFAULT_MAX_NAME_BYTES, DEFAULT_MAX_PROPERTIES, DEFAULT_MAX_PROPERTY_BYTES, Limits

# the server's defaults live here, not in .app, so that building a parser imports no starlette/uvicorn
DEFAULT_MAX_BODY_BYTES = 256 * 1024 * 1024
DEFAULT_THREADS = 32
#: seconds a client has to send a whole request body (a stalled upload is answered 408)
DEFAULT_BODY_TIMEOUT = 30.0
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s %(message)s"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The serving flags (everything but how the namespace is chosen)."""
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=2333, help="port (default 2333, the spec's)")
    p.add_argument("--threads", type=int, default=DEFAULT_THREADS, help=f"backend worker threads (default {DEFAULT_THREADS})")
    p.add_argument("--max-body-bytes", type=int, default=DEFAULT_MAX_BODY_BYTES,
                   help="larger request bodies get HTTP 413 code 13 (default 256 MiB)")
    p.add_argument("--max-decoded-bytes", type=int, default=None,
                   help="an Arrow body that decodes to more gets HTTP 413 code 13 (default: --max-body-bytes)")
    p.add_argument("--body-timeout", type=float, default=DEFAULT_BODY_TIMEOUT,
                   help=f"seconds to receive a whole request body, else HTTP 408 code 13 (default {DEFAULT_BODY_TIMEOUT:g})")
    p.add_argument("--max-name-bytes", type=int, default=DEFAULT_MAX_NAME_BYTES,
                   help=f"longest identifier component in UTF-8 bytes (default {DEFAULT_MAX_NAME_BYTES})")
    p.add_argument("--max-property-bytes", type=int, default=DEFAULT_MAX_PROPERTY_BYTES,
                   help=f"longest property key or value in UTF-8 bytes (default {DEFAULT_MAX_PROPERTY_BYTES})")
    p.add_argument("--max-properties", type=int, default=DEFAULT_MAX_PROPERTIES,
                   help=f"most properties in one request (default {DEFAULT_MAX_PROPERTIES})")
    p.add_argument("--auth-token-env", metavar="VAR",
                   help="environment variable holding the bearer token clients must send (kept out of argv)")
    p.add_argument("--api-keys-env", metavar="VAR", help="environment variable holding comma-separated x-api-key values")
    p.add_argument("--no-ui", action="store_true", help="do not serve the catalog browser at /ui/")
    p.add_argument("--log-level", default="info", type=str.lower, choices=["debug", "info", "warning", "error"],
                   help="info logs every request with its status and latency (default info)")


def configure_logging(level: str) -> None:
    """Send ``lance_ns`` records at ``level`` to stderr, unless the host program has set logging up."""
    logger = logging.getLogger("lance_ns")
    logger.setLevel(level.upper())
    if not logger.handlers and not logging.getLogger().handlers:
        from ..redact import RedactingFilter

        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter(LOG_FORMAT))
        handler.addFilter(RedactingFilter())  # every lance_ns record, not only the server's
        logger.addHandler(handler)


def run(namespace, args: argparse.Namespace, *, auth_token: str | None = None, api_keys: list[str] | None = None) -> None:
    """Serve ``namespace`` with the flags of :func:`add_arguments` until interrupted.

    ``auth_token`` / ``api_keys``, when given, take precedence over
    ``--auth-token-env`` / ``--api-keys-env``.
    """
    from .running import serve

    if auth_token is None and args.auth_token_env:
        auth_token = os.environ.get(args.auth_token_env) or None
    if api_keys is None and args.api_keys_env:
        api_keys = [k for k in os.environ.get(args.api_keys_env, "").split(",") if k] or None
    limits = Limits(max_name_bytes=args.max_name_bytes, max_property_bytes=args.max_property_bytes,
                    max_properties=args.max_properties)
    serve(
        namespace,
        host=args.host,
        port=args.port,
        log_level=args.log_level,
        auth_token=auth_token,
        api_keys=api_keys,
        max_body_bytes=args.max_body_bytes,
        max_decoded_bytes=args.max_decoded_bytes,
        body_timeout=args.body_timeout,
        limits=limits,
        threads=args.threads,
        ui=not args.no_ui,
    )


def build_parser(prog: str = "python -m lance_ns.server") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description="Serve a Lance namespace over REST.")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--impl", help="implementation alias (dir, hive, glue, ...) or module:Class")
    src.add_argument("--name", help="a named configuration (config file / LANCE_NS__NAME__* variables)")
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
    run(ns, args)
    return 0
