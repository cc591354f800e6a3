"""The backend contract of :class:`~lance_ns.catalog.CatalogNamespace`, in one place.

A catalog backend is a ``CatalogNamespace`` subclass (so a :class:`CatalogStore`):
it implements the store's abstract primitives against its service and may override
what :data:`CONTRACT` lists, all public names: nothing else.
``tests/core/test_house.py`` holds every backend in ``lance_ns.impls`` to it: each
implements every primitive, overrides only names listed here, no private name of a
project class, and every name listed here is overridden by at least one backend
(the contract is what backends really do).

``ns`` is always a validated list of names, never the root unless stated.
"""

from __future__ import annotations

import contextlib
import logging
from abc import ABC, abstractmethod
from dataclasses import replace
from typing import Iterable

from ..errors import ConcurrentModificationError, LanceNamespaceError, TableNotFoundError, UnsupportedOperationError
from ..identifiers import to_string
from .entry import CatalogTable

log = logging.getLogger(__name__)


class CatalogStore(ABC):
    """The catalog entries a backend keeps, as :class:`~lance_ns.catalog.CatalogNamespace`
    (the rule layer, which inherits this) reads and writes them.

    A backend implements the abstract primitives (get/list/create/delete of its own
    namespace and table entries) against its service; the optional ones below have
    defaults built on those, which a backend overrides where its service does better
    (a rename call, a multi-table transaction).  Its client's errors are translated
    where it calls the client, or by ``translate_error`` at the operation boundary."""

    # -- the primitives: every backend writes these ------------------------------------
    @abstractmethod
    def get_namespace_entry(self, ns: list[str]) -> dict[str, str] | None:
        """Properties, or None if missing."""

    @abstractmethod
    def list_namespace_names(self, parent: list[str]) -> Iterable[str]:
        """Child names; ``parent`` may be the root ``[]`` and is known to exist."""

    @abstractmethod
    def create_namespace_entry(self, ns: list[str], properties: dict[str, str]) -> None:
        """May raise NamespaceAlreadyExistsError."""

    @abstractmethod
    def delete_namespace_entry(self, ns: list[str]) -> bool | None:
        """The namespace is known to be empty; False when it was already gone (a racing drop won)."""

    @abstractmethod
    def list_table_entries(self, ns: list[str]) -> Iterable[CatalogTable]:
        """Every table entry in ``ns`` (Lance or not), ``ns`` known to exist."""

    @abstractmethod
    def get_table_entry(self, ns: list[str], name: str) -> CatalogTable | None:
        """The table entry, or None."""

    @abstractmethod
    def create_table_entry(self, ns: list[str], table: CatalogTable) -> None:
        """May raise TableAlreadyExistsError (exactly one of racing creates wins)."""

    @abstractmethod
    def delete_table_entry(self, ns: list[str], name: str) -> bool | None:
        """Metadata only, never data; False when the table was already gone (a racing
        drop won), None when the backend cannot tell."""

    # -- optional: defaults built on the primitives ------------------------------------
    def replace_table_entry(self, ns: list[str], table: CatalogTable) -> None:
        """RegisterTable's Overwrite: delete, then create (a backend with an update call
        replaces in place)."""
        self.delete_table_entry(ns, table.name)
        self.create_table_entry(ns, table)

    def create_table_entries(self, planned: list[tuple[list[str], CatalogTable]]) -> None:
        """Store several table entries, all or none (a bulk declare; default: one by one,
        taking back those stored when one fails)."""
        done = []
        try:
            for ns, table in planned:
                self.create_table_entry(ns, table)
                done.append((ns, table.name))
        except Exception:
            for ns, name in done:
                self.withdraw_table_entry(ns, name)
            raise

    def rename_table_entry(self, ns: list[str], table: CatalogTable, new_ns: list[str], new_name: str) -> None:
        """For catalogs without a rename call: create the new entry, then delete the
        old one.  One winner: of racing renames into one name the create decides
        (TableAlreadyExists); of racing renames of one table the delete does -- a
        caller whose delete finds the old entry gone withdraws its new entry and
        answers ConcurrentModification.  The create is also withdrawn when the
        delete fails.  Not atomic for readers: for one round trip both ids exist."""
        self.create_table_entry(new_ns, replace(table, name=new_name))
        try:
            self.remove_table_entry(ns, table)
        except Exception as e:
            self.withdraw_table_entry(new_ns, new_name)
            mapped = e if isinstance(e, LanceNamespaceError) else self.translate_error(e)
            if isinstance(mapped, TableNotFoundError):
                raise ConcurrentModificationError(
                    f"table {to_string(ns + [table.name])!r} was renamed or dropped concurrently"
                ) from e
            raise

    def remove_table_entry(self, ns: list[str], table: CatalogTable) -> None:
        """Remove a table's entry (a drop's or a deregistration's); TableNotFound when a
        racing drop removed it first (that call did the drop, not this one)."""
        if self.delete_table_entry(ns, table.name) is False:
            raise TableNotFoundError(f"table {to_string(ns + [table.name])!r} does not exist")

    def withdraw_table_entry(self, ns: list[str], name: str) -> None:
        """Remove an entry this call just created (a rollback: never raises)."""
        try:
            self.delete_table_entry(ns, name)
        except Exception:  # noqa: BLE001 - the original failure is what the caller must see
            log.warning("could not withdraw table entry %s after a failed change", to_string(ns + [name]))

    def swap_table_properties(self, ns: list[str], table: CatalogTable, properties: dict[str, str]) -> bool:
        """Replace the table entry's properties iff it is still as ``table`` was read
        (the catalog's own compare-and-swap); False when it changed meanwhile.  A backend
        without one holds no implementation-managed tables (``managed_refusal``)."""
        raise UnsupportedOperationError(f"implementation-managed tables: {self.managed_refusal}")

    def swap_tables_properties(self, changes: list[tuple[list[str], CatalogTable, dict[str, str]]]) -> bool:
        """Give each table (as the caller read it) its new properties iff none changed
        meanwhile, all or none; False when one did.  By default one table, through
        :meth:`swap_table_properties`; a catalog that can swap several tables at once
        (a lock over all of them, a multi-table transaction) overrides this instead."""
        if len(changes) != 1:
            raise UnsupportedOperationError(f"{type(self).__name__} cannot commit several tables atomically")
        return self.swap_table_properties(*changes[0])

    # -- hooks around the entries (default: nothing; the directory writes marker files) ----
    def after_declare(self, ns: list[str], table: CatalogTable) -> None:
        """After a declared table's entry is stored."""

    def after_register(self, ns: list[str], table: CatalogTable) -> None:
        """After a registered table's entry is stored."""

    def after_deregister(self, ns: list[str], table: CatalogTable) -> None:
        """After a deregistered table's entry is removed."""

    def batch_reads(self) -> contextlib.AbstractContextManager:
        """Around the checks of a batch: a backend whose reads each ask the catalog for
        its latest state may ask once for all of them (the commit that follows checks
        again).  Default: nothing."""
        return contextlib.nullcontext()


#: what a backend may override beyond the primitives, with what it is for
CONTRACT: dict[str, str] = {
    # -- optional primitives (CatalogStore, or CatalogNamespace for the rule-bound ones, has a default)
    "replace_table_entry": "RegisterTable Overwrite (default: delete, then create)",
    "create_table_entries": "several table objects at once, all or none (a bulk declare; default: one by one)",
    "rename_table_entry": "RenameTable (default: create the new entry, then remove the old one)",
    "swap_table_properties": "compare-and-swap of one table object's properties (managed tables)",
    "swap_tables_properties": "the same over several tables at once (BatchCreateTableVersions, BatchCommitTables)",
    "lance_table_names": "sorted Lance table names of a namespace from an index, without table objects",
    "lance_table_page": "one page of them reading only the page's tables (names, then the page's objects; "
                         "or the service's own pages; or a listing read whole, kept for the continuation pages)",
    "remove_table_entry": "remove a table's entry (a drop's or a deregistration's)",
    "drop_table_checked": "DropTable's order of entry and data (default: entry first, then data it owns)",
    "drop_namespace_checked": "DropNamespace once checked (default: children, tables, then the namespace)",
    "check_layout": "refuse a given location that aliases another table in the backend's layout",
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
    "after_declare": "after a declared table's entry is stored (the directory's marker file)",
    "bulk_declaration": "the same for a bulk declaration, told each table as it is planned "
                       "(dir: the marker files, written by a helper process meanwhile)",
    "batch_reads": "around a batch's checks: ask the catalog for its latest state once (dir: one manifest check)",
    "answers_stamp": "what the REST server keeps an inline read's answer under: equal only while the read "
                     "answers the same (dir: its views' generations and the root's stamp; default None: nothing kept)",
    "after_register": "after a registered table's entry is stored",
    "after_deregister": "after a deregistered table's entry is removed",
    "drop_refusal": "why DropNamespace of a namespace is refused outright (unity: its catalogs)",
    # -- placement, asked by a planner before it writes (lance_ns.sync; defaults: the settings above)
    "namespace_refusal": "the error CreateNamespace of an id would answer by the backend's rules (glue: a "
                         "namespace below level 1 needs a catalog parent)",
    "table_refusal": "the error RegisterTable/DeclareTable of an id (at a location) would answer by its rules "
                     "(glue: a catalog holds no tables)",
    "table_location_for": "where a table made at an id goes, told before its entry exists (dir: the "
                          "random directory name drawn from a seed, so a resumed copy finds its place)",
    # -- an operation's body a backend extends, calling the shared one (never a public operation)
    "declare": "DeclareTable's body (dir: a root directory still holding a deregistered table is refused first)",
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
PRIMITIVES = tuple(sorted(CatalogStore.__abstractmethods__))
