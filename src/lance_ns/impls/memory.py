"""An in-process catalog (impl ``memory``): namespaces and table entries in a
dict, table data wherever the locations point (``root``, default: a fresh
temporary directory, removed when the process exits).  For tests, notebooks and
embedding; nothing survives the process, just like pyiceberg's in-memory catalog.
"""

from __future__ import annotations

import atexit
import copy
import shutil
import tempfile
import threading
from dataclasses import dataclass, field

from ..catalog import CatalogNamespace
from ..catalog.entry import CatalogTable
from ..errors import (
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NamespaceNotFoundError,
    TableAlreadyExistsError,
)
from ..paging import page_by_loading


@dataclass
class _Node:
    properties: dict[str, str] = field(default_factory=dict)
    children: dict[str, "_Node"] = field(default_factory=dict)
    tables: dict[str, CatalogTable] = field(default_factory=dict)


class MemoryNamespace(CatalogNamespace):
    """Namespaces and table entries held in this process (tests, examples)."""

    supports_managed_versioning = True  # the compare-and-swap is a lock

    def __init__(self, **properties: str):
        if not properties.get("root"):
            root = tempfile.mkdtemp(prefix="lance-ns-memory-")
            # the catalog goes with the process, so the data only it could find goes too (at
            # exit, not when this object is collected: a dataset opened through it may outlive it)
            atexit.register(shutil.rmtree, root, ignore_errors=True)
            properties = {**properties, "root": root}
        super().__init__(**properties)
        self._tree = _Node()
        self._lock = threading.RLock()

    def _node(self, ns: list[str]) -> _Node | None:
        node = self._tree
        for name in ns:
            node = node.children.get(name)
            if node is None:
                return None
        return node

    def get_namespace_entry(self, ns):
        with self._lock:
            node = self._node(ns)
            return None if node is None else dict(node.properties)

    def list_namespace_names(self, parent):
        with self._lock:
            node = self._node(parent)
            return list(node.children) if node else []

    def create_namespace_entry(self, ns, properties):
        with self._lock:
            parent = self._node(ns[:-1])
            if parent is None:  # dropped since the caller checked
                raise NamespaceNotFoundError(f"namespace {ns[:-1]!r} does not exist")
            if ns[-1] in parent.children:
                raise NamespaceAlreadyExistsError(f"namespace {ns!r} already exists")
            parent.children[ns[-1]] = _Node(properties=dict(properties))

    def delete_namespace_entry(self, ns):
        with self._lock:  # checked again under the lock: a racing drop or create may have come first
            parent = self._node(ns[:-1])
            node = parent.children.get(ns[-1]) if parent else None
            if node is None:
                return False  # a racing drop came first
            if node.children or node.tables:
                raise NamespaceNotEmptyError(f"namespace {ns!r} is not empty")
            del parent.children[ns[-1]]

    def list_table_entries(self, ns):
        with self._lock:
            node = self._node(ns)
            return [copy.deepcopy(t) for t in node.tables.values()] if node else []

    def lance_table_page(self, ns, limit, page_token, keep=None):
        # as a service that lists names cheaply: copy only the tables of the page
        with self._lock:
            node = self._node(ns)
            names = sorted(node.tables) if node else []

        def load(batch):
            return [t for t in (self.get_table_entry(ns, name) for name in batch) if t is not None]

        return page_by_loading(names, limit, page_token, load, self._listed(keep))

    def get_table_entry(self, ns, name):
        with self._lock:
            node = self._node(ns)
            table = node.tables.get(name) if node else None
            return copy.deepcopy(table)

    def create_table_entry(self, ns, table):
        with self._lock:
            node = self._node(ns)
            if node is None:  # dropped since the caller checked
                raise NamespaceNotFoundError(f"namespace {ns!r} does not exist")
            if table.name in node.tables:
                raise TableAlreadyExistsError(f"table {table.name!r} already exists")
            node.tables[table.name] = copy.deepcopy(table)

    def delete_table_entry(self, ns, name):
        with self._lock:
            node = self._node(ns)
            return bool(node) and node.tables.pop(name, None) is not None

    def rename_table_entry(self, ns, table, new_ns, new_name):
        # the shared create-then-delete, made atomic by holding the catalog's lock
        with self._lock:
            if self.get_table_entry(new_ns, new_name) is not None:
                raise TableAlreadyExistsError(f"table {new_name!r} already exists")
            super().rename_table_entry(ns, table, new_ns, new_name)

    def swap_tables_properties(self, changes):
        with self._lock:  # every table checked and changed under one lock: atomic
            current = []
            for ns, table, _ in changes:
                node = self._node(ns)
                now = node.tables.get(table.name) if node else None
                if now is None or now.properties != table.properties:
                    return False
                current.append(now)
            for now, (_, _, properties) in zip(current, changes):
                now.properties = dict(properties)
            return True
