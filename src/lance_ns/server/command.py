"""The server's command line, shared by ``python -m lance_ns.server`` and ``lance-ns serve``.

:data:`FLAGS` declares every serving flag once (the app's come from
:class:`~.settings.ServerSettings`); :func:`add_arguments` (argparse)
and :func:`click_options` (the ``lance-ns serve`` command) are built from it, and
both front ends call :func:`run`, which serves a namespace from the parsed flags
(logging each request at ``--log-level``).  :func:`main` is the whole
``python -m lance_ns.server`` command.  Only how the namespace is chosen differs:
``--impl``/``--name``/``--prop`` here, the CLI's connection options there.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Callable

from .settings import FLAGS, ServerSettings, credentials  # noqa: F401 - credentials: the command's too


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

    settings = ServerSettings.from_args(args)
    uvicorn_options = {**tls_options(args), "timeout_graceful_shutdown": args.graceful_timeout,
                       "loop": getattr(args, "loop", "auto"), "http": getattr(args, "http", "auto")}
    if args.workers < 1:
        raise InvalidInputError("--workers must be at least 1")
    if args.workers > 1:
        if opener is None:
            raise InvalidInputError("--workers needs a namespace every worker can open (--impl/--prop or a configuration)")
        if settings.auth_file:
            from .auth import AuthFile

            AuthFile(settings.auth_file)  # a broken file fails here, once, not in every worker
        from .workers import serve_workers

        serve_workers(args.workers, opener, host=args.host, port=args.port, log_level=args.log_level,
                      log_format=args.log_format, uvicorn_options=uvicorn_options, settings=settings)
        return
    from .running import serve

    serve(namespace, host=args.host, port=args.port, log_level=args.log_level, log_format=args.log_format,
          uvicorn_options=uvicorn_options, settings=settings)


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
