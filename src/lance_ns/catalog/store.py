"""The backend contract of :class:`~lance_ns.catalog.CatalogNamespace`, in one place.

A catalog backend is a ``CatalogNamespace`` subclass that implements the
primitives of :class:`CatalogStore` against its service and may override what
:data:`CONTRACT` lists: nothing else.  ``tests/core/test_backend_contract.py``
holds every backend in ``lance_ns.impls`` to it: each implements every
primitive, overrides only names listed here, and every name listed here is
overridden by at least one backend (the contract is what backends really do).

``ns`` is always a validated list of names, never the root unless stated.
"""

from __future__ import annotations

from typing import Iterable, Protocol

from .table import CatalogTable


class CatalogStore(Protocol):
    """The primitives every backend writes: get/list/create/delete of its own
    namespace and table objects.  Its client's errors are translated where it calls
    the client, or by :meth:`translate_error` at the operation boundary."""

    def _get_namespace(self, ns: list[str]) -> dict[str, str] | None:
        """Properties, or None if missing."""

    def _list_namespaces(self, parent: list[str]) -> Iterable[str]:
        """Child names; ``parent`` may be the root ``[]`` and is known to exist."""

    def _create_namespace(self, ns: list[str], properties: dict[str, str]) -> None:
        """May raise NamespaceAlreadyExistsError."""

    def _drop_namespace(self, ns: list[str]) -> bool | None:
        """The namespace is known to be empty; False when it was already gone (a racing drop won)."""

    def _list_tables(self, ns: list[str]) -> Iterable[CatalogTable]:
        """Every table object in ``ns`` (Lance or not), ``ns`` known to exist."""

    def _get_table(self, ns: list[str], name: str) -> CatalogTable | None:
        """The table object, or None."""

    def _create_table(self, ns: list[str], table: CatalogTable) -> None:
        """May raise TableAlreadyExistsError (exactly one of racing creates wins)."""

    def _delete_table(self, ns: list[str], name: str) -> bool | None:
        """Metadata only, never data; False when the table was already gone (a racing
        drop won), None when the backend cannot tell."""


#: what a backend may override beyond the primitives, with what it is for
CONTRACT: dict[str, str] = {
    # -- optional primitives (CatalogNamespace has a default built on the required ones)
    "_replace_table": "RegisterTable Overwrite (default: delete, then create)",
    "_create_tables": "several table objects at once, all or none (a bulk declare; default: one by one)",
    "_rename_table": "RenameTable (default: create the new entry, then remove the old one)",
    "_swap_table_properties": "compare-and-swap of one table object's properties (managed tables)",
    "_swap_tables_properties": "the same over several tables at once (BatchCreateTableVersions, BatchCommitTables)",
    "_lance_table_names": "sorted Lance table names of a namespace from an index, without table objects",
    "_lance_table_page": "one page of them reading only the page's tables (names, then the page's objects; "
                         "or the service's own pages; or a listing read whole, kept for the continuation pages)",
    "_remove_entry": "remove a table's entry (a drop's or a deregistration's)",
    "_drop_table_object": "DropTable's order of entry and data (default: entry first, then data it owns)",
    "_drop_checked": "DropNamespace once checked (default: children, tables, then the namespace)",
    "_check_layout": "refuse a given location that aliases another table in the backend's layout",
    # -- hooks (CatalogNamespace's default does nothing or the common thing)
    "translate_error": "the backend client's exception -> the spec's error (the operation boundary's net)",
    "close": "release clients and connections",
    "default_location": "where a table of an id lives unless told otherwise",
    "owns_location": "whether a location has the shape this namespace chooses (the drop rule of unmarked tables)",
    "owns_data": "whether a table's data is lance-ns's to delete on a drop (dir: a root table's marker)",
    "deletes_data_of": "whether dropping a table deletes its data",
    "is_lance": "whether a table object is a Lance table",
    "namespace_properties_in": "a namespace's properties as the service stores them",
    "schema_changed": "after a commit changed the schema: a catalog keeping columns updates them",
    "managed_default": "whether the connection makes new tables implementation-managed",
    "_declared": "after a declared table's entry is stored (the directory's marker file)",
    "_declaring_many": "the same for a bulk declaration, told each table as it is planned "
                       "(dir: the marker files, written by a helper process meanwhile)",
    "_batch_reads": "around a batch's checks: ask the catalog for its latest state once (dir: one manifest check)",
    "_registered": "after a registered table's entry is stored",
    "_deregistered": "after a deregistered table's entry is removed",
    # -- operations a backend extends, calling the shared one
    "declare_table": "dir: a root directory still holding a deregistered table is refused first",
    "list_tables": "dir: a continuation page reuses the remote root listing",
    "drop_namespace": "unity: catalogs are refused before the shared algorithm runs",
    # -- settings (class attributes; an instance may set them from its properties)
    "lance_table_kind": "the catalog table kind a Lance table must have (None: not checked)",
    "table_depths": "namespace depths that hold tables (None: any depth >= min_table_depth)",
    "min_table_depth": "the shallowest depth holding tables when table_depths is None",
    "max_depth": "deepest namespace level (None: unbounded)",
    "creatable_depths": "namespace depths that may be created through this API",
    "supports_cascade": "whether Cascade DropNamespace is offered",
    "drop_missing_ok": "DropNamespace of a missing namespace succeeds (the Iceberg REST spec)",
    "default_root": "the root when no ``root`` property is given",
    "location_suffix": "appended to a default location's last part",
    "marks_lance_tables": "tables are stored with table_type=lance (catalogs shared with other engines)",
    "keeps_dropped_marker": "a dropped table's directory keeps its marker (no new table reuses it)",
    "catalog_in_storage": "the catalog is the storage itself: metadata operations read storage",
    "supports_managed_versioning": "the backend can hold implementation-managed tables' histories",
    "managed_refusal": "why not, when it cannot (the code 0 answer)",
    "history_store": "where managed histories live (default: table properties; dir: its version store)",
    "server_threads": "the REST server's thread pool for this backend",
    "inline_methods": "reads the REST server may answer on its event loop",
}

#: the primitives every backend must implement
PRIMITIVES = tuple(name for name in vars(CatalogStore) if name.startswith("_") and not name.startswith("__")
                   and callable(vars(CatalogStore)[name]))
