"""hive3's catalog level against a Hive 3 metastore DOUBLE.

No Hive 3 metastore can run here (only HMS 2.3 ships in the pyspark wheel),
so these tests use ``hive3_double.Hive3Double``: a real Thrift server speaking
the Hive 3 ``ThriftHiveMetastore`` service generated from the published Thrift
IDL, with a handler written to Hive 3's semantics (see its docstring).  The
wire format is Hive 3's; the metastore behaviour is our reading of it.
"""

from __future__ import annotations

import lance
import pyarrow as pa
import pytest
from lance_namespace import LanceNamespaceError

import lance_ns

from .hive3_double import Hive3Double


def code_of(fn, *args):
    with pytest.raises(LanceNamespaceError) as info:
        fn(*args)
    return int(info.value.code)


@pytest.fixture
def double(tmp_path):
    with Hive3Double(str(tmp_path / "wh")) as d:
        yield d


@pytest.fixture
def ns(double, tmp_path):
    client = lance_ns.connect("hive3", {"uri": double.uri, "root": str(tmp_path / "root")})
    yield client
    client.close()


def test_catalog_lifecycle(ns, double, tmp_path):
    assert ns.list_namespaces({"id": []}).namespaces == ["hive"]
    assert ns.has_catalogs
    ns.create_namespace({"id": ["sales"], "properties": {"catalog.description": "sales data"}})
    assert ns.list_namespaces({"id": []}).namespaces == ["hive", "sales"]
    props = ns.describe_namespace({"id": ["sales"]}).properties
    assert props == {"catalog.description": "sales data", "catalog.location-uri": str(tmp_path / "root" / "sales")}
    assert double.handler.catalogs["sales"].description == "sales data"  # stored in the Catalog object
    assert code_of(ns.create_namespace, {"id": ["sales"]}) == 2
    ns.create_namespace({"id": ["sales"], "mode": "ExistOk"})
    # Hive 3 gives every new catalog a "default" database
    assert ns.list_namespaces({"id": ["sales"]}).namespaces == ["default"]
    ns.drop_namespace({"id": ["sales"]})  # Restrict: an empty "default" does not count
    assert "sales" not in double.handler.catalogs
    assert code_of(ns.describe_namespace, {"id": ["sales"]}) == 1
    assert code_of(ns.drop_namespace, {"id": ["sales"]}) == 1
    ns.drop_namespace({"id": ["sales"], "mode": "Skip"})


def test_databases_and_tables_live_in_their_catalog(ns, double):
    ns.create_namespace({"id": ["eu"]})
    ns.create_namespace({"id": ["eu", "shop"], "properties": {"database.owner": "bob", "k": "v"}})
    ns.create_namespace({"id": ["hive", "shop"]})  # same database name, other catalog
    ns.declare_table({"id": ["eu", "shop", "orders"], "properties": {"team": "x"}})
    assert ns.list_tables({"id": ["eu", "shop"]}).tables == ["orders"]
    assert ns.list_tables({"id": ["hive", "shop"]}).tables == []
    d = ns.describe_table({"id": ["eu", "shop", "orders"]})
    assert d.location.endswith("/eu/shop/orders.lance") and d.properties["team"] == "x"
    t = double.handler.tables[("eu", "shop", "orders")]
    assert (t.catName, t.tableType, t.parameters["EXTERNAL"]) == ("eu", "EXTERNAL_TABLE", "TRUE")
    db = double.handler.dbs[("eu", "shop")]
    assert (db.catalogName, db.ownerName, db.parameters) == ("eu", "bob", {"k": "v"})
    assert code_of(ns.describe_table, {"id": ["hive", "shop", "orders"]}) == 4
    # non-empty catalog / database
    assert code_of(ns.drop_namespace, {"id": ["eu"]}) == 3
    assert code_of(ns.drop_namespace, {"id": ["eu", "shop"]}) == 3
    ns.drop_namespace({"id": ["eu"], "behavior": "Cascade"})
    assert "eu" not in double.handler.catalogs and ("eu", "shop") not in double.handler.dbs
    assert ("hive", "shop") in double.handler.dbs  # the other catalog's namesake untouched


def test_missing_catalog_is_namespace_not_found(ns, double):
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
    assert ("nope", "db") not in double.handler.dbs


def test_catalog_properties_are_checked(ns, double):
    assert code_of(ns.create_namespace, {"id": ["c1"], "properties": {"color": "red"}}) == 13
    assert "c1" not in double.handler.catalogs
    assert code_of(ns.create_namespace, {"id": ["Upper"]}) == 13
    assert code_of(ns.create_namespace, {"id": ["a", "b", "c"]}) == 13  # three levels at most


def test_default_catalog_cannot_be_dropped(ns, double):
    ns.create_namespace({"id": ["hive", "keepme"]})
    assert code_of(ns.drop_namespace, {"id": ["hive"], "behavior": "Cascade"}) == 13
    assert ("hive", "keepme") in double.handler.dbs  # refused before anything was dropped


def test_capability_probe_is_cached(ns, double):
    for _ in range(3):
        ns.list_namespaces({"id": []})
        ns.describe_namespace({"id": ["hive", "default"]})
    assert double.handler.calls.count("get_catalogs") == 1 + 3  # one probe, then one listing per call


def test_classic_calls_carry_the_catalog(ns, double):
    ns.create_namespace({"id": ["c2"]})
    ns.create_namespace({"id": ["c2", "db"]})
    before = len(double.handler.calls)
    ns.list_tables({"id": ["c2", "db"]})
    assert "get_all_tables" in double.handler.calls[before:]
    assert ("c2", "db") in double.handler.dbs and ("hive", "db") not in double.handler.dbs


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
    ns.register_table({"id": tid, "location": location})
    ns.drop_namespace({"id": ["lake"], "behavior": "Cascade"})
    with pytest.raises(Exception):
        lance.dataset(location)


def test_a_pool_of_one_connection_is_enough(double, tmp_path):
    # the capability probe must not need a second connection while one is held
    client = lance_ns.connect(
        "hive3", {"uri": double.uri, "root": str(tmp_path), "client.pool-size": "1", "client.pool-timeout-ms": "2000"}
    )
    try:
        client.describe_namespace({"id": ["hive", "default"]})
        client.declare_table({"id": ["hive", "default", "t"]})
        assert client.list_tables({"id": ["hive", "default"]}).tables == ["t"]
        assert client.pool.opened == 1
    finally:
        client.close()
