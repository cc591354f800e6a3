"""Implementation-managed tables on Unity: the history lives in a ledger beside the
table (lance_ns.ledger), since Unity's contract cannot update a table object.

What every backend shares (pylance commits, racing commits have one winner, a bypass
write is not reflected) is the conformance suite's, which runs on backends ``unity``,
``unity-legacy``, ``unity-oss`` and ``unity-oss-0.4``; here is what is the ledger's own: where
it lives, that nothing in Unity changes per commit, its identity across deregister / rename /
schema change, purge, pylance leaving it alone, object storage, and four appending processes.

Every test runs on the contract-validated double and on the REAL Unity Catalog OSS 0.6.0
(tests/unity/servers.py; skipped where Maven refuses it).  Only the double keeps a request
log: that no write request reaches Unity per commit is counted there; on the real server
the stored table object is compared instead.
"""

from __future__ import annotations

import json
import uuid
from datetime import timedelta
from pathlib import Path

import lance
import pyarrow as pa
import pytest
from lance_namespace import LanceNamespaceError

import lance_ns
from lance_ns import ledger
from lance_ns.catalog.entry import VERSIONS_KEY
from lance_ns.conformance.checks_managed import Stager
from lance_ns.impls.unity import LEDGER_KEY
from tests.unity.servers import DOUBLE, unity_target

CAT = "main"
MANAGED = {"managed_versioning": "true"}


@pytest.fixture(scope="module", params=[DOUBLE, "oss-0.6.0"])
def unity(request):
    with unity_target(request.param, catalogs=(CAT,)) as target:
        yield target


def props(unity, root) -> dict[str, str]:
    return {"endpoint": unity.endpoint, "root": str(root), "retry_backoff_ms": "1"}


@pytest.fixture
def ns(unity, tmp_path):
    ns = lance_ns.connect("unity", props(unity, tmp_path / "root"))
    yield ns
    ns.close()


@pytest.fixture
def schema(ns) -> list[str]:
    sid = [CAT, f"s{uuid.uuid4().hex[:8]}"]
    ns.create_namespace({"id": sid})
    return sid


def code(fn, *args) -> int:
    with pytest.raises(LanceNamespaceError) as info:
        fn(*args)
    return int(info.value.code)


def append(ns, tid, *values):
    return lance.write_dataset(pa.table({"v": [str(v) for v in values]}), namespace_client=ns, table_id=tid,
                               mode="append")


def published(ns, tid) -> list[int]:
    return [v.version for v in ns.list_table_versions({"id": tid}).versions]


def stored(unity, tid) -> dict:
    """The table object as the Unity server holds it."""
    return unity.table(".".join(tid))


def ledger_of(unity, tid) -> ledger.Ledger:
    info = stored(unity, tid)
    return ledger.Ledger(ledger.uri(unity.location(".".join(tid)), info["properties"][LEDGER_KEY]))


def stage(ns, tid, value="staged") -> dict:
    """The CreateTableVersion request pylance prepares to append ``value`` (not sent)."""
    stager = Stager(ns)
    with pytest.raises(Exception):  # noqa: B017 - the stager refuses the commit on purpose
        lance.write_dataset(pa.table({"v": [value]}), namespace_client=stager, table_id=tid, mode="append")
    return {**stager.staged, "id": tid}


def test_the_contract_has_no_table_update_so_the_history_lives_in_a_ledger(unity, ns, schema):
    """Unity's published contract answers only GET and DELETE on a table (and its one
    compare-and-swap, the Delta commit coordinator, takes MANAGED Delta tables only), so
    the table object records at creation that the table is managed and its ledger id, and
    the history lives in the ledger: no request to Unity changes anything per commit."""
    import yaml

    from tests.services.unity import contract_path

    paths = yaml.safe_load(contract_path().read_text())["paths"]
    assert {m for m in paths["/tables/{full_name}"] if m in ("get", "put", "post", "patch", "delete")} == {"get", "delete"}

    tid = schema + ["t"]
    declared = ns.declare_table({"id": tid, "properties": MANAGED})
    info = stored(unity, tid)
    assert info["properties"]["managed_versioning"] == "true" and ledger.is_id(info["properties"][LEDGER_KEY])
    assert declared.properties[LEDGER_KEY] == info["properties"][LEDGER_KEY]  # answered as stored
    writes_before = unity.double and [r for r in unity.double.requests if r[0] != "GET"]
    append(ns, tid, 1)
    append(ns, tid, 2)
    if unity.double:  # its request log; on a real server the unchanged table object (below) says it
        assert [r for r in unity.double.requests if r[0] != "GET"] == writes_before
    assert stored(unity, tid) == info and VERSIONS_KEY not in info["properties"]
    version, history = ledger_of(unity, tid).read()
    assert [v["version"] for v in json.loads(history)] == published(ns, tid) == [1, 2]
    assert Path(declared.location, "_lance_ns", f"ledger-{info['properties'][LEDGER_KEY]}.lance").is_dir()
    assert VERSIONS_KEY not in ns.describe_table({"id": tid}).properties


def test_racing_first_commits_create_the_ledger_once(unity, ns, schema):
    """Every writer stages version 1 of a declared table, whose ledger does not exist yet:
    the commits race to create it, one wins, the others answer 14."""
    import threading

    tid = schema + ["t"]
    ns.declare_table({"id": tid, "properties": MANAGED})
    requests = [stage(ns, tid, f"w{i}") for i in range(4)]
    assert {r["version"] for r in requests} == {1}
    out, barrier = [None] * len(requests), threading.Barrier(len(requests))

    def commit(i):
        barrier.wait()
        try:
            out[i] = ns.create_table_version(requests[i]).version.version
        except LanceNamespaceError as e:
            out[i] = int(e.code)

    threads = [threading.Thread(target=commit, args=(i,)) for i in range(len(requests))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(out) == [1, 14, 14, 14], out
    assert published(ns, tid) == [1] and ledger_of(unity, tid).read()[0] == 1
    assert lance.dataset(namespace_client=ns, table_id=tid).to_table()["v"].to_pylist() == [f"w{out.index(1)}"]


def test_a_lost_commit_answers_14_and_writes_nothing(unity, ns, schema):
    tid = schema + ["t"]
    ns.declare_table({"id": tid, "properties": MANAGED})
    append(ns, tid, "seed")
    first, second = stage(ns, tid, "a"), stage(ns, tid, "b")
    ns.create_table_version(first)
    book = ledger_of(unity, tid)
    before = (book.read(), sorted(p.name for p in Path(book.uri).rglob("*")))
    versions = sorted(p.name for p in Path(ns.describe_table({"id": tid}).location, "_versions").iterdir())
    assert code(ns.create_table_version, second) == 14
    assert (book.read(), sorted(p.name for p in Path(book.uri).rglob("*"))) == before
    assert sorted(p.name for p in Path(ns.describe_table({"id": tid}).location, "_versions").iterdir()) == versions
    assert lance.dataset(namespace_client=ns, table_id=tid).to_table()["v"].to_pylist() == ["seed", "a"]


def test_a_bypass_write_to_versions_is_not_reflected(ns, schema):
    tid = schema + ["t"]
    ns.declare_table({"id": tid, "properties": MANAGED})
    append(ns, tid, 1)
    location = ns.describe_table({"id": tid}).location
    lance.write_dataset(pa.table({"v": ["bypass"]}), location, mode="append")
    assert lance.dataset(location).version == 2  # storage has it
    assert ns.describe_table({"id": tid}).version == 1 and published(ns, tid) == [1]
    assert ns.count_table_rows({"id": tid}).count == 1
    assert lance.dataset(namespace_client=ns, table_id=tid).to_table()["v"].to_pylist() == ["1"]


def test_pylance_leaves_the_ledger_alone(unity, ns, schema):
    """The ledger lives inside the table's location: opening the location, cleaning up
    old versions (unverified files too) and branching do not touch it."""
    tid = schema + ["t"]
    ns.declare_table({"id": tid, "properties": MANAGED})
    for i in range(3):
        append(ns, tid, i)
    location = ns.describe_table({"id": tid}).location
    book = ledger_of(unity, tid)
    before = book.read()
    ds = lance.dataset(location)
    assert ds.version == 3 and ds.count_rows() == 3 and ds.schema.names == ["v"]
    ds.cleanup_old_versions(older_than=timedelta(0), delete_unverified=True)
    ds.create_branch("dev")
    assert book.read() == before
    assert published(ns, tid) == [1, 2, 3] and ns.count_table_rows({"id": tid}).count == 3
    append(ns, tid, 3)
    assert published(ns, tid) == [1, 2, 3, 4]


def test_a_table_declared_again_after_deregistration_starts_with_an_empty_history(unity, ns, schema, tmp_path):
    tid = schema + ["t"]
    location = str(tmp_path / "elsewhere" / "t.lance")
    ns.declare_table({"id": tid, "location": location, "properties": MANAGED})
    append(ns, tid, 1)
    append(ns, tid, 2)
    old = ledger_of(unity, tid)
    ns.deregister_table({"id": tid})
    ns.declare_table({"id": tid, "location": location, "properties": MANAGED})
    assert ledger_of(unity, tid).uri != old.uri
    assert published(ns, tid) == []
    assert ns.describe_table({"id": tid, "check_declared": True}).is_only_declared is True
    assert old.read()[0] > 0  # the old table's history is still there, and not this table's


def test_rename_and_schema_change_keep_the_history(unity, ns, schema):
    tid, new = schema + ["t"], schema + ["u"]
    ns.declare_table({"id": tid, "properties": MANAGED})
    append(ns, tid, 1)
    append(ns, tid, 2)
    book = ledger_of(unity, tid).uri
    ns.rename_table({"id": tid, "new_table_name": "u"})
    assert ledger_of(unity, new).uri == book and published(ns, new) == [1, 2]
    # Unity has no table update: a schema change re-creates the entry, with its ledger id
    ns.alter_table_add_columns({"id": new, "new_columns": [{"name": "w", "expression": "v"}]})
    assert ledger_of(unity, new).uri == book and published(ns, new) == [1, 2, 3]
    assert [c["name"] for c in stored(unity, new)["columns"]] == ["v", "w"]
    append_w = pa.table({"v": ["3"], "w": ["3"]})
    lance.write_dataset(append_w, namespace_client=ns, table_id=new, mode="append")
    assert published(ns, new) == [1, 2, 3, 4] and ns.count_table_rows({"id": new}).count == 3


def test_a_purging_drop_removes_the_ledger_with_the_table(unity, ns, schema, tmp_path):
    owned, registered = schema + ["owned"], schema + ["ext"]
    ns.declare_table({"id": owned, "properties": MANAGED})
    ns.declare_table({"id": registered, "location": str(tmp_path / "ext.lance"), "properties": MANAGED})
    for tid in (owned, registered):
        append(ns, tid, 1)
    books = {tuple(t): Path(ledger_of(unity, t).uri) for t in (owned, registered)}
    ns.drop_table({"id": owned})  # the namespace chose the location: the data goes
    assert not books[tuple(owned)].exists()
    ns.drop_table({"id": registered, "context": {"purge": "true"}})
    assert not books[tuple(registered)].exists()
    assert [p.name for p in (tmp_path / "ext.lance").iterdir()] == [".lance-dropped"]  # the marker only


def test_several_tables_in_one_batch_commit_are_refused_and_nothing_is_published(ns, schema):
    a, b = schema + ["a"], schema + ["b"]
    for tid in (a, b):
        ns.declare_table({"id": tid, "properties": MANAGED})
        append(ns, tid, 1)
    ops = [{"create_table_version": stage(ns, tid)} for tid in (a, b)]
    with pytest.raises(LanceNamespaceError) as info:
        ns.batch_commit_tables({"operations": ops})
    assert int(info.value.code) == 0 and "several tables atomically" in str(info.value)
    assert published(ns, a) == [1] and published(ns, b) == [1]
    ns.batch_commit_tables({"operations": ops[:1]})  # one table: committed
    assert published(ns, a) == [1, 2]


def test_no_other_property_can_change(ns, schema):
    """Unity's properties are fixed at creation: the only change a commit makes is the
    history, in the ledger; a change of anything else is refused (code 0)."""
    tid = schema + ["t"]
    ns.declare_table({"id": tid, "properties": MANAGED})
    table = ns.get_table_entry(schema, "t")
    assert code(ns.swap_table_properties, schema, table, {**table.properties, VERSIONS_KEY: "[]", "k": "v"}) == 0


def test_a_managed_table_without_a_ledger_id_is_refused_but_can_be_dropped(unity, ns, schema, tmp_path):
    """A table marked managed in Unity by someone else, with no ledger: its history cannot
    be found, so commits are refused (19); dropping it still works."""
    import httpx

    tid = schema + ["foreign"]
    body = {"name": "foreign", "catalog_name": CAT, "schema_name": schema[1], "table_type": "EXTERNAL",
            "data_source_format": "TEXT", "storage_location": str(tmp_path / "foreign.lance"), "columns": [],
            "properties": {"table_type": "lance", "managed_versioning": "true"}}
    httpx.post(f"{unity.endpoint}/api/2.1/unity-catalog/tables", json=body).raise_for_status()
    with pytest.raises(LanceNamespaceError) as info:
        ns.create_table_version(stage(ns, tid))
    assert int(info.value.code) == 19 and LEDGER_KEY in str(info.value)
    ns.drop_table({"id": tid})


@pytest.mark.slow
def test_on_object_storage(unity, tmp_path):
    """The ledger on S3 (moto): commits, one winner of racing commits, and a purge."""
    import boto3

    from tests.services.moto import client_kwargs, moto_server, s3_storage_options

    with moto_server() as endpoint:
        bucket = "lance-unity-ledger"
        boto3.client("s3", **client_kwargs(endpoint)).create_bucket(Bucket=bucket)
        opts = s3_storage_options(endpoint)
        ns = lance_ns.connect("unity", {**props(unity, f"s3://{bucket}/root"),
                                        **{f"storage.{k}": v for k, v in opts.items()}})
        sid = [CAT, f"s3{uuid.uuid4().hex[:8]}"]
        ns.create_namespace({"id": sid})
        tid = sid + ["t"]
        ns.declare_table({"id": tid, "properties": MANAGED})
        append(ns, tid, 1)
        append(ns, tid, 2)
        assert published(ns, tid) == [1, 2]
        info = stored(unity, tid)
        book = ledger.Ledger(ledger.uri(info["storage_location"], info["properties"][LEDGER_KEY]), opts)
        assert book.read()[0] == 2 and book.uri.startswith(f"s3://{bucket}/")
        # commits staged on one version: the first one sent wins (threaded races: the conformance suite)
        requests = [stage(ns, tid, f"w{i}") for i in range(4)]
        out = []
        for request in requests:
            try:
                out.append(ns.create_table_version(request).version.version)
            except LanceNamespaceError as e:
                out.append(int(e.code))
        assert out == [3, 14, 14, 14]
        ns.drop_table({"id": tid})
        listed = boto3.client("s3", **client_kwargs(endpoint)).list_objects_v2(
            Bucket=bucket, Prefix=info["storage_location"].split(f"{bucket}/", 1)[1] + "/_lance_ns/")
        assert listed.get("KeyCount", 0) == 0
        ns.close()


@pytest.mark.slow
def test_four_processes_append_concurrently_and_lose_nothing(unity, ns, schema, monkeypatch):
    """Four writer processes append through the Unity backend at once, retrying the
    commits they lose: every acknowledged append is there exactly once and the
    namespace's versions run 1..n without gap or duplicate."""
    from ..managed import test_managed
    from ..managed.test_managed import WRITERS, run_appenders

    appends = 2  # two each (the dir test does three): CI time
    monkeypatch.setattr(test_managed, "APPENDS", appends)
    tid = schema + ["t"]
    ns.declare_table({"id": tid, "properties": MANAGED})
    append(ns, tid, "seed")
    lines = run_appenders([("unity", json.dumps(ns.properties))] * WRITERS, ".".join(tid))
    assert not [line for line in lines if line.startswith("failed")], lines
    acked = [v for line in lines for v in line.split()[2:]]
    assert len(acked) == WRITERS * appends * 3
    n = WRITERS * appends + 1
    fresh = lance_ns.connect("unity", dict(ns.properties))
    got = lance.dataset(namespace_client=fresh, table_id=tid).to_table()["v"].to_pylist()
    assert sorted(got) == sorted(["seed"] + acked)
    assert published(fresh, tid) == list(range(1, n + 1))
    assert sorted(int(line.split()[1]) for line in lines) == list(range(2, n + 1))
