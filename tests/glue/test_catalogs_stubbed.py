"""Glue's multi-level catalogs and NextToken paging, with botocore's Stubber.

moto (our real Glue stand-in) has no catalog APIs (GetCatalog/GetCatalogs/
CreateCatalog/DeleteCatalog answer 500 NotImplemented) and never pages, so
these paths are checked against botocore's Stubber instead: every request
below is the exact one we must send, and every canned response is validated
by the Stubber against botocore's Glue service model (the real API's shapes).
"""

from __future__ import annotations

import contextlib

import pytest
from botocore.stub import Stubber

import lance_ns

from .conftest import code_of

ACCT = "111122223333"
SALES = f"{ACCT}:sales"


@contextlib.contextmanager
def stubbed(**extra):
    props = {"region": "us-east-1", "access_key_id": "k", "secret_access_key": "s", "catalog_id": ACCT, "root": "s3://wh/root"}
    props.update(extra)
    ns = lance_ns.connect("glue", props)
    with Stubber(ns.glue) as stub:
        yield ns, stub
        stub.assert_no_pending_responses()


def missing(stub, method, **params):
    stub.add_client_error(method, "EntityNotFoundException", "not found", 400, expected_params=params)


def catalog(stub, cid, params=None):
    name = cid.split(":", 1)[1].rsplit("/", 1)[-1]
    body = {"Catalog": {"Name": name, "CatalogId": cid, "Parameters": params or {}}}
    stub.add_response("get_catalog", body, {"CatalogId": cid})


def database(stub, name, catalog_id, params=None):
    stub.add_response(
        "get_database",
        {"Database": {"Name": name, "CatalogId": catalog_id, "Parameters": params or {}}},
        {"Name": name, "CatalogId": catalog_id},
    )


def sales_is_a_catalog(stub, params=None):
    missing(stub, "get_database", Name="sales", CatalogId=ACCT)
    catalog(stub, SALES, params)


def root_listing(stub):
    stub.add_response("get_databases", {"DatabaseList": [{"Name": "b_db"}], "NextToken": "d1"}, {"CatalogId": ACCT})
    stub.add_response("get_databases", {"DatabaseList": [{"Name": "d_db"}]}, {"CatalogId": ACCT, "NextToken": "d1"})
    kw = {"ParentCatalogId": ACCT, "Recursive": False, "IncludeRoot": False}
    stub.add_response("get_catalogs", {"CatalogList": [{"Name": "a_cat", "CatalogId": f"{ACCT}:a_cat"}], "NextToken": "c1"}, kw)
    stub.add_response("get_catalogs", {"CatalogList": [{"Name": "c_cat", "CatalogId": f"{ACCT}:c_cat"}]}, {**kw, "NextToken": "c1"})


def test_root_lists_databases_and_child_catalogs_over_all_pages():
    with stubbed() as (ns, stub):
        root_listing(stub)
        first = ns.list_namespaces({"id": [], "limit": 3})
        assert first.namespaces == ["a_cat", "b_db", "c_cat"] and first.page_token
        root_listing(stub)
        second = ns.list_namespaces({"id": [], "limit": 3, "page_token": first.page_token})
        assert second.namespaces == ["d_db"] and not second.page_token


def test_catalog_namespace_describe_and_list():
    with stubbed() as (ns, stub):
        sales_is_a_catalog(stub, {"owner": "sales-team"})
        assert ns.describe_namespace({"id": ["sales"]}).properties == {"owner": "sales-team"}
        sales_is_a_catalog(stub)  # exists?
        sales_is_a_catalog(stub)  # a catalog, so it has children
        stub.add_response("get_databases", {"DatabaseList": [{"Name": "orders"}]}, {"CatalogId": SALES})
        stub.add_response(
            "get_catalogs",
            {"CatalogList": [{"Name": "eu", "CatalogId": f"{SALES}/eu"}]},
            {"ParentCatalogId": SALES, "Recursive": False, "IncludeRoot": False},
        )
        assert ns.list_namespaces({"id": ["sales"]}).namespaces == ["eu", "orders"]


def test_database_in_a_catalog_chain():
    with stubbed() as (ns, stub):
        catalog(stub, SALES)
        database(stub, "orders", SALES, {"k": "v"})
        assert ns.describe_namespace({"id": ["sales", "orders"]}).properties == {"k": "v"}
        # three levels: catalog sales/eu, database orders
        catalog(stub, f"{SALES}/eu")
        database(stub, "orders", f"{SALES}/eu")
        ns.namespace_exists({"id": ["sales", "eu", "orders"]})
        catalog(stub, SALES)
        missing(stub, "get_database", Name="nope", CatalogId=SALES)
        missing(stub, "get_catalog", CatalogId=f"{SALES}/nope")
        assert code_of(ns.describe_namespace, {"id": ["sales", "nope"]}) == 1
        missing(stub, "get_catalog", CatalogId=f"{ACCT}:ghost")
        assert code_of(ns.namespace_exists, {"id": ["ghost", "orders"]}) == 1


def test_declare_and_page_tables_in_a_catalog_database():
    with stubbed() as (ns, stub):
        catalog(stub, SALES)
        database(stub, "orders", SALES)
        missing(stub, "get_table", CatalogId=SALES, DatabaseName="orders", Name="t")
        table_input = {
            "Name": "t",
            "TableType": "EXTERNAL_TABLE",
            # the namespace chose the location: the table's data is recorded as lance-ns's
            "Parameters": {"table_type": "lance", "lance_ns.owned": "true"},
            "StorageDescriptor": {"Location": "s3://wh/root/sales/orders/t.lance"},
        }
        stub.add_response("create_table", {}, {"CatalogId": SALES, "DatabaseName": "orders", "TableInput": table_input})
        assert ns.declare_table({"id": ["sales", "orders", "t"]}).location == "s3://wh/root/sales/orders/t.lance"

        def lance(name, kind="EXTERNAL_TABLE", tt="Lance"):
            return {"Name": name, "TableType": kind, "Parameters": {"table_type": tt}, "StorageDescriptor": {"Location": f"s3://x/{name}"}}

        catalog(stub, SALES)
        database(stub, "orders", SALES)
        kw = {"CatalogId": SALES, "DatabaseName": "orders"}
        stub.add_response("get_tables", {"TableList": [lance("z"), lance("hive", tt="hive")], "NextToken": "p2"}, kw)
        stub.add_response("get_tables", {"TableList": [lance("a"), lance("m", kind="MANAGED_TABLE")], "NextToken": "p3"}, {**kw, "NextToken": "p2"})
        stub.add_response("get_tables", {"TableList": [lance("k")]}, {**kw, "NextToken": "p3"})
        assert ns.list_tables({"id": ["sales", "orders"]}).tables == ["a", "k", "z"]


def test_create_and_drop_a_catalog():
    with stubbed() as (ns, stub):
        missing(stub, "get_database", Name="mkt", CatalogId=ACCT)
        missing(stub, "get_catalog", CatalogId=f"{ACCT}:mkt")
        stub.add_response("create_catalog", {}, {"Name": "mkt", "CatalogInput": {"Parameters": {"owner": "m"}}})
        missing(stub, "get_database", Name="mkt", CatalogId=ACCT)
        catalog(stub, f"{ACCT}:mkt", {"owner": "m"})
        out = ns.create_namespace({"id": ["mkt"], "properties": {"glue.namespace_type": "catalog", "owner": "m"}})
        assert out.properties == {"owner": "m"}

        def drop_checks(dbs):
            for _ in range(2):  # exists? then: a catalog, so list its children
                missing(stub, "get_database", Name="mkt", CatalogId=ACCT)
                catalog(stub, f"{ACCT}:mkt")
            stub.add_response("get_databases", {"DatabaseList": [{"Name": d} for d in dbs]}, {"CatalogId": f"{ACCT}:mkt"})
            kw = {"ParentCatalogId": f"{ACCT}:mkt", "Recursive": False, "IncludeRoot": False}
            stub.add_response("get_catalogs", {"CatalogList": []}, kw)
            missing(stub, "get_tables", CatalogId=ACCT, DatabaseName="mkt")  # a catalog holds no tables

        drop_checks(["leads"])
        assert code_of(ns.drop_namespace, {"id": ["mkt"]}) == 3
        drop_checks([])
        missing(stub, "get_database", Name="mkt", CatalogId=ACCT)
        catalog(stub, f"{ACCT}:mkt")
        stub.add_response("delete_catalog", {}, {"CatalogId": f"{ACCT}:mkt"})
        ns.drop_namespace({"id": ["mkt"]})


def test_catalogs_below_level_one_cannot_be_created():
    with stubbed() as (ns, stub):
        sales_is_a_catalog(stub)  # parent exists
        catalog(stub, SALES)
        missing(stub, "get_database", Name="sub", CatalogId=SALES)
        missing(stub, "get_catalog", CatalogId=f"{SALES}/sub")
        sales_is_a_catalog(stub)  # parent kind
        assert code_of(ns.create_namespace, {"id": ["sales", "sub"], "properties": {"glue.namespace_type": "catalog"}}) == 0
        # but a database inside the catalog is fine
        sales_is_a_catalog(stub)
        catalog(stub, SALES)
        missing(stub, "get_database", Name="sub", CatalogId=SALES)
        missing(stub, "get_catalog", CatalogId=f"{SALES}/sub")
        sales_is_a_catalog(stub)
        stub.add_response("create_database", {}, {"CatalogId": SALES, "DatabaseInput": {"Name": "sub", "Parameters": {}}})
        catalog(stub, SALES)
        database(stub, "sub", SALES)
        ns.create_namespace({"id": ["sales", "sub"]})


def test_catalog_id_property_names_a_child_catalog_as_root():
    root = f"{ACCT}:s3tablescatalog"
    with stubbed(catalog_id=root) as (ns, stub):
        catalog(stub, f"{root}/bucket1")
        database(stub, "db", f"{root}/bucket1")
        ns.namespace_exists({"id": ["bucket1", "db"]})
        missing(stub, "get_database", Name="x", CatalogId=root)
        missing(stub, "get_catalog", CatalogId=f"{root}/x")
        assert code_of(ns.create_namespace, {"id": ["x"], "properties": {"glue.namespace_type": "catalog"}}) == 0


@pytest.mark.parametrize(
    "error,code",
    [("AccessDeniedException", 16), ("InvalidInputException", 13), ("ThrottlingException", 17),
     ("InternalServiceException", 17), ("ConcurrentModificationException", 14)],
)  # fmt: skip
def test_service_errors_map_to_spec_codes(error, code):
    with stubbed() as (ns, stub):
        stub.add_client_error("get_database", error, "boom", 400)
        assert code_of(ns.describe_namespace, {"id": ["db"]}) == code


def test_duplicate_create_races_are_already_exists():
    with stubbed() as (ns, stub):
        missing(stub, "get_database", Name="db", CatalogId=ACCT)
        missing(stub, "get_catalog", CatalogId=f"{ACCT}:db")
        stub.add_client_error("create_database", "AlreadyExistsException", "exists", 400)
        assert code_of(ns.create_namespace, {"id": ["db"]}) == 2
        database(stub, "db", ACCT)
        missing(stub, "get_table", CatalogId=ACCT, DatabaseName="db", Name="t")
        stub.add_client_error("create_table", "AlreadyExistsException", "exists", 400)
        assert code_of(ns.declare_table, {"id": ["db", "t"]}) == 5


def test_account_catalog_id_comes_from_sts(endpoint, monkeypatch):
    """Without catalog_id, child catalog ids use the caller's account (moto's STS)."""
    monkeypatch.setenv("AWS_ENDPOINT_URL_STS", endpoint)
    with stubbed(catalog_id="") as (ns, stub):
        missing(stub, "get_database", Name="sales")  # the default catalog: no CatalogId sent
        catalog(stub, "123456789012:sales")
        ns.namespace_exists({"id": ["sales"]})


def test_tables_live_in_databases_not_catalogs():
    with stubbed() as (ns, stub):
        sales_is_a_catalog(stub)
        missing(stub, "get_table", CatalogId=ACCT, DatabaseName="sales", Name="t")
        stub.add_client_error("create_table", "EntityNotFoundException", "Database sales not found", 400)
        sales_is_a_catalog(stub)
        assert code_of(ns.declare_table, {"id": ["sales", "t"]}) == 13
        sales_is_a_catalog(stub)
        missing(stub, "get_tables", CatalogId=ACCT, DatabaseName="sales")
        assert ns.list_tables({"id": ["sales"]}).tables == []
