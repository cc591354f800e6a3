"""Glue's compare-and-swap for implementation-managed tables, with botocore's Stubber.

moto (the real Glue stand-in of the conformance suite) ignores UpdateTable's
``VersionId``: every update succeeds, so it cannot show a lost race.  Real Glue
answers ConcurrentModificationException when the table changed since the
``VersionId`` was read (Iceberg's Glue catalog commits the same way).  Here the
exact UpdateTable request is checked, and the loser's answer is the conflict code.
"""

from __future__ import annotations

import json

import pytest
from botocore.stub import ANY, Stubber
from lance_namespace import LanceNamespaceError

import lance_ns
from lance_ns.impls import glue

ACCT = "111122223333"
LOCATION = "s3://wh/root/db/t.lance"
HISTORY = [{"version": 1, "manifest_path": "root/db/t.lance/_versions/18446744073709551614.manifest"}]
PARAMS = {"table_type": "lance", "managed_versioning": "true", "lance_ns.versions": json.dumps(HISTORY)}


@pytest.fixture(autouse=True)
def _real_glue(monkeypatch):
    """This endpoint is AWS Glue, which honours VersionId: its probe (tests below) is
    taken as answered, so each test's Stubber holds only the calls it is about."""
    monkeypatch.setitem(glue._VERSION_ID_HONOURED, (None, ACCT), True)


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
    table = lance_ns.catalog.entry.CatalogTable(name="t", location=LOCATION, properties=dict(PARAMS), kind="EXTERNAL_TABLE",
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
        assert ns.swap_table_properties(["db"], table, {"x": "y"}) is True
        assert ns.swap_table_properties(["db"], table, {"x": "y"}) is False
        stub.assert_no_pending_responses()


def _probe_calls(stub, stale_update_error: str | None):
    """The probe's calls: scratch database and table, one update, one with the stale VersionId."""
    stub.add_response("create_database", {}, {"DatabaseInput": {"Name": ANY}, "CatalogId": ACCT})
    stub.add_response("create_table", {}, {"TableInput": ANY, "DatabaseName": ANY, "CatalogId": ACCT})
    stub.add_response("get_table", {"Table": {"Name": "probe", "DatabaseName": "x", "VersionId": "1"}},
                      {"Name": "probe", "DatabaseName": ANY, "CatalogId": ACCT})
    stub.add_response("update_table", {}, {"TableInput": ANY, "VersionId": "1", "DatabaseName": ANY, "CatalogId": ACCT})
    if stale_update_error:
        stub.add_client_error("update_table", stale_update_error, "changed", 400,
                              expected_params={"TableInput": ANY, "VersionId": "1", "DatabaseName": ANY,
                                               "CatalogId": ACCT})
    else:  # an endpoint that ignores VersionId accepts the stale update
        stub.add_response("update_table", {}, {"TableInput": ANY, "VersionId": "1", "DatabaseName": ANY,
                                               "CatalogId": ACCT})
    stub.add_response("delete_table", {}, {"Name": "probe", "DatabaseName": ANY, "CatalogId": ACCT})
    stub.add_response("delete_database", {}, {"Name": ANY, "CatalogId": ACCT})


@pytest.mark.parametrize("honoured", [True, False])
def test_the_version_id_probe_decides_whether_managed_tables_are_held(monkeypatch, honoured):
    """A stale VersionId refused (Glue): managed tables are held.  Accepted (moto): they are
    refused with code 0 naming the missing condition, and so is every commit."""
    monkeypatch.delitem(glue._VERSION_ID_HONOURED, (None, ACCT))
    ns = connect()
    with Stubber(ns.glue) as stub:
        _probe_calls(stub, "ConcurrentModificationException" if honoured else None)
        assert ns.supports_managed_versioning is honoured
        stub.assert_no_pending_responses()
        assert ns.supports_managed_versioning is honoured  # probed once per endpoint and process
    if not honoured:  # a commit to a managed table made before (or elsewhere) is refused, not lost
        table = lance_ns.catalog.entry.CatalogTable(name="t", location=LOCATION, properties=dict(PARAMS),
                                                    kind="EXTERNAL_TABLE", token="5")
        with pytest.raises(LanceNamespaceError) as e:
            ns.swap_table_properties(["db"], table, {"x": "y"})
        assert int(e.value.code) == 0 and "ignores UpdateTable's VersionId" in str(e.value), e.value
