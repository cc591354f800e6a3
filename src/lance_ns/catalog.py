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
from dataclasses import dataclass, field
from typing import Iterable

from lance_namespace import (
    CreateNamespaceResponse,
    DeclareTableResponse,
    DeregisterTableResponse,
    DescribeNamespaceResponse,
    DescribeTableResponse,
    DropNamespaceResponse,
    DropTableResponse,
    ListNamespacesResponse,
    ListTablesResponse,
    NamespaceExistsResponse,
    RegisterTableResponse,
    TableExistsResponse,
)

from . import storage, vending
from .base import NamespaceBase, is_name_too_long
from .dataops import TableDataOps
from .errors import (
    InternalError,
    InvalidInputError,
    LanceNamespaceError,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NamespaceNotFoundError,
    TableAlreadyExistsError,
    TableNotFoundError,
    UnsupportedOperationError,
)
from .identifiers import split_table_id, to_string, validate_id
from .modes import CreateMode, DropBehavior, DropMode, RegisterMode
from .paging import page_of_sorted, paginate

TABLE_TYPE_KEY = "table_type"
LANCE = "lance"
#: the request ``context`` key asking DropTable / DropNamespace to delete the
#: data of tables at locations the namespace does not own (registered ones)
PURGE_CONTEXT_KEY = "purge"
#: (over REST it travels as the ``x-lance-ns-purge`` header: server.routes.CONTEXT_HEADERS)
#: path components that belong to a Lance table or to a namespace's own files:
#: no table location may run through them
RESERVED_PARTS = frozenset(
    {"_versions", "_indices", "_deletions", "_transactions", "_refs", "__manifest",
     ".lance-reserved", ".lance-deregistered"}
)
#: how many parent directories are checked for a Lance table around a location
_MAX_ANCESTORS = 32


def purge_requested(request) -> bool:
    """Whether a drop request asks to delete data the namespace does not own."""
    context = getattr(request, "context", None) or {}
    return str(context.get(PURGE_CONTEXT_KEY, "")).lower() in ("true", "1", "yes")


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
            if mapped is None:
                mapped = InternalError(f"{type(self).__name__}: {type(e).__name__}: {e}")
            raise mapped from e

    return wrapper


class CatalogNamespace(TableDataOps, NamespaceBase):
    """Base of the catalog-backed implementations.

    The data operations (CreateTable from Arrow IPC, InsertInto, Query, indices,
    versions, tags...) come from :class:`TableDataOps`, through the location
    DescribeTable returns, so every catalog serves them like the directory does.
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

    @property
    def vends_credentials(self) -> bool:
        return self.vendor is not None

    def _vended(self, response, location: str | None, request):
        """DescribeTable / DeclareTable / CreateTable answers: credentials for the table's location."""
        return self.vendor.answer(response, location, request) if self.vendor else response

    # -- hooks ----------------------------------------------------------------
    def translate_error(self, exc: Exception) -> LanceNamespaceError | None:
        """Map a backend exception to a spec error (None: Internal)."""
        return None

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

    def _require_table_namespace(self, ns: list[str]) -> None:
        depths = self.table_depths
        if not self._holds_tables(ns):
            levels = "any level below the root" if depths is None else f"level {', '.join(map(str, depths))}"
            raise InvalidInputError(
                f"tables of {type(self).__name__} live in namespaces at {levels}, not in {to_string(ns)!r}"
            )
        self._require_namespace(ns)

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
        ns = validate_id(request.id)
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
        parent = validate_id(request.id)
        self._require_namespace(parent)
        if self.max_depth is not None and len(parent) >= self.max_depth:
            names: Iterable[str] = []
        else:
            names = self._list_namespaces(parent)
        page, token = page_of_sorted(names, request.limit, request.page_token)
        return ListNamespacesResponse(namespaces=page, page_token=token)

    @_translating
    def describe_namespace(self, request):
        ns = validate_id(request.id)
        return DescribeNamespaceResponse(properties=self._require_namespace(ns))

    @_translating
    def namespace_exists(self, request):
        self._require_namespace(validate_id(request.id))
        return NamespaceExistsResponse()

    @_translating
    def drop_namespace(self, request):
        ns = validate_id(request.id)
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
        ns = validate_id(request.id)
        self._require_namespace(ns)
        if not self._holds_tables(ns):
            names: list[str] = []
        elif request.include_declared is False:
            names = sorted(t.name for t in self._list_tables(ns) if self.is_lance(t) and self._has_data(t))
        else:
            names = self._lance_table_names(ns)
        page, token = paginate(names, request.limit, request.page_token)
        return ListTablesResponse(tables=page, page_token=token)

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
            properties=dict(table.properties),
        )
        if request.with_table_uri:
            resp.table_uri = table.location
        if request.load_detailed_metadata or request.version is not None or request.tag or request.check_declared:
            self._add_detail(resp, request, opts)
        return self._vended(resp, table.location, request)

    def _add_detail(self, resp, request, opts) -> None:
        """Version, schema and stats from the Lance table itself (pylance)."""
        from . import detail  # pylance is imported only when detail is asked for

        detail.fill_detail(resp, resp.location, opts, request)

    @_translating
    def table_exists(self, request):
        _, table = self._lance_table(request.id)
        if request.version is not None:
            from . import detail

            detail.open_dataset(table.location, self._table_storage_options(table), request.version)
        return TableExistsResponse()

    def _has_data(self, table: CatalogTable) -> bool:
        """Whether a table holds a committed version (False: only declared)."""
        return bool(table.location) and storage.has_versions(table.location, self._table_storage_options(table))

    @_translating
    def declare_table(self, request):
        ns, name = split_table_id(request.id)
        self._require_table_namespace(ns)
        if request.location:
            location = self._checked_location(ns, name, request.location)
        else:
            location = self.default_location(ns, name)
        if self._get_table(ns, name) is not None:
            raise TableAlreadyExistsError(f"table {to_string(ns + [name])!r} already exists")
        if not request.location:
            location = self._unused_default_location(location)
        props = self._stored_properties(request.properties)
        table = CatalogTable(name=name, location=location, properties=props, kind=self.lance_table_kind)
        self._create_table(ns, table)
        self._declared(ns, table)
        resp = DeclareTableResponse(
            location=location, storage_options=self.storage_options or None, properties=props or None
        )
        return self._vended(resp, location, request)

    def create_table(self, request, request_data: bytes):
        resp = super().create_table(request, request_data)
        return self._vended(resp, resp.location, request)

    @_translating
    def register_table(self, request):
        ns, name = split_table_id(request.id)
        mode = RegisterMode.parse(request.mode, RegisterMode.CREATE)
        self._require_table_namespace(ns)
        location = self._checked_location(ns, name, request.location)
        if storage.lance_version(location, self.storage_options) is None:
            raise InvalidInputError(f"no Lance table at {location!r}")
        props = self._stored_properties(request.properties)
        table = CatalogTable(name=name, location=location, properties=props, kind=self.lance_table_kind)
        existing = self._get_table(ns, name)
        if existing is not None:
            if mode is RegisterMode.CREATE:
                raise TableAlreadyExistsError(f"table {to_string(ns + [name])!r} already exists")
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
        return DeregisterTableResponse(id=ns + [table.name], location=table.location, properties=table.properties)

    @_translating
    def drop_table(self, request):
        ns, table = self._lance_table(request.id)
        self._drop_table_object(ns, table, purge_requested(request))
        return DropTableResponse(id=ns + [table.name], location=table.location, properties=table.properties)

    def _stored_properties(self, properties) -> dict[str, str]:
        props = dict(properties or {})
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

    def _unused_default_location(self, location: str) -> str:
        """The default location for a new table, or a fresh sibling of it when
        it still holds files: a dropped table's (kept taken by its marker, maybe
        still being written by a late writer of that table) or a deregistered one's."""
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

    def _checked_location(self, ns: list[str], name: str, raw: str) -> str:
        """A location given by the caller, resolved, once it is safe to use for ``ns.name``.

        Refused (code 13): the root or a location containing it; a path through a
        reserved component (``_versions``, ``__manifest``...); a location inside
        a Lance table (a parent directory holds ``_versions``); one equal to,
        containing or inside another table of the target namespace; and what
        :meth:`_check_layout` refuses (the backend's default-location scheme).
        Not covered, because it would take a scan of the whole catalog: overlap
        with a table of *another* namespace that has no data yet and sits
        outside the default-location scheme.
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
        for parent in storage.parents(location, stop=self.root if within else None, limit=_MAX_ANCESTORS):
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
