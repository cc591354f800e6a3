"""A one-level catalog for ``lance-ns check``: the memory backend limited to
databases directly under the root, as in Hive 2 and Glue."""

from lance_ns.impls.memory import MemoryNamespace


class FlatMemoryNamespace(MemoryNamespace):
    max_depth = 1
