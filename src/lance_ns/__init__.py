"""lance-ns: Lance Namespace implementations, a Lance REST server and a Spark source.

>>> import lance_ns
>>> ns = lance_ns.connect("dir", {"root": "/tmp/lake"})
>>> ns = lance_ns.from_config({"impl": "dir", "dir.root": "/tmp/lake"})
>>> ns = lance_ns.load_namespace("prod")   # ~/.config/lance-ns/config.toml or LANCE_NS__PROD__*
"""

import importlib
from typing import TYPE_CHECKING

from . import deferred_client
from .impls import IMPLS

deferred_client.install()

if TYPE_CHECKING:  # static names for type checkers and IDEs; imported lazily at run time
    from .config import connect, from_config, load_class, load_namespace, named_config
    from .identifiers import parse_id, to_string

__version__ = "0.1.0"

__all__ = [
    "IMPLS",
    "connect",
    "from_config",
    "load_class",
    "load_namespace",
    "named_config",
    "parse_id",
    "to_string",
    "__version__",
]

#: where each export lives; imported on first use (PEP 562) because
#: ``lance_ns.config`` pulls in lance_namespace and its generated REST client
#: (~1.7 s), which code such as Spark's Python workers, importing
#: ``lance_ns.spark.datasource`` in every fresh process, does not need.
_EXPORTS = {
    "connect": "config",
    "from_config": "config",
    "load_class": "config",
    "load_namespace": "config",
    "named_config": "config",
    "parse_id": "identifiers",
    "to_string": "identifiers",
}


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None and name in IMPLS:
        # ``lance_ns.glue`` is the backend class: with it, the registered
        # names are also importable paths, so ``lance_namespace.connect("lance_ns.glue",
        # ...)`` resolves them in a process that never imported lance_ns.
        from .config import load_class

        return load_class(name)
    if module is None:
        raise AttributeError(f"module 'lance_ns' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
