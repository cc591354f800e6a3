"""Which namespace a command talks to, decided in one place.

Sources, first match wins:

1. ``--config NAME``: a named configuration (``[namespaces.NAME]`` of
   ``~/.config/lance-ns/config.toml`` or ``$LANCE_NS_CONFIG``, overridden by
   ``LANCE_NS__NAME__KEY`` variables);
2. ``--impl NAME`` with ``--prop KEY=VALUE`` (environment properties of the
   same impl, ``LANCE_NS_<IMPL>_<KEY>``, fill in what ``--prop`` leaves out);
3. the environment alone: ``LANCE_NS_IMPL=dir`` plus ``LANCE_NS_DIR_ROOT=...``.
"""

from __future__ import annotations

import argparse
import os

from lance_namespace import LanceNamespace

from ..config import connect, env_config, load_namespace, split_config
from ..errors import InvalidInputError

ENV_HELP = """\
connection (first match wins):
  --config NAME              named config: [namespaces.NAME] in ~/.config/lance-ns/config.toml
                             (or $LANCE_NS_CONFIG), overridden by LANCE_NS__NAME__KEY variables
  --impl NAME --prop K=V     an implementation alias (dir, rest, hive, hive3, glue, unity,
                             iceberg, memory) or module:Class, with its properties
  LANCE_NS_IMPL=NAME         the environment alone; properties as LANCE_NS_<IMPL>_<KEY>,
                             e.g. LANCE_NS_IMPL=dir LANCE_NS_DIR_ROOT=/data
                             ('__' in KEY is a dot: LANCE_NS_DIR_STORAGE__REGION)
"""


def add_connection_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("connection")
    group.add_argument("--config", metavar="NAME", help="a named configuration")
    group.add_argument("--impl", metavar="NAME", help="implementation alias or module:Class")
    group.add_argument(
        "--prop", action="append", default=[], metavar="KEY=VALUE", help="implementation property (repeatable)"
    )


def parse_pairs(items: list[str], what: str = "--prop") -> dict[str, str]:
    out = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise InvalidInputError(f"{what} needs KEY=VALUE, got {item!r}")
        out[key] = value
    return out


def resolve(args: argparse.Namespace) -> tuple[str, dict[str, str]] | str:
    """(impl, properties) from the options and environment, or the config name."""
    if getattr(args, "config", None):
        if args.impl or args.prop:
            raise InvalidInputError("give either --config or --impl/--prop, not both")
        return args.config
    env = env_config(os.environ)
    if args.impl:
        props = {}
        if env and env["impl"] == args.impl:
            props.update(split_config(env)[1])
        props.update(parse_pairs(args.prop))
        return args.impl, props
    if args.prop:
        raise InvalidInputError("--prop needs --impl")
    if env:
        return split_config(env)
    raise InvalidInputError(
        "no namespace given: use --impl NAME --prop KEY=VALUE, --config NAME, or set LANCE_NS_IMPL"
    )


def open_namespace(args: argparse.Namespace) -> LanceNamespace:
    choice = resolve(args)
    if isinstance(choice, str):
        return load_namespace(choice)
    impl, props = choice
    return connect(impl, props)
