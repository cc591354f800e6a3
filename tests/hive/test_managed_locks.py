"""Implementation-managed tables on the REAL Hive Metastores: commits under their table locks.

``alter_table`` has no condition, so a commit of a managed table takes an
EXCLUSIVE lock on the table (lock/check_lock), re-reads and compares it, alters
it and unlocks.  The shared scenario (lance_ns.conformance.checks_managed) and
the racing-commit test (tests/conformance/test_managed.py) run on hive2/hive3;
this file covers what only the metastore has: its locks are released, a dead
holder's lock delays commits for a bounded time until the metastore reaps it,
several tables are locked and committed together (an alter failing midway is
undone), concurrent appenders lose nothing, and a metastore without the
transaction tables refuses managed mode with code 0 and the reason.

Every test runs on both real metastores: ``hms2.3`` (tests/services/hms.py, the ``hive2``
backend, databases at the root) and ``hms3.1`` (tests/services/hms3.py, the ``hive3``
backend with the catalog API: databases of the catalog ``hive``, every call naming it).
"""

from __future__ import annotations

import socket
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import lance
import pyarrow as pa
import pytest
from lance_namespace import LanceNamespaceError
from pymetastore.hive_metastore import ttypes as hms
from thrift.Thrift import TApplicationException

import lance_ns
from lance_ns.conformance.checks_managed import Stager
from lance_ns.errors import ServiceUnavailableError
from tests.services import hms as hms2_server
from tests.services import hms3 as hms3_server
from tests.services.hms import HiveMetastore

from .conftest import raw_client


@dataclass(frozen=True)
class Server:
    """A real metastore flavour and the backend that talks to it."""

    impl: str  # the lance-ns backend
    prefix: tuple[str, ...]  # namespace levels above the database
    module: object  # its tests/services module (shared instance, server class, TRANSACTION_CONF)

    def shared(self):
        return self.module.shared_metastore() if self.module is hms2_server else self.module.shared_hms3()

    def server_class(self):
        return self.module.HiveMetastore if self.module is hms2_server else self.module.Hive3Metastore

    @property
    def txn_timeout_s(self) -> float:
        return float(self.module.TRANSACTION_CONF["hive.txn.timeout"].rstrip("s"))


SERVERS = {"hms2.3": Server("hive2", (), hms2_server), "hms3.1": Server("hive3", ("hive",), hms3_server)}


@pytest.fixture(scope="module", params=["hms2.3", pytest.param("hms3.1", marks=pytest.mark.slow)])
def server(request) -> Server:
    return SERVERS[request.param]


@pytest.fixture(scope="module")
def metastore(server):
    """This module's metastore (overrides tests/hive/conftest.py's, so ``raw`` talks to it)."""
    return server.shared()


@pytest.fixture
def lns(server, metastore, tmp_path):
    """The backend under test, connected to the module's metastore."""
    ns = lance_ns.connect(server.impl, {"uri": metastore.uri, "root": str(tmp_path / "tables")})
    yield ns
    ns.close()


@pytest.fixture
def db(server, lns, db_name):
    """A database made through the namespace (its namespace id), dropped (cascade) afterwards."""
    ns_id = [*server.prefix, db_name]
    lns.create_namespace({"id": ns_id})
    yield ns_id
    try:
        lns.drop_namespace({"id": ns_id, "mode": "Skip", "behavior": "Cascade"})
    except Exception as e:  # noqa: BLE001 - a test may have left something behind on purpose
        print(f"cleanup of {ns_id}: {e!r}")


def rows(*values) -> pa.Table:
    return pa.table({"v": [str(v) for v in values]})


def managed_table(ns, db: list[str], name: str) -> list[str]:
    """A managed table with one published version (its row ``seed``)."""
    tid = [*db, name]
    ns.declare_table({"id": tid, "properties": {"managed_versioning": "true"}})
    lance.write_dataset(rows("seed"), namespace_client=ns, table_id=tid, mode="append")
    return tid


def stage(ns, tid: list[str], value: str) -> dict:
    """pylance's CreateTableVersion request for appending ``value``, not sent."""
    stager = Stager(ns)
    with pytest.raises(Exception):
        lance.write_dataset(rows(value), namespace_client=stager, table_id=tid, mode="append")
    return {**stager.staged, "id": tid}


def published(ns, tid: list[str]) -> list[int]:
    return [v.version for v in ns.list_table_versions({"id": tid}).versions]


def values(ns, tid: list[str]) -> list[str]:
    return sorted(lance.dataset(namespace_client=ns, table_id=tid).to_table()["v"].to_pylist())


def locks_in(raw, db: list[str]) -> list:
    """The metastore's locks on tables of database ``db`` (a namespace id; Hive 3.1's locks
    name database and table only, not the catalog)."""
    return [lk for lk in raw.show_locks(hms.ShowLocksRequest()).locks or [] if lk.dbname == db[-1]]


def test_commits_take_and_release_the_table_lock(lns, db, raw):
    tid = managed_table(lns, db, "t")
    lance.write_dataset(rows("a"), namespace_client=lns, table_id=tid, mode="append")
    stale = stage(lns, tid, "b") | {"version": 2}  # version 2 is taken: refused under the lock
    with pytest.raises(LanceNamespaceError) as e:
        lns.create_table_version(stale)
    assert int(e.value.code) == 14
    assert published(lns, tid) == [1, 2] and values(lns, tid) == ["a", "seed"]
    assert locks_in(raw, db) == []  # granted and refused commits alike released their locks


@pytest.fixture(scope="module")
def bare_metastore(server, tmp_path_factory):
    """A second real metastore, WITHOUT the transaction tables, started in the background
    (its JVM start overlaps the reaper wait of the dead-holder test, which asks for it
    first); a test calls ``.result()`` for the started metastore."""
    bare = server.server_class()(tmp_path_factory.mktemp("bare-hms"), transactions=False)
    with ThreadPoolExecutor(1) as pool:
        started: Future = pool.submit(bare.start)
        try:
            yield started
        finally:
            started.exception()  # wait for the start to end, then stop what started
            bare.stop()


@pytest.mark.slow  # waits for the metastore to reap the lock: hive.txn.timeout (6 s) and a reaper run
def test_a_dead_lock_holder_delays_commits_boundedly_until_the_metastore_reaps_it(
    server, metastore, db, raw, tmp_path, bare_metastore
):
    if not isinstance(metastore, HiveMetastore):
        pytest.skip("LANCE_NS_TEST_HMS_URI points at an external metastore whose hive.txn.timeout is unknown")
    ns = lance_ns.connect(server.impl, {"uri": metastore.uri, "root": str(tmp_path), "lock.timeout-ms": "500"})
    try:
        tid = managed_table(ns, db, "t")
        request = stage(ns, tid, "after")
        # a holder that died: its EXCLUSIVE lock is never released nor heart-beaten
        held = raw.lock(hms.LockRequest(
            component=[hms.LockComponent(type=hms.LockType.EXCLUSIVE, level=hms.LockLevel.TABLE, dbname=db[-1],
                                         tablename="t", operationType=hms.DataOperationType.NO_TXN)],
            user="dead-writer", hostname=socket.gethostname()))
        assert held.state == hms.LockState.ACQUIRED
        t0 = time.monotonic()
        with pytest.raises(LanceNamespaceError) as e:
            ns.create_table_version(request)
        assert int(e.value.code) == 14 and "lock.timeout-ms" in str(e.value)
        assert time.monotonic() - t0 < 5  # the bounded wait (0.5 s here), never a hang
        assert published(ns, tid) == [1]
        assert [lk.user for lk in locks_in(raw, db)] == ["dead-writer"]  # the refused commit left no lock
        # the metastore's housekeeper drops a lock without heartbeat for hive.txn.timeout
        deadline = time.monotonic() + server.txn_timeout_s + 30
        while locks_in(raw, db) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert locks_in(raw, db) == []
        ns.create_table_version(request)
        assert published(ns, tid) == [1, 2] and values(ns, tid) == ["after", "seed"]
    finally:
        ns.close()


def test_batch_commit_locks_and_commits_several_tables_together(lns, db, raw):
    a, b = managed_table(lns, db, "a"), managed_table(lns, db, "b")
    staged_a, staged_b = stage(lns, a, "a2"), stage(lns, b, "b2")
    # one entry is stale (version 1 is taken): the whole batch is refused, nothing published
    with pytest.raises(LanceNamespaceError) as e:
        lns.batch_commit_tables({"operations": [{"create_table_version": staged_a},
                                                  {"create_table_version": staged_b | {"version": 1}}]})
    assert int(e.value.code) == 14
    assert published(lns, a) == [1] and published(lns, b) == [1]
    resp = lns.batch_commit_tables({"operations": [{"create_table_version": s} for s in (staged_a, staged_b)]})
    assert [r.create_table_version.version.version for r in resp.results] == [2, 2]
    assert values(lns, a) == ["a2", "seed"] and values(lns, b) == ["b2", "seed"]
    assert locks_in(raw, db) == []


def test_an_alter_failing_midway_is_undone_under_the_locks(lns, db, raw, monkeypatch):
    """The alters of a multi-table commit are separate metastore calls: when the second
    fails (injected here), the first is undone before the locks are released."""
    a, b = managed_table(lns, db, "a"), managed_table(lns, db, "b")
    staged = [stage(lns, a, "a2"), stage(lns, b, "b2")]
    real_alter, calls = lns._alter, []

    def failing_second_alter(ns, table):
        calls.append(table.tableName)
        if len(calls) == 2:
            raise ServiceUnavailableError("injected: the metastore went away mid-commit")
        real_alter(ns, table)

    monkeypatch.setattr(lns, "_alter", failing_second_alter)
    with pytest.raises(LanceNamespaceError) as e:
        lns.batch_commit_tables({"operations": [{"create_table_version": s} for s in staged]})
    assert int(e.value.code) == 17
    assert calls == ["a", "b", "a"]  # a altered, b failed, a restored
    monkeypatch.undo()
    assert published(lns, a) == [1] and published(lns, b) == [1]
    assert values(lns, a) == ["seed"] and values(lns, b) == ["seed"]
    assert locks_in(raw, db) == []
    # and the same commit goes through afterwards
    lns.batch_commit_tables({"operations": [{"create_table_version": s} for s in staged]})
    assert published(lns, a) == [1, 2] and published(lns, b) == [1, 2]


def test_concurrent_appenders_lose_no_commit(server, metastore, lns, db):
    """Writers with clients of their own append at once (a barrier before each append):
    a commit that loses a race is refused (14) and pylance retries it; every
    acknowledged append is there exactly once and the versions run 1..n without gap
    or duplicate."""
    tid = managed_table(lns, db, "t")
    writers, appends = 3, 1
    clients = [lance_ns.connect(server.impl, {"uri": metastore.uri}) for _ in range(writers)]
    barrier = threading.Barrier(writers, timeout=60)
    acked, failures = [], []

    def writer(w: int) -> None:
        for i in range(appends):
            value = f"w{w}-{i}"
            barrier.wait()
            for _ in range(20):
                try:
                    lance.write_dataset(rows(value), namespace_client=clients[w], table_id=tid, mode="append")
                    acked.append(value)
                    break
                except Exception as e:  # noqa: BLE001 - a lost race pylance gave up on: retried
                    last = e
            else:
                failures.append(repr(last))

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(writers)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
    finally:
        for c in clients:
            c.close()
    assert not failures, failures
    n = writers * appends + 1
    assert published(lns, tid) == list(range(1, n + 1))
    assert values(lns, tid) == sorted(["seed", *acked])
    fresh = lance_ns.connect(server.impl, {"uri": metastore.uri})
    try:
        assert fresh.describe_table({"id": tid}).version == n  # a fresh connection sees the same latest
    finally:
        fresh.close()


@pytest.mark.slow  # a second metastore (its start overlaps the dead-holder test)
def test_a_metastore_without_transaction_tables_refuses_managed_mode(server, bare_metastore, tmp_path):
    """A metastore whose schema DataNucleus made (no TXNS, HIVE_LOCKS, NEXT_LOCK_ID...)
    answers ``lock`` with an internal error: managed mode is refused with code 0 and
    the reason, found with one probe, and everything else works."""
    bare = bare_metastore.result()
    client, transport = raw_client(bare.host, bare.port)
    try:
        with pytest.raises(TApplicationException, match="Internal error processing lock"):
            client.lock(hms.LockRequest(
                component=[hms.LockComponent(type=hms.LockType.EXCLUSIVE, level=hms.LockLevel.TABLE,
                                             dbname="default", tablename="t",
                                             operationType=hms.DataOperationType.NO_TXN)],
                user="test", hostname=socket.gethostname()))
    finally:
        transport.close()
    ns = lance_ns.connect(server.impl, {"uri": bare.uri, "root": str(tmp_path / "tables")})
    d = [*server.prefix, "d"]
    try:
        ns.create_namespace({"id": d})
        with pytest.raises(LanceNamespaceError) as e:
            ns.declare_table({"id": [*d, "m"], "properties": {"managed_versioning": "true"}})
        assert int(e.value.code) == 0
        assert "transaction tables" in str(e.value) and "Internal error processing lock" in str(e.value)
        assert ns.list_tables({"id": d}).tables == []  # nothing declared
        assert ns.supports_managed_versioning is False  # the probe's answer, kept
        lance.write_dataset(rows(1), namespace_client=ns, table_id=[*d, "plain"], mode="create")
        assert values(ns, [*d, "plain"]) == ["1"]  # storage-managed tables work as ever
    finally:
        ns.close()
