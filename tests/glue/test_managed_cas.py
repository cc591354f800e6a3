"""Glue's compare-and-swap for implementation-managed tables, with botocore's Stubber.

moto (the real Glue stand-in of the conformance suite) ignores UpdateTable's
``VersionId``: every update succeeds, so it cannot show a lost race.  Real Glue
answers ConcurrentModificationException when the table changed since the
``VersionId`` was read (Iceberg's Glue catalog commits the same way).  Here the
exact UpdateTable request is checked, and the loser's answer is the conflict code.
"""

from __future__ import annotations

import json

from botocore.stub import ANY, Stubber
from lance_namespace import LanceNamespaceError

import lance_ns

ACCT = "111122223333"
LOCATION = "s3://wh/root/db/t.lance"
HISTORY = [{"version": 1, "manifest_path": "root/db/t.lance/_versions/18446744073709551614.manifest"}]
PARAMS = {"table_type": "lance", "managed_versioning": "true", "lance_ns.versions": json.dumps(HISTORY)}


def connect():
    return lance_ns.connect("glue", {"region": "us-east-1", "access_key_id": "k", "secret_access_key": "s",
                                     "catalog_id": ACCT, "root": "s3://wh/root"})


def get_table(stub, version_id="3"):
    stub.add_response("get_table", {"Table": {
        "Name": "t", "DatabaseName": "db", "TableType": "EXTERNAL_TABLE", "Parameters": PARAMS,
        "StorageDescriptor": {"Location": LOCATION}, "VersionId": version_id}},
        {"Name": "t", "DatabaseName": "db", "CatalogId": ACCT})


def commit_request(version=2):
    return {"id": ["db", "t"], "version": version,
            "manifest_path": f"root/db/t.lance/_versions/{(1 << 64) - 1 - version:020d}.manifest-abc"}


def test_a_commit_is_conditioned_on_the_version_id_read_and_a_lost_race_is_code_14():
    ns = connect()
    with Stubber(ns.glue) as stub:
        get_table(stub, version_id="3")
        # the new history carries a timestamp: the request's TableInput is checked by the test below
        stub.add_client_error("update_table", "ConcurrentModificationException", "table changed", 400,
                              expected_params={"DatabaseName": "db", "CatalogId": ACCT, "VersionId": "3",
                                               "TableInput": ANY})
        try:
            ns.create_table_version(commit_request())
        except LanceNamespaceError as e:
            assert int(e.code) == 14, e
        else:
            raise AssertionError("a lost compare-and-swap was acknowledged")
        stub.assert_no_pending_responses()


def test_the_swap_primitive_reports_won_and_lost():
    ns = connect()
    table = lance_ns.catalog.table.CatalogTable(name="t", location=LOCATION, properties=dict(PARAMS), kind="EXTERNAL_TABLE",
                                          token="5")
    with Stubber(ns.glue) as stub:
        for error in (None, "ConcurrentModificationException"):
            params = {"DatabaseName": "db", "CatalogId": ACCT, "VersionId": "5", "TableInput": {
                "Name": "t", "TableType": "EXTERNAL_TABLE", "StorageDescriptor": {"Location": LOCATION},
                "Parameters": {"x": "y"}}}
            if error:
                stub.add_client_error("update_table", error, "changed", 400, expected_params=params)
            else:
                stub.add_response("update_table", {}, params)
        assert ns._swap_table_properties(["db"], table, {"x": "y"}) is True
        assert ns._swap_table_properties(["db"], table, {"x": "y"}) is False
        stub.assert_no_pending_responses()
