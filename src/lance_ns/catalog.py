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
* ``_drop_namespace(ns)``: the namespace is known to be empty.
* ``_list_tables(ns) -> iterable[CatalogTable]``: every table object in ``ns``
  (Lance or not), ``ns`` known to exist.
* ``_get_table(ns, name) -> CatalogTable | None``.
* ``_create_table(ns, table)``: may raise TableAlreadyExistsError.
* ``_delete_table(ns, name)``: metadata only, never data.
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

from . import storage
from .base import NamespaceBase
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
from .paging import page_of_sorted

TABLE_TYPE_KEY = "table_type"
LANCE = "lance"


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

    def __init__(self, **properties: str):
        super().__init__(**properties)
        self.root = storage.normalize_root(self.prop("root") or self.default_root or ".")

    # -- hooks ----------------------------------------------------------------
    def translate_error(self, exc: Exception) -> LanceNamespaceError | None:
        """Map a backend exception to a spec error (None: Internal)."""
        return None

    def default_location(self, ns: list[str], name: str) -> str:
        return storage.join(self.root, *ns, name + self.location_suffix)

    def is_lance(self, table: CatalogTable) -> bool:
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

    def _require_table_namespace(self, ns: list[str]) -> None:
        depths = self.table_depths
        if (depths is None and not ns) or (depths is not None and len(ns) not in depths):
            levels = "any level below the root" if depths is None else f"level {', '.join(map(str, depths))}"
            raise InvalidInputError(
                f"tables of {type(self).__name__} live in namespaces at {levels}, not in {to_string(ns)!r}"
            )
        self._require_namespace(ns)

    def _lance_table(self, table_id) -> tuple[list[str], CatalogTable]:
        ns, name = split_table_id(table_id)
        if self.table_depths is not None and len(ns) not in self.table_depths:
            raise TableNotFoundError(f"table {to_string(ns + [name])!r} does not exist")
        self._check_depth(ns, "table namespace")
        table = self._get_table(ns, name) if ns or self.table_depths is None else None
        if table is None:
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
            # ExistOk lost a creation race: the winner's namespace is what was asked for
            return CreateNamespaceResponse(properties=self._get_namespace(ns) or {})
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
        self._drop_checked(ns, behavior)
        return DropNamespaceResponse(properties=props)

    def _drop_checked(self, ns: list[str], behavior: DropBehavior) -> None:
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
                self._drop_checked(ns + [child], behavior)
            for table in tables:
                self._drop_table_object(ns, table)
        self._drop_namespace(ns)

    # -- table operations --------------------------------------------------------
    @_translating
    def list_tables(self, request):
        ns = validate_id(request.id)
        self._require_namespace(ns)
        if self.table_depths is not None and len(ns) not in self.table_depths:
            names: list[str] = []
        elif not ns and self.table_depths is None:
            names = []
        else:
            names = [t.name for t in self._list_tables(ns) if self.is_lance(t)]
        page, token = page_of_sorted(names, request.limit, request.page_token)
        return ListTablesResponse(tables=page, page_token=token)

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
        if request.load_detailed_metadata or request.version is not None or request.check_declared:
            self._add_detail(resp, request, opts)
        return resp

    def _add_detail(self, resp, request, opts) -> None:
        """Version, schema and stats from the Lance table itself (pylance)."""
        from . import detail  # pylance is imported only when detail is asked for

        detail.fill_detail(resp, resp.location, opts, request)

    @_translating
    def table_exists(self, request):
        self._lance_table(request.id)
        return TableExistsResponse()

    @_translating
    def declare_table(self, request):
        ns, name = split_table_id(request.id)
        self._require_table_namespace(ns)
        location = storage.resolve(self.root, request.location) if request.location else self.default_location(ns, name)
        if self._get_table(ns, name) is not None:
            raise TableAlreadyExistsError(f"table {to_string(ns + [name])!r} already exists")
        if not request.location and storage.holds_files(location, self.storage_options):
            # A dropped table's files still being deleted (or a deregistered one's):
            # a new table never shares a directory with them.
            location = storage.fresh_variant(location)
        props = dict(request.properties or {})
        props[TABLE_TYPE_KEY] = LANCE
        table = CatalogTable(name=name, location=location, properties=props, kind=self.lance_table_kind)
        self._create_table(ns, table)
        return DeclareTableResponse(location=location, storage_options=self.storage_options or None, properties=props)

    @_translating
    def register_table(self, request):
        ns, name = split_table_id(request.id)
        mode = RegisterMode.parse(request.mode, RegisterMode.CREATE)
        self._require_table_namespace(ns)
        location = storage.resolve(self.root, request.location)
        if storage.lance_version(location, self.storage_options) is None:
            raise InvalidInputError(f"no Lance table at {location!r}")
        props = dict(request.properties or {})
        props[TABLE_TYPE_KEY] = LANCE
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
        return RegisterTableResponse(location=location, properties=props)

    @_translating
    def deregister_table(self, request):
        ns, table = self._lance_table(request.id)
        self._delete_table(ns, table.name)
        return DeregisterTableResponse(id=ns + [table.name], location=table.location, properties=table.properties)

    @_translating
    def drop_table(self, request):
        ns, table = self._lance_table(request.id)
        self._drop_table_object(ns, table)
        return DropTableResponse(id=ns + [table.name], location=table.location, properties=table.properties)

    def _drop_table_object(self, ns: list[str], table: CatalogTable) -> None:
        # Catalog entry first: a failure after it leaves orphan files, never a
        # catalog entry pointing at deleted data.
        opts = self._table_storage_options(table)
        if table.location:
            storage.mark_dropped(table.location, opts)  # see there: no new table reuses the directory
        self._delete_table(ns, table.name)
        if table.location:
            storage.delete_dropped(table.location, opts)
