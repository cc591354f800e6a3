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

import os
from typing import Any

from lance_namespace import LanceNamespace

from ..config import ENV_PREFIX, connect, default_config_path, env_config, load_namespace, named_config, split_config
from ..errors import InvalidInputError


def parse_pairs(items: list[str], what: str = "--prop") -> dict[str, str]:
    out = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise InvalidInputError(f"{what} needs KEY=VALUE, got {item!r}")
        out[key] = value
    return out


def resolve(args: Any) -> tuple[str, dict[str, str]] | str:
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


def resolved(args: Any) -> tuple[str, str, dict[str, str]]:
    """(source, impl, properties) the options and environment select."""
    choice = resolve(args)
    if isinstance(choice, str):
        props = named_config(choice)
        impl = props.pop("impl")
        return f"named configuration {choice!r}", impl, props
    impl, props = choice
    source = "--impl/--prop" if getattr(args, "impl", None) else "environment (LANCE_NS_IMPL)"
    return source, impl, props


def open_namespace(args: Any, out=None) -> LanceNamespace:
    """The namespace to talk to; its secret properties are taught to ``out``'s scrubber."""
    choice = resolve(args)
    if isinstance(choice, str):
        if out is not None:
            out.scrub.learn(named_config(choice))
        return load_namespace(choice)
    impl, props = choice
    if out is not None:
        out.scrub.learn(props)
    return connect(impl, props)


def configuration_names() -> list[str]:
    """Every named configuration: the config file's sections and LANCE_NS__NAME__* variables."""
    names: set[str] = set()
    path = default_config_path()
    if path.exists():
        try:
            import tomllib
        except ModuleNotFoundError:  # Python 3.10
            import tomli as tomllib
        try:
            names.update((tomllib.loads(path.read_text()).get("namespaces") or {}).keys())
        except tomllib.TOMLDecodeError as e:
            raise InvalidInputError(f"cannot parse {path}: {e}") from e
    for key in os.environ:
        if key.startswith(ENV_PREFIX) and "__" in key[len(ENV_PREFIX):]:
            names.add(key[len(ENV_PREFIX):].split("__", 1)[0].lower())
    return sorted(names)


def import_extra(module: str, extra: str, feature: str):
    """Import what a feature behind an extra needs; a missing package is one line
    naming the ``pip install`` to run (as :func:`lance_ns.config.load_class` does for impls)."""
    import importlib

    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:
        missing = (e.name or "").split(".")[0]
        if not missing or missing == "lance_ns":
            raise
        raise InvalidInputError(f"{feature} needs the {missing!r} package: pip install 'lance-ns[{extra}]'") from None
