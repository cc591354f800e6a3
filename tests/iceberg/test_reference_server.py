"""Apache Iceberg's reference REST server (RESTCatalogServer 1.10.1, JDBC catalog on SQLite
in strict mode; tests/services/iceberg_rest.py) on the raw API, and our client next to it.

It has none of SeaweedFS's departures (test_seaweedfs_departures.py): each is shown here
answered as the spec says.  Its own departures follow, each first on the raw server (a
fix upstream makes the test fail and gets noticed), then our client's behaviour.  The
races its JDBC catalog does not settle are in the conformance backend's REF_RACE_LIMITS.
Real server, no mocks.
"""

from __future__ import annotations

import os

import lance
import pyarrow as pa
import pytest
from lance_namespace import LanceNamespaceError

import lance_ns

pytestmark = pytest.mark.parametrize("catalog", ["iceberg-ref"], indirect=True)

DUMMY = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "dummy", "required": False, "type": "string"}]}


def code_of(fn, *args):
    with pytest.raises(LanceNamespaceError) as info:
        fn(*args)
    return int(info.value.code)


def table_body(name: str, location) -> dict:
    return {"name": name, "schema": DUMMY, "location": str(location), "properties": {"table_type": "lance"}}


# -- SeaweedFS's departures: not here ------------------------------------------------------


def test_duplicate_creates_answer_409(client, raw, ns, catalog):
    client.declare_table({"id": ns + ["t"]})
    location = client.describe_table({"id": ns + ["t"]}).location
    r = raw.post(f"/namespaces/{ns[1]}/tables", json=table_body("t", location))
    assert r.status_code == 409 and r.json()["error"]["type"] == "AlreadyExistsException"
    assert raw.post("/namespaces", json={"namespace": [ns[1]]}).status_code == 409
    assert code_of(client.declare_table, {"id": ns + ["t"]}) == 5


def test_list_tables_of_missing_namespace_answers_404(client, raw, ns):
    r = raw.get(f"/namespaces/{ns[1]}_missing/tables")
    assert r.status_code == 404 and r.json()["error"]["type"] == "NoSuchNamespaceException"
    assert code_of(client.list_tables, {"id": [ns[0], ns[1] + "_missing"]}) == 1


def test_unfiltered_namespace_listing_is_top_level_only(client, raw, ns):
    client.create_namespace({"id": ns + ["inner"]})
    listed = [tuple(n) for n in raw.get("/namespaces").json()["namespaces"]]
    assert (ns[1],) in listed and (ns[1], "inner") not in listed
    assert raw.get("/namespaces", params={"parent": ns[1]}).json()["namespaces"] == [[ns[1], "inner"]]


def test_deregister_keeps_the_files(client, raw, ns):
    tid = ns + ["kept"]
    lance.write_dataset(pa.table({"x": [1, 2]}), namespace_client=client, table_id=tid, mode="create")
    location = client.describe_table({"id": tid}).location
    assert raw.delete(f"/namespaces/{ns[1]}/tables/kept", params={"purgeRequested": "false"}).status_code in (200, 204)
    assert {"_versions", "data", "metadata"} <= set(os.listdir(location))  # Lance's and the companion's
    client.register_table({"id": tid, "location": location})
    assert lance.dataset(namespace_client=client, table_id=tid).count_rows() == 2


# -- its own departures ------------------------------------------------------------------------


def test_departure_no_prefix_and_no_warehouses(client, raw, ns, catalog):
    """Its config names no prefix, and its routes have none: the Lance spec's fallback
    (the warehouse name as prefix) answers 400, so our client, finding that, calls the
    unprefixed paths as Iceberg's own clients do; every warehouse name reaches its one
    catalog."""
    config = raw.get("/config", params={"warehouse": catalog.warehouse}).json()
    assert "prefix" not in config["defaults"] and "prefix" not in config["overrides"]
    r = raw.get(f"/{catalog.warehouse}/namespaces")
    assert r.status_code == 400 and "No route for request" in r.json()["error"]["message"]
    assert ns[1] in client.list_namespaces({"id": [catalog.warehouse]}).namespaces
    other = lance_ns.connect("iceberg", catalog.props)
    assert ns[1] in other.list_namespaces({"id": ["any-other-warehouse"]}).namespaces


def test_departure_drop_namespace_with_nested_children_succeeds_and_keeps_it(client, raw, ns):
    """DropNamespace of a parent holding only a nested namespace answers success (spec: 409,
    "Namespace must be empty"), yet the parent stays: a JDBC namespace exists while anything
    lies under it (only its properties are gone).  Our client lists children first: code 3."""
    parent = ns[1] + "_p"
    raw.post("/namespaces", json={"namespace": [parent], "properties": {"k": "v"}}).raise_for_status()
    raw.post("/namespaces", json={"namespace": [parent, "kid"]}).raise_for_status()
    try:
        assert raw.delete(f"/namespaces/{parent}").status_code in (200, 204)  # spec: 409 NamespaceNotEmpty
        after = raw.get(f"/namespaces/{parent}")
        assert after.status_code == 200 and "k" not in after.json()["properties"]  # still there, properties lost
    finally:
        raw.delete(f"/namespaces/{parent}%1Fkid")
        raw.delete(f"/namespaces/{parent}")
    client.create_namespace({"id": ns + ["a"]})
    client.create_namespace({"id": ns + ["a", "b"]})
    assert code_of(client.drop_namespace, {"id": ns + ["a"]}) == 3
    assert client.list_namespaces({"id": ns + ["a"]}).namespaces == ["b"]


def test_create_namespace_without_parent_brings_the_parent_into_being(client, raw, ns):
    """The REST spec defines no 404 for CreateNamespace; this server accepts a nested one
    without its parent, which then exists (and is listed) as long as the child does.  Our
    client refuses it (code 1), as the Lance spec asks."""
    orphan = [ns[1] + "_noparent", "child"]
    assert raw.post("/namespaces", json={"namespace": orphan}).status_code == 200
    try:
        assert raw.get(f"/namespaces/{orphan[0]}").status_code == 200
    finally:
        raw.delete("/namespaces/" + "%1F".join(orphan))
    assert raw.get(f"/namespaces/{orphan[0]}").status_code == 404
    assert code_of(client.create_namespace, {"id": [ns[0], ns[1] + "_noparent2", "child"]}) == 1


def test_create_table_in_a_missing_namespace_answers_404_in_strict_mode(client, raw, ns, tmp_path):
    """Without ``jdbc.strict-mode`` (the server's default) this answers 200 and brings the
    namespace into being; tests/services/iceberg_rest.py turns strict mode on."""
    r = raw.post(f"/namespaces/{ns[1]}_missing/tables", json=table_body("t", tmp_path / "t"))
    assert r.status_code == 404 and r.json()["error"]["type"] == "NoSuchNamespaceException"
    assert code_of(client.declare_table, {"id": [ns[0], ns[1] + "_missing", "t"]}) == 1


def test_an_entry_whose_metadata_file_is_gone_answers_500(client, raw, ns, catalog, tmp_path):
    """LoadTable reads the table's metadata file: when it is gone the server answers 500
    (NotFoundException), not 404.  So our DropTable deletes the companion's ``metadata/``
    only after the entry: a reader racing the drop sees the table or code 4, never 18."""
    location = tmp_path / "gone"
    raw.post(f"/namespaces/{ns[1]}/tables", json=table_body("gone", location)).raise_for_status()
    for f in (location / "metadata").iterdir():
        f.unlink()
    r = raw.get(f"/namespaces/{ns[1]}/tables/gone")
    assert r.status_code == 500 and r.json()["error"]["type"] == "NotFoundException"
    raw.delete(f"/namespaces/{ns[1]}/tables/gone")

    tid = ns + ["dropped"]
    lance.write_dataset(pa.table({"x": [1]}), namespace_client=client, table_id=tid, mode="create")
    location = client.describe_table({"id": tid}).location
    reader = lance_ns.connect("iceberg", catalog.props)
    seen = []
    remove_entry = client.remove_table_entry

    def watched(ns_, table):  # the moment between the data's deletion and the entry's
        seen.append((sorted(os.listdir(location)), reader.describe_table({"id": tid}).location))
        remove_entry(ns_, table)

    client.remove_table_entry = watched
    client.drop_table({"id": tid})
    assert seen == [([".lance-dropped", "metadata"], location)]  # Lance's files gone, the table still loads
    assert sorted(os.listdir(location)) == [".lance-dropped"]  # metadata/ went after the entry
    assert code_of(reader.describe_table, {"id": tid}) == 4
