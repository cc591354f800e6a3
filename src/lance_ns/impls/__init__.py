"""One module (or package) per backend; imported lazily by lance_ns.config.

This module names them without importing any, so ``lance_ns`` can resolve
``lance_ns.<alias>`` attributes without loading lance_namespace first.
"""

from __future__ import annotations

#: alias -> (class path, pip extra that provides its dependencies)
IMPLS: dict[str, tuple[str, str | None]] = {
    "dir": ("lance_ns.impls.dir:DirectoryNamespace", None),
    "rest": ("lance_ns.impls.rest:RestNamespace", "rest"),
    "hive": ("lance_ns.impls.hive:Hive2Namespace", "hive"),
    "hive2": ("lance_ns.impls.hive:Hive2Namespace", "hive"),
    "hive3": ("lance_ns.impls.hive:Hive3Namespace", "hive"),
    "glue": ("lance_ns.impls.glue:GlueNamespace", "glue"),
    "unity": ("lance_ns.impls.unity:UnityNamespace", "unity"),
    "iceberg": ("lance_ns.impls.iceberg:IcebergRestNamespace", "iceberg"),
    "memory": ("lance_ns.impls.memory:MemoryNamespace", None),
    "mounts": ("lance_ns.impls.mounts:MountsNamespace", None),
}

#: the prefix of the names under which lance_namespace (and LanceDB) find our
#: backends: ``lance_ns.dir`` is ours, plain ``dir`` stays upstream's pylance one
REGISTERED_PREFIX = "lance_ns."


def impl_prefix(impl: str) -> str:
    """The key prefix of ``impl``'s properties in a flat tool config: an alias
    is its own prefix (``dir.root``); a class path's is the class name
    (``lance_ns.impls.glue:GlueNamespace`` -> ``GlueNamespace.region``)."""
    if impl in IMPLS:
        return impl
    return impl.rsplit(":", 1)[-1].rsplit(".", 1)[-1]


def registered_name(alias: str) -> str:
    """``glue`` -> ``lance_ns.glue``, the name for ``lance_namespace.connect``."""
    return REGISTERED_PREFIX + alias
