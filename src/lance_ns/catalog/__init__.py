"""CatalogNamespace: the one algorithm shared by every catalog backend.

Hive, Glue, Unity, Iceberg REST (and the in-memory catalog) all do the same
thing: resolve an identifier to catalog levels, check the parent exists,
store a table object marked ``table_type=lance`` with its location, filter
listings to Lance tables, sort, page, and translate the service's errors to
spec codes.  That algorithm lives here once; a backend supplies only the
primitives (get/list/create/delete of its own namespace and table objects)
and ``translate_error``.

The backend contract -- the primitives a backend writes, and everything else it may
override (hooks, settings) -- is :mod:`lance_ns.catalog.store`, in one place.  The
operations themselves are answered here and by collaborators the namespace holds:
:class:`~lance_ns.dataops.DataOperations`, :class:`~lance_ns.tableops.TableOperations`
and :class:`~lance_ns.catalog.versions.TableVersions`.

The rules written once here, for every backend (the directory namespace too):

* request options: ``version`` / ``tag`` / ``load_detailed_metadata`` /
  ``check_declared`` of DescribeTable, ``version`` of TableExists,
  ``include_declared`` of ListTables, modes, paging;
* locations (:func:`lance_ns.catalog.locations.checked`): a table location
  never equals, contains or lies inside the root, a reserved path or another
  table's location, as far as the namespace can know cheaply (see there);
* what a drop deletes (:meth:`CatalogNamespace.owns_data`): DropTable and a
  Cascade DropNamespace delete the data only of tables whose entry records
  lance-ns as their owner, from the moment they were made (``OWNED_KEY``: the
  namespace chose the location); a registered table, or one declared at a
  location given, loses its entry and keeps its data, wherever it lies, unless
  the request's ``context`` says ``{"purge": "true"}``.  Tables of releases
  before the record are judged by their location (:meth:`owns_location`).
"""

from __future__ import annotations

import logging
from dataclasses import replace

from lance_namespace import (
    DeclareTableResponse,
    DeregisterTableResponse,
    DescribeTableResponse,
    DropTableResponse,
    ListTablesResponse,
    TableExistsResponse,
)

from .. import storage, vending
from ..base import NamespaceBase, delegate, refuse_blocking, refused
from ..dataops import DataOperations
from ..errors import (
    ConcurrentModificationError,
    InvalidInputError,
    LanceNamespaceError,
    NamespaceNotFoundError,
    TableAlreadyExistsError,
    TableNotFoundError,
    UnsupportedOperationError,
)
from ..identifiers import split_table_id, to_string, validate_id
from ..modes import DropBehavior, is_true
from ..paging import paginate
from ..tableops import NO_VIEWS, TableOperations
from .entry import (
    LANCE,
    MANAGED_KEY,
    OWNED_KEY,
    TABLE_TYPE_KEY,
    VERSIONS_KEY,
    CatalogTable,
    is_lance_properties,
    is_managed,
    purge_requested,
    recorded_owner,
    shown_properties,
    translating,
    with_owner,
)
from . import locations
from .entries import EntryOperations
from .namespaces import NamespaceOperations
from .store import CatalogStore
from .versions import PropertyHistory, TableVersions

log = logging.getLogger(__name__)


class CatalogNamespace(NamespaceBase, CatalogStore):
    """Base of the catalog-backed implementations.

    The data operations (CreateTable from Arrow IPC, InsertInto, Query, indices,
    versions, tags...) are answered by :class:`~lance_ns.dataops.DataOperations`
    and the table operations (schema evolution, branches, stats, plans,
    transactions) by :class:`~lance_ns.tableops.TableOperations`, collaborators
    this namespace holds, through the location DescribeTable returns, so every
    catalog serves them like the directory does.
    """

    #: the catalog table kind a Lance table must have (None: not checked)
    lance_table_kind: str | None = None
    #: namespace depths (1 = child of the root) that can hold tables
    table_depths: tuple[int, ...] | None = None  # None: any depth >= 1
    #: deepest namespace level (None: unbounded)
    max_depth: int | None = None
    #: namespace depths that may be created through this API
    creatable_depths: tuple[int, ...] | None = None  # None: any depth <= max_depth
    supports_cascade: bool = True
    #: DropNamespace of a missing namespace succeeds (Iceberg spec)
    drop_missing_ok: bool = False
    default_root: str | None = None  # None: current directory
    location_suffix: str = ".lance"
    #: the shallowest namespace depth holding tables when ``table_depths`` is None
    min_table_depth: int = 1
    #: tables are stored with ``table_type=lance`` (catalogs shared with other engines)
    marks_lance_tables: bool = True

    def __init__(self, **properties: str):
        super().__init__(**properties)
        self.root = storage.normalize_root(self.prop("root") or self.default_root or ".")
        #: temporary table-scoped credentials (``credential_vendor.*``), None when off
        self.vendor = vending.CredentialVendor.from_properties(self.properties, self.storage_options)
        self.data_ops = DataOperations(self)
        self.table_ops = TableOperations(self, self.data_ops)
        self.versions = TableVersions(self)
        self.namespace_ops = NamespaceOperations(self)
        self.entry_ops = EntryOperations(self)
        self.history = self.history_store(self)

    # -- the operations collaborators answer ---------------------------------------------
    register_table = delegate("entry_ops")
    rename_table = delegate("entry_ops")
    create_namespace = delegate("namespace_ops")
    list_namespaces = delegate("namespace_ops")
    describe_namespace = delegate("namespace_ops")
    namespace_exists = delegate("namespace_ops")
    drop_namespace = delegate("namespace_ops")
    list_all_tables = delegate("namespace_ops")
    insert_into_table = delegate("data_ops")
    merge_insert_into_table = delegate("data_ops")
    update_table = delegate("data_ops")
    delete_from_table = delegate("data_ops")
    count_table_rows = delegate("data_ops")
    query_table = delegate("data_ops")
    create_table_index = delegate("data_ops")
    create_table_scalar_index = delegate("data_ops")
    list_table_indices = delegate("data_ops")
    drop_table_index = delegate("data_ops")
    describe_table_index_stats = delegate("data_ops")
    restore_table = delegate("data_ops")
    list_table_tags = delegate("data_ops")
    create_table_tag = delegate("data_ops")
    delete_table_tag = delegate("data_ops")
    update_table_tag = delegate("data_ops")
    get_table_tag_version = delegate("data_ops")
    alter_table_add_columns = delegate("table_ops")
    alter_table_alter_columns = delegate("table_ops")
    alter_table_drop_columns = delegate("table_ops")
    alter_table_backfill_columns = delegate("table_ops")
    update_table_schema_metadata = delegate("table_ops")
    update_field_metadata = delegate("table_ops")
    get_table_stats = delegate("table_ops")
    create_table_branch = delegate("table_ops")
    list_table_branches = delegate("table_ops")
    delete_table_branch = delegate("table_ops")
    explain_table_query_plan = delegate("table_ops")
    analyze_table_query_plan = delegate("table_ops")
    describe_transaction = delegate("table_ops")
    alter_transaction = delegate("table_ops")
    create_table_version = delegate("versions")
    batch_create_table_versions = delegate("versions")
    describe_table_version = delegate("versions")
    list_table_versions = delegate("versions")
    batch_delete_table_versions = delegate("versions")
    batch_commit_tables = delegate("versions")
    create_materialized_view = refused(NO_VIEWS)
    refresh_materialized_view = refused(NO_VIEWS)

    def schema_changed(self, table_id, ds) -> None:
        """Hook: a commit changed the main branch's schema.  A catalog that stores
        the table's columns updates them (default: nothing is stored)."""

    @property
    def vends_credentials(self) -> bool:
        return self.vendor is not None

    def _vended(self, response, location: str | None, request):
        """DescribeTable / DeclareTable / CreateTable answers: credentials for the table's location."""
        if self.vendor:
            refuse_blocking("vending credentials")
        return self.vendor.answer(response, location, request) if self.vendor else response

    # -- hooks ----------------------------------------------------------------
    def default_location(self, ns: list[str], name: str) -> str:
        return storage.join(self.root, *ns, name + self.location_suffix)

    def owns_data(self, ns: list[str], table: CatalogTable) -> bool:
        """Whether lance-ns owns ``table``'s data, so that DropTable and Cascade drops delete
        it: as its entry records (``OWNED_KEY``, set when the table was made), else, for a
        table of a release before that record, by its location (:meth:`owns_location`)."""
        recorded = recorded_owner(table)
        if recorded is not None:
            return recorded
        return bool(table.location) and self.owns_location(ns, table.name, table.location)

    def owns_location(self, ns: list[str], name: str, location: str) -> bool:
        """Whether ``location`` has the shape of one this namespace would choose for table
        ``ns.name``: the rule for tables whose entry records no owner (made before
        ``OWNED_KEY``).

        That is the default location, or a fresh sibling of it that CreateTable
        chose because the default one still held files (:func:`storage.fresh_variant`).
        A shape proves nothing about who wrote the data there, which is why new
        entries record their owner instead.
        """
        default = self.default_location(ns, name)
        return location.rstrip("/") == default.rstrip("/") or storage.is_fresh_variant(location, default)

    def is_lance(self, table: CatalogTable) -> bool:
        if not self.marks_lance_tables:
            return True
        if self.lance_table_kind and (table.kind or "").upper() != self.lance_table_kind:
            return False
        return is_lance_properties(table.properties)

    def drop_refusal(self, ns: list[str]) -> str | None:
        """Why DropNamespace of ``ns`` is refused whatever it holds (code 0), or None."""
        return None

    def namespace_properties_in(self, properties: dict[str, str] | None) -> dict[str, str]:
        return dict(properties or {})

    # -- the rules the collaborators share (entries, namespaces, versions, locations) ----
    def _depth_refusal(self, ns: list[str], what: str = "namespace") -> InvalidInputError | None:
        if self.max_depth is None or len(ns) <= self.max_depth:
            return None
        return InvalidInputError(f"{what} {to_string(ns)!r} is {len(ns)} levels deep; "
                                 f"{type(self).__name__} has at most {self.max_depth}")

    def check_depth(self, ns: list[str], what: str = "namespace") -> None:
        refusal = self._depth_refusal(ns, what)
        if refusal is not None:
            raise refusal

    def namespace_refusal(self, ns: list[str], planned: bool = False):
        """CreateNamespace's refusals by depth (13) and by the levels this catalog creates (0)."""
        refusal = self._depth_refusal(ns)
        if refusal is None and self.creatable_depths is not None and len(ns) not in self.creatable_depths:
            refusal = UnsupportedOperationError(f"{type(self).__name__} cannot create namespaces at level {len(ns)}")
        return refusal

    def table_refusal(self, table_id: list[str], location: str | None = None):
        """Where tables may live (their namespace's level) and, given a location, the checks
        RegisterTable makes on it (:func:`lance_ns.catalog.locations.checked`, without
        reading storage)."""
        ns, name = split_table_id(table_id)
        refusal = self._table_level_refusal(ns) or self._depth_refusal(ns, "table namespace")
        if refusal is not None:
            return refusal
        if location is not None:
            try:
                locations.checked(self, ns, name, location, metadata_only=True)
            except Exception as e:
                mapped = e if isinstance(e, LanceNamespaceError) else self.translate_error(e)
                if isinstance(mapped, InvalidInputError):
                    return mapped
                if not isinstance(mapped, NamespaceNotFoundError):  # else: a namespace the planner makes first
                    raise
        return None

    def table_location_for(self, table_id: list[str], seed: str | None = None) -> str:
        ns, name = split_table_id(table_id)
        return self.default_location(ns, name)

    @translating
    def managed_versioning_for(self, table_id: list[str], properties: dict[str, str] | None = None) -> bool:
        """The kind DeclareTable would give a table at ``table_id`` with ``properties``
        (:meth:`_wants_managed`), told before its entry exists: its namespace missing is
        code 1, a level that holds no tables 13, a managed table this backend cannot hold 0."""
        ns, _ = split_table_id(table_id)
        return self._wants_managed(properties, self.require_table_namespace(ns))

    def require_namespace(self, ns: list[str]) -> dict[str, str]:
        if not ns:
            return {}
        self.check_depth(ns)
        props = self.get_namespace_entry(ns)
        if props is None:
            raise NamespaceNotFoundError(f"namespace {to_string(ns)!r} does not exist")
        return props

    def holds_tables(self, ns: list[str]) -> bool:
        if self.table_depths is not None:
            return len(ns) in self.table_depths
        return len(ns) >= self.min_table_depth

    def _table_level_refusal(self, ns: list[str]) -> InvalidInputError | None:
        if self.holds_tables(ns):
            return None
        depths = self.table_depths
        levels = "any level below the root" if depths is None else f"level {', '.join(map(str, depths))}"
        return InvalidInputError(f"tables of {type(self).__name__} live in namespaces at {levels}, not in {to_string(ns)!r}")

    def require_table_namespace(self, ns: list[str]) -> dict[str, str]:
        refusal = self._table_level_refusal(ns)
        if refusal is not None:
            raise refusal
        return self.require_namespace(ns)

    def lance_table(self, table_id) -> tuple[list[str], CatalogTable]:
        ns, name = split_table_id(table_id)
        if not self.holds_tables(ns):
            raise TableNotFoundError(f"table {to_string(ns + [name])!r} does not exist")
        self.check_depth(ns, "table namespace")
        table = self.get_table_entry(ns, name)
        if table is None:  # also in a missing namespace: one lookup, no second one to tell which
            raise TableNotFoundError(f"table {to_string(ns + [name])!r} does not exist")
        if not self.is_lance(table):
            raise InvalidInputError(f"table {to_string(ns + [name])!r} is not a Lance table")
        return ns, table

    def table_storage_options(self, table: CatalogTable) -> dict[str, str]:
        opts = dict(self.storage_options)
        for key, value in table.properties.items():
            if key.startswith("storage."):
                opts[key[len("storage.") :]] = value
        return opts

    def drop_namespace_checked(self, ns: list[str], behavior: DropBehavior, purge: bool = False) -> None:
        """DropNamespace once checked (a backend may carry it out its own way)."""
        self.namespace_ops.drop_checked(ns, behavior, purge)

    # -- table operations --------------------------------------------------------
    @translating
    def list_tables(self, request):
        ns = request.id or []
        self.require_namespace(ns)
        if not self.holds_tables(ns):
            page, token = paginate([], request.limit, request.page_token)
        else:
            keep = self.holds_data if request.include_declared is False else None
            page, token = self.lance_table_page(ns, request.limit, request.page_token, keep)
        return ListTablesResponse(tables=page, page_token=token)

    def lance_table_page(self, ns: list[str], limit, page_token: str | None, keep=None) -> tuple[list[str], str | None]:
        """One page of the sorted names of the Lance tables of ``ns`` (with
        ``keep``: only those it accepts) and the next token (:func:`paginate`).
        A backend that must load each table to tell overrides it to load only
        what the page needs."""
        return paginate(self.table_names(ns, keep), limit, page_token)

    def _listed(self, keep=None):
        """Whether a loaded table object belongs in a listing of Lance tables (with ``keep``:
        only those it accepts): what every backend's :meth:`lance_table_page` filters by."""
        return lambda t: self.is_lance(t) and (keep is None or keep(t))

    def table_names(self, ns: list[str], keep=None) -> list[str]:
        """Sorted names of the Lance tables of ``ns`` (with ``keep``: only those it accepts)."""
        if keep is None:
            return self.lance_table_names(ns)
        return sorted(t.name for t in self.list_table_entries(ns) if self.is_lance(t) and keep(t))

    def lance_table_names(self, ns: list[str]) -> list[str]:
        """Sorted, unique names of the Lance tables of ``ns`` (a backend may
        answer from an index without building every table object)."""
        return sorted({t.name for t in self.list_table_entries(ns) if self.is_lance(t)})

    def describe_table(self, request):
        resp = self.describe(request)
        return self._vended(resp, resp.location, request)

    @translating
    def describe(self, request) -> DescribeTableResponse:
        """DescribeTable's answer, credentials not vended: how the collaborators read a table
        inside an operation (the request already checked, the boundary the operation's)."""
        ns, table = self.lance_table(request.id)
        opts = self.table_storage_options(table)
        resp = DescribeTableResponse(
            table=table.name,
            namespace=ns,
            location=table.location,
            storage_options=opts or None,
            properties=shown_properties(table.properties),
        )
        if request.with_table_uri:
            resp.table_uri = table.location
        if is_managed(table):
            self.versions.describe_managed(ns, table, resp, request, opts)
        elif (request.load_detailed_metadata or request.version is not None or request.tag or request.check_declared
                or request.branch):
            self.add_detail(resp, request, opts)
        return resp

    def add_detail(self, resp, request, opts) -> None:
        """Version, schema and stats from the Lance table itself (pylance)."""
        refuse_blocking("opening the Lance table")
        from .. import detail  # pylance is imported only when detail is asked for

        detail.fill_detail(resp, resp.location, opts, request)

    @translating
    def table_exists(self, request):
        ns, table = self.lance_table(request.id)
        if request.version is not None:
            refuse_blocking("checking a version")
        if request.version is not None and is_managed(table):
            self.versions.published(ns, table, request.version)
        elif request.version is not None:
            from .. import detail

            detail.open_dataset(table.location, self.table_storage_options(table), request.version)
        return TableExistsResponse()

    def holds_data(self, table: CatalogTable) -> bool:
        """Whether a table holds a committed version (False: only declared)."""
        refuse_blocking("looking for a table's versions")
        return bool(table.location) and storage.has_versions(table.location, self.table_storage_options(table))

    def declare_table(self, request):
        resp = self.declare(request)
        return self._vended(resp, resp.location, request)

    @translating
    def declare(self, request) -> DeclareTableResponse:
        """DeclareTable's answer, credentials not vended (CreateTable declares through it).

        A metadata-only operation (the protocol: "without touching storage"): on a
        catalog it makes no storage call at all, so it works where the catalog can be
        reached and the data cannot.  The location is checked against what the catalog
        knows (:func:`.locations.checked` with ``metadata_only``); the directory
        namespace, whose catalog is the storage, also writes its ``.lance-reserved``.
        (A Hive Metastore makes a local table directory itself on create_table; hive
        makes it first, locally only, so the metastore's clean-up of a lost race cannot
        delete the winner's data: see impls/hive.)"""
        ns, table = self.declared_entry(request)
        self.create_table_entry(ns, table)
        self.after_declare(ns, table)
        return self.declare_response(table)

    def declared_entry(self, request, namespaces: dict | None = None) -> tuple[list[str], CatalogTable]:
        """The table object DeclareTable stores for ``request``, checked; nothing is written.
        A bulk declaration passes ``namespaces`` (namespace id -> properties), filled as
        each namespace is checked: once per batch, not once per table."""
        ns, name = split_table_id(request.id)
        ns_props = None if namespaces is None else namespaces.get(tuple(ns))
        if ns_props is None:
            ns_props = self.require_table_namespace(ns)
            if namespaces is not None:
                namespaces[tuple(ns)] = ns_props
        if self.get_table_entry(ns, name) is not None:
            raise TableAlreadyExistsError(f"table {to_string(ns + [name])!r} already exists")
        if request.location:
            location = locations.checked(self, ns, name, request.location, metadata_only=not self.catalog_in_storage)
        else:
            location = self.default_location(ns, name)
        # the namespace owns the data of a table at the location it chose (see OWNED_KEY)
        props = with_owner(self.stored_properties(request.properties), owned=not request.location)
        if self._wants_managed(request.properties, ns_props):
            props[MANAGED_KEY] = "true"
        return ns, CatalogTable(name=name, location=location, properties=props, kind=self.lance_table_kind,
                                has_data=False)

    def declare_response(self, table: CatalogTable) -> DeclareTableResponse:
        # validated: pydantic 2's model_construct resolves every default in Python, and costs
        # 7 us against 3 us for this (a bulk declare builds one per table)
        return DeclareTableResponse(
            location=table.location, storage_options=self.storage_options or None,
            properties=shown_properties(table.properties) or None,
            managed_versioning=True if is_managed(table) else None,
        )

    def create_table(self, request, request_data: bytes):
        resp = self.data_ops.create_table(request, request_data)
        return self._vended(resp, resp.location, request)

    def deregister_table(self, request):
        return self.deregister(request)

    @translating
    def deregister(self, request) -> DeregisterTableResponse:
        """DeregisterTable's answer (a failed CreateTable takes back its declaration through it)."""
        ns, table = self.lance_table(request.id)
        self.remove_table_entry(ns, table)
        self.after_deregister(ns, table)
        return DeregisterTableResponse(id=ns + [table.name], location=table.location, properties=shown_properties(table.properties))

    @translating
    def drop_table(self, request):
        ns, table = self.lance_table(request.id)
        self.drop_table_checked(ns, table, purge_requested(request))
        return DropTableResponse(id=ns + [table.name], location=table.location, properties=shown_properties(table.properties))

    def adopt_table(self, table_id: list[str]) -> bool:
        """Record lance-ns as the owner of a table's data (``lance-ns table adopt``): from then
        on DropTable and Cascade drops delete it.  For tables made before the ownership mark
        existed (judged by their location until adopted) and registered tables whose data
        the operator hands over.  False when the entry already said so (nothing written).

        Where a managed table's history lives among its properties (a catalog's
        compare-and-swap holds it), the mark is swapped in by the same compare-and-swap,
        so no version committed meanwhile is lost; elsewhere the entry is replaced."""
        ns, table = self.lance_table(validate_id(list(table_id)))
        for _ in range(8):
            if recorded_owner(table) is True:
                return False
            owned = {**(table.properties or {}), OWNED_KEY: "true"}
            if not (is_managed(table) and self.history_store is PropertyHistory):
                self.replace_table_entry(ns, replace(table, properties=owned))
                return True
            if self.swap_table_properties(ns, table, owned):
                return True
            ns, table = self.lance_table(ns + [table.name])
        raise ConcurrentModificationError(f"table {to_string(ns + [table.name])!r} kept changing; retry")

    def stored_properties(self, properties) -> dict[str, str]:
        # the kind and the history are the namespace's to record (declare_table, the version ops)
        props = {k: v for k, v in (properties or {}).items() if k not in (MANAGED_KEY, VERSIONS_KEY)}
        if self.marks_lance_tables:
            props[TABLE_TYPE_KEY] = LANCE
        return props

    def drop_table_checked(self, ns: list[str], table: CatalogTable, purge: bool = False) -> None:
        # Catalog entry first: a failure after it leaves orphan files, never a
        # catalog entry pointing at deleted data.
        deletes = self.deletes_data_of(ns, table, purge)
        opts = self.table_storage_options(table)
        if deletes and self.keeps_dropped_marker:
            storage.mark_dropped(table.location, opts)  # see there: no new table reuses the directory
        self.remove_table_entry(ns, table)
        if deletes:
            if self.keeps_dropped_marker:
                storage.delete_dropped(table.location, opts)
            else:
                storage.delete_location(table.location, opts)

    #: whether a dropped table's directory keeps :data:`storage.DROPPED_MARKER`
    keeps_dropped_marker: bool = True

    def unused_default_location(self, location: str) -> str:
        """The default location for a new table, or a fresh sibling of it when
        it still holds files: a dropped table's (kept taken by its marker, maybe
        still being written by a late writer of that table) or a deregistered one's.
        Asked by CreateTable (DataOperations._creation_location), never by DeclareTable."""
        return storage.unused_location(location, self.storage_options)

    def deletes_data_of(self, ns: list[str], table: CatalogTable, purge: bool = False) -> bool:
        """Whether dropping ``table`` deletes its data (see :meth:`owns_data`)."""
        return bool(table.location) and (purge or self.owns_data(ns, table))

    # -- hooks around the table entries (the directory's marker files) ----------
    def bulk_declaration(self, count: int) -> "AfterEntries":
        """What a bulk declaration of ``count`` tables writes beside their entries: told
        each table as it is planned (``add``), then ``finish`` once the entries are
        stored, or ``abandon`` when the declaration failed.  Default: ``after_declare``
        each, at ``finish``."""
        return AfterEntries(self)

    # -- locations ---------------------------------------------------------------------
    #: whether RegisterTable / DeclareTable may name locations outside the root
    allows_external_locations: bool = True

    #: whether this namespace's catalog is the storage itself (the directory namespace):
    #: then even metadata operations read storage, and DeclareTable checks it too
    catalog_in_storage: bool = False

    def check_layout(self, ns: list[str], name: str, location: str, raw: str) -> None:
        """Refuse a given location that aliases another table in this backend's layout."""
        locations.check_default_layout(self, ns, name, location, raw)

    # -- implementation-managed tables (the version operations: catalog/versions.py) ---------
    #: where the version history lives: by default in each table object's properties,
    #: through the catalog's compare-and-swap of them (``_swap_table(s)_properties``)
    history_store: type = PropertyHistory

    #: whether this backend can hold the version history of implementation-managed tables
    #: with a compare-and-swap of its own (the conformance capability "managed")
    supports_managed_versioning: bool = False
    #: why not, when it cannot (the code 0 answer)
    managed_refusal: str = "this namespace has no compare-and-swap to commit table versions with"

    def managed_default(self) -> bool:
        """Whether the connection's properties make new tables implementation-managed."""
        return self.bool_prop(MANAGED_KEY, False)

    def _wants_managed(self, request_properties, ns_properties) -> bool:
        """The kind of a table being created: its request's property, else its namespace's,
        else the connection's.  Refused with code 0 where the backend cannot hold it."""
        for props in (request_properties, ns_properties):
            if props and MANAGED_KEY in props:
                wanted = is_true(props[MANAGED_KEY])
                break
        else:
            wanted = self.managed_default()
        if wanted and not self.supports_managed_versioning:
            raise UnsupportedOperationError(f"implementation-managed tables: {self.managed_refusal}")
        return wanted

class AfterEntries:
    """A bulk declaration's ``after_declare`` calls, made once its entries are stored
    (:meth:`CatalogNamespace.bulk_declaration`)."""

    def __init__(self, ns: CatalogNamespace):
        self.ns, self.planned = ns, []

    def add(self, ns: list[str], table: CatalogTable) -> None:
        self.planned.append((ns, table))

    def finish(self) -> None:
        for ns, table in self.planned:
            self.ns.after_declare(ns, table)

    def abandon(self) -> None:
        """Nothing was written before ``finish``."""
