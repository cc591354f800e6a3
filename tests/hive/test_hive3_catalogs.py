"""hive3's catalog level against a REAL Hive Metastore 3.1 and against the Hive 3 double.

Each test runs twice:

* ``hms3``: the real Hive Metastore 3.1.3 (tests/services/hms3.py, fetched from Maven
  Central), shared by the test process; what a test made (catalogs, databases of the
  default catalog, tables of ``hive.default``) is dropped after it, so the tests see
  the server as they found it.
* ``double``: ``hive3_double.Hive3Double``, a real Thrift server speaking the Hive 3
  ``ThriftHiveMetastore`` service generated from the published Thrift IDL, with a handler
  written to Hive 3's semantics (see its docstring), fresh for each test: the same checks
  without a JVM (``make test-fast``).

The metastore's state is read back through ``server`` (raw Thrift calls on the real one,
the handler's dictionaries on the double), never through the namespace under test; the
calls lance-ns sends are logged on the client side (``server.calls``), the same for both.
"""

from __future__ import annotations

from types import SimpleNamespace

import lance
import pyarrow as pa
import pytest
from lance_namespace import LanceNamespaceError
from pymetastore.hive_metastore import ttypes as hms
from thrift.protocol import TBinaryProtocol
from thrift.Thrift import TMessageType

import lance_ns
from lance_ns.impls.hive import pool

from .conftest import raw_client
from .hive3_double import Hive3Double


def code_of(fn, *args):
    with pytest.raises(LanceNamespaceError) as info:
        fn(*args)
    return int(info.value.code)


class DoubleView:
    """The double's state (fresh per test)."""

    def __init__(self, double: Hive3Double, calls: list[str]):
        self.uri, self.handler, self.calls = double.uri, double.handler, calls

    def catalog(self, name):
        return self.handler.catalogs.get(name)

    def database(self, cat, db):
        return self.handler.dbs.get((cat, db))

    def table(self, cat, db, name):
        return self.handler.tables.get((cat, db, name))


class ServerView:
    """The real metastore's state, read with raw Thrift calls."""

    def __init__(self, uri: str, client, calls: list[str]):
        self.uri, self.client, self.calls = uri, client, calls

    def catalog(self, name):
        try:
            return self.client.get_catalog(hms.GetCatalogRequest(name=name)).catalog
        except hms.NoSuchObjectException:
            return None

    def database(self, cat, db):
        try:
            return self.client.get_database(f"@{cat}#{db}")
        except hms.NoSuchObjectException:
            return None

    def table(self, cat, db, name):
        try:
            return self.client.get_table(f"@{cat}#{db}", name)
        except hms.NoSuchObjectException:
            return None


def _state(client) -> tuple[set, set, set]:
    return (set(client.get_catalogs().names), set(client.get_databases("@hive#")), set(client.get_all_tables("@hive#default")))


@pytest.fixture
def calls(monkeypatch) -> list[str]:
    """The names of the metastore calls lance-ns's connection pools send, in order."""
    log: list[str] = []

    class Recording(TBinaryProtocol.TBinaryProtocol):
        def writeMessageBegin(self, name, type, seqid):
            if type == TMessageType.CALL:
                log.append(name)
            super().writeMessageBegin(name, type, seqid)

    monkeypatch.setattr(pool, "TBinaryProtocol", SimpleNamespace(TBinaryProtocol=Recording))
    return log


@pytest.fixture(params=["double", pytest.param("hms3", marks=pytest.mark.slow)])
def server(request, tmp_path, calls):
    if request.param == "double":
        with Hive3Double(str(tmp_path / "wh")) as d:
            yield DoubleView(d, calls)
        return
    from tests.services.hms3 import shared_hms3

    hms3 = shared_hms3()
    client, transport = raw_client(hms3.host, hms3.port)
    before = _state(client)
    try:
        yield ServerView(hms3.uri, client, calls)
    finally:
        _restore(hms3.uri, client, before, tmp_path)
        transport.close()


def _restore(uri, client, before, tmp_path) -> None:
    """Drop what the test made on the shared real metastore."""
    catalogs, dbs, tables = (now - then for now, then in zip(_state(client), before))
    cleaner = lance_ns.connect("hive3", {"uri": uri, "root": str(tmp_path / "cleanup")})
    try:
        for t in tables:
            cleaner.deregister_table({"id": ["hive", "default", t]})
        for db in dbs:
            cleaner.drop_namespace({"id": ["hive", db], "behavior": "Cascade"})
        for cat in catalogs:
            cleaner.drop_namespace({"id": [cat], "behavior": "Cascade"})
    finally:
        cleaner.close()


@pytest.fixture
def ns(server, tmp_path):
    client = lance_ns.connect("hive3", {"uri": server.uri, "root": str(tmp_path / "root")})
    yield client
    client.close()


def test_catalog_lifecycle(ns, server, tmp_path):
    before = ns.list_namespaces({"id": []}).namespaces
    assert "hive" in before and "sales" not in before
    assert ns.has_catalogs
    ns.create_namespace({"id": ["sales"], "properties": {"catalog.description": "sales data"}})
    assert ns.list_namespaces({"id": []}).namespaces == sorted([*before, "sales"])
    props = ns.describe_namespace({"id": ["sales"]}).properties
    assert props == {"catalog.description": "sales data", "catalog.location-uri": str(tmp_path / "root" / "sales")}
    assert server.catalog("sales").description == "sales data"  # stored in the Catalog object
    assert code_of(ns.create_namespace, {"id": ["sales"]}) == 2
    ns.create_namespace({"id": ["sales"], "mode": "ExistOk"})
    # Hive 3 gives every new catalog a "default" database
    assert ns.list_namespaces({"id": ["sales"]}).namespaces == ["default"]
    ns.drop_namespace({"id": ["sales"]})  # Restrict: an empty "default" does not count
    assert server.catalog("sales") is None
    assert code_of(ns.describe_namespace, {"id": ["sales"]}) == 1
    assert code_of(ns.drop_namespace, {"id": ["sales"]}) == 1
    ns.drop_namespace({"id": ["sales"], "mode": "Skip"})


def test_databases_and_tables_live_in_their_catalog(ns, server):
    ns.create_namespace({"id": ["eu"]})
    ns.create_namespace({"id": ["eu", "shop"], "properties": {"database.owner": "bob", "k": "v"}})
    ns.create_namespace({"id": ["hive", "shop"]})  # same database name, other catalog
    ns.declare_table({"id": ["eu", "shop", "orders"], "properties": {"team": "x"}})
    assert ns.list_tables({"id": ["eu", "shop"]}).tables == ["orders"]
    assert ns.list_tables({"id": ["hive", "shop"]}).tables == []
    d = ns.describe_table({"id": ["eu", "shop", "orders"]})
    assert d.location.endswith("/eu/shop/orders.lance") and d.properties["team"] == "x"
    t = server.table("eu", "shop", "orders")
    assert (t.catName, t.tableType, t.parameters["EXTERNAL"]) == ("eu", "EXTERNAL_TABLE", "TRUE")
    db = server.database("eu", "shop")
    assert (db.catalogName, db.ownerName, db.parameters) == ("eu", "bob", {"k": "v"})
    assert code_of(ns.describe_table, {"id": ["hive", "shop", "orders"]}) == 4
    # non-empty catalog / database
    assert code_of(ns.drop_namespace, {"id": ["eu"]}) == 3
    assert code_of(ns.drop_namespace, {"id": ["eu", "shop"]}) == 3
    ns.drop_namespace({"id": ["eu"], "behavior": "Cascade"})
    assert server.catalog("eu") is None and server.database("eu", "shop") is None
    assert server.database("hive", "shop") is not None  # the other catalog's namesake untouched


def test_missing_catalog_is_namespace_not_found(ns, server):
    for call, req in [
        (ns.describe_namespace, {"id": ["nope"]}),
        (ns.list_namespaces, {"id": ["nope"]}),
        (ns.describe_namespace, {"id": ["nope", "db"]}),
        (ns.create_namespace, {"id": ["nope", "db"]}),
        (ns.list_tables, {"id": ["nope", "db"]}),
        (ns.declare_table, {"id": ["nope", "db", "t"]}),
    ]:
        assert code_of(call, req) == 1, call.__name__
    assert code_of(ns.describe_table, {"id": ["nope", "db", "t"]}) == 4
    assert server.database("nope", "db") is None


def test_catalog_properties_are_checked(ns, server):
    assert code_of(ns.create_namespace, {"id": ["c1"], "properties": {"color": "red"}}) == 13
    assert server.catalog("c1") is None
    assert code_of(ns.create_namespace, {"id": ["Upper"]}) == 13
    assert code_of(ns.create_namespace, {"id": ["a", "b", "c"]}) == 13  # three levels at most


def test_default_catalog_cannot_be_dropped(ns, server):
    ns.create_namespace({"id": ["hive", "keepme"]})
    assert code_of(ns.drop_namespace, {"id": ["hive"], "behavior": "Cascade"}) == 13
    assert server.database("hive", "keepme") is not None  # refused before anything was dropped


def test_capability_probe_is_cached(ns, server):
    for _ in range(3):
        ns.list_namespaces({"id": []})
        ns.describe_namespace({"id": ["hive", "default"]})
    assert server.calls.count("get_catalogs") == 1 + 3  # one probe, then one listing per call


def test_classic_calls_carry_the_catalog(ns, server):
    ns.create_namespace({"id": ["c2"]})
    ns.create_namespace({"id": ["c2", "db"]})
    before = len(server.calls)
    assert ns.list_tables({"id": ["c2", "db"]}).tables == []
    assert "get_all_tables" in server.calls[before:]
    assert server.database("c2", "db") is not None and server.database("hive", "db") is None


def test_data_through_a_catalog(ns):
    ns.create_namespace({"id": ["lake"]})
    ns.create_namespace({"id": ["lake", "db"]})
    tid = ["lake", "db", "events"]
    lance.write_dataset(pa.table({"x": [1, 2, 3]}), namespace_client=ns, table_id=tid, mode="create")
    lance.write_dataset(pa.table({"x": [4]}), namespace_client=ns, table_id=tid, mode="append")
    assert lance.dataset(namespace_client=ns, table_id=tid).count_rows() == 4
    location = ns.describe_table({"id": tid}).location
    ns.deregister_table({"id": tid})
    assert lance.dataset(location).count_rows() == 4  # deregister keeps data
    ns.register_table({"id": tid, "location": location})  # registered: lance-ns no longer owns the data
    ns.drop_namespace({"id": ["lake"], "behavior": "Cascade"})
    assert lance.dataset(location).count_rows() == 4  # a Cascade drop keeps a registered table's data


def test_a_pool_of_one_connection_is_enough(server, tmp_path):
    # the capability probe must not need a second connection while one is held
    client = lance_ns.connect(
        "hive3", {"uri": server.uri, "root": str(tmp_path), "client.pool-size": "1", "client.pool-timeout-ms": "2000"}
    )
    try:
        client.describe_namespace({"id": ["hive", "default"]})
        client.declare_table({"id": ["hive", "default", "t"]})
        assert client.list_tables({"id": ["hive", "default"]}).tables == ["t"]
        assert client.pool.opened == 1
    finally:
        client.close()
