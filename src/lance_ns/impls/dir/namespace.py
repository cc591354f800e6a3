"""DirectoryNamespace: Lance tables in a directory, on local disk or object storage.

A :class:`~lance_ns.catalog.CatalogNamespace` like every catalog backend: the
spec's rules (request options, modes, paging, locations, what a drop deletes)
are the shared ones; this module supplies only the primitives, whose "catalog"
is the ``__manifest`` table (nested namespaces, registered locations) plus the
root directory's listing (``<name>.lance`` directories), and the marker files
of pylance's layout (see layout.py).  Two things are specific to directories
and stay here: a Cascade drop removes every entry of the tree in one manifest
commit, and the root listing is cached between pages.

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
  are root tables too (a directory named ``<x>.lance`` is always table ``x``,
  never a bare table ``x.lance``: one directory, one id);
* ``allow_external_locations`` (default false): RegisterTable/DeclareTable may
  point outside the root;
* ``manifest_compact_every`` (default 32), ``manifest_retain_versions``
  (default 8): manifest upkeep (see manifest.py);
* ``manifest_staleness_ms`` (default 0): how long reads (describe, exists, list)
  may answer from the in-memory manifest without checking its latest version.
  0 checks on every read, so a commit by any process is seen by the very next
  request; on object storage, where the check is a LIST request, a bound such as
  1000 saves those LISTs at the price of seeing other processes' commits up to
  that late (this server's own commits are seen at once);
* ``managed_versioning`` (or pylance's name ``table_version_tracking_enabled``,
  default false): tables created from then on are implementation-managed; their
  published versions are rows of lance-ns's own version store
  ``<root>/_lance_ns/table_versions`` (a Lance table with ``__manifest``'s schema and
  rules), granted one per version by its conditional insert, several tables in one
  commit.  Never rows of ``__manifest``: pylance's DirectoryNamespace refuses object
  types it does not know, and rows earlier releases kept there are moved out on load.

What a drop deletes: the directory of a table whose location is the one the
layout gives its id (``<root>/<name>.lance``, a listed ``<root>/<name>/``, or a
nested table's ``<root>/<hash8>_<ns$...$name>``); a table registered anywhere
else keeps its data unless the request's context says ``purge``.
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import os
import re
import threading
import time
import uuid
from dataclasses import dataclass, replace

from ... import storage
from ...base import MEMORY_READS, loop_turn, refuse_blocking
from ...catalog import CatalogNamespace
from ...catalog.entry import CatalogTable, is_managed, overlaps
from ...directory_stamp import RACY_NS, DirectoryStamp
from ...errors import (
    ConcurrentModificationError,
    InvalidInputError,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NamespaceNotFoundError,
    TableAlreadyExistsError,
    TableNotFoundError,
    UnsupportedOperationError,
)
from ...identifiers import name_problem, split_table_id, to_string
from ...modes import DropBehavior
from ...paging import CONTINUATION_TTL
from .layout import (
    DEREGISTERED,
    ID_DELIMITER,
    MARKER_BODY,
    REGISTERED,
    RESERVED,
    TABLE_SUFFIX,
    VERSIONS_STORE_DIR,
    Files,
    is_local,
    nested_dir_name,
    object_id,
)
from .history import HISTORY_KEY, VersionStoreHistory, history_id
from .manifest import Exists, Manifest
from .view import NAMESPACE, TABLE, Entry

log = logging.getLogger(__name__)

#: a nested table's directory as pylance names it: ``<8 hex>_<object id>``
_NESTED_DIR = re.compile(r"^[0-9a-f]{8}_(?P<oid>.+)$")


@dataclass
class _DirTable(CatalogTable):
    entry: Entry | None = None  # None: found by listing the root directory


def _check_names(parts: list[str]) -> list[str]:
    for p in parts:
        if ID_DELIMITER in p:
            raise InvalidInputError(f"invalid name {p!r}: the directory namespace reserves {ID_DELIMITER!r}")
    return parts


#: the root listings' states numbered in one sequence (next() is atomic: no two share a number)
_LISTINGS = itertools.count(1)


class DirectoryNamespace(CatalogNamespace):
    min_table_depth = 0  # the root holds tables
    catalog_in_storage = True  # __manifest and the root listing are the catalog
    marks_lance_tables = False  # every table of a directory is a Lance table
    location_suffix = TABLE_SUFFIX

    supports_managed_versioning = True
    history_store = VersionStoreHistory

    def __init__(self, **properties: str):
        super().__init__(**properties)
        self.root = storage.normalize_root(self.prop("root", required=True))
        self._in_root = storage.join(self.root, "")  # + a directory name: its location (a bulk makes thousands)
        self.local = is_local(self.root)
        self.manifest_enabled = self.bool_prop("manifest_enabled", True)
        self.dir_listing_enabled = self.bool_prop("dir_listing_enabled", True)
        self.bare_table_dirs = self.bool_prop("bare_table_dirs", True)
        self.allows_external_locations = self.bool_prop("allow_external_locations", False)
        self.files = Files(self.root, self.storage_options)
        #: why writes are refused here (an object store ignoring conditional PUTs, asked
        #: once per bucket and process at connect): a lost commit is never risked
        self.write_refusal = None if self.local else storage.conditional_put_refusal(self.root, self.storage_options)
        self.manifest = (
            Manifest(
                self.root,
                self.storage_options,
                compact_every=self.int_prop("manifest_compact_every", 32),
                retain_versions=self.int_prop("manifest_retain_versions", 8, minimum=1),
                staleness=self.int_prop("manifest_staleness_ms", 0) / 1000,
                remote=not self.local,
                write_refusal=self.write_refusal,
            )
            if self.manifest_enabled
            else None
        )
        #: the published versions of managed tables (see the module docstring)
        self.version_store = None
        if self.manifest is None:
            self.supports_managed_versioning = False
            self.managed_refusal = "the version history lives beside __manifest, which needs manifest_enabled=true"
        else:
            self.version_store = Manifest(
                self.root, self.storage_options, directory=VERSIONS_STORE_DIR,
                compact_every=self.int_prop("manifest_compact_every", 32),
                retain_versions=self.int_prop("manifest_retain_versions", 8, minimum=1),
                staleness=self.int_prop("manifest_staleness_ms", 0) / 1000, remote=not self.local,
                write_refusal=self.write_refusal,
            )
            self.manifest.move_versions_to = self.history.adopt
        self._listing_lock = threading.Lock()
        self._abs_cache: dict[str, str] = {}  # stored location -> absolute
        # (manifest version, time, sorted names, listed name -> location)
        self._listing: tuple | None = None
        self._listing_generation = next(_LISTINGS)  # new whenever _listing is (answers_stamp)
        #: on local disk the root's stamp: the cached listing holds while it is unchanged
        self._root_stamp = DirectoryStamp(self.root) if self.local else None
        self._root_checked: tuple | None = None  # (loop turn, root stamp): _root_in_turn
        self._paging = threading.local()

    @property
    def server_threads(self) -> int:
        """On local disk a call is short and busy (pylance, the manifest in memory): more
        threads than this only contend for the GIL; object storage waits on the network."""
        return 16 if self.local else 32

    @property
    def inline_methods(self) -> frozenset[str]:
        """Answered from the in-memory manifest view once its freshness check passes
        (a local directory listing; on object storage only within ``manifest_staleness_ms``)."""
        return MEMORY_READS if self.manifest is not None else frozenset()

    def answers_stamp(self, method, ident):
        """What the inline reads answer from, on local disk: the manifest's and the version
        store's views and, where tables are also found by listing the root, the root
        directory's listing and its stamp.  Only once the root has been still for
        :data:`~lance_ns.directory_stamp.RACY_NS`: any later change to it then moves its
        times (a change in the same clock tick might not).  None on object storage (a
        version check there is a request) and without a manifest."""
        if self.manifest is None or self._root_stamp is None:
            return None
        root = None
        if self.dir_listing_enabled:
            if not self._root_stamp.trusted:
                return None
            root = self._root_in_turn(loop_turn())
            if root is None or max(root[0], root[1]) >= time.time_ns() - RACY_NS:
                return None
        return self.manifest.generation(), self.version_store.generation(), self._listing_generation, root

    def _root_in_turn(self, turn: object | None) -> tuple | None:
        """The root's stamp, read once per turn of the REST server's event loop (as the
        manifest checks its version once per turn: :func:`lance_ns.base.loop_turn`)."""
        checked = self._root_checked
        if turn is not None and checked is not None and checked[0] is turn:
            return checked[1]
        root = self._root_stamp.read()
        self._root_checked = (turn, root)
        return root

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
        if location.startswith(self._in_root):  # (a bulk declaration stores thousands)
            return location[len(self._in_root):].strip("/")
        if storage.is_within(self.root, location):
            return location[len(self.root):].strip("/")
        return location

    def _root_dir(self, name: str) -> str:
        return storage.join(self.root, name + TABLE_SUFFIX)

    def default_location(self, ns: list[str], name: str) -> str:
        if ns:
            return self._in_root + nested_dir_name(object_id(ns + [name]))
        return self._root_dir(name)

    def table_location_for(self, table_id: list[str], seed: str | None = None) -> str:
        """The default location, its random directory name drawn from ``seed`` when given."""
        ns, name = split_table_id(table_id)
        if not ns or seed is None:
            return self.default_location(ns, name)
        drawn = hashlib.sha256(seed.encode()).hexdigest()[:8]
        return self._in_root + f"{drawn}_{object_id(ns + [name])}"

    def owns_location(self, ns: list[str], name: str, location: str) -> bool:
        if not storage.is_within(self.root, location):
            return False
        rel = self._stored(location)
        if "/" in rel or not rel:
            return False
        if not ns:
            return rel == name + TABLE_SUFFIX or (rel == name and self.bare_table_dirs)
        m = _NESTED_DIR.match(rel)
        return bool(m) and m.group("oid") == object_id(ns + [name])

    def check_layout(self, ns: list[str], name: str, location: str, raw: str) -> None:
        """The manifest knows every entry, the root listing every root table: no
        overlap with any of them, nor with another id's place in the layout."""
        oid = object_id(ns + [name])
        if self.manifest is not None:
            for e in self.manifest.entries(TABLE):
                if e.object_id != oid and e.location and overlaps(self._abs(e.location), location):
                    raise InvalidInputError(
                        f"location {raw!r} overlaps the location of table {to_string(e.object_id.split(ID_DELIMITER))!r}"
                    )
        if not storage.is_within(self.root, location):
            return
        first = self._stored(location).split("/", 1)[0]
        inside = "/" in self._stored(location)
        listed = {loc: n for n, loc in self._root_listing(False)[1].items()}
        owner_dir = storage.join(self.root, first)
        owner = listed.get(owner_dir)
        if owner is not None and not first.endswith(TABLE_SUFFIX) and not self._is_table_dir(owner_dir):
            owner = None  # a bare directory merely holding tables is no table to protect
        if owner is not None and (owner != name or ns or inside):
            raise InvalidInputError(f"location {raw!r} overlaps the directory of root table {owner!r}")
        if first.endswith(TABLE_SUFFIX) and (ns or first != name + TABLE_SUFFIX):
            other = first[: -len(TABLE_SUFFIX)]
            # inside: the place of root table ``other`` (whose data would be mixed
            # with this one's); equal: refused only while ``other`` exists
            if inside or self.get_table_entry([], other) is not None:
                raise InvalidInputError(f"location {raw!r} is, or lies inside, the directory of root table {other!r}")
        # A nested table's directory name is random (``<hash8>_<oid>``): it is
        # nobody's place in the layout once its entry is gone, so a deregistered
        # nested table may be registered under another name; only its inside is off limits.
        m = _NESTED_DIR.match(first)
        if m and inside:
            raise InvalidInputError(
                f"location {raw!r} lies inside the directory pylance's layout gives table "
                f"{to_string(m.group('oid').split(ID_DELIMITER))!r}"
            )

    # -- lookups -------------------------------------------------------------------
    def _held_by_manifest(self, dirname: str) -> bool:
        """Whether a manifest entry lives in root directory ``dirname`` (it is then not a
        table of its own), as of the manifest version the caller checked."""
        return self.manifest is not None and self.manifest.holds_dir(dirname)

    def _listed_root_table(self, name: str) -> str | None:
        """The directory of root table ``name`` found by listing, or None."""
        if not self.dir_listing_enabled:
            return None
        refuse_blocking("looking for a root table's directory")
        if self.manifest is not None:
            self.manifest.current()
        candidates = [name + TABLE_SUFFIX]
        if self._bare_name(name):
            candidates.append(name)
        for dirname in candidates:
            if self._held_by_manifest(dirname):
                continue
            location = storage.join(self.root, dirname)
            if self.files.kind(location) == "dir" and not self.files.exists(storage.join(location, DEREGISTERED)):
                return location
        return None

    def _is_table_dir(self, location: str) -> bool:
        """Whether a directory is a Lance table itself (data, or a declared table's marker)."""
        return self.files.has_versions(location) or self.files.exists(storage.join(location, RESERVED))

    def _bare_name(self, dirname: str) -> bool:
        """Whether a root directory of this name may be a bare (seed spec) table directory."""
        return self.bare_table_dirs and not dirname.startswith(("_", ".")) and not dirname.endswith(TABLE_SUFFIX)

    def _table_of(self, ns: list[str], name: str, entry: Entry) -> _DirTable:
        return _DirTable(name=name, location=self._abs(entry.location), properties=dict(entry.properties or {}),
                         entry=entry)

    # -- root listing ------------------------------------------------------------------
    def _root_listing(self, continuation: bool) -> tuple[list[str], dict[str, str]]:
        """(sorted names of the root tables, listed name -> location), cached."""
        mversion = 0
        if self.manifest is not None:
            self.manifest.current()
            mversion = self.manifest.version
        now = time.monotonic()
        cached = self._listing
        if cached and cached[0] == mversion:
            if self._root_stamp is not None and self._root_stamp.unchanged(mversion):
                return cached[2], cached[3]
            if not self.local and (now - cached[1] < (CONTINUATION_TTL if continuation else 1.0)):
                return cached[2], cached[3]
        refuse_blocking("listing the root directory")
        with self._listing_lock:
            token = self._root_stamp.before_listing() if self._root_stamp is not None else None
            names = set(self.manifest.children("", TABLE)) if self.manifest else set()
            listed = self._scan_root() if self.dir_listing_enabled else {}
            listed = {n: loc for n, loc in listed.items() if n not in names}
            listing = sorted(names | set(listed))
            self._listing = (mversion, now, listing, listed)
            self._listing_generation = next(_LISTINGS)
            if token is not None:
                self._root_stamp.after_listing(token, mversion)
            return listing, listed

    def _scan_root(self) -> dict[str, str]:
        """(The caller checked the manifest's version: :meth:`_root_listing`.)"""
        found: dict[str, str] = {}
        for dirname, is_dir in self.files.list_dir(self.root):
            if not is_dir or self._held_by_manifest(dirname):
                continue
            if dirname.endswith(TABLE_SUFFIX):
                name = dirname[: -len(TABLE_SUFFIX)]
            elif self._bare_name(dirname):
                name = dirname
            else:
                continue
            if name_problem(name) or ID_DELIMITER in name:
                continue
            location = storage.join(self.root, dirname)
            if self.files.exists(storage.join(location, DEREGISTERED)):
                continue
            if name not in found or dirname.endswith(TABLE_SUFFIX):  # <name>.lance before <name>/
                found[name] = location
        return found

    def _invalidate_listing(self) -> None:
        self._listing = None
        self._listing_generation = next(_LISTINGS)

    # -- primitives: namespaces -------------------------------------------------------
    def get_namespace_entry(self, ns):
        _check_names(ns)
        entry = self.manifest.get(object_id(ns)) if self.manifest else None
        if entry is None or entry.kind != NAMESPACE:
            return None
        return dict(entry.properties or {})

    def list_namespace_names(self, parent):
        return self.manifest.children(object_id(parent), NAMESPACE) if self.manifest else []

    def create_namespace_entry(self, ns, properties):
        if self.manifest is None:
            raise UnsupportedOperationError("child namespaces need manifest_enabled=true")
        if len(ns) == 1 and self._listed_root_table(ns[0]):
            raise NamespaceAlreadyExistsError(f"{to_string(ns)!r} is already the name of a table")
        try:
            self.manifest.insert(Entry(object_id(ns), NAMESPACE, None, properties or None))
        except Exists as e:
            what = "namespace" if e.entry.kind == NAMESPACE else "table"
            raise NamespaceAlreadyExistsError(f"{to_string(ns)!r} is already the name of a {what}") from None
        self._check_parent_survived(ns[:-1], [object_id(ns)])

    def delete_namespace_entry(self, ns):
        return self.manifest.delete([object_id(ns)]) > 0

    def drop_namespace_checked(self, ns, behavior, purge=False):
        """The whole tree in one manifest commit (entries first: a failure
        afterwards leaves orphan files, never an entry pointing at deleted data)."""
        oid = object_id(ns)
        inside = self.manifest.descendants(oid)
        if inside and behavior is DropBehavior.RESTRICT:
            tables = sum(e.kind == TABLE for e in inside)
            raise NamespaceNotEmptyError(
                f"namespace {to_string(ns)!r} is not empty ({len(inside) - tables} namespaces, {tables} tables)"
            )
        entry = self.manifest.get(oid)
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
        dropped = []
        for e in inside:
            if e.kind == TABLE and e.location:
                parts = e.object_id.split(ID_DELIMITER)
                table = self._table_of(parts[:-1], parts[-1], e)
                dropped.append(table)
                if self.deletes_data_of(parts[:-1], table, purge):
                    self.files.delete_tree(table.location)
        self.history.forget(dropped)

    # -- primitives: tables -------------------------------------------------------------
    def list_table_entries(self, ns):
        if ns:
            return [self._table_of(ns, n, self.manifest.get(object_id(ns + [n])))
                    for n in self.manifest.children(object_id(ns), TABLE)]
        names, listed = self._root_listing(False)
        return [
            _DirTable(name=n, location=listed[n]) if n in listed else self._table_of([], n, self.manifest.get(n))
            for n in names
        ]

    def lance_table_names(self, ns):
        if ns:
            return self.manifest.children(object_id(ns), TABLE)
        return self._root_listing(getattr(self._paging, "continuation", False))[0]

    def lance_table_page(self, ns, limit, page_token, keep=None):
        # a continuation page reuses a remote root listing longer (consistent pages)
        self._paging.continuation = bool(page_token)
        try:
            return super().lance_table_page(ns, limit, page_token, keep)
        finally:
            self._paging.continuation = False

    def get_table_entry(self, ns, name):
        _check_names(ns + [name])
        if self.manifest is not None:
            entry = self.manifest.get(object_id(ns + [name]))
            if entry is not None:
                return self._table_of(ns, name, entry) if entry.kind == TABLE else None
        if not ns:
            location = self._listed_root_table(name)
            if location:
                return _DirTable(name=name, location=location)
        return None

    def create_table_entry(self, ns, table):
        if self.manifest is None:
            if ns or table.location.rstrip("/") != self._root_dir(table.name):
                raise UnsupportedOperationError(
                    "without manifest_enabled a table is a root table in its own <name>.lance directory"
                )
            return  # the reserved marker (DeclareTable) or the data (RegisterTable) is the table
        self.create_table_entries([(ns, table)])

    def create_table_entries(self, planned):
        """Every entry in one manifest commit (a bulk declare costs one commit, not one per table)."""
        if self.manifest is None:
            return super().create_table_entries(planned)
        entries = []
        for ns, table in planned:
            if is_managed(table) and HISTORY_KEY not in table.properties:
                table.properties[HISTORY_KEY] = uuid.uuid4().hex  # this table's own, never inherited
            entries.append(Entry(object_id(ns + [table.name]), TABLE, self._stored(table.location),
                                 table.properties or None))
        try:
            self.manifest.insert_many(entries)
        except Exists as e:
            raise TableAlreadyExistsError(f"{to_string(e.entry.object_id.split(ID_DELIMITER))!r} already exists") from None
        finally:
            self._invalidate_listing()
        for ns in {tuple(ns) for ns, _ in planned}:  # a declare or register racing a DropNamespace
            self._check_parent_survived(list(ns), [e.object_id for e in entries])

    def delete_table_entry(self, ns, name):
        try:
            entry = self.manifest.get(object_id(ns + [name])) if self.manifest else None
            if entry is None:
                return None  # a listed root table: its directory is the table
            return self.manifest.delete([entry.object_id]) > 0
        finally:
            self._invalidate_listing()

    # A root table's directory is found by listing: one left holding a dropped
    # marker would be listed as a table again (by pylance too), so dir deletes
    # the whole directory; a new table of the name may then reuse it.
    keeps_dropped_marker = False

    def remove_table_entry(self, ns, table):
        # By the entry the table was found with: looked up again, a racing drop's
        # removal would read as "a listed root table" (its directory is still there).
        if table.entry is None:
            return  # found by listing the root: the directory is the table
        try:
            if not self.manifest.delete([table.entry.object_id]):
                raise TableNotFoundError(f"table {to_string(ns + [table.name])!r} does not exist")  # a racing drop won
        finally:
            self._invalidate_listing()

    def drop_table_checked(self, ns, table, purge=False):
        super().drop_table_checked(ns, table, purge)
        self._invalidate_listing()  # the directory is gone now too
        self.history.forget([table])

    def rename_table_entry(self, ns, table, new_ns, new_name):
        """Renames are manifest entries: the new entry, then the old one's removal
        (the shared algorithm decides the one winner).  A root table found by
        listing its ``<name>.lance`` directory is first adopted into the manifest
        under its current name, so that racing renames of it have one entry to
        remove; after the rename its directory gets pylance's deregistered marker,
        so no reader lists it under the old name again."""
        if self.manifest is None:
            raise UnsupportedOperationError(
                "without manifest_enabled a table's name is its <name>.lance directory: rename needs the manifest"
            )
        if table.entry is None:
            stored = self._stored(table.location)
            try:
                self.manifest.insert(Entry(table.name, TABLE, stored, table.properties or None))
            except Exists as e:
                if e.entry.location != stored:
                    raise ConcurrentModificationError(f"table {table.name!r} changed concurrently") from None
            finally:
                self._invalidate_listing()
            table = replace(table, entry=self.manifest.get(table.name))
        if is_managed(table) and HISTORY_KEY not in table.properties:
            # made before HISTORY_KEY: its history is under the old object id, and goes on there
            table = replace(table, properties={**table.properties, HISTORY_KEY: history_id(table)})
        try:
            super().rename_table_entry(ns, table, new_ns, new_name)
        finally:
            self._invalidate_listing()
        if storage.is_within(self.root, table.location) and "/" not in self._stored(table.location):
            self.files.write(storage.join(table.location, DEREGISTERED), MARKER_BODY)

    # -- the layout's marker files --------------------------------------------------------
    def declare(self, request):
        if request.location is None and self.manifest is not None:
            ns, name = split_table_id(request.id)
            if not ns and self.files.exists(self._root_dir(name)) and self.get_table_entry(ns, name) is None:
                raise TableAlreadyExistsError(
                    f"{self._root_dir(name)!r} already holds a (deregistered) table; register it or drop its directory"
                )
        return super().declare(request)

    def after_declare(self, ns, table):
        marker = storage.join(table.location, RESERVED)
        if self.manifest is None:
            if not self.files.write(marker, MARKER_BODY, exclusive=True):
                raise TableAlreadyExistsError(f"table {table.name!r} already exists")
        else:
            try:
                self.files.write(marker, MARKER_BODY)
            except Exception:
                self.manifest.delete([object_id(ns + [table.name])])  # nothing is left of a failed declaration
                raise
        self._invalidate_listing()

    def bulk_declaration(self, count):
        """The marker files of a bulk declaration, written while it is planned and
        committed (:class:`.layout.MarkerWriter`)."""
        if self.manifest is None or count < 2:  # without the manifest, the marker is the table: one by one
            return super().bulk_declaration(count)
        return _BulkMarkers(self.files.marker_writer(count, MARKER_BODY), self._invalidate_listing)

    def batch_reads(self):
        return self.manifest.one_check() if self.manifest is not None else super().batch_reads()

    def after_register(self, ns, table):
        if not ns and table.location.rstrip("/") == self._root_dir(table.name):
            self.files.delete_file(storage.join(table.location, DEREGISTERED))
            if self.manifest is None:  # no entry records the owner: the directory does
                self.files.write(storage.join(table.location, REGISTERED), MARKER_BODY)
        self._invalidate_listing()

    def owns_data(self, ns, table):
        if table.entry is None and self.files.exists(storage.join(table.location, REGISTERED)):
            return False  # a root table registered without the manifest
        return super().owns_data(ns, table)

    def _check_parent_survived(self, ns: list[str], oids: list[str]) -> None:
        """After adding ``oids``: if a racing DropNamespace removed its namespace
        meanwhile, the drop won -- withdraw the entry rather than orphan it."""
        if ns and self.manifest.get(object_id(ns)) is None:
            self.manifest.delete(oids)
            raise NamespaceNotFoundError(f"namespace {to_string(ns)!r} was dropped meanwhile")

    def after_deregister(self, ns, table):
        self.history.forget([table])
        if not ns and storage.is_within(self.root, table.location) and "/" not in self._stored(table.location):
            # a root directory would be found again by listing: mark it, as pylance does
            self.files.write(storage.join(table.location, DEREGISTERED), MARKER_BODY)
        self._invalidate_listing()

    # -- implementation-managed tables: the history in the version store ----------------------
    def managed_default(self) -> bool:
        return self.bool_prop("managed_versioning", self.bool_prop("table_version_tracking_enabled", False))


class _BulkMarkers:
    """:meth:`DirectoryNamespace.bulk_declaration`: the tables' locations to a MarkerWriter."""

    def __init__(self, writer, invalidate_listing):
        self.writer, self._invalidate_listing = writer, invalidate_listing

    def add(self, ns, table) -> None:
        self.writer.add(table.location)

    def finish(self) -> None:
        try:
            self.writer.finish()
        finally:
            self._invalidate_listing()

    def abandon(self) -> None:
        try:
            self.writer.abandon()
        finally:
            self._invalidate_listing()
