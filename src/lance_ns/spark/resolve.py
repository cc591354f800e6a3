"""Resolve Spark options to a Lance table: a location plus storage options.

Options (parsed by :class:`.options.SourceOptions`) follow the spec's tool-integration guidelines:

* ``impl`` names the namespace implementation and ``<impl>.*`` keys carry its
  properties (``dir.root``, ``rest.uri``, ...); or ``namespace`` names a
  configuration of ``lance_ns.load_namespace``;
* with a namespace, the table is an identifier: ``load("db.events")`` (Spark
  passes it as ``path``) or the ``table`` option, split by ``delimiter``
  (default ``.``);
* without one, ``path`` is the table's URI;
* ``storage.*`` keys are pylance storage options (they override what the
  namespace vends).

Only strings, lists and dicts live in a :class:`TableRef`: it is pickled to
Spark's Python workers and lance objects are not fork-safe.
"""

from __future__ import annotations

import atexit
import threading
from dataclasses import dataclass, field
from typing import Mapping

from .errors import error
from .options import SourceOptions


@dataclass(frozen=True)
class TableRef:
    uri: str
    storage_options: dict[str, str] = field(default_factory=dict)
    table_id: list[str] | None = None  # set when resolved through a namespace
    ns_config: dict[str, str] | None = None  # flat config to reconnect with
    #: implementation-managed: versions are the namespace's, read and committed through it
    managed: bool = False

    def open(self, version: int | str | None = None):
        import lance

        if self.managed:
            return lance.dataset(namespace_client=self.namespace(), table_id=self.table_id, version=version,
                                 storage_options=self.storage_options or None)
        return lance.dataset(self.uri, version=version, storage_options=self.storage_options or None)

    def commit_options(self) -> dict:
        """What ``LanceDataset.commit`` needs to commit through the namespace (managed tables)."""
        if not self.managed:
            return {}
        return {"namespace_client": self.namespace(), "table_id": self.table_id,
                "namespace_client_managed_versioning": True}

    def exists(self) -> bool:
        return latest_version(self) is not None

    def namespace(self):
        return cached_namespace(self.ns_config) if self.ns_config else None


def _parsed(options: Mapping[str, str] | SourceOptions) -> SourceOptions:
    return options if isinstance(options, SourceOptions) else SourceOptions.parse(options)


# One connection per namespace configuration and process: a resolve reuses
# it instead of opening a new Hive pool or HTTP client each time; all are
# closed when the process exits (or a bridge worker's JVM lets it go).
_namespaces: dict[tuple[tuple[str, str], ...], object] = {}
_namespaces_lock = threading.Lock()


def cached_namespace(config: Mapping[str, str]):
    """The namespace of a flat config, connected once per process."""
    key = tuple(sorted(config.items()))
    with _namespaces_lock:
        ns = _namespaces.get(key)
        if ns is None:
            from ..config import from_config

            ns = _namespaces[key] = from_config(config)
        return ns


def close_namespaces() -> None:
    """Close every cached namespace connection (best effort each)."""
    with _namespaces_lock:
        opened = list(_namespaces.values())
        _namespaces.clear()
    for ns in opened:
        try:
            ns.close()
        except Exception:  # noqa: BLE001 - closing at exit: nothing left to tell
            pass


atexit.register(close_namespaces)


def resolve(options: Mapping[str, str] | SourceOptions, create: bool = False) -> tuple[TableRef, bool]:
    """The table the options name, and whether this call declared it.

    With ``create``, a table missing from the namespace is declared there
    (``declare_table`` chooses its location) so the caller can write it.
    """
    opts = _parsed(options)
    if opts.ns_config is None:
        if not opts.path:
            raise error("InvalidInputError", "give either 'impl' (or 'namespace') with a table identifier, or a 'path'")
        return TableRef(uri=opts.path, storage_options=dict(opts.storage)), False

    from lance_namespace import DeclareTableRequest, DescribeTableRequest

    from ..errors import TableNotFoundError

    table_id = opts.table_id()
    ns = cached_namespace(opts.ns_config)
    declared = False
    try:
        resp = ns.describe_table(DescribeTableRequest(id=table_id))
    except TableNotFoundError:
        if not create:
            raise
        resp = ns.declare_table(DeclareTableRequest(id=table_id))
        declared = True
    if not resp.location:
        raise error("InvalidInputError", f"namespace gave no location for table {table_id}")
    storage = dict(resp.storage_options or {})
    storage.update(opts.storage)
    return TableRef(uri=resp.location, storage_options=storage, table_id=table_id, ns_config=opts.ns_config,
                    managed=bool(resp.managed_versioning)), declared


def latest_version(ref: TableRef) -> int | None:
    """The table's latest version, or None when no version was committed yet
    (a declared table, or an empty location)."""
    try:
        return ref.open().version
    except ValueError as e:  # pylance's "Dataset at path ... was not found"
        if "not found" in str(e).lower():
            return None
        raise
    except OSError as e:  # a managed table the namespace published no version of yet
        if ref.managed and "not found" in str(e).lower():
            return None
        raise
