"""Where SeaweedFS (4.x) departs from the Iceberg REST spec, and how our client
still behaves per the Lance spec.  Each test first shows the departure on the
raw server (so a fix upstream makes the test fail and gets noticed), then our
client's behaviour on the same situation.  Real server, no mocks."""

from __future__ import annotations

import lance
import pyarrow as pa
import pytest
from lance_namespace import LanceNamespaceError

DUMMY = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "dummy", "required": False, "type": "string"}]}


def code_of(fn, *args):
    with pytest.raises(LanceNamespaceError) as info:
        fn(*args)
    return int(info.value.code)


def test_departure_duplicate_create_table_answers_200(client, raw, ns):
    client.declare_table({"id": ns + ["t"]})
    body = {"name": "t", "schema": DUMMY, "location": f"s3://{ns[0]}/{ns[1]}/t", "properties": {"table_type": "lance"}}
    assert raw.post(f"/namespaces/{ns[1]}/tables", json=body).status_code == 200  # spec: 409
    assert code_of(client.declare_table, {"id": ns + ["t"]}) == 5


def test_departure_list_tables_of_missing_namespace_answers_empty(client, raw, ns):
    missing = ns[1] + "_missing"
    r = raw.get(f"/namespaces/{missing}/tables")
    assert r.status_code == 200 and r.json()["identifiers"] == []  # spec: 404
    assert code_of(client.list_tables, {"id": [ns[0], missing]}) == 1


def test_departure_unfiltered_namespace_listing_includes_nested(client, raw, ns):
    client.create_namespace({"id": ns + ["inner"]})
    listed = [tuple(n) for n in raw.get("/namespaces").json()["namespaces"]]
    assert (ns[1], "inner") in listed  # spec: top-level namespaces only
    top = client.list_namespaces({"id": ns[:1]}).namespaces
    assert ns[1] in top and "inner" not in top
    assert client.list_namespaces({"id": ns}).namespaces == ["inner"]


def test_departure_create_namespace_without_parent(client, raw, ns):
    orphan = [ns[1] + "_noparent", "child"]
    r = raw.post("/namespaces", json={"namespace": orphan})
    try:
        assert r.status_code == 200  # spec: 404 NoSuchNamespace
    finally:
        raw.delete("/namespaces/" + "%1F".join(orphan))
    assert code_of(client.create_namespace, {"id": [ns[0], ns[1] + "_noparent2", "child"]}) == 1


def test_departure_drop_namespace_with_nested_children(client, raw, ns):
    parent = ns[1] + "_p"
    raw.post("/namespaces", json={"namespace": [parent]}).raise_for_status()
    raw.post("/namespaces", json={"namespace": [parent, "kid"]}).raise_for_status()
    try:
        assert raw.delete(f"/namespaces/{parent}").status_code == 204  # spec: 409 NamespaceNotEmpty
    finally:
        raw.delete(f"/namespaces/{parent}%1Fkid")
    client.create_namespace({"id": ns + ["kid"]})
    assert code_of(client.drop_namespace, {"id": ns}) == 3
    client.namespace_exists({"id": ns + ["kid"]})  # nothing lost


def test_departure_deregister_deletes_the_data(client, seaweed, ns):
    """purgeRequested=false must keep the files; SeaweedFS removes them."""
    tid = ns + ["kept"]
    lance.write_dataset(pa.table({"a": [1, 2, 3]}), namespace_client=client, table_id=tid, mode="create")
    location = client.describe_table({"id": tid}).location
    out = client.deregister_table({"id": tid})  # sends DELETE ...?purgeRequested=false (see test_protocol_stub)
    assert out.location == location
    assert code_of(client.describe_table, {"id": tid}) == 4
    with pytest.raises(Exception):  # the spec would still find 3 rows here
        lance.dataset(location, storage_options=seaweed.storage_options())


def test_departure_missing_token_is_403_not_401(seaweed):
    """Without a token SeaweedFS answers 403 Forbidden (code 15), not 401."""
    import lance_ns

    anon = lance_ns.connect("iceberg", {"endpoint": seaweed.iceberg_url})
    assert code_of(anon.describe_namespace, {"id": [seaweed.warehouse, "x"]}) == 15
