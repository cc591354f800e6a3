"""Implementation-managed tables on the Iceberg REST backend: the compare-and-swap.

A managed table's history lives in its companion table's properties; each commit
adds a snapshot on ``main`` under ``assert-table-uuid`` + ``assert-ref-snapshot-id``
(lance_ns.impls.iceberg, ``_WarehouseCatalog.swap_properties``).  The behaviour
every backend shares (one winner of racing commits, the bypass write not
reflected...) is the conformance suite's (checks_managed, test_managed.py); here
is what is Iceberg's own: what the commit leaves in the companion table, that the
server refuses a commit built on a stale read, a lost answer, and the multi-table
transaction.  Each runs on both real servers (``catalog``: SeaweedFS and Iceberg's
reference server); SeaweedFS does not advertise the multi-table transaction, the
reference server does, and the labelled stub checks what goes on the wire.
"""

from __future__ import annotations

import json

import lance
import pyarrow as pa
import pytest
import requests
from lance_namespace import LanceNamespaceError
from pyiceberg.catalog.rest import DEFAULT_ENDPOINTS
from pyiceberg.io.pyarrow import PyArrowFile
from pyiceberg.manifest import read_manifest_list

import lance_ns
from lance_ns import storage
from lance_ns.catalog.entry import VERSIONS_KEY

from .conftest import SERVERS
from .stub import CLIENT_ID, CLIENT_SECRET, error, iceberg_stub, table_response

MANAGED = {"managed_versioning": "true"}
#: the test runs on each real server
on_each_server = pytest.mark.parametrize("catalog", SERVERS, indirect=True)


def code_of(fn, *args):
    with pytest.raises(LanceNamespaceError) as info:
        fn(*args)
    return int(info.value.code)


def append(client, tid, *values):
    lance.write_dataset(pa.table({"v": list(values)}), namespace_client=client, table_id=tid, mode="append")


def published(client, tid) -> list[int]:
    return [v.version for v in client.list_table_versions({"id": tid}).versions]


@pytest.mark.slow
@on_each_server
def test_four_processes_append_concurrently_and_lose_nothing(client, ns, catalog, monkeypatch):
    """Four writer processes append through the Iceberg backend at once, retrying the
    commits they lose: every acknowledged append is there exactly once and the
    namespace's versions run 1..n without gap or duplicate.  (It found the window
    CatalogNamespace._settled closes: before, 2 of 3 runs lost the earlier rows.)"""
    from ..managed import test_managed
    from ..managed.test_managed import WRITERS, run_appenders

    APPENDS = 2  # two each (the dir test does three): CI time
    monkeypatch.setattr(test_managed, "APPENDS", APPENDS)

    tid = ns + ["t"]
    client.declare_table({"id": tid, "properties": MANAGED})
    append(client, tid, "seed")
    lines = run_appenders([("iceberg", json.dumps(catalog.props))] * WRITERS, ".".join(tid))
    assert not [line for line in lines if line.startswith("failed")], lines
    acked = [v for line in lines for v in line.split()[2:]]
    assert len(acked) == WRITERS * APPENDS * 3
    n = WRITERS * APPENDS + 1
    fresh = lance_ns.connect("iceberg", catalog.props)
    assert sorted(lance.dataset(namespace_client=fresh, table_id=tid).to_table()["v"].to_pylist()) == sorted(
        ["seed"] + acked)
    assert published(fresh, tid) == list(range(1, n + 1))
    assert sorted(int(line.split()[1]) for line in lines) == list(range(2, n + 1))


@on_each_server
def test_the_companion_keeps_one_snapshot_naming_a_valid_empty_manifest_list(client, ns, raw, catalog):
    tid = ns + ["m"]
    client.declare_table({"id": tid, "properties": MANAGED})
    for i in range(3):
        append(client, tid, i)
    meta = raw.get(f"/namespaces/{ns[1]}/tables/m").json()["metadata"]
    (snapshot,) = meta["snapshots"]  # each commit replaced its parent
    assert meta["refs"]["main"]["snapshot-id"] == snapshot["snapshot-id"] == meta["current-snapshot-id"]
    assert snapshot["summary"]["operation"] == "replace"  # no Iceberg data changed
    assert [v["version"] for v in json.loads(meta["properties"][VERSIONS_KEY])] == [1, 2, 3]
    # an Iceberg engine reading the companion finds a valid manifest list with no manifests
    fs, path = storage.filesystem(snapshot["manifest-list"], catalog.storage_options)
    assert list(read_manifest_list(PyArrowFile(snapshot["manifest-list"], path, fs))) == []


@on_each_server
def test_a_commit_built_on_a_stale_read_is_refused_by_the_server(client, ns, raw):
    tid = ns + ["m"]
    client.declare_table({"id": tid, "properties": MANAGED})
    append(client, tid, 1)
    stale = client.get_table_entry(ns, "m")
    append(client, tid, 2)  # main moved on since `stale` was read
    assert client.swap_tables_properties([(ns, stale, {**stale.properties, "x": "lost"})]) is False
    # the same name dropped and declared again: assert-table-uuid refuses the old read
    fresh = client.get_table_entry(ns, "m")
    client.drop_table({"id": tid})
    client.declare_table({"id": tid, "properties": MANAGED})
    assert client.swap_tables_properties([(ns, fresh, {**fresh.properties, "x": "lost"})]) is False
    assert "x" not in raw.get(f"/namespaces/{ns[1]}/tables/m").json()["metadata"]["properties"]


def stage(client, tid, value) -> dict:
    """The CreateTableVersion request pylance prepares for appending ``value`` (not sent)."""
    from lance_ns.conformance.checks_managed import Stager

    stager = Stager(client)
    with pytest.raises(Exception):
        append(stager, tid, value)
    return {**stager.staged, "id": tid}


@on_each_server
@pytest.mark.parametrize("sent", [True, False], ids=["answer-lost", "never-sent"])
def test_a_commit_whose_answer_is_lost_is_resolved_by_reading_the_table(client, ns, monkeypatch, sent):
    tid = ns + ["m"]
    client.declare_table({"id": tid, "properties": MANAGED})
    append(client, tid, 1)
    request = stage(client, tid, 2)
    session = client._catalog(ns[0])._session
    post = session.post

    def lossy(url, **kwargs):
        if sent:
            post(url, **kwargs)
        raise requests.ReadTimeout("the answer was lost")

    monkeypatch.setattr(session, "post", lossy)
    if sent:  # it took effect: acknowledged and published once
        assert client.create_table_version(request).version.version == 2
    else:  # it did not: the failure is answered (ServiceUnavailable), nothing was published
        assert code_of(client.create_table_version, request) == 17
    monkeypatch.undo()
    assert published(client, tid) == ([1, 2] if sent else [1])
    append(client, tid, 3)
    assert lance.dataset(namespace_client=client, table_id=tid).count_rows() == (3 if sent else 2)


@on_each_server
def test_several_tables_commit_through_the_servers_multi_table_transaction(client, ns, catalog):
    """SeaweedFS does not advertise POST /v1/{prefix}/transactions/commit: a batch of
    several tables is refused with code 0 and nothing is committed.  The reference
    server advertises it: both tables commit (the stub below checks the one request)."""
    staged = {}
    for name in ("a", "b"):
        tid = ns + [name]
        client.declare_table({"id": tid, "properties": MANAGED})
        append(client, tid, name)
        staged[name] = stage(client, tid, name + "2")
    batch = {"operations": [{"create_table_version": staged[n]} for n in ("a", "b")]}
    if catalog.name == "seaweedfs":
        with pytest.raises(LanceNamespaceError) as e:
            client.batch_commit_tables(batch)
        assert int(e.value.code) == 0 and "transactions/commit" in str(e.value)
        assert published(client, ns + ["a"]) == published(client, ns + ["b"]) == [1]
    else:
        client.batch_commit_tables(batch)
        assert published(client, ns + ["a"]) == published(client, ns + ["b"]) == [1, 2]
        for name in ("a", "b"):
            assert lance.dataset(namespace_client=client, table_id=ns + [name]).count_rows() == 2


# -- the multi-table transaction where a server advertises it (the labelled stub) -----------------

TRANSACTIONS = "/v1/wh/transactions/commit"


@pytest.fixture
def stub():
    with iceberg_stub() as s:
        s.config = {"defaults": {}, "overrides": {},
                    "endpoints": [str(e) for e in DEFAULT_ENDPOINTS] + [f"POST /v1/{{prefix}}/transactions/commit"]}
        yield s


def _two_tables(stub, tmp_path):
    c = lance_ns.connect("iceberg", {"endpoint": stub.url, "credential": f"{CLIENT_ID}:{CLIENT_SECRET}",
                                     "root": str(tmp_path)})
    tables = []
    for name in ("a", "b"):
        location = str(tmp_path / name)
        stub.route("GET", f"/v1/wh/namespaces/db/tables/{name}",
                   body=table_response(location, {"table_type": "lance", "managed_versioning": "true"}))
        tables.append((["wh", "db"], c.get_table_entry(["wh", "db"], name), [{"version": 1, "manifest_path": "x"}]))
    return c, tables


@pytest.mark.parametrize("status,granted", [(204, True), (409, False)])
def test_several_tables_go_to_the_advertised_transaction_endpoint(stub, tmp_path, status, granted):
    c, tables = _two_tables(stub, tmp_path)
    stub.route("POST", TRANSACTIONS, status, None if status == 204 else error(409, "CommitFailedException"))
    assert c.history.add(tables) is granted
    (sent,) = stub.calls("POST", TRANSACTIONS)
    changes = sent.json()["table-changes"]
    assert [ch["identifier"] for ch in changes] == [{"namespace": ["db"], "name": n} for n in ("a", "b")]
    for ch in changes:
        assert {r["type"] for r in ch["requirements"]} == {"assert-table-uuid", "assert-ref-snapshot-id"}
        ref = next(r for r in ch["requirements"] if r["type"] == "assert-ref-snapshot-id")
        assert ref["ref"] == "main" and ref.get("snapshot-id") is None  # no snapshot read: main must not exist
        actions = [u["action"] for u in ch["updates"]]
        assert actions == ["add-snapshot", "set-snapshot-ref", "set-properties"]
        history = json.loads(ch["updates"][2]["updates"][VERSIONS_KEY])
        assert history == [{"version": 1, "manifest_path": "x"}]
    assert not stub.calls("POST", "/v1/wh/namespaces/db/tables/")  # one request, never table by table
