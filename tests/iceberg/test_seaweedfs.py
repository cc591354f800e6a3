"""The Iceberg backend against the real SeaweedFS catalog: what the shared
conformance suite does not cover (warehouse level, non-Lance Iceberg tables,
nested namespaces, real OAuth2).  Departures are in test_seaweedfs_departures."""

from __future__ import annotations

import lance
import pyarrow as pa
import pytest
from lance_namespace import LanceNamespaceError

import lance_ns

from ..conformance.backends.iceberg import client_properties

DUMMY = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "x", "required": False, "type": "long"}]}


def code_of(fn, *args):
    with pytest.raises(LanceNamespaceError) as info:
        fn(*args)
    return int(info.value.code)


@pytest.fixture
def iceberg_only_table(raw, ns):
    """A plain Iceberg table (no table_type=lance), made with the raw API."""
    body = {"name": "plain", "schema": DUMMY, "location": f"s3://{ns[0]}/{ns[1]}/plain"}
    raw.post(f"/namespaces/{ns[1]}/tables", json=body).raise_for_status()
    yield ns + ["plain"]
    raw.delete(f"/namespaces/{ns[1]}/tables/plain")


def test_non_lance_iceberg_tables_are_invisible_and_untouched(client, ns, iceberg_only_table):
    client.declare_table({"id": ns + ["lance_t"]})
    assert client.list_tables({"id": ns}).tables == ["lance_t"]
    assert code_of(client.describe_table, {"id": iceberg_only_table}) == 13
    assert code_of(client.drop_table, {"id": iceberg_only_table}) == 13
    assert code_of(client.deregister_table, {"id": iceberg_only_table}) == 13
    assert code_of(client.declare_table, {"id": iceberg_only_table}) == 5
    client.drop_table({"id": ns + ["lance_t"]})
    assert code_of(client.drop_namespace, {"id": ns}) == 3  # the Iceberg table is still there


def test_warehouse_level(client, seaweed, ns):
    wh = [seaweed.warehouse]
    client.namespace_exists({"id": wh})
    assert ns[1] in client.list_namespaces({"id": wh}).namespaces
    assert code_of(client.create_namespace, {"id": wh}) == 2
    assert code_of(client.namespace_exists, {"id": ["no-such-warehouse"]}) == 1
    assert code_of(client.create_namespace, {"id": ["no-such-warehouse"]}) == 0  # not through this API
    assert code_of(client.list_namespaces, {"id": []}) == 0  # the protocol cannot list warehouses
    assert code_of(client.declare_table, {"id": wh + ["t"]}) == 13  # tables live below the warehouse
    assert client.list_tables({"id": wh}).tables == []
    assert code_of(client.describe_table, {"id": wh + ["t"]}) == 4


def test_nested_namespaces_and_properties(client, ns):
    client.create_namespace({"id": ns + ["a"], "properties": {"owner": "ml"}})
    client.create_namespace({"id": ns + ["a", "b"]})
    client.create_namespace({"id": ns + ["c"]})
    assert client.list_namespaces({"id": ns}).namespaces == ["a", "c"]
    assert client.list_namespaces({"id": ns + ["a"]}).namespaces == ["b"]
    assert client.describe_namespace({"id": ns + ["a"]}).properties["owner"] == "ml"
    client.declare_table({"id": ns + ["a", "b", "t"], "properties": {"k": "v"}})
    d = client.describe_table({"id": ns + ["a", "b", "t"]})
    assert d.location == f"s3://{ns[0]}/{ns[1]}/a/b/t"  # {root}/{warehouse}/{namespace...}/{table}, root s3://
    assert d.properties["k"] == "v" and d.properties["table_type"] == "lance"
    assert code_of(client.drop_namespace, {"id": ns + ["a"]}) == 3
    client.drop_namespace({"id": ns + ["a", "b", "missing"]})  # idempotent
    assert code_of(client.drop_namespace, {"id": ns + ["a"], "behavior": "Cascade"}) == 0  # Restrict only


def test_pylance_data_in_a_nested_namespace_at_the_servers_layout(client, seaweed, ns):
    """SeaweedFS lets S3 clients write only at its own table layout
    (``s3://BUCKET/<a.b>/<table>`` for nested namespaces), so the table is
    declared there explicitly; pylance then appends through the namespace."""
    client.create_namespace({"id": ns + ["inner"]})
    tid = ns + ["inner", "events"]
    location = f"s3://{ns[0]}/{ns[1]}.inner/events"
    assert client.declare_table({"id": tid, "location": location}).location == location
    data = pa.table({"id": pa.array(range(5), pa.int64())})
    lance.write_dataset(data, namespace_client=client, table_id=tid, mode="append")
    lance.write_dataset(data, namespace_client=client, table_id=tid, mode="append")
    assert lance.dataset(namespace_client=client, table_id=tid).count_rows() == 10
    assert lance.dataset(location, storage_options=seaweed.storage_options()).count_rows() == 10


def test_real_oauth2(seaweed):
    props = client_properties(seaweed)
    good = lance_ns.connect("iceberg", props)
    good.namespace_exists({"id": [seaweed.warehouse]})
    assert good.auth.fetches == 1
    bad = lance_ns.connect("iceberg", {**props, "credential": f"{seaweed.access_key}:wrong"})
    assert code_of(bad.namespace_exists, {"id": [seaweed.warehouse]}) == 16
    unknown = lance_ns.connect("iceberg", {**props, "credential": "nobody:nothing"})
    assert code_of(unknown.list_tables, {"id": [seaweed.warehouse, "x"]}) == 16


def test_real_server_401_triggers_a_token_refresh(seaweed):
    """A stale token (SeaweedFS: 401 "invalid or expired") is replaced from the
    credential and the call goes through."""
    props = {**client_properties(seaweed), "auth_token": "stale-token-from-yesterday"}
    c = lance_ns.connect("iceberg", props)
    c.namespace_exists({"id": [seaweed.warehouse]})
    assert c.auth.fetches == 1
    stale_only = lance_ns.connect("iceberg", {"endpoint": seaweed.iceberg_url, "auth_token": "stale"})
    assert code_of(stale_only.namespace_exists, {"id": [seaweed.warehouse]}) == 16
