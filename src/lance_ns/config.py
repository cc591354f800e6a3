"""Configuration: which implementation, with which properties.

One place for the spec's tool-integration rules so that the Python API, the
CLI, the REST server and the Spark source all agree:

* ``impl`` names the implementation: an alias below, ``module:Class`` or
  ``module.Class``;
* implementation properties are the keys prefixed with the ``impl`` value
  (``dir.root`` -> ``root``); for ``module:Class`` impls the prefix is the
  ``impl`` value or the class name (:func:`lance_ns.impls.impl_prefix`);
* named configurations come from a TOML file and environment variables,
  e.g. ``LANCE_NS__PROD__IMPL=glue`` and ``LANCE_NS__PROD__REGION=us-east-1``.
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path
from typing import Mapping

if sys.version_info >= (3, 11):
    import tomllib
else:  # tomllib is 3.11+; tomli is the same parser, published for older Pythons
    import tomli as tomllib

from lance_namespace import LanceNamespace

from .errors import InvalidInputError
from .impls import IMPLS, impl_prefix, registered_name

ENV_PREFIX = "LANCE_NS__"
CONFIG_ENV = "LANCE_NS_CONFIG"


def default_config_path() -> Path:
    if os.environ.get(CONFIG_ENV):
        return Path(os.environ[CONFIG_ENV])
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(Path.home(), ".config")
    return Path(base) / "lance-ns" / "config.toml"


def load_class(impl: str) -> type[LanceNamespace]:
    """The class for an alias or a ``module:Class`` / ``module.Class`` path.

    Backend modules are imported only here, so ``import lance_ns`` works with
    no extras installed; a missing extra gives one message naming the pip
    command that installs it.
    """
    if not impl or not isinstance(impl, str):
        raise InvalidInputError("impl must be a non-empty string")
    path, extra = IMPLS.get(impl, (impl, None))
    if ":" in path:
        module_name, _, class_name = path.partition(":")
    elif "." in path:
        module_name, _, class_name = path.rpartition(".")
    else:
        known = ", ".join(sorted(IMPLS))
        raise InvalidInputError(f"unknown impl {impl!r}; use one of {known} or module:Class")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        if extra and not module_name.startswith(e.name or "\0"):
            raise InvalidInputError(
                f"impl {impl!r} needs the {e.name!r} package: pip install 'lance-ns[{extra}]'"
            ) from e
        raise InvalidInputError(f"cannot import {module_name!r} for impl {impl!r}: {e}") from e
    cls = getattr(module, class_name, None)
    if not (isinstance(cls, type) and issubclass(cls, LanceNamespace)):
        raise InvalidInputError(f"{path!r} is not a lance_namespace.LanceNamespace class")
    return cls


def _stringify(properties: Mapping[str, object] | None) -> dict[str, str]:
    out = {}
    for k, v in (properties or {}).items():
        if v is None:
            continue
        out[str(k)] = v if isinstance(v, str) else str(v).lower() if isinstance(v, bool) else str(v)
    return out


def connect(impl: str, properties: Mapping[str, object] | None = None, **more: object) -> LanceNamespace:
    """Connect to an implementation: ``connect("dir", {"root": "/data"})``."""
    props = _stringify(properties)
    props.update(_stringify(more))
    return load_class(impl)(**props)


def split_config(config: Mapping[str, object]) -> tuple[str, dict[str, str]]:
    """``{"impl": "dir", "dir.root": "/d"}`` -> ``("dir", {"root": "/d"})``.

    Keys without the impl prefix are ignored (they belong to the tool), so one
    flat config can carry the settings of several tools.
    """
    cfg = _stringify(config)
    impl = cfg.get("impl")
    if not impl:
        raise InvalidInputError("config has no 'impl' key")
    props = {}
    for key, value in cfg.items():
        for p in {impl, impl_prefix(impl)}:
            if key.startswith(p + "."):
                props[key[len(p) + 1 :]] = value
    return impl, props


def from_config(config: Mapping[str, object]) -> LanceNamespace:
    """Connect from a flat tool config following the spec's guidelines."""
    impl, props = split_config(config)
    return connect(impl, props)


def named_config(name: str, path: str | os.PathLike | None = None) -> dict[str, str]:
    """The flat properties of a named configuration (``impl`` plus properties).

    Sources, later wins: the ``[namespaces.NAME]`` table of the config file,
    then ``LANCE_NS__NAME__KEY`` environment variables (``__`` in KEY is a dot).
    """
    props: dict[str, str] = {}
    cfg_path = Path(path) if path else default_config_path()
    if cfg_path.exists():
        try:
            data = tomllib.loads(cfg_path.read_text())
        except tomllib.TOMLDecodeError as e:
            raise InvalidInputError(f"cannot parse {cfg_path}: {e}") from e
        section = (data.get("namespaces") or {}).get(name)
        if isinstance(section, dict):
            props.update(_stringify(_flatten(section)))
    env_prefix = f"{ENV_PREFIX}{name.upper()}__"
    for key, value in os.environ.items():
        if key.startswith(env_prefix):
            props[key[len(env_prefix) :].lower().replace("__", ".")] = value
    if "impl" not in props:
        raise InvalidInputError(
            f"no namespace configuration named {name!r} (looked in {cfg_path} and {env_prefix}* variables)"
        )
    return props


#: ``LANCE_NS_IMPL=dir`` selects the implementation for tools reading the environment
IMPL_ENV = "LANCE_NS_IMPL"


def env_config(environ: Mapping[str, str] | None = None) -> dict[str, str] | None:
    """The flat tool config given by environment variables, or None.

    The spec's tool-integration keys as variables: ``LANCE_NS_IMPL=dir`` is
    ``impl``; ``LANCE_NS_DIR_ROOT=/data`` is ``dir.root`` (the impl value,
    upper-cased, as the prefix; a double underscore is a dot:
    ``LANCE_NS_DIR_STORAGE__REGION`` is ``dir.storage.region``).
    """
    env = os.environ if environ is None else environ
    impl = env.get(IMPL_ENV)
    if not impl:
        return None
    prefix = impl_prefix(impl)
    key_prefix = "LANCE_NS_" + "".join(c if c.isalnum() else "_" for c in prefix).upper() + "_"
    config = {"impl": impl}
    for key, value in env.items():
        if key.startswith(key_prefix) and len(key) > len(key_prefix):
            config[f"{prefix}.{key[len(key_prefix):].lower().replace('__', '.')}"] = value
    return config


def _flatten(d: Mapping[str, object], prefix: str = "") -> dict[str, object]:
    out: dict[str, object] = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(_flatten(v, key + "."))
        else:
            out[key] = v
    return out


def load_namespace(name: str, path: str | os.PathLike | None = None) -> LanceNamespace:
    """Connect to a named configuration: ``load_namespace("prod")``.

    In a named configuration, properties may be written with or without the
    impl prefix (``root`` or ``dir.root``).
    """
    props = named_config(name, path)
    impl = props.pop("impl")
    plain = {k: v for k, v in props.items() if not k.startswith(impl + ".")}
    plain.update(split_config({"impl": impl, **props})[1])
    return connect(impl, plain)


def _register_with_lance_namespace() -> None:
    """Make ``lance_namespace.connect("lance_ns.glue", ...)`` (and so LanceDB's
    ``namespace_client_impl="lance_ns.glue"``) find our backends by name.

    The names resolve even without this (``lance_ns.glue`` is also an attribute
    path of the package, which ``lance_namespace.connect`` falls back to); the
    registration lists them in lance_namespace's own registry once lance_ns is
    in use.  ``lance_ns.`` keeps them apart from upstream's ``dir`` and ``rest``.
    """
    from lance_namespace import register_namespace_impl

    for alias, (path, _extra) in IMPLS.items():
        register_namespace_impl(registered_name(alias), path.replace(":", "."))


_register_with_lance_namespace()
