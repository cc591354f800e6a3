"""Hive MetaStore namespaces over the metastore's Thrift API.

* ``hive2`` (alias ``hive``): the HMS 2.x model, ``database$table``; the
  root lists databases.
* ``hive3``: the Hive 3 model (``impl-hive3.md``), ``catalog$database$table``;
  the root lists catalogs.  Against a 2.x metastore, which has no catalog API
  (``get_catalogs`` answers UNKNOWN_METHOD), the server's single default
  catalog ``hive`` is the only level-1 namespace and creating or dropping a
  catalog is Unsupported (code 0).  The capability is probed once per client.

Tables are ``EXTERNAL_TABLE`` objects with parameters ``EXTERNAL=TRUE`` (without
it HMS stores a MANAGED_TABLE, whose drop deletes the data) and
``table_type=lance``; the location is the storage descriptor's.  Tables and
databases are always dropped with ``deleteData=false``: data removal is ours
(DropTable) and never the metastore's.  Lance tables the upstream
implementations (lance-namespace-impls) made are ``MANAGED_TABLE`` with
``table_type=lance``: listed, described and renamed like ours; their data is
deleted only on an explicit purge (see ``deletes_data_of``).

Names: HMS lowercases database, table and catalog names on write and lookup,
so ``Events`` would be stored and listed as ``events``.  Rather than answer
with a name the caller never gave, names with upper-case letters are refused
(InvalidInput, code 13); declare, list and describe then round-trip exactly.

Properties: ``uri`` (``thrift://host:port``, required; a comma-separated list
of metastores is tried in order), ``client.pool-size``
(default 3), ``client.connect-timeout-ms`` (default 10000),
``client.socket-timeout-ms`` (default 60000; a call that gets no answer in this
time fails with ServiceUnavailable, code 17), ``client.pool-timeout-ms``
(default: the socket timeout; how long a caller waits for a free connection),
``root`` (default: current directory), ``storage.*``.

Namespace properties of a database: its parameters map plus the special keys
``database.description``, ``database.location-uri``, ``database.owner`` and
``database.owner-type`` (USER, ROLE or GROUP), stored in the Database object's
own fields.  A catalog (Hive 3) has only ``catalog.description`` and
``catalog.location-uri`` (default ``ROOT/<catalog>``); other keys are refused.
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from urllib.parse import urlparse

from pymetastore.hive_metastore import ThriftHiveMetastore
from pymetastore.hive_metastore import ttypes as hms
from thrift.protocol import TBinaryProtocol
from thrift.Thrift import TApplicationException, TException
from thrift.transport import TSocket, TTransport

from .. import storage
from ..catalog import CatalogNamespace, CatalogTable, is_lance_properties
from ..errors import (
    ConcurrentModificationError,
    InternalError,
    InvalidInputError,
    LanceNamespaceError,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NamespaceNotFoundError,
    PermissionDeniedError,
    ServiceUnavailableError,
    TableAlreadyExistsError,
    TableNotFoundError,
    UnsupportedOperationError,
)
from ..identifiers import to_string
from ..modes import DropBehavior

EXTERNAL_TABLE = "EXTERNAL_TABLE"
#: what HMS stores a table as without EXTERNAL=TRUE (lance-namespace-impls' Lance tables)
MANAGED_TABLE = "MANAGED_TABLE"
DEFAULT_CATALOG = "hive"  # Hive 3's default catalog (metastore.catalog.default)

DB_SPECIAL = {
    "database.description": "description",
    "database.location-uri": "locationUri",
    "database.owner": "ownerName",
    "database.owner-type": "ownerType",
}
CATALOG_SPECIAL = {"catalog.description": "description", "catalog.location-uri": "locationUri"}
PRINCIPALS = {name: value for value, name in hms.PrincipalType._VALUES_TO_NAMES.items()}

#: failures of the connection itself (not of the request): ServiceUnavailable
TRANSPORT_ERRORS = (TTransport.TTransportException, OSError, EOFError)


# -- connection pool -----------------------------------------------------------------


class _Connection:
    def __init__(self, addresses: list[tuple[str, int]], connect_timeout_ms: int, socket_timeout_ms: int):
        # Several metastores (HA, "thrift://a:9083,thrift://b:9083"): the first that answers.
        error: Exception | None = None
        for host, port in addresses:
            self.socket = TSocket.TSocket(host, port)
            self.socket.setTimeout(connect_timeout_ms)
            self.transport = TTransport.TBufferedTransport(self.socket)
            try:
                self.transport.open()
                break
            except TTransport.TTransportException as e:
                error = e
        else:
            raise error
        self.socket.setTimeout(socket_timeout_ms)  # every later read/write
        self.client = ThriftHiveMetastore.Client(TBinaryProtocol.TBinaryProtocol(self.transport))

    def alive(self) -> bool:
        # TSocket.isOpen peeks the socket: False once the metastore closed it
        # (e.g. it restarted), so stale connections are replaced, not used.
        return self.socket.isOpen()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.transport.close()


class ClientPool:
    """A thread-safe pool of at most ``size`` Thrift connections.

    Callers block while all connections are in use (up to ``wait_timeout``
    seconds, then ServiceUnavailable).  A connection that failed at the
    transport level is discarded; the next caller opens a fresh one.
    """

    def __init__(
        self,
        addresses: list[tuple[str, int]],
        size: int,
        connect_timeout_ms: int,
        socket_timeout_ms: int,
        wait_timeout_s: float,
    ):
        self.addresses, self.size = addresses, size
        self._connect_ms, self._socket_ms = connect_timeout_ms, socket_timeout_ms
        self._wait = wait_timeout_s
        self._slots = threading.BoundedSemaphore(size)
        self._idle: queue.LifoQueue[_Connection] = queue.LifoQueue()
        self._lock = threading.Lock()
        self.in_use = 0
        self.peak_in_use = 0
        self.opened = 0  # connections opened over the pool's life

    def client(self) -> "_Lease":
        """``with pool.client() as c:`` -- one connection for one thread."""
        return _Lease(self)

    # A class, not @contextmanager: the generated Thrift exceptions are
    # immutable and contextlib would try to set their __traceback__.
    def _acquire(self) -> _Connection:
        if not self._slots.acquire(timeout=self._wait):
            raise ServiceUnavailableError(
                f"no free metastore connection within {self._wait:g}s (client.pool-size={self.size})"
            )
        with self._lock:
            self.in_use += 1
            self.peak_in_use = max(self.peak_in_use, self.in_use)
        try:
            return self._checkout()
        except BaseException:
            self._release(None)
            raise

    def _release(self, conn: _Connection | None) -> None:
        if conn is not None:
            self._idle.put(conn)
        with self._lock:
            self.in_use -= 1
        self._slots.release()

    def _checkout(self) -> _Connection:
        while True:
            try:
                conn = self._idle.get_nowait()
            except queue.Empty:
                conn = _Connection(self.addresses, self._connect_ms, self._socket_ms)
                with self._lock:
                    self.opened += 1
                return conn
            if conn.alive():
                return conn
            conn.close()

    def close(self) -> None:
        while True:
            try:
                self._idle.get_nowait().close()
            except queue.Empty:
                return


class _Lease:
    def __init__(self, pool: ClientPool):
        self.pool = pool
        self.conn: _Connection | None = None

    def __enter__(self):
        self.conn = self.pool._acquire()
        return self.conn.client

    def __exit__(self, exc_type, exc, tb):
        conn, self.conn = self.conn, None
        if exc_type is not None and exc_type.__module__ != hms.__name__:
            # Only the metastore's declared exceptions (NoSuchObject, ...) leave the
            # connection in step; after anything else (transport, protocol, an
            # interrupt mid-call) it is broken or out of step: never reuse it.
            conn.close()
            conn = None
        self.pool._release(conn)
        return False


# -- error translation -----------------------------------------------------------------


def translate_hms_error(exc: BaseException) -> LanceNamespaceError | None:
    """A Thrift / metastore exception -> the spec's error (None: Internal)."""
    msg = _message(exc)
    if isinstance(exc, TRANSPORT_ERRORS):  # socket.timeout is an OSError
        return ServiceUnavailableError(f"Hive metastore unreachable: {msg}")
    if isinstance(exc, hms.NoSuchObjectException | hms.UnknownDBException):
        return NamespaceNotFoundError(msg) if "table" not in msg.lower() else TableNotFoundError(msg)
    if isinstance(exc, hms.UnknownTableException):
        return TableNotFoundError(msg)
    if isinstance(exc, hms.AlreadyExistsException):
        return TableAlreadyExistsError(msg) if "table" in msg.lower() else NamespaceAlreadyExistsError(msg)
    if isinstance(exc, hms.InvalidOperationException):
        if "not empty" in msg.lower():
            return NamespaceNotEmptyError(msg)
        return InvalidInputError(msg)
    if isinstance(exc, hms.InvalidObjectException | hms.InvalidInputException):
        return InvalidInputError(msg)
    if isinstance(exc, TApplicationException):
        if exc.type == TApplicationException.UNKNOWN_METHOD:
            return UnsupportedOperationError(f"the metastore does not implement this call: {msg}")
        return InternalError(f"metastore error: {msg}")
    if isinstance(exc, hms.MetaException):
        low = msg.lower()
        if "can not drop" in low or "cannot drop" in low:
            return InvalidInputError(msg)
        if "permission denied" in low or "accesscontrolexception" in low or "not authorized" in low:
            return PermissionDeniedError(msg)
        if "could not connect" in low or "timed out" in low or "communications link failure" in low:
            return ServiceUnavailableError(f"Hive metastore backend unavailable: {msg}")
        return InternalError(f"metastore error: {msg}")
    if isinstance(exc, TException):
        return InternalError(f"metastore error: {type(exc).__name__}: {msg}")
    return None


def _addresses(uri: str) -> list[tuple[str, int]]:
    """``thrift://host:port[,thrift://host2:port2...]`` -> [(host, port), ...]."""
    out = []
    for part in uri.split(","):
        try:
            parsed = urlparse(part.strip())
            host, port = parsed.hostname, parsed.port
        except ValueError:
            host = port = None
        if parsed.scheme != "thrift" or not host or not port:
            raise InvalidInputError(f"'uri' must be thrift://host:port[,thrift://host:port...], got {uri!r}")
        out.append((host, port))
    return out


def _message(exc: BaseException) -> str:
    return str(getattr(exc, "message", None) or exc or type(exc).__name__)


def _location_out(location: str | None) -> str | None:
    """HMS qualifies local paths as ``file:/path``; callers gave (and pylance wants) ``/path``."""
    if location and location.startswith("file:"):
        return urlparse(location).path or location
    return location


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
    supports_managed_versioning = False
    managed_refusal = (
        "the Hive Metastore's alter_table has no compare-and-swap; its lock API (lock/check_lock/unlock) "
        "needs the metastore's transaction tables (schematool's transaction schema: a metastore created "
        "by DataNucleus answers lock with an internal error) and lance-ns does not commit through it yet"
    )

    def __init__(self, **properties: str):
        super().__init__(**properties)
        socket_ms = self.int_prop("client.socket-timeout-ms", 60000, minimum=1)
        self.pool = ClientPool(
            _addresses(self.prop("uri", required=True)),
            size=self.int_prop("client.pool-size", 3, minimum=1),
            connect_timeout_ms=self.int_prop("client.connect-timeout-ms", 10000, minimum=1),
            socket_timeout_ms=socket_ms,
            wait_timeout_s=self.int_prop("client.pool-timeout-ms", socket_ms, minimum=1) / 1000,
        )

    def close(self) -> None:
        self.pool.close()

    def translate_error(self, exc):
        return translate_hms_error(exc)

    def _hms(self) -> _Lease:
        return self.pool.client()

    def _call(self, method: str, *args):
        """One Thrift call on a pooled connection.  Arguments are computed by the
        caller first: computing them may need a connection of its own (the
        hive3 capability probe), and nesting leases could exhaust the pool."""
        with self.pool.client() as c:
            return getattr(c, method)(*args)

    # -- mapping of namespace levels to metastore names (per model) ----------------------
    def _db_name(self, ns: list[str]) -> str:
        """The Thrift ``dbname`` argument for a database namespace."""
        raise NotImplementedError

    def _catalog_of(self, ns: list[str]) -> str | None:
        return None

    # -- databases -------------------------------------------------------------------------
    def _get_database(self, ns: list[str]) -> dict[str, str] | None:
        try:
            db = self._call("get_database", self._db_name(ns))
        except (hms.NoSuchObjectException, NamespaceNotFoundError):
            return None
        return _db_properties(db)

    def _create_database(self, ns: list[str], properties: dict[str, str]) -> None:
        db = _database(ns[-1], properties, self._catalog_of(ns))
        try:
            self._call("create_database", db)
        except hms.AlreadyExistsException:
            raise NamespaceAlreadyExistsError(f"namespace {to_string(ns)!r} already exists") from None

    def _drop_database(self, ns: list[str]) -> None:
        try:
            # deleteData=False: the directory is HMS's bookkeeping, tables' data was handled by us
            self._call("drop_database", self._db_name(ns), False, False)
        except hms.NoSuchObjectException:
            raise NamespaceNotFoundError(f"namespace {to_string(ns)!r} does not exist") from None

    # -- tables ------------------------------------------------------------------------------
    def _list_tables(self, ns):
        if len(ns) not in self.table_depths:
            return []
        dbname = self._db_name(ns)
        with self._hms() as c:
            names = c.get_all_tables(dbname)
            out: list[CatalogTable] = []
            for i in range(0, len(names), 100):  # one call per 100 tables, not one per table
                out += [_catalog_table(t) for t in c.get_table_objects_by_name(dbname, names[i : i + 100])]
        return out

    def _get_table(self, ns, name):
        _check_hive_name(name)
        try:
            return _catalog_table(self._call("get_table", self._db_name(ns), name))
        except (hms.NoSuchObjectException, hms.UnknownDBException, hms.UnknownTableException, NamespaceNotFoundError):
            return None

    def _create_table(self, ns, table):
        _check_hive_name(table.name)
        params = dict(table.properties)
        params["EXTERNAL"] = "TRUE"  # without it HMS makes a MANAGED_TABLE (drop would delete data)
        t = hms.Table(
            tableName=table.name,
            dbName=ns[-1],
            catName=self._catalog_of(ns),
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
        try:
            self._call("create_table", t)
        except hms.AlreadyExistsException:
            raise TableAlreadyExistsError(f"table {to_string(ns + [table.name])!r} already exists") from None
        except hms.NoSuchObjectException:
            raise NamespaceNotFoundError(f"namespace {to_string(ns)!r} does not exist") from None
        # HMS 2.3 checks existence and inserts in separate steps: two racing creates
        # can both succeed.  The table the metastore returns now decides the winner.
        stored = self._get_table(ns, table.name)
        if stored is None or stored.location != _location_out(table.location):
            raise TableAlreadyExistsError(f"table {to_string(ns + [table.name])!r} already exists (created concurrently)")

    def _delete_table(self, ns, name):
        try:
            self._call("drop_table", self._db_name(ns), name, False)  # deleteData=False, always
        except hms.NoSuchObjectException:
            raise TableNotFoundError(f"table {to_string(ns + [name])!r} does not exist") from None

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
    def _rename_table(self, ns, table, new_ns, new_name):
        """One ``alter_table`` with the new name (and database): HMS renames in one
        metastore transaction.  The storage descriptor keeps its location, and HMS
        moves no data of an EXTERNAL_TABLE; it would move a MANAGED_TABLE's directory
        when that is ``<database location>/<name>``, so such a rename is refused."""
        _check_hive_name(new_name)
        if self._catalog_of(ns) != self._catalog_of(new_ns):
            raise InvalidInputError("the Hive metastore renames tables within one catalog only")
        old = self._call("get_table", self._db_name(ns), table.name)
        if (old.tableType or "").upper() == MANAGED_TABLE:
            db_location = _location_out(self._call("get_database", self._db_name(ns)).locationUri) or ""
            if _location_out(old.sd.location).rstrip("/") == storage.join(db_location, table.name).rstrip("/"):
                raise InvalidInputError(
                    f"table {to_string(ns + [table.name])!r} is a MANAGED_TABLE in its database's directory: "
                    "the metastore would move its data on rename; rename it with Hive, or make it EXTERNAL first"
                )
        renamed = hms.Table(**{**vars(old), "tableName": new_name, "dbName": new_ns[-1]})
        try:
            self._call("alter_table", self._db_name(ns), table.name, renamed)
        except (hms.InvalidOperationException, hms.InvalidObjectException, hms.MetaException) as e:
            # HMS 2.3 checks and updates in separate steps: a rename racing another one
            # fails with either exception type, saying what it lost to
            text = _message(e).lower()
            if "already exists" in text:
                raise TableAlreadyExistsError(f"table {to_string(new_ns + [new_name])!r} already exists") from None
            if "doesn't exist" in text or "does not exist" in text or "not found" in text:
                raise ConcurrentModificationError(
                    f"table {to_string(ns + [table.name])!r} was renamed or dropped concurrently"
                ) from None
            winner = self._get_table(new_ns, new_name)  # e.g. the metastore's unique key refused it
            if winner is not None and winner.location != table.location:
                raise TableAlreadyExistsError(f"table {to_string(new_ns + [new_name])!r} already exists") from None
            raise
        stored = self._get_table(new_ns, new_name)
        if stored is None or stored.location != table.location:
            raise ConcurrentModificationError(
                f"table {to_string(ns + [table.name])!r} was renamed concurrently; {to_string(new_ns + [new_name])!r} "
                "is not the table this call renamed"
            )


class Hive2Namespace(_HiveBase):
    """``database$table`` over a Hive 2.x (or later) metastore."""

    impl_name = "hive2"
    max_depth = 1
    table_depths = (1,)
    creatable_depths = (1,)

    def _db_name(self, ns):
        return _check_hive_name(ns[0])

    def _get_namespace(self, ns):
        return self._get_database(ns)

    def _list_namespaces(self, parent):
        return self._call("get_all_databases")

    def _create_namespace(self, ns, properties):
        self._create_database(ns, properties)

    def _drop_namespace(self, ns):
        self._drop_database(ns)

    def namespace_properties_in(self, properties):
        return _db_properties_in(properties)


class Hive3Namespace(_HiveBase):
    """``catalog$database$table`` over a Hive 3 metastore (degrading on 2.x)."""

    impl_name = "hive3"
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
                    except TApplicationException as e:
                        if e.type != TApplicationException.UNKNOWN_METHOD:
                            raise
                        self._has_catalogs = False
        return self._has_catalogs

    def _catalog_of(self, ns):
        return _check_hive_name(ns[0]) if self.has_catalogs else None

    def _db_name(self, ns):
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
        except hms.NoSuchObjectException:
            return None
        props = {}
        if cat.description:
            props["catalog.description"] = cat.description
        if cat.locationUri:
            props["catalog.location-uri"] = _location_out(cat.locationUri)
        return props

    def _get_namespace(self, ns):
        if len(ns) == 1:
            return self._get_catalog(ns[0])
        # with the catalog API, get_database("@cat#db") of a missing catalog is
        # NoSuchObject itself; without it, _db_name refuses other catalogs
        return self._get_database(ns)

    def _list_namespaces(self, parent):
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
        return dict(properties or {})  # split per level in _create_namespace

    def _create_namespace(self, ns, properties):
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
        try:
            self._call("create_catalog", hms.CreateCatalogRequest(catalog=cat))
        except hms.AlreadyExistsException:
            raise NamespaceAlreadyExistsError(f"catalog {ns[0]!r} already exists") from None

    def _drop_namespace(self, ns):
        if len(ns) == 2:
            self._drop_database(ns)
            return
        if not self.has_catalogs:
            raise self._no_catalog_api(f"drop catalog {ns[0]!r}")
        try:
            self._call("drop_catalog", hms.DropCatalogRequest(name=ns[0]))
        except hms.NoSuchObjectException:
            raise NamespaceNotFoundError(f"catalog {ns[0]!r} does not exist") from None

    def _create_table(self, ns, table):
        self._db_name(ns)  # checks the catalog level on a catalog-less metastore
        super()._create_table(ns, table)

    def _drop_checked(self, ns, behavior, purge=False):
        # Catalog drops differ from the shared algorithm in two ways, decided
        # before anything is dropped (a Cascade must never empty the metastore
        # and then fail):
        # * without the catalog API, or for the default catalog, there is no
        #   catalog to drop;
        # * Hive 3 gives every catalog a "default" database and drops it with
        #   the catalog when it holds no tables, so it does not make the
        #   catalog "not empty".
        if len(ns) != 1:
            return super()._drop_checked(ns, behavior, purge)
        if not self.has_catalogs:
            raise self._no_catalog_api(f"drop catalog {ns[0]!r}")
        if ns[0] == DEFAULT_CATALOG:
            raise InvalidInputError(f"the default catalog {DEFAULT_CATALOG!r} cannot be dropped")
        if behavior is DropBehavior.CASCADE:
            return super()._drop_checked(ns, behavior, purge)
        dbs = [d for d in self._list_namespaces(ns) if d != "default"]
        default_tables = list(self._list_tables(ns + ["default"])) if self._get_database(ns + ["default"]) is not None else []
        if dbs or default_tables:
            raise NamespaceNotEmptyError(
                f"catalog {ns[0]!r} is not empty ({len(dbs)} databases besides 'default', "
                f"{len(default_tables)} tables in 'default')"
            )
        self._drop_namespace(ns)


# -- object mapping ------------------------------------------------------------------------


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


__all__ = ["Hive2Namespace", "Hive3Namespace", "ClientPool", "translate_hms_error"]
