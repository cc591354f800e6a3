"""CatalogNamespace: the one algorithm shared by every catalog backend.

Hive, Glue, Unity, Iceberg REST (and the in-memory catalog) all do the same
thing: resolve an identifier to catalog levels, check the parent exists,
store a table object marked ``table_type=lance`` with its location, filter
listings to Lance tables, sort, page, and translate the service's errors to
spec codes.  That algorithm lives here once; a backend supplies only the
primitives below (get/list/create/delete of its own namespace and table
objects) and ``translate_error``.

Primitive contract (``ns`` is a validated list of names, never the root
unless stated):

* ``_get_namespace(ns) -> dict | None``: properties, or None if missing.
* ``_list_namespaces(parent) -> iterable[str]``: child names; ``parent`` may be
  the root ``[]`` and is known to exist.
* ``_create_namespace(ns, properties)``: may raise NamespaceAlreadyExistsError.
* ``_drop_namespace(ns) -> bool | None``: the namespace is known to be empty;
  False when it was already gone (a racing drop won).
* ``_list_tables(ns) -> iterable[CatalogTable]``: every table object in ``ns``
  (Lance or not), ``ns`` known to exist.
* ``_get_table(ns, name) -> CatalogTable | None``.
* ``_create_table(ns, table)``: may raise TableAlreadyExistsError.
* ``_delete_table(ns, name) -> bool | None``: metadata only, never data;
  False when the table was already gone (a racing drop won), None when the
  backend cannot tell.

The rules written once here, for every backend (the directory namespace too):

* request options: ``version`` / ``tag`` / ``load_detailed_metadata`` /
  ``check_declared`` of DescribeTable, ``version`` of TableExists,
  ``include_declared`` of ListTables, modes, paging;
* locations (:meth:`CatalogNamespace._checked_location`): a table location
  never equals, contains or lies inside the root, a reserved path or another
  table's location, as far as the namespace can know cheaply (see there);
* what a drop deletes (:meth:`CatalogNamespace.owns_location`): DropTable and
  a Cascade DropNamespace delete data only at locations the namespace chose
  itself (the default location of the table's id); a table registered or
  declared at any other location loses its entry and keeps its data, unless
  the request's ``context`` says ``{"purge": "true"}``.
"""

from __future__ import annotations

import functools
import json
import logging
import time
from dataclasses import dataclass, field, replace
from typing import Iterable

from lance_namespace import (
    BatchCommitTablesResponse,
    BatchCreateTableVersionsResponse,
    BatchDeleteTableVersionsResponse,
    CreateNamespaceResponse,
    CreateTableVersionResponse,
    DeclareTableResponse,
    DeregisterTableResponse,
    DescribeNamespaceResponse,
    DescribeTableResponse,
    DescribeTableVersionResponse,
    DropNamespaceResponse,
    DropTableResponse,
    ListNamespacesResponse,
    ListTablesResponse,
    ListTableVersionsResponse,
    NamespaceExistsResponse,
    RegisterTableResponse,
    RenameTableResponse,
    TableExistsResponse,
)

from lance_namespace_urllib3_client.models import CommitTableResult, TableVersion

from . import storage, tables, vending
from .base import NamespaceBase, delegate, is_name_too_long, refuse_blocking, refused
from .dataops import DataOperations
from .errors import (
    ConcurrentModificationError,
    InternalError,
    InvalidTableStateError,
    InvalidInputError,
    LanceNamespaceError,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NamespaceNotFoundError,
    TableAlreadyExistsError,
    TableNotFoundError,
    TableVersionNotFoundError,
    UnsupportedOperationError,
)
from .identifiers import split_table_id, to_string, validate_id
from .ledger import DIRECTORY as LEDGER_DIRECTORY
from .modes import CreateMode, DropBehavior, DropMode, RegisterMode, is_true
from .paging import page_of_sorted, paginate
from .tableops import NO_VIEWS, TableOperations

log = logging.getLogger(__name__)

TABLE_TYPE_KEY = "table_type"
#: joins the string ids ListAllTables answers (the REST protocol's default delimiter)
ALL_TABLES_DELIMITER = "$"
LANCE = "lance"
#: the request ``context`` key asking DropTable / DropNamespace to delete the
#: data of tables at locations the namespace does not own (registered ones)
PURGE_CONTEXT_KEY = "purge"
#: (over REST it travels as the ``x-lance-ns-purge`` header: protocol.routes.CONTEXT_HEADERS)
#: path components that belong to a Lance table or to a namespace's own files:
#: no table location may run through them
RESERVED_PARTS = frozenset(
    {"_versions", "_indices", "_deletions", "_transactions", "_refs", "__manifest",
     ".lance-reserved", ".lance-deregistered", LEDGER_DIRECTORY}
)
#: the property (of the connection, a namespace, or a table's creation request) that makes
#: tables created from then on implementation-managed; recorded per table under this key
MANAGED_KEY = "managed_versioning"
#: where a catalog table object keeps the version history of an implementation-managed
#: table (JSON list of TableVersion dicts, ascending); never shown as a property
VERSIONS_KEY = "lance_ns.versions"
#: how many times a version commit is retried when the catalog object changed meanwhile
#: for a reason other than another version (a property update)
_CAS_ATTEMPTS = 8
#: how many parent directories are checked for a Lance table around a location
_MAX_ANCESTORS = 32
#: how long a read of a managed table's latest version waits for the manifest of a
#: version granted a moment ago to be copied into place (seconds)
_PUBLISH_WAIT = 10.0


def purge_requested(request) -> bool:
    """Whether a drop request asks to delete data the namespace does not own."""
    context = getattr(request, "context", None) or {}
    return is_true(context.get(PURGE_CONTEXT_KEY))


def is_managed(table: "CatalogTable") -> bool:
    """Whether a table is implementation-managed (its kind is recorded at creation)."""
    return is_true((table.properties or {}).get(MANAGED_KEY, ""))


def _no_managed_branch(request) -> None:
    if getattr(request, "branch", None):
        raise UnsupportedOperationError("branches of implementation-managed tables are not supported")


def shown_properties(properties: dict[str, str] | None) -> dict[str, str]:
    """A table's properties as answered: without the version history kept among them."""
    return {k: v for k, v in (properties or {}).items() if k != VERSIONS_KEY}


def _with_history(table: "CatalogTable", history: list[dict]) -> dict[str, str]:
    """``table``'s properties with ``history`` as its version history."""
    return {**(table.properties or {}), VERSIONS_KEY: json.dumps(history, separators=(",", ":"))}


def _overlaps(a: str, b: str) -> bool:
    """Whether two locations are equal or one lies inside the other."""
    a, b = a.rstrip("/") + "/", b.rstrip("/") + "/"
    return a.startswith(b) or b.startswith(a)


@dataclass
class CatalogTable:
    name: str
    location: str | None = None
    properties: dict[str, str] = field(default_factory=dict)
    #: the catalog's own table kind (HMS/Glue ``EXTERNAL_TABLE``, Unity ``EXTERNAL``)
    kind: str | None = None
    #: the catalog's version of the object as read (Glue ``VersionId``; on Unity the
    #: version of the table's ledger): what a compare-and-swap of its properties is conditioned on
    token: str | None = None
    #: False for a table being declared (nothing at its location to describe to the
    #: catalog, and DeclareTable makes no storage call to find out); None: not known
    has_data: bool | None = None


def is_lance_properties(properties: dict[str, str] | None) -> bool:
    for key, value in (properties or {}).items():
        if key.lower() == TABLE_TYPE_KEY and str(value).lower() == LANCE:
            return True
    return False


def _translating(fn):
    """Map any backend exception to a lance_namespace error with a code."""

    @functools.wraps(fn)
    def wrapper(self, *args, **kwargs):
        try:
            return fn(self, *args, **kwargs)
        except LanceNamespaceError:
            raise
        except Exception as e:  # noqa: BLE001 - translated, never swallowed
            if is_name_too_long(e):
                raise  # the operation wrapper answers it (code 13) for every backend
            mapped = self.translate_error(e)
            if mapped is None and storage.is_unreachable(e):
                mapped = storage.unreachable_error(e)
            if mapped is None:
                mapped = InternalError(f"{type(self).__name__}: {type(e).__name__}: {e}")
            raise mapped from e

    return wrapper


class CatalogNamespace(NamespaceBase):
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

    # -- the data and table operations, answered by the collaborators ----------------
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

    def owns_location(self, ns: list[str], name: str, location: str) -> bool:
        """Whether ``location`` is the one this namespace chose for table ``ns.name``.

        That is the default location, or a fresh sibling of it that DeclareTable
        chose because the default one still held files (:func:`storage.fresh_variant`).
        Only such locations are deleted by DropTable and Cascade drops; a
        registered location (or one given to DeclareTable) belongs to whoever
        put the data there.
        """
        default = self.default_location(ns, name)
        return location.rstrip("/") == default.rstrip("/") or storage.is_fresh_variant(location, default)

    def is_lance(self, table: CatalogTable) -> bool:
        if not self.marks_lance_tables:
            return True
        if self.lance_table_kind and (table.kind or "").upper() != self.lance_table_kind:
            return False
        return is_lance_properties(table.properties)

    def namespace_properties_in(self, properties: dict[str, str] | None) -> dict[str, str]:
        return dict(properties or {})

    # -- primitives (see module docstring) -------------------------------------
    def _get_namespace(self, ns: list[str]) -> dict[str, str] | None:
        raise NotImplementedError

    def _list_namespaces(self, parent: list[str]) -> Iterable[str]:
        raise NotImplementedError

    def _create_namespace(self, ns: list[str], properties: dict[str, str]) -> None:
        raise NotImplementedError

    def _drop_namespace(self, ns: list[str]) -> None:
        raise NotImplementedError

    def _list_tables(self, ns: list[str]) -> Iterable[CatalogTable]:
        raise NotImplementedError

    def _get_table(self, ns: list[str], name: str) -> CatalogTable | None:
        raise NotImplementedError

    def _create_table(self, ns: list[str], table: CatalogTable) -> None:
        raise NotImplementedError

    def _delete_table(self, ns: list[str], name: str) -> None:
        raise NotImplementedError

    def _replace_table(self, ns: list[str], table: CatalogTable) -> None:
        self._delete_table(ns, table.name)
        self._create_table(ns, table)

    # -- shared checks ----------------------------------------------------------
    def _check_depth(self, ns: list[str], what: str = "namespace") -> None:
        if self.max_depth is not None and len(ns) > self.max_depth:
            raise InvalidInputError(
                f"{what} {to_string(ns)!r} is {len(ns)} levels deep; "
                f"{type(self).__name__} has at most {self.max_depth}"
            )

    def _require_namespace(self, ns: list[str]) -> dict[str, str]:
        if not ns:
            return {}
        self._check_depth(ns)
        props = self._get_namespace(ns)
        if props is None:
            raise NamespaceNotFoundError(f"namespace {to_string(ns)!r} does not exist")
        return props

    def _holds_tables(self, ns: list[str]) -> bool:
        if self.table_depths is not None:
            return len(ns) in self.table_depths
        return len(ns) >= self.min_table_depth

    def _require_table_namespace(self, ns: list[str]) -> dict[str, str]:
        depths = self.table_depths
        if not self._holds_tables(ns):
            levels = "any level below the root" if depths is None else f"level {', '.join(map(str, depths))}"
            raise InvalidInputError(
                f"tables of {type(self).__name__} live in namespaces at {levels}, not in {to_string(ns)!r}"
            )
        return self._require_namespace(ns)

    def _lance_table(self, table_id) -> tuple[list[str], CatalogTable]:
        ns, name = split_table_id(table_id)
        if not self._holds_tables(ns):
            raise TableNotFoundError(f"table {to_string(ns + [name])!r} does not exist")
        self._check_depth(ns, "table namespace")
        table = self._get_table(ns, name)
        if table is None:  # also in a missing namespace: one lookup, no second one to tell which
            raise TableNotFoundError(f"table {to_string(ns + [name])!r} does not exist")
        if not self.is_lance(table):
            raise InvalidInputError(f"table {to_string(ns + [name])!r} is not a Lance table")
        return ns, table

    def _table_storage_options(self, table: CatalogTable) -> dict[str, str]:
        opts = dict(self.storage_options)
        for key, value in table.properties.items():
            if key.startswith("storage."):
                opts[key[len("storage.") :]] = value
        return opts

    # -- namespace operations ---------------------------------------------------
    @_translating
    def create_namespace(self, request):
        ns = request.id or []
        mode = CreateMode.parse(request.mode, CreateMode.CREATE)
        if not ns:
            raise InvalidInputError("the root namespace always exists and cannot be created")
        self._check_depth(ns)
        if self.creatable_depths is not None and len(ns) not in self.creatable_depths:
            raise UnsupportedOperationError(
                f"{type(self).__name__} cannot create namespaces at level {len(ns)}"
            )
        self._require_namespace(ns[:-1])
        existing = self._get_namespace(ns)
        if existing is not None:
            if mode is CreateMode.CREATE:
                raise NamespaceAlreadyExistsError(f"namespace {to_string(ns)!r} already exists")
            if mode is CreateMode.EXIST_OK:
                return CreateNamespaceResponse(properties=existing)
            self._drop_checked(ns, DropBehavior.RESTRICT)
        props = self.namespace_properties_in(request.properties)
        try:
            self._create_namespace(ns, props)
        except Exception as e:
            mapped = e if isinstance(e, LanceNamespaceError) else self.translate_error(e)
            if mode is not CreateMode.EXIST_OK or not isinstance(mapped, NamespaceAlreadyExistsError):
                raise
            winner = self._get_namespace(ns)
            if winner is None:  # what holds the name is no namespace (a table of that name)
                raise
            # ExistOk lost a creation race: the winner's namespace is what was asked for
            return CreateNamespaceResponse(properties=winner)
        return CreateNamespaceResponse(properties=self._get_namespace(ns) or props)

    @_translating
    def list_namespaces(self, request):
        parent = request.id or []
        self._require_namespace(parent)
        if self.max_depth is not None and len(parent) >= self.max_depth:
            names: Iterable[str] = []
        else:
            names = self._list_namespaces(parent)
        page, token = page_of_sorted(names, request.limit, request.page_token)
        return ListNamespacesResponse(namespaces=page, page_token=token)

    @_translating
    def describe_namespace(self, request):
        ns = request.id or []
        return DescribeNamespaceResponse(properties=self._require_namespace(ns))

    @_translating
    def namespace_exists(self, request):
        self._require_namespace(request.id or [])
        return NamespaceExistsResponse()

    @_translating
    def drop_namespace(self, request):
        ns = request.id or []
        mode = DropMode.parse(request.mode, DropMode.FAIL)
        behavior = DropBehavior.parse(request.behavior, DropBehavior.RESTRICT)
        if not ns:
            raise InvalidInputError("the root namespace cannot be dropped")
        if behavior is DropBehavior.CASCADE and not self.supports_cascade:
            raise UnsupportedOperationError(f"{type(self).__name__} supports only Restrict drops")
        self._check_depth(ns)
        props = self._get_namespace(ns)
        if props is None:
            if mode is DropMode.SKIP or self.drop_missing_ok:
                return DropNamespaceResponse()
            raise NamespaceNotFoundError(f"namespace {to_string(ns)!r} does not exist")
        self._drop_checked(ns, behavior, purge_requested(request))
        return DropNamespaceResponse(properties=props)

    def _drop_checked(self, ns: list[str], behavior: DropBehavior, purge: bool = False) -> None:
        children = list(self._list_namespaces(ns)) if self.max_depth is None or len(ns) < self.max_depth else []
        tables = list(self._list_tables(ns))
        if behavior is DropBehavior.RESTRICT:
            if children or tables:
                raise NamespaceNotEmptyError(
                    f"namespace {to_string(ns)!r} is not empty "
                    f"({len(children)} namespaces, {len(tables)} tables)"
                )
        else:
            foreign = [t.name for t in tables if not self.is_lance(t)]
            if foreign:
                # Cascade never touches what is not ours: refuse rather than lose data.
                raise NamespaceNotEmptyError(
                    f"namespace {to_string(ns)!r} holds non-Lance tables {sorted(foreign)[:5]}; "
                    "drop them with their own tools first"
                )
            for child in children:
                self._drop_checked(ns + [child], behavior, purge)
            for table in tables:
                self._drop_table_object(ns, table, purge)
        if self._drop_namespace(ns) is False:
            raise NamespaceNotFoundError(f"namespace {to_string(ns)!r} does not exist")

    # -- table operations --------------------------------------------------------
    @_translating
    def list_tables(self, request):
        ns = request.id or []
        self._require_namespace(ns)
        if not self._holds_tables(ns):
            page, token = paginate([], request.limit, request.page_token)
        else:
            keep = self._has_data if request.include_declared is False else None
            page, token = self._lance_table_page(ns, request.limit, request.page_token, keep)
        return ListTablesResponse(tables=page, page_token=token)

    def _lance_table_page(self, ns: list[str], limit, page_token: str | None, keep=None) -> tuple[list[str], str | None]:
        """One page of the sorted names of the Lance tables of ``ns`` (with
        ``keep``: only those it accepts) and the next token (:func:`paginate`).
        A backend that must load each table to tell overrides it to load only
        what the page needs."""
        return paginate(self._table_names(ns, keep), limit, page_token)

    def _table_names(self, ns: list[str], keep=None) -> list[str]:
        """Sorted names of the Lance tables of ``ns`` (with ``keep``: only those it accepts)."""
        if keep is None:
            return self._lance_table_names(ns)
        return sorted(t.name for t in self._list_tables(ns) if self.is_lance(t) and keep(t))

    def _lance_table_names(self, ns: list[str]) -> list[str]:
        """Sorted, unique names of the Lance tables of ``ns`` (a backend may
        answer from an index without building every table object)."""
        return sorted({t.name for t in self._list_tables(ns) if self.is_lance(t)})

    @_translating
    def describe_table(self, request):
        ns, table = self._lance_table(request.id)
        opts = self._table_storage_options(table)
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
            self._describe_managed(ns, table, resp, request, opts)
        elif (request.load_detailed_metadata or request.version is not None or request.tag or request.check_declared
                or request.branch):
            self._add_detail(resp, request, opts)
        return self._vended(resp, table.location, request)

    def _add_detail(self, resp, request, opts) -> None:
        """Version, schema and stats from the Lance table itself (pylance)."""
        refuse_blocking("opening the Lance table")
        from . import detail  # pylance is imported only when detail is asked for

        detail.fill_detail(resp, resp.location, opts, request)

    @_translating
    def table_exists(self, request):
        ns, table = self._lance_table(request.id)
        if request.version is not None:
            refuse_blocking("checking a version")
        if request.version is not None and is_managed(table):
            self._published(ns, table, request.version)
        elif request.version is not None:
            from . import detail

            detail.open_dataset(table.location, self._table_storage_options(table), request.version)
        return TableExistsResponse()

    def _has_data(self, table: CatalogTable) -> bool:
        """Whether a table holds a committed version (False: only declared)."""
        refuse_blocking("looking for a table's versions")
        return bool(table.location) and storage.has_versions(table.location, self._table_storage_options(table))

    @_translating
    def declare_table(self, request):
        """A metadata-only operation (the protocol: "without touching storage"): on a
        catalog it makes no storage call at all, so it works where the catalog can be
        reached and the data cannot.  The location is checked against what the catalog
        knows (:meth:`_checked_location` with ``metadata_only``); the directory
        namespace, whose catalog is the storage, also writes its ``.lance-reserved``.
        (A Hive Metastore makes a local table directory itself on create_table; hive
        makes it first, locally only, so the metastore's clean-up of a lost race cannot
        delete the winner's data: see impls/hive.)"""
        ns, name = split_table_id(request.id)
        ns_props = self._require_table_namespace(ns)
        if self._get_table(ns, name) is not None:
            raise TableAlreadyExistsError(f"table {to_string(ns + [name])!r} already exists")
        if request.location:
            location = self._checked_location(ns, name, request.location, metadata_only=not self.catalog_in_storage)
        else:
            location = self.default_location(ns, name)
        props = self._stored_properties(request.properties)
        managed = self._wants_managed(request.properties, ns_props)
        if managed:
            props[MANAGED_KEY] = "true"
        table = CatalogTable(name=name, location=location, properties=props, kind=self.lance_table_kind,
                             has_data=False)
        self._create_table(ns, table)
        self._declared(ns, table)
        resp = DeclareTableResponse(
            location=location, storage_options=self.storage_options or None, properties=props or None,
            managed_versioning=True if managed else None,
        )
        return self._vended(resp, location, request)

    def create_table(self, request, request_data: bytes):
        resp = self.data_ops.create_table(request, request_data)
        return self._vended(resp, resp.location, request)

    @_translating
    def register_table(self, request):
        ns, name = split_table_id(request.id)
        mode = RegisterMode.parse(request.mode, RegisterMode.CREATE)
        if is_true((request.properties or {}).get(MANAGED_KEY, "")):
            raise UnsupportedOperationError(
                "RegisterTable adopts a table as storage-managed: its history was written outside the "
                "namespace (create the table through the namespace to have it implementation-managed)"
            )
        self._require_table_namespace(ns)
        existing = self._get_table(ns, name)  # before any storage work: a duplicate is 5 wherever the data is
        if existing is not None and mode is RegisterMode.CREATE:
            raise TableAlreadyExistsError(f"table {to_string(ns + [name])!r} already exists")
        location = self._checked_location(ns, name, request.location)
        try:
            found = storage.open_lance(location, self.storage_options)
        except Exception as e:  # noqa: BLE001 - unreachable: 17; anything else: not a table we can read
            if storage.is_unreachable(e):
                raise storage.unreachable_error(e, location) from e
            found = None
        if found is None:
            raise InvalidInputError(f"no Lance table at {location!r}")
        props = self._stored_properties(request.properties)
        table = CatalogTable(name=name, location=location, properties=props, kind=self.lance_table_kind)
        if existing is not None:
            if not self.is_lance(existing):
                raise InvalidInputError(f"table {to_string(ns + [name])!r} is not a Lance table; not replacing it")
            self._replace_table(ns, table)
        else:
            self._create_table(ns, table)
        self._registered(ns, table)
        return RegisterTableResponse(location=location, properties=props or None)

    @_translating
    def deregister_table(self, request):
        ns, table = self._lance_table(request.id)
        self._remove_entry(ns, table)
        self._deregistered(ns, table)
        return DeregisterTableResponse(id=ns + [table.name], location=table.location, properties=shown_properties(table.properties))

    @_translating
    def drop_table(self, request):
        ns, table = self._lance_table(request.id)
        self._drop_table_object(ns, table, purge_requested(request))
        return DropTableResponse(id=ns + [table.name], location=table.location, properties=shown_properties(table.properties))

    # -- catalog state: RenameTable, ListAllTables -------------------------------------
    @_translating
    def rename_table(self, request):
        """Rename (and, with ``new_namespace_id``, move) a table's catalog entry.

        The data stays where it is; the renamed table's location is then no longer
        the default location of its id, so, like a registered table, a later
        DropTable keeps the data unless ``purge`` is asked (see :meth:`owns_location`).
        """
        ns, table = self._lance_table(request.id)
        new_ns = ns if request.new_namespace_id is None else validate_id(request.new_namespace_id)
        new_name = validate_id([request.new_table_name])[0]
        if new_ns + [new_name] == ns + [table.name]:
            raise InvalidInputError(f"table {to_string(ns + [new_name])!r} already has that name")
        self._require_table_namespace(new_ns)
        if self._get_table(new_ns, new_name) is not None:
            raise TableAlreadyExistsError(f"table {to_string(new_ns + [new_name])!r} already exists")
        self._rename_table(ns, table, new_ns, new_name)
        return RenameTableResponse()

    def _rename_table(self, ns: list[str], table: CatalogTable, new_ns: list[str], new_name: str) -> None:
        """For catalogs without a rename call: create the new entry, then delete the
        old one.  One winner: of racing renames into one name the create decides
        (TableAlreadyExists); of racing renames of one table the delete does -- a
        caller whose delete finds the old entry gone withdraws its new entry and
        answers ConcurrentModification.  The create is also withdrawn when the
        delete fails.  Not atomic for readers: for one round trip both ids exist."""
        self._create_table(new_ns, replace(table, name=new_name))
        try:
            self._remove_entry(ns, table)
        except Exception as e:
            self._withdraw_entry(new_ns, new_name)
            mapped = e if isinstance(e, LanceNamespaceError) else self.translate_error(e)
            if isinstance(mapped, TableNotFoundError):
                raise ConcurrentModificationError(
                    f"table {to_string(ns + [table.name])!r} was renamed or dropped concurrently"
                ) from e
            raise

    def _withdraw_entry(self, ns: list[str], name: str) -> None:
        """Remove an entry this call just created (rollback)."""
        try:
            self._delete_table(ns, name)
        except Exception:  # noqa: BLE001 - the original failure is what the caller must see
            log.warning("could not withdraw table entry %s after a failed rename", to_string(ns + [name]))

    @_translating
    def list_all_tables(self, request):
        """Every Lance table below ``id`` (default: the root), as string ids joined
        by ``$`` (the REST protocol's delimiter, never part of a name in the
        directory layout), sorted and paged like ListTables."""
        start = list(request.id or [])  # checked once, by the operation wrapper
        self._require_namespace(start)
        ids = sorted(to_string(t, ALL_TABLES_DELIMITER) for t in self._tables_below(start, request.include_declared))
        page, token = paginate(ids, request.limit, request.page_token)
        return ListTablesResponse(tables=page, page_token=token)

    def _tables_below(self, ns: list[str], include_declared: bool | None) -> Iterable[list[str]]:
        if self._holds_tables(ns):
            yield from (ns + [n] for n in self._table_names(ns, self._has_data if include_declared is False else None))
        if self.max_depth is None or len(ns) < self.max_depth:
            for child in self._list_namespaces(ns):
                yield from self._tables_below(ns + [child], include_declared)

    def _stored_properties(self, properties) -> dict[str, str]:
        # the kind and the history are the namespace's to record (declare_table, the version ops)
        props = {k: v for k, v in (properties or {}).items() if k not in (MANAGED_KEY, VERSIONS_KEY)}
        if self.marks_lance_tables:
            props[TABLE_TYPE_KEY] = LANCE
        return props

    def _remove_entry(self, ns: list[str], table: CatalogTable) -> None:
        if self._delete_table(ns, table.name) is False:
            # a racing drop removed it first: that call did the drop, not this one
            raise TableNotFoundError(f"table {to_string(ns + [table.name])!r} does not exist")

    def _drop_table_object(self, ns: list[str], table: CatalogTable, purge: bool = False) -> None:
        # Catalog entry first: a failure after it leaves orphan files, never a
        # catalog entry pointing at deleted data.
        deletes = self.deletes_data_of(ns, table, purge)
        opts = self._table_storage_options(table)
        if deletes and self.keeps_dropped_marker:
            storage.mark_dropped(table.location, opts)  # see there: no new table reuses the directory
        self._remove_entry(ns, table)
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
        if storage.holds_files(location, self.storage_options):
            return storage.fresh_variant(location)
        return location

    def deletes_data_of(self, ns: list[str], table: CatalogTable, purge: bool = False) -> bool:
        """Whether dropping ``table`` deletes its data (see :meth:`owns_location`)."""
        return bool(table.location) and (purge or self.owns_location(ns, table.name, table.location))

    # -- hooks around the table primitives (the directory's marker files) ----------
    def _declared(self, ns: list[str], table: CatalogTable) -> None:
        """After a declared table's entry is stored."""

    def _registered(self, ns: list[str], table: CatalogTable) -> None:
        """After a registered table's entry is stored."""

    def _deregistered(self, ns: list[str], table: CatalogTable) -> None:
        """After a deregistered table's entry is removed."""

    # -- locations ---------------------------------------------------------------------
    #: whether RegisterTable / DeclareTable may name locations outside the root
    allows_external_locations: bool = True

    #: whether this namespace's catalog is the storage itself (the directory namespace):
    #: then even metadata operations read storage, and DeclareTable checks it too
    catalog_in_storage: bool = False

    def _checked_location(self, ns: list[str], name: str, raw: str, metadata_only: bool = False) -> str:
        """A location given by the caller, resolved, once it is safe to use for ``ns.name``.

        Refused (code 13): the root or a location containing it; a path through a
        reserved component (``_versions``, ``__manifest``...); a location inside
        a Lance table (a parent directory holds ``_versions``; not looked for with
        ``metadata_only``, DeclareTable's case, which makes no storage call); one
        equal to, containing or inside another table of the target namespace; and
        what :meth:`_check_layout` refuses (the backend's default-location scheme).
        Not covered, because it would take a scan of the whole catalog: overlap
        with a table of *another* namespace that has no data yet and sits
        outside the default-location scheme (and, declared, a Lance table in
        storage that no catalog entry names).
        """
        location = storage.resolve(self.root, raw)
        root = self.root.rstrip("/")
        if location.rstrip("/") == root or storage.is_within(location, root):
            raise InvalidInputError(f"location {raw!r} is, or contains, the namespace root {self.root!r}")
        within = storage.is_within(self.root, location)
        if not within and not self.allows_external_locations:
            raise InvalidInputError(
                f"location {raw!r} is outside the namespace root {self.root!r} "
                "(set allow_external_locations=true to allow it)"
            )
        # below the root only, inside it: the root's own path is the operator's choice
        parts = storage.parts(location)[len(storage.parts(self.root)) :] if within else storage.parts(location)
        reserved = sorted(RESERVED_PARTS.intersection(parts))
        if reserved:
            raise InvalidInputError(f"location {raw!r} runs through the reserved path {reserved[0]!r}")
        for parent in [] if metadata_only else storage.parents(location, stop=self.root if within else None,
                                                                 limit=_MAX_ANCESTORS):
            if storage.has_versions(parent, self.storage_options):
                raise InvalidInputError(f"location {raw!r} lies inside the Lance table at {parent!r}")
        self._check_layout(ns, name, location, raw)
        return location

    def _check_layout(self, ns: list[str], name: str, location: str, raw: str) -> None:
        """Refuse a location that aliases another table of this namespace or
        the default location (scheme) of another id."""
        if storage.is_within(self.root, location) and self.location_suffix:
            rel = location[len(self.root.rstrip("/")):].strip("/").split("/")
            for i, part in enumerate(rel):
                if not part.endswith(self.location_suffix):
                    continue
                owner = rel[:i] + [part[: -len(self.location_suffix)]]
                if i < len(rel) - 1:  # data there would mix with that table's, if it is created
                    raise InvalidInputError(
                        f"location {raw!r} lies inside the default location of table {to_string(owner)!r}"
                    )
                if owner != ns + [name] and self._holds_tables(owner[:-1]) and self._get_table(owner[:-1], owner[-1]):
                    raise InvalidInputError(f"location {raw!r} is the location of table {to_string(owner)!r}")
        for other in self._list_tables(ns):
            if other.name != name and other.location and _overlaps(other.location, location):
                raise InvalidInputError(
                    f"location {raw!r} overlaps the location of table {to_string(ns + [other.name])!r}"
                )

    # -- implementation-managed tables -----------------------------------------------------
    # The namespace holds the history: a version exists once the namespace granted it
    # (``_add_versions``, one compare-and-swap per commit), and only granted versions are
    # answered, read or built upon.  A write made straight to storage is never reflected.

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

    # primitives: the history of one table (a backend without a better place overrides
    # only _swap_table_properties -- or _swap_tables_properties where it can swap several
    # tables at once -- and the history lives in the table object's properties)
    def _versions(self, ns: list[str], table: CatalogTable) -> list[dict]:
        """The published versions of ``table`` (TableVersion dicts), ascending."""
        raw = (table.properties or {}).get(VERSIONS_KEY)
        return json.loads(raw) if raw else []

    def _add_versions(self, items: list[tuple[list[str], CatalogTable, list[dict]]]) -> bool:
        """Atomically append ``records`` to each table's history, each table as read
        (``table`` is the snapshot the caller saw); False when any changed meanwhile."""
        return self._swap_tables_properties(
            [(ns, table, _with_history(table, self._versions(ns, table) + records)) for ns, table, records in items]
        )

    def _remove_versions(self, ns: list[str], table: CatalogTable, numbers: set[int]) -> bool:
        """Remove versions from ``table``'s history as read; False when it changed meanwhile."""
        return self._swap_history(ns, table, [v for v in self._versions(ns, table) if v["version"] not in numbers])

    def _swap_history(self, ns: list[str], table: CatalogTable, history: list[dict]) -> bool:
        return self._swap_tables_properties([(ns, table, _with_history(table, history))])

    def _swap_tables_properties(self, changes: list[tuple[list[str], CatalogTable, dict[str, str]]]) -> bool:
        """Give each table (as the caller read it) its new properties iff none changed
        meanwhile, all or none; False when one did.  By default one table, through
        :meth:`_swap_table_properties`; a catalog that can swap several tables at once
        (a lock over all of them, a multi-table transaction) overrides this instead."""
        if len(changes) != 1:
            raise UnsupportedOperationError(
                f"{type(self).__name__} cannot commit several tables atomically"
            )
        return self._swap_table_properties(*changes[0])

    def _swap_table_properties(self, ns: list[str], table: CatalogTable, properties: dict[str, str]) -> bool:
        """Replace the table object's properties iff it is still as ``table`` was read
        (the catalog's own compare-and-swap); False when it changed meanwhile."""
        raise UnsupportedOperationError(f"implementation-managed tables: {self.managed_refusal}")

    # shared rules
    def _managed_table(self, table_id) -> tuple[list[str], CatalogTable]:
        ns, table = self._lance_table(table_id)
        if not is_managed(table):
            raise UnsupportedOperationError(
                f"table {to_string(ns + [table.name])!r} is storage-managed: its versions are "
                "committed by writing to storage (create it with managed_versioning=true to have "
                "the namespace hold them)"
            )
        return ns, table

    def _published(self, ns: list[str], table: CatalogTable, version: int | None) -> dict | None:
        """The published record of ``version`` (None: the latest; None if there is none)."""
        history = self._versions(ns, table)
        if version is None:
            return history[-1] if history else None
        for record in history:
            if record["version"] == version:
                return record
        raise TableVersionNotFoundError(
            f"version {version} of table {to_string(ns + [table.name])!r} was never published by the namespace"
        )

    def _settled(self, ns: list[str], table: CatalogTable) -> CatalogTable:
        """``table`` (read again if need be) once its latest version's manifest is in place.

        A commit is granted first and its manifest copied into ``_versions/`` right
        after (:meth:`_commit_versions`).  A reader answered the latest version in
        between finds no manifest there, and pylance takes a table whose latest
        manifest is missing for a new one: an append then commits a fresh dataset
        as the next version, and every earlier row is gone from the table.  So the
        reads that answer the latest version wait the copy out (a failed copy
        withdraws the version: the history is read again while waiting), and
        refuse the table with code 19 when the copy never comes.
        """
        deadline, pause = time.monotonic() + _PUBLISH_WAIT, 0.005
        while True:
            history = self._versions(ns, table)
            if not history or self._manifest_in_place(table, history[-1]):
                self._set_aside_bypass(ns, table, history)
                return table
            if time.monotonic() >= deadline:
                # The committer stopped between grant and copy.  Answering this version
                # would make pylance take the table for new and commit over every row,
                # so the table is refused until the version is withdrawn.
                version = history[-1]["version"]
                raise InvalidTableStateError(
                    f"table {to_string(ns + [table.name])!r}: version {version} was granted but its manifest "
                    f"never reached _versions/ (its committer stopped between the two steps); withdraw it "
                    f"with BatchDeleteTableVersions (range {version}..{version + 1}) to make the version "
                    "before it the latest again"
                )
            time.sleep(pause)
            pause = min(pause * 2, 0.2)
            table = self._get_table(ns, table.name) or table

    def _set_aside_bypass(self, ns: list[str], table: CatalogTable, history: list[dict]) -> None:
        """Move manifests written straight to storage after the latest published version
        out of ``_versions/``, before anyone builds on them.

        Lance numbers a commit after the newest manifest in storage: a pylance append
        after a bypass write would stage version N+2 on top of the bypass rows, be
        refused, and report "commit result unknown".  Set aside here (one existence
        check of version N+1 per read of the latest version, a listing only when it
        is there), the append builds on the namespace's N and becomes N+1.
        """
        expected = (history[-1]["version"] if history else 0) + 1
        opts = self._table_storage_options(table)
        try:
            if not tables.manifest_exists(table.location, opts, expected):
                return
            if self._granted(ns, table.name, expected):  # granted a moment ago, being copied into place
                return
            moved = tables.set_aside_unpublished(
                table.location, opts, lambda v: v < expected or self._granted(ns, table.name, v))
        except OSError as e:  # storage cannot tell now: a commit on top of a bypass is still refused (14)
            log.info("could not look for unpublished versions of %s: %s", table.location, e)
            return
        if moved:
            log.warning("table %s: versions %s were written to storage without the namespace; set aside "
                        "(kept beside _versions/ as *-unpublished-*)", to_string(ns + [table.name]), moved)

    def _manifest_in_place(self, table: CatalogTable, record: dict) -> bool:
        """Whether a granted version's manifest is in ``_versions/`` (True where storage cannot tell)."""
        try:
            return tables.manifest_in_place(table.location, self._table_storage_options(table), record)
        except OSError:  # storage cannot tell: the read itself answers for it
            return True

    def _describe_managed(self, ns, table, resp, request, opts) -> None:
        refuse_blocking("waiting for a granted version's manifest")
        table = self._settled(ns, table)
        latest = self._published(ns, table, None)
        resp.managed_versioning = True
        if request.version is not None:
            self._published(ns, table, request.version)  # 11 for a version the namespace never published
        detail = request.load_detailed_metadata or request.version is not None or request.tag
        if request.check_declared or request.load_detailed_metadata:
            resp.is_only_declared = latest is None
        if latest is None:
            if detail:
                raise InvalidTableStateError(f"table {to_string(ns + [table.name])!r} has no published version yet")
            return
        if detail:
            pinned = None if request.tag else (request.version if request.version is not None else latest["version"])
            self._add_detail(resp, request.model_copy(update={"version": pinned}), opts)
            if request.tag:
                self._published(ns, table, resp.version)
        resp.version = resp.version if detail else latest["version"]
        shown = self._published(ns, table, resp.version)
        resp.metadata = {**(resp.metadata or {}), "manifest_path": shown["manifest_path"]}

    def _commit_versions(self, entries: list) -> list[dict]:
        """Publish one staged version per entry (CreateTableVersionRequest-like), all or none.

        Implementation-managed tables: each entry's version must follow its table's
        latest published one: a commit built on a version the namespace never
        published (Lance numbers commits after the newest manifest in storage, a
        bypass write's too) is refused with code 14, and those unpublished manifests
        are set aside so that the writer's retry builds on the namespace's latest
        version.  The versions are granted first (compare-and-swap: of racing commits
        exactly one wins, the others get code 14), then the staging manifests are
        copied to their place, so no two writers ever write one version's manifest.

        Storage-managed tables, as pylance's DirectoryNamespace answers them: the
        version must follow the newest manifest in storage, and the staging manifest
        is put into ``_versions/`` only if nothing is there (storage.put_if_absent:
        of racing commits exactly one wins).  Those are written after the managed
        grants and withdrawn again if a later one fails.
        """
        seen: set[tuple] = set()
        managed, stored = [], []
        for entry in entries:
            ns, table = self._lance_table(entry.id)
            key = tuple(ns + [table.name])
            if key in seen:
                raise InvalidInputError(f"table {to_string(list(key))!r} appears twice in one commit")
            seen.add(key)
            if is_managed(table):
                _no_managed_branch(entry)
                managed.append(self._managed_plan(ns, table, entry))
            else:
                stored.append(self._storage_plan(ns, table, entry))
        if managed and not self._add_versions([(ns, table, [record]) for ns, table, record, *_ in managed]):
            raise ConcurrentModificationError(
                "another commit published a version of "
                + ", ".join(repr(to_string(ns + [t.name])) for ns, t, *_ in managed) + " first; retry"
            )
        written = []
        try:
            for ns, table, record, staging, scheme, opts in stored:
                tables.put_manifest(table.location, staging, record["version"], scheme, opts,
                                    to_string(ns + [table.name]))
                written.append((table.location, opts, record["version"]))
        except Exception:
            for location, opts, version in written:
                tables.delete_manifest(location, opts, version)
            for ns, table, record, *_ in managed:
                self._withdraw_version(ns, table.name, record["version"])
            raise
        for ns, table, record, staging, scheme, opts in managed:
            try:
                tables.publish_manifest(table.location, opts, staging, record["version"], scheme)
            except Exception:
                self._withdraw_version(ns, table.name, record["version"])
                raise
        by_table = {tuple(ns + [t.name]): record for ns, t, record, *_ in managed + stored}
        return [by_table[tuple(self._lance_key(entry.id))] for entry in entries]

    @staticmethod
    def _lance_key(table_id) -> list[str]:
        ns, name = split_table_id(table_id)
        return ns + [name]

    @staticmethod
    def _version_record(entry, location: str, scheme: str, size: int | None = None) -> dict:
        return TableVersion(
            version=entry.version,
            manifest_path=tables.object_store_path(
                storage.join(location, "_versions", tables.manifest_name(entry.version, scheme))),
            manifest_size=entry.manifest_size if size is None else size,
            e_tag=entry.e_tag,
            timestamp_millis=int(time.time() * 1000),
            metadata=dict(entry.metadata) if entry.metadata else None,
        ).to_dict()

    def _managed_plan(self, ns: list[str], table: CatalogTable, entry) -> tuple:
        latest = self._published(ns, table, None)
        expected = (latest["version"] if latest else 0) + 1
        opts = self._table_storage_options(table)
        if entry.version != expected:
            moved = []
            if entry.version > expected:
                moved = tables.set_aside_unpublished(
                    table.location, opts, lambda v, n=ns, t=table.name, e=expected: v < e or self._granted(n, t, v)
                )
            raise ConcurrentModificationError(
                f"version {entry.version} of table {to_string(ns + [table.name])!r} does not follow the latest "
                f"version the namespace published ({expected - 1})"
                + (f"; versions {moved} written to storage directly were set aside, retry the commit"
                   if moved else "")
            )
        staging = tables.staged_manifest(table.location, entry.manifest_path)
        scheme = entry.naming_scheme or "V2"
        return ns, table, self._version_record(entry, table.location, scheme), staging, scheme, opts

    def _storage_plan(self, ns: list[str], table: CatalogTable, entry) -> tuple:
        if getattr(entry, "branch", None):
            raise UnsupportedOperationError("CreateTableVersion on a branch of a storage-managed table is not supported")
        refuse_blocking("committing a version to storage")
        opts = self._table_storage_options(table)
        latest = tables.latest_manifest_version(table.location, opts)
        if entry.version != latest + 1:
            raise ConcurrentModificationError(
                f"version {entry.version} of table {to_string(ns + [table.name])!r} does not follow the newest "
                f"version in storage ({latest})"
            )
        staging = tables.staged_manifest(table.location, entry.manifest_path)
        scheme = entry.naming_scheme or "V2"
        size = tables.file_size(staging, opts)
        return ns, table, self._version_record(entry, table.location, scheme, size), staging, scheme, opts

    def _granted(self, ns: list[str], name: str, version: int) -> bool:
        """Whether ``version`` is in the table's record now (read afresh: a racing commit
        may have been granted it since this one was refused)."""
        table = self._get_table(ns, name)
        return table is not None and any(v["version"] == version for v in self._versions(ns, table))

    def _withdraw_version(self, ns: list[str], name: str, version: int) -> None:
        """Take back a granted version whose manifest could not be put in place."""
        for _ in range(_CAS_ATTEMPTS):
            table = self._get_table(ns, name)
            if table is None or self._remove_versions(ns, table, {version}):
                return

    @_translating
    def create_table_version(self, request):
        (record,) = self._commit_versions([request])
        return CreateTableVersionResponse(version=TableVersion.from_dict(record))

    @_translating
    def batch_create_table_versions(self, request):
        if not request.entries:
            raise InvalidInputError("BatchCreateTableVersions needs at least one entry")
        records = self._commit_versions(list(request.entries))
        return BatchCreateTableVersionsResponse(versions=[TableVersion.from_dict(r) for r in records])

    def _delete_stored_versions(self, ns: list[str], table: CatalogTable, request):
        if request.branch:
            raise UnsupportedOperationError("BatchDeleteTableVersions on a branch of a storage-managed table is not supported")
        refuse_blocking("deleting versions from storage")
        opts = self._table_storage_options(table)
        present = tables.manifest_versions(table.location, opts)
        doomed = {v for v in present for r in request.ranges if r.start_version <= v < r.end_version}
        if present and max(present) in doomed:
            raise InvalidInputError("the latest version of a table cannot be deleted")
        for version in sorted(doomed):
            tables.delete_manifest(table.location, opts, version)
        return BatchDeleteTableVersionsResponse(deleted_count=len(doomed))

    def _managed_or_none(self, request):
        """(ns, table) of a managed table, or None for a storage-managed one (storage answers)."""
        ns, table = self._lance_table(request.id)
        if not is_managed(table):
            return None
        _no_managed_branch(request)
        return ns, table

    @_translating
    def describe_table_version(self, request):
        found = self._managed_or_none(request)
        if found is None:
            return self.data_ops.describe_table_version(request)
        ns, table = found
        if request.version is None:
            table = self._settled(ns, table)
        record = self._published(ns, table, request.version)
        if record is None:
            raise TableVersionNotFoundError(f"table {to_string(ns + [table.name])!r} has no published version yet")
        return DescribeTableVersionResponse(version=TableVersion.from_dict(record))

    @_translating
    def list_table_versions(self, request):
        found = self._managed_or_none(request)
        if found is None:
            return self.data_ops.list_table_versions(request)
        ns, table = found
        table = self._settled(ns, table)
        by_key = {
            f"{(1 << 62) - r['version'] if request.descending else r['version']:020d}": r
            for r in self._versions(ns, table)
        }
        page, token = paginate(sorted(by_key), request.limit, request.page_token)
        return ListTableVersionsResponse(versions=[TableVersion.from_dict(by_key[k]) for k in page], page_token=token)

    @_translating
    def batch_delete_table_versions(self, request):
        """Managed tables: forget versions (Lance's cleanup calls this after removing their
        files).  Storage-managed tables, as pylance's DirectoryNamespace answers: delete the
        versions' manifests from ``_versions/`` (never the latest one)."""
        if not request.ranges:
            raise InvalidInputError("BatchDeleteTableVersions needs at least one range")
        for r in request.ranges:
            if r.start_version < 0 or r.end_version < r.start_version:
                raise InvalidInputError(f"invalid version range [{r.start_version}, {r.end_version})")
        ns, table = self._lance_table(request.id)
        if not is_managed(table):
            return self._delete_stored_versions(ns, table, request)
        _no_managed_branch(request)
        for _ in range(_CAS_ATTEMPTS):
            records = self._versions(ns, table)
            history = [v["version"] for v in records]
            doomed = {v for v in history for r in request.ranges if r.start_version <= v < r.end_version}
            # the latest version stays -- unless its manifest never reached _versions/
            # (its committer stopped after the grant): then withdrawing it is the repair
            if history and history[-1] in doomed and self._manifest_in_place(table, records[-1]):
                raise InvalidInputError("the latest version of a table cannot be deleted")
            if not doomed or self._remove_versions(ns, table, doomed):
                return BatchDeleteTableVersionsResponse(deleted_count=len(doomed))
            ns, table = self._managed_table(request.id)
        raise ConcurrentModificationError("the table's versions kept changing; retry")

    @_translating
    def batch_commit_tables(self, request):
        """The spec's four kinds of operation (DeclareTable, CreateTableVersion,
        DeleteTableVersions, DeregisterTable) over several tables, all or none.

        Everything is checked before anything changes; then the declarations, the new
        versions (one commit of their own, see :meth:`_commit_versions`), the
        deregistrations and last the version deletions are applied, and a failure
        takes back what was applied before it.  Version deletions come last because on
        a storage-managed table they delete manifests, which cannot be taken back.
        All or none, not isolated: a reader can see a batch half applied for the
        moment between its steps (each step is one catalog commit where the backend
        can make it one).
        """
        ops = self._batch_operations(request)
        results: list = [None] * len(ops)
        undo: list = []
        try:
            for i, (kind, req) in enumerate(ops):
                if kind == "declare_table":
                    declared = self.declare_table(req.model_copy(update={"vend_credentials": False}))
                    results[i] = CommitTableResult(declare_table=declared)
                    undo.append(lambda r=req, d=declared: self.data_ops.undo_declaration(r.id, d.location, {
                        **self.storage_options, **(d.storage_options or {})}))
            versions = [(i, req) for i, (kind, req) in enumerate(ops) if kind == "create_table_version"]
            if versions:
                records = self._commit_versions([req for _, req in versions])
                for (i, req), record in zip(versions, records):
                    results[i] = CommitTableResult(
                        create_table_version=CreateTableVersionResponse(version=TableVersion.from_dict(record)))
                    undo.append(lambda r=req, v=record["version"]: self._take_back_version(r.id, v))
            gone = []
            for i, (kind, req) in enumerate(ops):
                if kind == "deregister_table":
                    ns, table = self._lance_table(req.id)
                    self._remove_entry(ns, table)
                    gone.append((ns, table))
                    undo.append(lambda n=ns, t=table: self._create_table(n, t))
                    results[i] = CommitTableResult(deregister_table=DeregisterTableResponse(
                        id=ns + [table.name], location=table.location, properties=shown_properties(table.properties)))
            for i, (kind, req) in enumerate(ops):
                if kind == "delete_table_versions":
                    results[i] = CommitTableResult(delete_table_versions=self.batch_delete_table_versions(req))
        except Exception:
            for step in reversed(undo):
                try:
                    step()
                except Exception as e:  # noqa: BLE001 - the original failure is what the caller must see
                    log.warning("BatchCommitTables could not take back a step after a failure: %s", e)
            raise
        for ns, table in gone:
            self._deregistered(ns, table)
        return BatchCommitTablesResponse(results=results)

    _BATCH_KINDS = ("declare_table", "create_table_version", "delete_table_versions", "deregister_table")

    def _batch_operations(self, request) -> list[tuple[str, object]]:
        """(kind, request) of each operation, checked before any is applied."""
        if not request.operations:
            raise InvalidInputError("BatchCommitTables needs at least one operation")
        ops, seen = [], set()
        for i, op in enumerate(request.operations):
            kinds = [k for k in self._BATCH_KINDS if getattr(op, k, None) is not None]
            if len(kinds) != 1:
                raise InvalidInputError(
                    f"operation {i} must set exactly one of {', '.join(self._BATCH_KINDS)} (got {kinds or 'none'})")
            kind, req = kinds[0], getattr(op, kinds[0])
            key = self._lance_key(validate_id(req.id))
            # one change of a table's entry (declare or deregister) and one of its versions of each kind;
            # a declaration and the table's first version may come together
            slot = "entry" if kind in ("declare_table", "deregister_table") else kind
            if (slot, tuple(key)) in seen:
                raise InvalidInputError(f"table {to_string(key)!r} appears twice in operations of one kind")
            seen.add((slot, tuple(key)))
            ops.append((kind, req))
        for kind, req in ops:  # what can be told without changing anything
            ns, name = split_table_id(req.id)
            if kind == "declare_table":
                self._require_table_namespace(ns)
                if self._get_table(ns, name) is not None:
                    raise TableAlreadyExistsError(f"table {to_string(ns + [name])!r} already exists")
            elif kind == "deregister_table" or (kind == "delete_table_versions" and not self._declared_in(ops, req.id)):
                self._lance_table(req.id)
            if kind == "delete_table_versions" and not req.ranges:
                raise InvalidInputError("a delete_table_versions operation needs at least one range")
        return ops

    @staticmethod
    def _declared_in(ops, table_id) -> bool:
        return any(kind == "declare_table" and list(req.id) == list(table_id) for kind, req in ops)

    def _take_back_version(self, table_id, version: int) -> None:
        """Undo a version :meth:`_commit_versions` published (a later step of a batch failed)."""
        ns, table = self._lance_table(table_id)
        if is_managed(table):
            self._withdraw_version(ns, table.name, version)
        else:
            tables.delete_manifest(table.location, self._table_storage_options(table), version)
