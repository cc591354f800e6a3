"""Our Glue namespace and plain boto3 see the same objects (real moto server).

The shape is the spec's: TableType EXTERNAL_TABLE, Parameters.table_type=lance,
StorageDescriptor.Location; namespace properties in Database.Parameters.
"""

from __future__ import annotations

import boto3
import lance
import pyarrow as pa

import lance_ns
from tests.services.moto import client_kwargs

from .conftest import BUCKET, code_of


def _lance_input(name, location, table_type="lance", **params):
    return {
        "Name": name,
        "TableType": "EXTERNAL_TABLE",
        "Parameters": {"table_type": table_type, **params},
        "StorageDescriptor": {"Location": location},
    }


def test_declared_table_has_the_spec_shape_for_boto3(props, glue, db_name):
    ns = lance_ns.connect("glue", props)
    ns.create_namespace({"id": [db_name], "properties": {"owner": "ml"}})
    assert glue.get_database(Name=db_name)["Database"]["Parameters"] == {"owner": "ml"}
    resp = ns.declare_table({"id": [db_name, "events"], "properties": {"team": "ml"}})
    t = glue.get_table(DatabaseName=db_name, Name="events")["Table"]
    assert t["TableType"] == "EXTERNAL_TABLE"
    # (lance_ns.owned: the namespace chose the location, so a drop deletes the data)
    assert t["Parameters"] == {"table_type": "lance", "team": "ml", "lance_ns.owned": "true"}
    assert t["StorageDescriptor"]["Location"] == resp.location == f"s3://{BUCKET}/warehouse/{db_name}/events.lance"


def test_boto3_tables_are_seen_and_foreign_ones_filtered(props, glue, db_name):
    glue.create_database(DatabaseInput={"Name": db_name, "Parameters": {"k": "v"}})
    glue.create_table(DatabaseName=db_name, TableInput=_lance_input("upper", "s3://x/upper.lance", "LANCE"))
    glue.create_table(DatabaseName=db_name, TableInput=_lance_input("ice", "s3://x/ice", "ICEBERG"))
    glue.create_table(DatabaseName=db_name, TableInput={"Name": "hive", "StorageDescriptor": {"Location": "s3://x/h"}})
    managed = _lance_input("managed", "s3://x/m.lance") | {"TableType": "MANAGED_TABLE"}
    glue.create_table(DatabaseName=db_name, TableInput=managed)
    ns = lance_ns.connect("glue", props)
    assert ns.describe_namespace({"id": [db_name]}).properties == {"k": "v"}
    assert db_name in ns.list_namespaces({"id": []}).namespaces
    assert ns.list_tables({"id": [db_name]}).tables == ["upper"]
    d = ns.describe_table({"id": [db_name, "upper"]})
    assert d.location == "s3://x/upper.lance" and d.properties["table_type"] == "LANCE"
    for foreign in ("ice", "hive", "managed"):
        assert code_of(ns.describe_table, {"id": [db_name, foreign]}) == 13
        assert code_of(ns.deregister_table, {"id": [db_name, foreign]}) == 13
        assert code_of(ns.drop_table, {"id": [db_name, foreign]}) == 13
    # Restrict drop refuses while any table (ours or not) is there; Cascade is not offered.
    assert code_of(ns.drop_namespace, {"id": [db_name]}) == 3
    assert code_of(ns.drop_namespace, {"id": [db_name], "behavior": "Cascade"}) == 0
    assert {t["Name"] for t in glue.get_tables(DatabaseName=db_name)["TableList"]} == {"upper", "ice", "hive", "managed"}


def test_register_overwrite_refuses_foreign_table(props, glue, db_name, endpoint):
    ns = lance_ns.connect("glue", props)
    ns.create_namespace({"id": [db_name]})
    loc = f"s3://{BUCKET}/scratch/{db_name}/t.lance"
    lance.write_dataset(pa.table({"a": [1, 2]}), loc, storage_options=ns.storage_options)
    glue.create_table(DatabaseName=db_name, TableInput=_lance_input("t", "s3://x/t", "PARQUET"))
    assert code_of(ns.register_table, {"id": [db_name, "t"], "location": loc, "mode": "Overwrite"}) == 13
    assert glue.get_table(DatabaseName=db_name, Name="t")["Table"]["Parameters"]["table_type"] == "PARQUET"
    glue.delete_table(DatabaseName=db_name, Name="t")
    ns.register_table({"id": [db_name, "t"], "location": loc})
    ns.register_table({"id": [db_name, "t"], "location": loc, "mode": "Overwrite", "properties": {"v": "2"}})
    t = glue.get_table(DatabaseName=db_name, Name="t")["Table"]  # replaced in place (UpdateTable)
    # (lance_ns.owned false: registered data is not the namespace's to delete)
    assert t["Parameters"] == {"table_type": "lance", "v": "2", "lance_ns.owned": "false"}
    assert t["StorageDescriptor"]["Location"] == loc


def test_pylance_writes_s3_data_where_glue_points(props, glue, db_name, endpoint):
    ns = lance_ns.connect("glue", props)
    ns.create_namespace({"id": [db_name]})
    lance.write_dataset(pa.table({"x": list(range(100))}), namespace_client=ns, table_id=[db_name, "d"], mode="create")
    location = glue.get_table(DatabaseName=db_name, Name="d")["Table"]["StorageDescriptor"]["Location"]
    assert location == f"s3://{BUCKET}/warehouse/{db_name}/d.lance"
    s3 = boto3.client("s3", **client_kwargs(endpoint))
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix=f"warehouse/{db_name}/d.lance/")["Contents"]]
    assert any("/_versions/" in k for k in keys) and any(k.endswith(".lance") and "/data/" in k for k in keys)
    # another client (a different tool) opens it by reading Glue's Location only
    assert lance.dataset(location, storage_options=ns.storage_options).count_rows() == 100
    ns.drop_table({"id": [db_name, "d"]})
    # the data is gone; only the marker that keeps the directory from being reused stays
    left = s3.list_objects_v2(Bucket=BUCKET, Prefix=f"warehouse/{db_name}/d.lance/").get("Contents", [])
    objects = [o["Key"] for o in left if not o["Key"].endswith("/")]  # pyarrow leaves S3 directory markers
    assert objects == [f"warehouse/{db_name}/d.lance/.lance-dropped"]


def test_moto_without_catalog_api_is_a_one_level_account(props, db_name):
    """moto answers the catalog APIs with 500 NotImplemented: we treat it as an
    account with databases only, and say so when a catalog is asked for."""
    ns = lance_ns.connect("glue", props)
    ns.create_namespace({"id": [db_name]})
    assert code_of(ns.describe_namespace, {"id": [db_name, "inner"]}) == 1
    assert code_of(ns.create_namespace, {"id": [db_name, "missing", "inner"]}) == 1
    # a database holds tables, not namespaces
    assert code_of(ns.create_namespace, {"id": [db_name, "inner"]}) == 13
    assert code_of(ns.list_tables, {"id": [db_name, "inner"]}) == 1
    assert code_of(ns.create_namespace, {"id": [db_name + "_c"], "properties": {"glue.namespace_type": "catalog"}}) == 0
    assert code_of(ns.create_namespace, {"id": [db_name + "_x"], "properties": {"glue.namespace_type": "view"}}) == 13
    assert ns.list_namespaces({"id": [db_name]}).namespaces == []
