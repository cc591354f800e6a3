"""The Hive namespaces (``hive2``, ``hive3``): the catalog primitives over Thrift calls."""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import time
from urllib.parse import urlparse

from pymetastore.hive_metastore import ttypes as hms

from ... import storage
from ...catalog import CatalogNamespace
from ...catalog.entry import CatalogTable, is_lance_properties
from ...errors import (
    ConcurrentModificationError,
    InternalError,
    InvalidInputError,
    LanceNamespaceError,
    NamespaceNotEmptyError,
    NamespaceNotFoundError,
    PermissionDeniedError,
    ServiceUnavailableError,
    TableAlreadyExistsError,
    TableNotFoundError,
    UnsupportedOperationError,
)
from ...identifiers import to_string
from ...modes import DropBehavior
from ...paging import page_by_loading
from .errors import translate_hms_error
from .pool import ClientPool, parse_uri

EXTERNAL_TABLE = "EXTERNAL_TABLE"
#: what HMS stores a table as without EXTERNAL=TRUE (lance-namespace-impls' Lance tables)
MANAGED_TABLE = "MANAGED_TABLE"
DEFAULT_CATALOG = "hive"  # Hive 3's default catalog (metastore.catalog.default)
#: who holds the metastore locks lance-ns takes (SHOW LOCKS answers it)
LOCK_USER = "lance-ns"
#: what the lock-API probe locks (shared, released at once): a name no table needs
LOCK_PROBE = ("default", "lance_ns_lock_probe")
#: the first and the longest pause between check_lock polls of a waiting lock (doubling).  The
#: metastore grants a waiting lock only when its owner polls check_lock, so a pause past the
#: holder's release is time the table is idle: a commit holds its lock ~25 ms, and a first
#: pause of 50 ms made 4 writers x 6 appends ~20% slower than 10 ms; pauses growing to 1 s
#: made 4 writer processes' rounds ~20% slower than a 100 ms cap (HMS 2.3).  A waiter polls
#: at most 10 times a second, for at most ``lock.timeout-ms``.
LOCK_POLL_FIRST_S, LOCK_POLL_MAX_S = 0.01, 0.1
#: stats the metastore would otherwise compute on alter_table by listing the table's files
NO_STATS = hms.EnvironmentContext(properties={"DO_NOT_UPDATE_STATS": "true"})

log = logging.getLogger(__name__)

DB_SPECIAL = {
    "database.description": "description",
    "database.location-uri": "locationUri",
    "database.owner": "ownerName",
    "database.owner-type": "ownerType",
}
CATALOG_SPECIAL = {"catalog.description": "description", "catalog.location-uri": "locationUri"}
PRINCIPALS = {name: value for value, name in hms.PrincipalType._VALUES_TO_NAMES.items()}

def _location_out(location: str | None) -> str | None:
    """HMS qualifies local paths as ``file:/path``; callers gave (and pylance wants) ``/path``."""
    if location and location.startswith("file:"):
        return urlparse(location).path or location
    return location


def _make_local_directory(location: str | None) -> str | None:
    """Make a local table directory before the metastore would; the path if made here.

    The metastore's create_table makes a missing table directory itself and, when the
    create then fails, deletes what it made, recursively (``madeDir`` in HMS 2.3's and
    3.1's create_table_core).  A create that loses a race to a create of the same table
    fails only once the winner's metastore transaction is done -- by then the winner
    may have written its data there, and the loser's metastore deleted it.  A directory
    that exists before the call is not the metastore's to delete.  (Object-store
    locations are left alone: DeclareTable makes no storage call there.)"""
    if not location or storage.is_uri(location) or os.path.isdir(location):
        return None
    try:
        os.makedirs(location)
    except OSError:
        return None  # made concurrently, or not ours to make: the metastore decides as before
    return location


def _remove_if_empty(path: str) -> None:
    with contextlib.suppress(OSError):  # not empty: someone else's table is there by now
        os.rmdir(path)


def _check_hive_name(name: str) -> str:
    if name != name.lower():
        raise InvalidInputError(
            f"name {name!r} has upper-case letters; the Hive metastore stores names in lower case, "
            f"use {name.lower()!r}"
        )
    return name


# -- the namespaces -----------------------------------------------------------------------


class _HiveBase(CatalogNamespace):
    lance_table_kind = EXTERNAL_TABLE
    supports_cascade = True

    def __init__(self, **properties: str):
        super().__init__(**properties)
        #: how long a commit waits for another commit's table lock before answering 14
        self.lock_timeout_s = self.int_prop("lock.timeout-ms", 30000, minimum=1) / 1000
        self._lock_refusal: str | None = None  # why the metastore grants no locks (probed once)
        self._lock_probed = False
        self._lock_probe_lock = threading.Lock()
        socket_ms = self.int_prop("client.socket-timeout-ms", 60000, minimum=1)
        self.pool = ClientPool(
            parse_uri(self.prop("uri", required=True)),
            size=self.int_prop("client.pool-size", 3, minimum=1),
            connect_timeout_ms=self.int_prop("client.connect-timeout-ms", 10000, minimum=1),
            socket_timeout_ms=socket_ms,
            wait_timeout_s=self.int_prop("client.pool-timeout-ms", socket_ms, minimum=1) / 1000,
        )

    def close(self) -> None:
        self.pool.close()

    def translate_error(self, exc: Exception):
        """The operation boundary's reading of a metastore error that escaped :meth:`_call`."""
        return translate_hms_error(exc, "metastore")

    def _call(self, method: str, *args):
        """One Thrift call on a pooled connection; its failures leave as the
        spec's errors (:func:`.errors.translate_hms_error`).  Arguments are
        computed by the caller first: computing them may need a connection of
        its own (the hive3 capability probe), and nesting leases could exhaust
        the pool."""
        try:
            with self.pool.client() as c:
                return getattr(c, method)(*args)
        except Exception as e:  # noqa: BLE001 - translated, never swallowed
            mapped = translate_hms_error(e, method)
            if mapped is None:
                raise
            raise mapped from e

    # -- mapping of namespace levels to metastore names (per model) ----------------------
    def database_name(self, ns: list[str]) -> str:
        """The Thrift ``dbname`` argument for a database namespace."""
        raise NotImplementedError

    def catalog_of(self, ns: list[str]) -> str | None:
        return None

    # -- databases -------------------------------------------------------------------------
    def _get_database(self, ns: list[str]) -> dict[str, str] | None:
        try:
            db = self._call("get_database", self.database_name(ns))
        except NamespaceNotFoundError:
            return None
        return _db_properties(db)

    def _create_database(self, ns: list[str], properties: dict[str, str]) -> None:
        self._call("create_database", _database(ns[-1], properties, self.catalog_of(ns)))

    def _drop_database(self, ns: list[str]) -> None:
        # deleteData=False: the directory is HMS's bookkeeping, tables' data was handled by us
        self._call("drop_database", self.database_name(ns), False, False)

    # -- tables ------------------------------------------------------------------------------
    def list_table_entries(self, ns):
        if len(ns) not in self.table_depths:
            return []
        dbname = self.database_name(ns)
        return self._tables_named(dbname, self._call("get_all_tables", dbname))

    def lance_table_page(self, ns, limit, page_token, keep=None):
        # HMS lists names cheaply and loads table objects by name: a page loads
        # only the tables it needs, not the database's every table object
        if len(ns) not in self.table_depths:
            return [], None
        dbname = self.database_name(ns)
        names = sorted(set(self._call("get_all_tables", dbname)))
        return page_by_loading(names, limit, page_token, lambda batch: self._tables_named(dbname, batch),
                               self._listed(keep))

    def _tables_named(self, dbname: str, names: list[str]) -> list[CatalogTable]:
        out: list[CatalogTable] = []
        for i in range(0, len(names), 100):  # one call per 100 tables, not one per table
            out += [_catalog_table(t) for t in self._call("get_table_objects_by_name", dbname, names[i : i + 100])]
        return out

    def get_table_entry(self, ns, name):
        _check_hive_name(name)
        try:
            return _catalog_table(self._call("get_table", self.database_name(ns), name))
        except (TableNotFoundError, NamespaceNotFoundError):
            return None

    def create_table_entry(self, ns, table):
        _check_hive_name(table.name)
        params = dict(table.properties)
        params["EXTERNAL"] = "TRUE"  # without it HMS makes a MANAGED_TABLE (drop would delete data)
        t = hms.Table(
            tableName=table.name,
            dbName=ns[-1],
            catName=self.catalog_of(ns),
            tableType=EXTERNAL_TABLE,
            parameters=params,
            partitionKeys=[],
            createTime=int(time.time()),
            sd=hms.StorageDescriptor(
                cols=[],
                location=table.location,
                serdeInfo=hms.SerDeInfo(parameters={}),
                parameters={},
                bucketCols=[],
                sortCols=[],
                numBuckets=-1,
                compressed=False,
            ),
        )
        made = _make_local_directory(table.location)
        try:
            self._call("create_table", t)
        except Exception as e:
            if made:
                _remove_if_empty(made)
            # A database dropped between the metastore's existence check and its insert is
            # answered InvalidObject ("Database ... doesn't exist", HMS 2.3 and 3.1): what the
            # create lost to is read from the metastore's state, not from the message.
            if isinstance(e, InvalidInputError) and self._get_database(ns) is None:
                raise NamespaceNotFoundError(f"namespace {to_string(ns)!r} does not exist (dropped concurrently)") from None
            raise
        # HMS 2.3 checks existence and inserts in separate steps: two racing creates
        # can both succeed.  The table the metastore returns now decides the winner.
        stored = self.get_table_entry(ns, table.name)
        if stored is None or stored.location != _location_out(table.location):
            raise TableAlreadyExistsError(f"table {to_string(ns + [table.name])!r} already exists (created concurrently)")

    def delete_table_entry(self, ns, name):
        self._call("drop_table", self.database_name(ns), name, False)  # deleteData=False, always

    # -- tables the upstream implementations made (MANAGED_TABLE) -------------------------
    def is_lance(self, table):
        # lance-namespace-impls' Hive2/Hive3 namespaces store Lance tables without
        # EXTERNAL=TRUE, so HMS keeps them as MANAGED_TABLE: Lance tables all the same
        if (table.kind or "").upper() == MANAGED_TABLE:
            return is_lance_properties(table.properties)
        return super().is_lance(table)

    def deletes_data_of(self, ns, table, purge=False):
        # A MANAGED_TABLE's directory is whoever created it's (the upstream code or
        # Hive itself), wherever it lies: DropTable removes the entry (deleteData=false,
        # so HMS keeps the files too) and deletes data only on an explicit purge.
        if (table.kind or "").upper() == MANAGED_TABLE:
            return bool(table.location) and purge
        return super().deletes_data_of(ns, table, purge)

    # -- rename ---------------------------------------------------------------------------------
    def rename_table_entry(self, ns, table, new_ns, new_name):
        """One ``alter_table`` with the new name (and database): HMS renames in one
        metastore transaction.  The storage descriptor keeps its location, and HMS
        moves no data of an EXTERNAL_TABLE; it would move a MANAGED_TABLE's directory
        when that is ``<database location>/<name>``, so such a rename is refused.

        Where the metastore grants locks, the rename holds the table's EXCLUSIVE lock:
        racing renames of one table then have one winner (the others find it gone, 4),
        and a rename never lands between a managed commit's check and its alter."""
        _check_hive_name(new_name)
        if self.catalog_of(ns) != self.catalog_of(new_ns):
            raise InvalidInputError("the Hive metastore renames tables within one catalog only")
        if self.supports_managed_versioning:
            self._under_table_locks([(ns[-1], table.name)], lambda _: self._rename_now(ns, table, new_ns, new_name))
        else:
            self._rename_now(ns, table, new_ns, new_name)

    def _rename_now(self, ns, table, new_ns, new_name):
        old = self._call("get_table", self.database_name(ns), table.name)
        if _location_out(old.sd.location) != table.location:
            raise ConcurrentModificationError(
                f"table {to_string(ns + [table.name])!r} was replaced concurrently; not renaming the new one"
            )
        if (old.tableType or "").upper() == MANAGED_TABLE:
            db_location = _location_out(self._call("get_database", self.database_name(ns)).locationUri) or ""
            if _location_out(old.sd.location).rstrip("/") == storage.join(db_location, table.name).rstrip("/"):
                raise InvalidInputError(
                    f"table {to_string(ns + [table.name])!r} is a MANAGED_TABLE in its database's directory: "
                    "the metastore would move its data on rename; rename it with Hive, or make it EXTERNAL first"
                )
        renamed = hms.Table(**{**vars(old), "tableName": new_name, "dbName": new_ns[-1]})
        try:
            self._call("alter_table", self.database_name(ns), table.name, renamed)
        except (InvalidInputError, InternalError):
            # HMS 2.3 checks and updates in separate steps: a rename racing another one fails
            # with InvalidOperation, InvalidObject or a MetaException; what it lost to is read
            # from the metastore's state, not from the message
            winner = self.get_table_entry(new_ns, new_name)
            if winner is not None and winner.location != table.location:
                raise TableAlreadyExistsError(f"table {to_string(new_ns + [new_name])!r} already exists") from None
            if self.get_table_entry(ns, table.name) is None:
                raise ConcurrentModificationError(
                    f"table {to_string(ns + [table.name])!r} was renamed or dropped concurrently"
                ) from None
            raise
        stored = self.get_table_entry(new_ns, new_name)
        if stored is None or stored.location != table.location:
            raise ConcurrentModificationError(
                f"table {to_string(ns + [table.name])!r} was renamed concurrently; {to_string(new_ns + [new_name])!r} "
                "is not the table this call renamed"
            )

    # -- implementation-managed tables: the metastore's lock API as the compare-and-swap ----------
    # alter_table has no condition, so a commit takes an EXCLUSIVE lock on every table it
    # changes (one lock request: HMS grants its components together or not at all), re-reads
    # them, compares with what the caller read, alters, and unlocks (pyiceberg's and
    # Iceberg's Hive catalogs commit the same way).  Locks are advisory: they exclude every
    # writer that locks (lance-ns, Hive with DbTxnManager), not a bare alter_table.
    @property
    def supports_managed_versioning(self) -> bool:
        return self._lock_refusal_reason() is None

    @property
    def managed_refusal(self) -> str:
        return self._lock_refusal_reason() or ""

    def _lock_refusal_reason(self) -> str | None:
        """Why the metastore grants no locks (None: it does).  Probed once per client with a
        shared lock taken and released at once; a metastore without its transaction tables
        answers ``lock`` with an internal error."""
        if not self._lock_probed:
            with self._lock_probe_lock:
                if not self._lock_probed:
                    self._lock_refusal = self._probe_locks()
                    self._lock_probed = True
        return self._lock_refusal

    def _probe_locks(self) -> str | None:
        try:
            lock = self._call("lock", _lock_request(hms.LockType.SHARED_READ, [LOCK_PROBE]))
        except (InternalError, UnsupportedOperationError, PermissionDeniedError) as e:
            return (
                f"the Hive metastore grants no table locks, which commits of implementation-managed "
                f"tables are made under (its answer to lock: {e}). The lock API needs the metastore's "
                "transaction tables (schematool's hive-txn-schema; a schema made by DataNucleus "
                "autoCreateAll lacks them) and hive.support.concurrency=true"
            )
        self._unlock(lock.lockid)
        return None

    def _under_table_locks(self, tables: list[tuple[str, str]], fn):
        """``fn(lockid)`` holding EXCLUSIVE locks on ``tables`` ((database, table) pairs).

        A lock another commit holds is waited for (polling check_lock, which also keeps
        this request's heartbeat) for at most ``lock.timeout-ms``, then ConcurrentModification
        (14); never longer.  The lock is released whatever ``fn`` does; if even the unlock
        cannot reach the metastore, the metastore's housekeeper drops the lock once it
        has had no heartbeat for ``hive.txn.timeout``."""
        if not self.supports_managed_versioning:
            raise UnsupportedOperationError(f"implementation-managed tables: {self.managed_refusal}")
        what = ", ".join(f"{db}.{name}" for db, name in tables)
        lock = self._call("lock", _lock_request(hms.LockType.EXCLUSIVE, tables))
        try:
            deadline = time.monotonic() + self.lock_timeout_s
            pause = LOCK_POLL_FIRST_S
            while lock.state == hms.LockState.WAITING:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise ConcurrentModificationError(
                        f"another commit held the metastore lock of {what} for longer than "
                        f"lock.timeout-ms={self.lock_timeout_s * 1000:g}; retry"
                    )
                time.sleep(min(pause, remaining))
                pause = min(pause * 2, LOCK_POLL_MAX_S)
                lock = self._call("check_lock", hms.CheckLockRequest(lockid=lock.lockid))
            if lock.state != hms.LockState.ACQUIRED:
                state = hms.LockState._VALUES_TO_NAMES.get(lock.state, lock.state)
                raise ConcurrentModificationError(f"the metastore did not grant the lock of {what} ({state}); retry")
            return fn(lock.lockid)
        finally:
            self._unlock(lock.lockid)

    def _unlock(self, lockid: int) -> None:
        for attempt in (1, 2):  # a second time on a fresh connection if the first was lost
            try:
                self._call("unlock", hms.UnlockRequest(lockid=lockid))
                return
            except LanceNamespaceError as e:
                if attempt == 2 or not isinstance(e, ServiceUnavailableError):
                    log.warning("could not release metastore lock %s (%s); the metastore drops it after "
                                "hive.txn.timeout without heartbeat", lockid, e)
                    return

    def swap_tables_properties(self, changes: list[tuple[list[str], CatalogTable, dict[str, str]]]) -> bool:
        """Under one lock request over every table: each compared with what the caller
        read, then altered.  The alters are separate metastore calls: if one fails, those
        already made are undone (still under the locks) and the failure raised."""

        def swap(lockid: int) -> bool:
            stored = [self._call("get_table", self.database_name(ns), t.name) for ns, t, _ in changes]
            for (_, read, _), now in zip(changes, stored):
                if dict(now.parameters or {}) != (read.properties or {}) or _location_out(now.sd.location) != read.location:
                    return False
            # the lock must still be ours: a holder silent for hive.txn.timeout loses it
            self._call("heartbeat", hms.HeartbeatRequest(lockid=lockid))
            done: list[tuple[list[str], hms.Table]] = []
            try:
                for (ns, _, props), now in zip(changes, stored):
                    self._alter(ns, hms.Table(**{**vars(now), "parameters": props}))
                    done.append((ns, now))
            except BaseException:
                for ns, before in reversed(done):
                    try:
                        self._alter(ns, before)
                    except Exception as e:  # noqa: BLE001 - the original failure is what the caller sees
                        log.error("could not undo the commit to %s.%s after a failed multi-table commit: %s",
                                  ns, before.tableName, e)
                raise
            return True

        return self._under_table_locks([(ns[-1], t.name) for ns, t, _ in changes], swap)

    def _alter(self, ns: list[str], table: hms.Table) -> None:
        self._call("alter_table_with_environment_context", self.database_name(ns), table.tableName, table, NO_STATS)


class Hive2Namespace(_HiveBase):
    """``database$table`` over a Hive 2.x (or later) metastore."""

    max_depth = 1
    table_depths = (1,)
    creatable_depths = (1,)

    def database_name(self, ns):
        return _check_hive_name(ns[0])

    def get_namespace_entry(self, ns):
        return self._get_database(ns)

    def list_namespace_names(self, parent):
        return self._call("get_all_databases")

    def create_namespace_entry(self, ns, properties):
        self._create_database(ns, properties)

    def delete_namespace_entry(self, ns):
        self._drop_database(ns)

    def namespace_properties_in(self, properties):
        return _db_properties_in(properties)


class Hive3Namespace(_HiveBase):
    """``catalog$database$table`` over a Hive 3 metastore (degrading on 2.x)."""

    max_depth = 2
    table_depths = (2,)
    creatable_depths = (1, 2)

    def __init__(self, **properties: str):
        super().__init__(**properties)
        self._has_catalogs: bool | None = None
        self._probe_lock = threading.Lock()

    @property
    def has_catalogs(self) -> bool:
        """Whether the metastore has Hive 3's catalog API (probed once, then cached)."""
        if self._has_catalogs is None:
            with self._probe_lock:
                if self._has_catalogs is None:
                    try:
                        self._call("get_catalogs")
                        self._has_catalogs = True
                    except UnsupportedOperationError:  # UNKNOWN_METHOD: a 2.x metastore
                        self._has_catalogs = False
        return self._has_catalogs

    def catalog_of(self, ns):
        return _check_hive_name(ns[0]) if self.has_catalogs else None

    def database_name(self, ns):
        cat, db = _check_hive_name(ns[0]), _check_hive_name(ns[1])
        if self.has_catalogs:
            # Hive 3 carries the catalog inside the dbname of the classic calls:
            # "@<catalog>#<database>" (MetaStoreUtils.prependCatalogToDbName).
            return f"@{cat}#{db}"
        if cat != DEFAULT_CATALOG:
            raise NamespaceNotFoundError(f"catalog {cat!r} does not exist (this metastore has only {DEFAULT_CATALOG!r})")
        return db

    def _no_catalog_api(self, what: str) -> UnsupportedOperationError:
        return UnsupportedOperationError(
            f"cannot {what}: this Hive metastore (2.x) has no catalog API; "
            f"its only catalog is {DEFAULT_CATALOG!r}"
        )

    # -- catalogs (level 1) ----------------------------------------------------------------
    def _get_catalog(self, name: str) -> dict[str, str] | None:
        _check_hive_name(name)
        if not self.has_catalogs:
            return {} if name == DEFAULT_CATALOG else None
        try:
            cat = self._call("get_catalog", hms.GetCatalogRequest(name=name)).catalog
        except NamespaceNotFoundError:
            return None
        props = {}
        if cat.description:
            props["catalog.description"] = cat.description
        if cat.locationUri:
            props["catalog.location-uri"] = _location_out(cat.locationUri)
        return props

    def get_namespace_entry(self, ns):
        if len(ns) == 1:
            return self._get_catalog(ns[0])
        # with the catalog API, get_database("@cat#db") of a missing catalog is
        # NoSuchObject itself; without it, database_name refuses other catalogs
        return self._get_database(ns)

    def list_namespace_names(self, parent):
        if not parent:
            if not self.has_catalogs:
                return [DEFAULT_CATALOG]
            return self._call("get_catalogs").names or []
        if self.has_catalogs:
            # "@cat#" (no database part = no pattern): every database of the catalog;
            # "@cat#!" would be the empty pattern (MetaStoreUtils.parseDbName)
            return self._call("get_databases", f"@{_check_hive_name(parent[0])}#")
        return self._call("get_all_databases")

    def namespace_properties_in(self, properties):
        return dict(properties or {})  # split per level in create_namespace_entry

    def create_namespace_entry(self, ns, properties):
        if len(ns) == 2:
            self._create_database(ns, _db_properties_in(properties))
            return
        if not self.has_catalogs:
            raise self._no_catalog_api(f"create catalog {ns[0]!r}")
        unknown = set(properties) - set(CATALOG_SPECIAL)
        if unknown:
            raise InvalidInputError(
                f"a Hive catalog stores only {sorted(CATALOG_SPECIAL)}; got {sorted(unknown)}"
            )
        cat = hms.Catalog(
            name=_check_hive_name(ns[0]),
            description=properties.get("catalog.description"),
            locationUri=properties.get("catalog.location-uri") or storage.join(self.root, ns[0]),
        )
        self._call("create_catalog", hms.CreateCatalogRequest(catalog=cat))

    def delete_namespace_entry(self, ns):
        if len(ns) == 2:
            self._drop_database(ns)
            return
        if not self.has_catalogs:
            raise self._no_catalog_api(f"drop catalog {ns[0]!r}")
        # HMS 3 deletes a dropped catalog's directory, with whatever lies in it: the data of a
        # table registered there, which a drop keeps (what lance-ns owns it deleted already).
        # So the catalog is first pointed at an empty directory of its own, and HMS deletes that.
        cat = self._call("get_catalog", hms.GetCatalogRequest(name=ns[0])).catalog
        if cat.locationUri:
            cat.locationUri = storage.join(self.root, f".lance-ns-dropped-catalog-{ns[0]}-{os.urandom(4).hex()}")
            self._call("alter_catalog", hms.AlterCatalogRequest(name=ns[0], newCat=cat))
        self._call("drop_catalog", hms.DropCatalogRequest(name=ns[0]))

    def create_table_entry(self, ns, table):
        self.database_name(ns)  # checks the catalog level on a catalog-less metastore
        super().create_table_entry(ns, table)

    def drop_namespace_checked(self, ns, behavior, purge=False):
        # Catalog drops differ from the shared algorithm in two ways, decided
        # before anything is dropped (a Cascade must never empty the metastore
        # and then fail):
        # * without the catalog API, or for the default catalog, there is no
        #   catalog to drop;
        # * Hive 3 gives every catalog a "default" database and drops it with
        #   the catalog when it holds no tables, so it does not make the
        #   catalog "not empty".
        if len(ns) != 1:
            return super().drop_namespace_checked(ns, behavior, purge)
        if not self.has_catalogs:
            raise self._no_catalog_api(f"drop catalog {ns[0]!r}")
        if ns[0] == DEFAULT_CATALOG:
            raise InvalidInputError(f"the default catalog {DEFAULT_CATALOG!r} cannot be dropped")
        if behavior is DropBehavior.CASCADE:
            return super().drop_namespace_checked(ns, behavior, purge)
        dbs = [d for d in self.list_namespace_names(ns) if d != "default"]
        default_tables = list(self.list_table_entries(ns + ["default"])) if self._get_database(ns + ["default"]) is not None else []
        if dbs or default_tables:
            raise NamespaceNotEmptyError(
                f"catalog {ns[0]!r} is not empty ({len(dbs)} databases besides 'default', "
                f"{len(default_tables)} tables in 'default')"
            )
        self.delete_namespace_entry(ns)


# -- object mapping ------------------------------------------------------------------------


def _lock_request(kind: int, tables: list[tuple[str, str]]) -> hms.LockRequest:
    # NO_TXN: a lock outside any transaction (HMS 2.3 refuses an UNSET operation type)
    return hms.LockRequest(
        component=[
            hms.LockComponent(type=kind, level=hms.LockLevel.TABLE, dbname=db, tablename=name,
                              operationType=hms.DataOperationType.NO_TXN)
            for db, name in tables
        ],
        user=LOCK_USER,
        hostname=socket.gethostname(),
    )


def _catalog_table(t: hms.Table) -> CatalogTable:
    return CatalogTable(
        name=t.tableName,
        location=_location_out(t.sd.location if t.sd else None),
        properties=dict(t.parameters or {}),
        kind=t.tableType,
    )


def _db_properties(db: hms.Database) -> dict[str, str]:
    props = dict(db.parameters or {})
    for key, attr in DB_SPECIAL.items():
        value = getattr(db, attr)
        if value is None or value == "":
            continue
        if attr == "ownerType":
            value = hms.PrincipalType._VALUES_TO_NAMES.get(value, str(value))
        elif attr == "locationUri":
            value = _location_out(value)
        props[key] = str(value)
    return props


def _db_properties_in(properties: dict[str, str] | None) -> dict[str, str]:
    props = dict(properties or {})
    owner_type = props.get("database.owner-type")
    if owner_type is not None and owner_type.upper() not in PRINCIPALS:
        raise InvalidInputError(f"database.owner-type must be one of {sorted(PRINCIPALS)}, got {owner_type!r}")
    return props


def _database(name: str, properties: dict[str, str], catalog: str | None) -> hms.Database:
    # the generated Thrift structs are immutable: build every field at once
    props = dict(properties)
    fields = {attr: props.pop(key, None) for key, attr in DB_SPECIAL.items()}
    if fields["ownerType"] is not None:
        fields["ownerType"] = PRINCIPALS[fields["ownerType"].upper()]
    elif fields["ownerName"]:
        fields["ownerType"] = hms.PrincipalType.USER
    return hms.Database(name=_check_hive_name(name), parameters=props, catalogName=catalog, **fields)


__all__ = ["Hive2Namespace", "Hive3Namespace"]
