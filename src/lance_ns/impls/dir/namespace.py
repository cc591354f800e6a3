"""DirectoryNamespace: Lance tables in a directory, on local disk or object storage.

Properties:

* ``root`` (required): local path (absolute or relative) or URI (``s3://bucket/prefix``);
* ``storage.*``: pylance storage options (``storage.endpoint``, ``storage.allow_http``,
  ``storage.aws_access_key_id``...);
* ``manifest_enabled`` (default true): nested namespaces and registered
  locations through the ``__manifest`` table; false is pylance's single-level
  mode (root tables only, found by listing the directory);
* ``dir_listing_enabled`` (default true): root tables are also found by
  listing ``<name>.lance`` directories, as pylance does;
* ``bare_table_dirs`` (default true): the seed spec's ``<name>/`` directories
  are root tables too;
* ``allow_external_locations`` (default false): RegisterTable/DeclareTable may
  point outside the root;
* ``manifest_compact_every`` (default 32), ``manifest_retain_versions``
  (default 8): manifest upkeep (see manifest.py).
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass

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

from ... import detail, storage
from ...base import NamespaceBase
from ...dataops import TableDataOps
from ...errors import (
    InvalidInputError,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NamespaceNotFoundError,
    TableAlreadyExistsError,
    TableNotFoundError,
    UnsupportedOperationError,
)
from ...identifiers import name_problem, split_table_id, to_string, validate_id
from ...modes import CreateMode, DropBehavior, DropMode, RegisterMode
from ...paging import paginate
from .layout import (
    DEREGISTERED,
    ID_DELIMITER,
    MANIFEST_DIR,
    MARKER_BODY,
    RESERVED,
    TABLE_SUFFIX,
    Files,
    is_local,
    nested_dir_name,
    object_id,
)
from .manifest import NAMESPACE, TABLE, Entry, Exists, Manifest

#: how long a remote root listing is reused for continuation pages
_REMOTE_LISTING_TTL = 30.0


@dataclass
class _Table:
    ns: list[str]
    name: str
    location: str  # absolute
    entry: Entry | None  # None: found by listing the root directory

    @property
    def properties(self) -> dict[str, str]:
        return dict(self.entry.properties or {}) if self.entry else {}


def _check_names(parts: list[str]) -> list[str]:
    for p in parts:
        if ID_DELIMITER in p:
            raise InvalidInputError(f"invalid name {p!r}: the directory namespace reserves {ID_DELIMITER!r}")
    return parts


class DirectoryNamespace(TableDataOps, NamespaceBase):
    impl_name = "dir"

    def __init__(self, **properties: str):
        super().__init__(**properties)
        root = self.prop("root", required=True)
        if root.startswith("file://"):
            root = root[len("file://"):]
        self.root = storage.normalize_root(root)
        self.local = is_local(self.root)
        self.manifest_enabled = self.bool_prop("manifest_enabled", True)
        self.dir_listing_enabled = self.bool_prop("dir_listing_enabled", True)
        self.bare_table_dirs = self.bool_prop("bare_table_dirs", True)
        self.allow_external = self.bool_prop("allow_external_locations", False)
        self.files = Files(self.root, self.storage_options)
        self.manifest = (
            Manifest(
                self.root,
                self.storage_options,
                compact_every=self.int_prop("manifest_compact_every", 32),
                retain_versions=self.int_prop("manifest_retain_versions", 8, minimum=1),
            )
            if self.manifest_enabled
            else None
        )
        self._listing_lock = threading.Lock()
        self._abs_cache: dict[str, str] = {}  # stored location -> absolute
        self._listing: tuple | None = None  # (manifest version, dir key, time, sorted names)

    # -- locations ---------------------------------------------------------------
    def _abs(self, location: str) -> str:
        absolute = self._abs_cache.get(location)
        if absolute is None:
            if storage.is_uri(location) or os.path.isabs(location):
                absolute = storage.resolve(self.root, location)
            else:
                absolute = storage.join(self.root, location)
            if len(self._abs_cache) > 100_000:  # bounded; a describe-heavy server reuses it
                self._abs_cache.clear()
            self._abs_cache[location] = absolute
        return absolute

    def _stored(self, location: str) -> str:
        """An absolute location -> what the manifest stores (relative inside the root)."""
        if storage.is_within(self.root, location):
            return location[len(self.root):].strip("/")
        return location

    def _checked_location(self, raw: str) -> str:
        location = storage.resolve(self.root, raw)
        if location.rstrip("/") == self.root.rstrip("/"):
            raise InvalidInputError("a table location cannot be the namespace root itself")
        if not storage.is_within(self.root, location):
            if not self.allow_external:
                raise InvalidInputError(
                    f"location {raw!r} is outside the namespace root {self.root!r} "
                    "(set allow_external_locations=true to allow it)"
                )
        else:
            first = self._stored(location).split("/", 1)[0]
            if first == MANIFEST_DIR:
                raise InvalidInputError(f"location {raw!r} is inside the namespace's own manifest")
        return location

    def _root_dir(self, name: str) -> str:
        return storage.join(self.root, name + TABLE_SUFFIX)

    # -- lookups -------------------------------------------------------------------
    def _require_namespace(self, ns: list[str]) -> Entry | None:
        if not ns:
            return None
        _check_names(ns)
        entry = self.manifest.get(object_id(ns)) if self.manifest else None
        if entry is None or entry.kind != NAMESPACE:
            raise NamespaceNotFoundError(f"namespace {to_string(ns)!r} does not exist")
        return entry

    def _taken_dirs(self):
        """Root directories the manifest's locations live in (not tables of their own)."""
        return self.manifest.root_dirs() if self.manifest is not None else {}

    def _listed_root_table(self, name: str) -> str | None:
        """The directory of root table ``name`` found by listing, or None."""
        if not self.dir_listing_enabled:
            return None
        taken = self._taken_dirs()
        candidates = [name + TABLE_SUFFIX]
        if self.bare_table_dirs and not name.startswith(("_", ".")):
            candidates.append(name)
        for dirname in candidates:
            if dirname in taken:
                continue
            location = storage.join(self.root, dirname)
            if self.files.kind(location) == "dir" and not self.files.exists(storage.join(location, DEREGISTERED)):
                return location
        return None

    def _find_table(self, ns: list[str], name: str) -> _Table | None:
        if self.manifest is not None:
            entry = self.manifest.get(object_id(ns + [name]))
            if entry is not None:
                if entry.kind != TABLE:
                    return None
                return _Table(ns, name, self._abs(entry.location), entry)
        if not ns:
            location = self._listed_root_table(name)
            if location:
                return _Table([], name, location, None)
        return None

    def _table(self, table_id) -> _Table:
        ns, name = split_table_id(table_id)
        _check_names(ns + [name])
        found = self._find_table(ns, name)
        if found is None:
            self._require_namespace(ns)
            raise TableNotFoundError(f"table {to_string(ns + [name])!r} does not exist")
        return found

    def _name_taken(self, ns: list[str], name: str) -> str | None:
        """What already uses ``name`` in ``ns`` ('table', 'namespace' or None)."""
        if self.manifest is not None:
            entry = self.manifest.get(object_id(ns + [name]))
            if entry is not None:
                return entry.kind
        if not ns and self._listed_root_table(name):
            return TABLE
        return None

    # -- root listing ------------------------------------------------------------------
    def _root_tables(self, continuation: bool) -> list[str]:
        mversion = 0
        if self.manifest is not None:
            self.manifest.refresh()
            mversion = self.manifest.version
        key = self.files.mtime(self.root) if self.local else None
        now = time.monotonic()
        cached = self._listing
        if cached and cached[0] == mversion:
            if self.local and cached[1] == key:
                return cached[3]
            if not self.local and (now - cached[2] < (_REMOTE_LISTING_TTL if continuation else 1.0)):
                return cached[3]
        with self._listing_lock:
            names = set(self.manifest.children("", TABLE)) if self.manifest else set()
            if self.dir_listing_enabled:
                names |= self._scan_root()
            listing = sorted(names)
            self._listing = (mversion, key, now, listing)
            return listing

    def _scan_root(self) -> set[str]:
        taken = self._taken_dirs()
        found = set()
        for dirname, is_dir in self.files.list_dir(self.root):
            if not is_dir or dirname in taken:
                continue
            if dirname.endswith(TABLE_SUFFIX):
                name = dirname[: -len(TABLE_SUFFIX)]
            elif self.bare_table_dirs and not dirname.startswith(("_", ".")):
                name = dirname
            else:
                continue
            if name_problem(name) or ID_DELIMITER in name:
                continue
            if self.files.exists(storage.join(self.root, dirname, DEREGISTERED)):
                continue
            found.add(name)
        return found

    def _invalidate_listing(self) -> None:
        self._listing = None

    # -- namespaces ----------------------------------------------------------------------
    def create_namespace(self, request):
        ns = _check_names(validate_id(request.id))
        mode = CreateMode.parse(request.mode, CreateMode.CREATE)
        if not ns:
            raise InvalidInputError("the root namespace always exists and cannot be created")
        if self.manifest is None:
            raise UnsupportedOperationError("child namespaces need manifest_enabled=true")
        self._require_namespace(ns[:-1])
        props = dict(request.properties or {})
        taken = self._name_taken(ns[:-1], ns[-1])
        if taken == TABLE:
            raise NamespaceAlreadyExistsError(f"{to_string(ns)!r} is already the name of a table")
        if taken == NAMESPACE:
            existing = self.manifest.get(object_id(ns))
            if mode is CreateMode.CREATE:
                raise NamespaceAlreadyExistsError(f"namespace {to_string(ns)!r} already exists")
            if mode is CreateMode.EXIST_OK:
                return CreateNamespaceResponse(properties=dict(existing.properties or {}))
            self._drop_namespace_tree(ns, existing, DropBehavior.RESTRICT)
        try:
            self.manifest.insert(Entry(object_id(ns), NAMESPACE, None, props or None))
        except Exists as e:
            if e.entry.kind == NAMESPACE and mode is CreateMode.EXIST_OK:
                return CreateNamespaceResponse(properties=dict(e.entry.properties or {}))
            raise NamespaceAlreadyExistsError(f"namespace {to_string(ns)!r} already exists") from None
        self._check_parent_survived(ns[:-1], object_id(ns))
        return CreateNamespaceResponse(properties=props)

    def list_namespaces(self, request):
        ns = _check_names(validate_id(request.id))
        self._require_namespace(ns)
        names = self.manifest.children(object_id(ns), NAMESPACE) if self.manifest else []
        page, token = paginate(names, request.limit, request.page_token)
        return ListNamespacesResponse(namespaces=page, page_token=token)

    def describe_namespace(self, request):
        entry = self._require_namespace(_check_names(validate_id(request.id)))
        return DescribeNamespaceResponse(properties=dict(entry.properties or {}) if entry else {})

    def namespace_exists(self, request):
        self._require_namespace(_check_names(validate_id(request.id)))
        return NamespaceExistsResponse()

    def drop_namespace(self, request):
        ns = _check_names(validate_id(request.id))
        mode = DropMode.parse(request.mode, DropMode.FAIL)
        behavior = DropBehavior.parse(request.behavior, DropBehavior.RESTRICT)
        if not ns:
            raise InvalidInputError("the root namespace cannot be dropped")
        try:
            entry = self._require_namespace(ns)
        except NamespaceNotFoundError:
            if mode is DropMode.SKIP:
                return DropNamespaceResponse()
            raise
        self._drop_namespace_tree(ns, entry, behavior)
        return DropNamespaceResponse(properties=dict(entry.properties or {}))

    def _drop_namespace_tree(self, ns: list[str], entry: Entry, behavior: DropBehavior) -> None:
        oid = object_id(ns)
        inside = self.manifest.descendants(oid)
        if inside and behavior is DropBehavior.RESTRICT:
            tables = sum(e.kind == TABLE for e in inside)
            raise NamespaceNotEmptyError(
                f"namespace {to_string(ns)!r} is not empty ({len(inside) - tables} namespaces, {tables} tables)"
            )
        # Entries first, in one commit: a failure afterwards leaves orphan files,
        # never an entry pointing at deleted data.
        if not self.manifest.delete([e.object_id for e in inside] + [oid]):
            raise NamespaceNotFoundError(f"namespace {to_string(ns)!r} does not exist")  # a racing drop won
        late = self.manifest.descendants(oid)
        if late and behavior is DropBehavior.RESTRICT:
            # Entries declared into the namespace after our emptiness check: the
            # namespace was not empty after all.  Put it back; a declare that looks
            # (see _check_parent_survived) while it is gone withdraws itself.
            try:
                self.manifest.insert(entry)
            except Exists:
                pass
            raise NamespaceNotEmptyError(f"namespace {to_string(ns)!r} is not empty (entries added meanwhile)")
        if late:  # Cascade: what arrived meanwhile was inside too
            self.manifest.delete([e.object_id for e in late])
            inside += late
        for e in inside:
            if e.kind == TABLE and e.location:
                self.files.delete_tree(self._abs(e.location))

    # -- tables ------------------------------------------------------------------------------
    def list_tables(self, request):
        ns = _check_names(validate_id(request.id))
        self._require_namespace(ns)
        if ns:
            names = self.manifest.children(object_id(ns), TABLE)
        else:
            names = self._root_tables(continuation=bool(request.page_token))
        if request.include_declared is False:
            names = [n for n in names if self.files.has_versions(self._find_table(ns, n).location)]
        page, token = paginate(names, request.limit, request.page_token)
        return ListTablesResponse(tables=page, page_token=token)

    def describe_table(self, request):
        t = self._table(request.id)
        resp = DescribeTableResponse(
            table=t.name,
            namespace=t.ns,
            location=t.location,
            table_uri=t.location,
            storage_options=self.storage_options or None,
            properties=t.properties or None,
        )
        if request.load_detailed_metadata or request.version is not None or request.tag or request.check_declared:
            detail.fill_detail(resp, t.location, self.storage_options, request)
        return resp

    def table_exists(self, request):
        t = self._table(request.id)
        if request.version is not None:
            detail.open_dataset(t.location, self.storage_options, request.version)
        return TableExistsResponse()

    def declare_table(self, request):
        ns, name = split_table_id(request.id)
        _check_names(ns + [name])
        self._require_namespace(ns)
        props = dict(request.properties or {})
        if request.location:
            location = self._checked_location(request.location)
        elif ns:
            location = storage.join(self.root, nested_dir_name(object_id(ns + [name])))
        else:
            location = self._root_dir(name)
        if self._name_taken(ns, name):
            raise TableAlreadyExistsError(f"table {to_string(ns + [name])!r} already exists")
        if not ns and not request.location and self.files.exists(location):
            raise TableAlreadyExistsError(
                f"{location!r} already holds a (deregistered) table; register it or drop its directory"
            )
        marker = storage.join(location, RESERVED)
        if self.manifest is None:
            if ns or request.location:
                raise UnsupportedOperationError("declaring nested or relocated tables needs manifest_enabled=true")
            if not self.files.write(marker, MARKER_BODY, exclusive=True):
                raise TableAlreadyExistsError(f"table {name!r} already exists")
        else:
            oid = object_id(ns + [name])
            try:
                self.manifest.insert(Entry(oid, TABLE, self._stored(location), props or None))
            except Exists:
                raise TableAlreadyExistsError(f"table {to_string(ns + [name])!r} already exists") from None
            try:
                self.files.write(marker, MARKER_BODY)
            except Exception:
                self.manifest.delete([oid])  # nothing is left of a declaration that failed
                raise
            self._check_parent_survived(ns, oid)
        self._invalidate_listing()
        return DeclareTableResponse(
            location=location, storage_options=self.storage_options or None, properties=props or None
        )

    def _check_parent_survived(self, ns: list[str], oid: str) -> None:
        """After adding ``oid``: if a racing DropNamespace removed its namespace
        meanwhile, the drop won -- withdraw the entry rather than orphan it."""
        if ns and self.manifest.get(object_id(ns)) is None:
            self.manifest.delete([oid])
            raise NamespaceNotFoundError(f"namespace {to_string(ns)!r} was dropped meanwhile")

    def register_table(self, request):
        ns, name = split_table_id(request.id)
        _check_names(ns + [name])
        mode = RegisterMode.parse(request.mode, RegisterMode.CREATE)
        self._require_namespace(ns)
        location = self._checked_location(request.location)
        if storage.lance_version(location, self.storage_options) is None:
            raise InvalidInputError(f"no Lance table at {request.location!r}")
        props = dict(request.properties or {})
        existing = self._find_table(ns, name)
        if existing is not None and mode is RegisterMode.CREATE:
            raise TableAlreadyExistsError(f"table {to_string(ns + [name])!r} already exists")
        if existing is None and self._name_taken(ns, name):
            raise TableAlreadyExistsError(f"{to_string(ns + [name])!r} is already the name of a namespace")
        natural = not ns and location.rstrip("/") == self._root_dir(name)
        if self.manifest is None:
            if not natural:
                raise UnsupportedOperationError(
                    "without manifest_enabled only a root table's own <name>.lance directory can be registered"
                )
        else:
            oid = object_id(ns + [name])
            if existing is not None and existing.entry is not None:
                self.manifest.delete([oid])
            try:
                self.manifest.insert(Entry(oid, TABLE, self._stored(location), props or None))
            except Exists:
                raise TableAlreadyExistsError(f"table {to_string(ns + [name])!r} already exists") from None
            self._check_parent_survived(ns, oid)
        if natural:
            self.files.delete_file(storage.join(location, DEREGISTERED))
        self._invalidate_listing()
        return RegisterTableResponse(location=location, properties=props or None)

    def deregister_table(self, request):
        t = self._table(request.id)
        if t.entry is not None:
            self._delete_entry(t)
        if not t.ns and storage.is_within(self.root, t.location) and "/" not in self._stored(t.location):
            # a root directory would be found again by listing: mark it, as pylance does
            self.files.write(storage.join(t.location, DEREGISTERED), MARKER_BODY)
        self._invalidate_listing()
        return DeregisterTableResponse(id=t.ns + [t.name], location=t.location, properties=t.properties or None)

    def _delete_entry(self, t: _Table) -> None:
        """Remove a table's manifest entry; a racing drop that removed it first won,
        and this one touches nothing more (not the data)."""
        if not self.manifest.delete([t.entry.object_id]):
            raise TableNotFoundError(f"table {to_string(t.ns + [t.name])!r} does not exist")

    def drop_table(self, request):
        t = self._table(request.id)
        if t.entry is not None:
            self._delete_entry(t)
        self.files.delete_tree(t.location)
        self._invalidate_listing()
        return DropTableResponse(id=t.ns + [t.name], location=t.location, properties=t.properties or None)
