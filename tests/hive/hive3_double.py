"""An in-process Hive 3 metastore double at the Thrift level.

tests/hive/test_hive3_catalogs.py runs its checks against the real Hive
Metastore 3.1 (tests/services/hms3.py, jars from Maven Central) and against
this double, which keeps them runnable without a JVM or Maven (``make
test-fast``): a real Thrift server
(``thrift.server.TServer``, binary protocol over TCP on 127.0.0.1) using the
``ThriftHiveMetastore.Processor`` generated from the published Hive 3 Thrift
IDL (shipped by pymetastore).  Requests and responses therefore travel in
exactly the wire format of a Hive 3 metastore; only the handler's behaviour
is ours, and it follows Hive 3's documented semantics for the calls lance-ns
makes:

* catalogs: ``get_catalogs``, ``get_catalog``, ``create_catalog`` (a location
  is required; a ``default`` database is created inside), ``alter_catalog``,
  ``drop_catalog`` (the default catalog ``hive`` cannot be dropped; only an empty
  ``default`` database may remain, and it is dropped with the catalog; the
  catalog's directory is deleted, with everything in it, as HMS 3.1 does);
* classic calls carry the catalog in the database name, ``@cat#db`` (``@cat#``
  = no database, i.e. every database; ``@cat#!`` = the empty name), plain names
  mean the catalog ``hive`` (Hive 3's MetaStoreUtils.parseDbName rule);
* names are lower-cased; a table is EXTERNAL_TABLE only with parameter
  ``EXTERNAL=TRUE`` (else MANAGED_TABLE, whose drop with deleteData removes
  its files);
* errors are the IDL's exceptions: NoSuchObject, AlreadyExists,
  InvalidObject, InvalidOperation, MetaException.

Calls outside this list are answered by the generated processor as a Thrift
application error, as a real server answers an unknown method.
"""

from __future__ import annotations

import copy
import fnmatch
import shutil
import socket
import threading
import time
from urllib.parse import urlparse

from pymetastore.hive_metastore import ThriftHiveMetastore
from pymetastore.hive_metastore import ttypes as hms
from thrift.protocol import TBinaryProtocol
from thrift.server import TServer
from thrift.transport import TSocket, TTransport

DEFAULT_CATALOG = "hive"


def parse_db_name(name: str | None) -> tuple[str, str | None]:
    """Hive 3's rule (MetaStoreUtils.parseDbName): "@cat#" = no database,
    "@cat#!" = the empty name, "@cat#db", or a plain name in the default catalog."""
    if name and name.startswith("@"):
        cat, sep, db = name[1:].partition("#")
        if not sep:
            raise hms.MetaException(message=f"{name} is prepended with the catalog marker but has no catalog name")
        return cat.lower(), (None if db == "" else "" if db == "!" else db.lower())
    return DEFAULT_CATALOG, (name.lower() if name else None)


class Hive3Handler:
    def __init__(self, warehouse: str):
        self.warehouse = warehouse.rstrip("/")
        self.lock = threading.RLock()
        self.catalogs: dict[str, hms.Catalog] = {}
        self.dbs: dict[tuple[str, str], hms.Database] = {}
        self.tables: dict[tuple[str, str, str], hms.Table] = {}
        self.calls: list[str] = []
        self._add_catalog(hms.Catalog(name=DEFAULT_CATALOG, description="Default catalog", locationUri=self.warehouse))

    def _log(self, name: str) -> None:
        self.calls.append(name)

    def _add_catalog(self, cat: hms.Catalog) -> None:
        self.catalogs[cat.name] = cat
        self.dbs[(cat.name, "default")] = hms.Database(
            name="default",
            description=f"Default database for catalog {cat.name}",
            locationUri=cat.locationUri,
            parameters={},
            catalogName=cat.name,
        )

    # -- catalogs ---------------------------------------------------------------
    def get_catalogs(self):
        self._log("get_catalogs")
        with self.lock:
            return hms.GetCatalogsResponse(names=sorted(self.catalogs))

    def get_catalog(self, req):
        self._log("get_catalog")
        with self.lock:
            cat = self.catalogs.get(req.name.lower())
            if cat is None:
                raise hms.NoSuchObjectException(message=f"No catalog {req.name}")
            return hms.GetCatalogResponse(catalog=cat)

    def create_catalog(self, req):
        self._log("create_catalog")
        cat = req.catalog
        with self.lock:
            name = cat.name.lower()
            if not cat.locationUri:
                raise hms.InvalidObjectException(message="You must specify a path for the catalog")
            if name in self.catalogs:
                raise hms.AlreadyExistsException(message=f"Catalog {name} already exists")
            self._add_catalog(hms.Catalog(name=name, description=cat.description, locationUri=cat.locationUri))

    def drop_catalog(self, req):
        self._log("drop_catalog")
        with self.lock:
            name = req.name.lower()
            if name == DEFAULT_CATALOG:
                raise hms.MetaException(message=f"Can not drop {DEFAULT_CATALOG} catalog")
            if name not in self.catalogs:
                raise hms.NoSuchObjectException(message=f"No catalog {name}")
            dbs = [d for (c, d) in self.dbs if c == name]
            if [d for d in dbs if d != "default"]:
                raise hms.InvalidOperationException(
                    message=f"There are non-default databases in the catalog {name} so it cannot be dropped."
                )
            if any(k[:2] == (name, "default") for k in self.tables):
                raise hms.InvalidOperationException(
                    message=f"There are still objects in the default database for catalog {name}"
                )
            self.dbs.pop((name, "default"), None)
            location = self.catalogs.pop(name).locationUri
        # as HiveMetaStore.drop_catalog does: the catalog's directory goes, whatever is in it
        # (seen on HMS 3.1.3: a registered table's data inside was deleted with it)
        path = urlparse(location).path if "://" in location else location
        shutil.rmtree(path, ignore_errors=True)

    def alter_catalog(self, req):
        self._log("alter_catalog")
        with self.lock:
            name = req.name.lower()
            if name not in self.catalogs:
                raise hms.NoSuchObjectException(message=f"No catalog {name}")
            new = req.newCat
            self.catalogs[name] = hms.Catalog(name=name, description=new.description, locationUri=new.locationUri)

    # -- databases --------------------------------------------------------------
    def _db(self, name: str) -> tuple[str, str]:
        cat, db = parse_db_name(name)
        if (cat, db) not in self.dbs:
            raise hms.NoSuchObjectException(message=f"database {cat}.{db} does not exist")
        return cat, db

    def get_all_databases(self):
        self._log("get_all_databases")
        return self.get_databases(None)

    def get_databases(self, pattern):
        self._log("get_databases")
        cat, pat = parse_db_name(pattern)
        with self.lock:
            names = sorted(d for (c, d) in self.dbs if c == cat)
        if pat is not None:
            names = [n for n in names if any(fnmatch.fnmatchcase(n, p.strip()) for p in pat.split("|"))]
        return names

    def get_database(self, name):
        self._log("get_database")
        with self.lock:
            return copy.deepcopy(self.dbs[self._db(name)])

    def create_database(self, database):
        self._log("create_database")
        with self.lock:
            cat = (database.catalogName or DEFAULT_CATALOG).lower()
            name = database.name.lower()
            if cat not in self.catalogs:
                raise hms.InvalidObjectException(message=f"No such catalog {cat}")
            if (cat, name) in self.dbs:
                raise hms.AlreadyExistsException(message=f"Database {name} already exists")
            if not name.replace("_", "").isalnum():
                raise hms.InvalidObjectException(message=f"{name} is not a valid database name")
            location = database.locationUri or f"{self.catalogs[cat].locationUri}/{name}.db"
            self.dbs[(cat, name)] = hms.Database(
                name=name,
                description=database.description,
                locationUri=location,
                parameters=dict(database.parameters or {}),
                ownerName=database.ownerName,
                ownerType=database.ownerType,
                catalogName=cat,
            )

    def drop_database(self, name, deleteData, cascade):
        self._log("drop_database")
        with self.lock:
            cat, db = self._db(name)
            if db == "default" and cat == DEFAULT_CATALOG:
                raise hms.MetaException(message="Can not drop default database in catalog hive")
            tables = [k for k in self.tables if k[:2] == (cat, db)]
            if tables and not cascade:
                raise hms.InvalidOperationException(message=f"Database {db} is not empty. One or more tables exist.")
            for k in tables:
                del self.tables[k]
            del self.dbs[(cat, db)]

    # -- tables -----------------------------------------------------------------
    def get_all_tables(self, db_name):
        self._log("get_all_tables")
        cat, db = parse_db_name(db_name)
        with self.lock:
            return sorted(t for (c, d, t) in self.tables if (c, d) == (cat, db))

    def get_table(self, dbname, tbl_name):
        self._log("get_table")
        cat, db = parse_db_name(dbname)
        with self.lock:
            t = self.tables.get((cat, db, tbl_name.lower()))
            if t is None:
                raise hms.NoSuchObjectException(message=f"{cat}.{db}.{tbl_name} table not found")
            return copy.deepcopy(t)

    def get_table_objects_by_name(self, dbname, tbl_names):
        self._log("get_table_objects_by_name")
        cat, db = parse_db_name(dbname)
        with self.lock:
            if (cat, db) not in self.dbs:
                raise hms.UnknownDBException(message=f"Could not find database {cat}.{db}")
            return [copy.deepcopy(self.tables[(cat, db, n.lower())]) for n in tbl_names if (cat, db, n.lower()) in self.tables]

    def create_table(self, tbl):
        self._log("create_table")
        with self.lock:
            cat = (tbl.catName or DEFAULT_CATALOG).lower()
            db, name = tbl.dbName.lower(), tbl.tableName.lower()
            if (cat, db) not in self.dbs:
                raise hms.NoSuchObjectException(message=f"The database {cat}.{db} does not exist")
            if (cat, db, name) in self.tables:
                raise hms.AlreadyExistsException(message=f"Table {cat}.{db}.{name} already exists")
            params = dict(tbl.parameters or {})
            external = params.get("EXTERNAL", "").upper() == "TRUE"
            kind = "EXTERNAL_TABLE" if external and tbl.tableType in ("EXTERNAL_TABLE", "MANAGED_TABLE") else (
                "MANAGED_TABLE" if tbl.tableType == "EXTERNAL_TABLE" else tbl.tableType
            )
            params.setdefault("transient_lastDdlTime", str(int(time.time())))
            self.tables[(cat, db, name)] = hms.Table(
                tableName=name,
                dbName=db,
                catName=cat,
                owner=tbl.owner,
                createTime=tbl.createTime,
                sd=tbl.sd,
                partitionKeys=tbl.partitionKeys,
                parameters=params,
                tableType=kind,
            )

    def drop_table(self, dbname, name, deleteData):
        self._log("drop_table")
        cat, db = parse_db_name(dbname)
        with self.lock:
            t = self.tables.pop((cat, db, name.lower()), None)
            if t is None:
                raise hms.NoSuchObjectException(message=f"{cat}.{db}.{name} table not found")
        if deleteData and t.tableType == "MANAGED_TABLE" and t.sd and t.sd.location:
            shutil.rmtree(t.sd.location.removeprefix("file:"), ignore_errors=True)


class _StoppableServer(TServer.TServer):
    """A threaded Thrift server (one thread per connection) that can be stopped."""

    def __init__(self, processor, transport):
        super().__init__(
            processor,
            transport,
            TTransport.TBufferedTransportFactory(),
            TBinaryProtocol.TBinaryProtocolFactory(),
        )
        self._stopped = threading.Event()
        self._clients: set = set()

    def serve(self):
        self.serverTransport.listen()
        self.serverTransport.handle.settimeout(0.2)  # notice stop() promptly
        while not self._stopped.is_set():
            try:
                client = self.serverTransport.accept()
            except (socket.timeout, TTransport.TTransportException, OSError):
                continue
            if client is None:
                continue
            client.handle.settimeout(None)
            threading.Thread(target=self._handle, args=(client,), daemon=True).start()

    def _handle(self, client):
        itrans = self.inputTransportFactory.getTransport(client)
        otrans = self.outputTransportFactory.getTransport(client)
        iprot = self.inputProtocolFactory.getProtocol(itrans)
        oprot = self.outputProtocolFactory.getProtocol(otrans)
        self._clients.add(client)
        try:
            while not self._stopped.is_set():
                self.processor.process(iprot, oprot)
        except (TTransport.TTransportException, EOFError, OSError):
            pass
        finally:
            self._clients.discard(client)
            itrans.close()
            otrans.close()

    def stop(self):
        self._stopped.set()
        for c in list(self._clients):
            c.close()
        self.serverTransport.close()


class Hive3Double:
    """``with Hive3Double(tmp) as d: d.uri`` -- a Hive 3 Thrift endpoint on 127.0.0.1."""

    def __init__(self, warehouse: str):
        self.handler = Hive3Handler(warehouse)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.server = _StoppableServer(
            ThriftHiveMetastore.Processor(self.handler), TSocket.TServerSocket(host="127.0.0.1", port=self.port)
        )
        self.thread = threading.Thread(target=self.server.serve, daemon=True)

    @property
    def uri(self) -> str:
        return f"thrift://127.0.0.1:{self.port}"

    def __enter__(self) -> "Hive3Double":
        self.thread.start()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.5).close()
                return self
            except OSError:
                time.sleep(0.02)
        raise RuntimeError("Hive 3 double did not start")

    def __exit__(self, *exc) -> None:
        self.server.stop()
        self.thread.join(5)
