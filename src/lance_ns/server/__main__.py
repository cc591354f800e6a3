"""``python -m lance_ns.server --impl dir --prop root=/data --port 2333``."""

from __future__ import annotations

import argparse
import logging
import os
import sys

from ..config import connect, load_namespace
from .app import DEFAULT_MAX_BODY_BYTES, DEFAULT_THREADS
from .running import serve


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m lance_ns.server", description="Serve a Lance namespace over REST.")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--impl", help="implementation alias (dir, hive, glue, ...) or module:Class")
    src.add_argument("--name", help="a named configuration (config file / LANCE_NS__NAME__* variables)")
    p.add_argument("--prop", action="append", default=[], metavar="KEY=VALUE", help="implementation property")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=2333)
    p.add_argument("--max-body-bytes", type=int, default=DEFAULT_MAX_BODY_BYTES)
    p.add_argument("--threads", type=int, default=DEFAULT_THREADS, help="backend worker threads")
    p.add_argument(
        "--auth-token-env",
        metavar="VAR",
        help="environment variable holding the bearer token clients must send (kept out of argv)",
    )
    p.add_argument("--api-keys-env", metavar="VAR", help="environment variable holding comma-separated x-api-key values")
    p.add_argument("--log-level", default="info")
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s %(message)s")
    props = {}
    for item in args.prop:
        key, sep, value = item.partition("=")
        if not sep:
            print(f"--prop needs KEY=VALUE, got {item!r}", file=sys.stderr)
            return 2
        props[key] = value
    ns = load_namespace(args.name) if args.name else connect(args.impl, props)
    token = os.environ.get(args.auth_token_env) if args.auth_token_env else None
    keys = os.environ.get(args.api_keys_env, "").split(",") if args.api_keys_env else None
    serve(
        ns,
        host=args.host,
        port=args.port,
        log_level=args.log_level.lower(),
        auth_token=token,
        api_keys=keys,
        max_body_bytes=args.max_body_bytes,
        threads=args.threads,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
