"""Implementation-managed tables on every backend: held with a compare-and-swap, or refused.

A backend class declares ``supports_managed_versioning`` (capability "managed").
Where it does, racing commits of one version have exactly one winner and the
losers answer the conflict code (14); where it does not, a table asking for
managed versioning is refused with code 0 and the reason (never a table that
silently is not managed).  The scenario's checks (lance_ns.conformance.checks_managed)
cover the operations' fields.
"""

from __future__ import annotations

import os
import queue
from concurrent.futures import ThreadPoolExecutor

import lance
import pyarrow as pa
import pytest
from lance_namespace import LanceNamespaceError

from lance_ns.conformance import appends
from lance_ns.conformance.checks_managed import Stager

from .test_concurrency import OK, THREADS, assert_one_winner, race


def test_managed_mode_is_held_or_refused(scope):
    tid = scope.child("m")
    if scope.has("managed"):
        resp = scope.client.declare_table({"id": tid, "properties": {"managed_versioning": "true"}})
        assert resp.managed_versioning is True
        assert scope.client.describe_table({"id": tid}).managed_versioning is True
        return
    with pytest.raises(LanceNamespaceError) as e:
        scope.client.declare_table({"id": tid, "properties": {"managed_versioning": "true"}})
    assert int(e.value.code) == 0 and "implementation-managed" in str(e.value), e.value
    with pytest.raises(LanceNamespaceError):  # and nothing was declared
        scope.client.describe_table({"id": tid})


@pytest.mark.needs("managed")
def test_racing_commits_of_one_version_have_one_winner(scope):
    tid = scope.child("race")
    c = scope.client
    c.declare_table({"id": tid, "properties": {"managed_versioning": "true"}})
    lance.write_dataset(pa.table({"v": ["seed"]}), namespace_client=c, table_id=tid, mode="append")
    staged = []
    for i in range(THREADS):  # every writer stages version 2 on top of version 1
        stager = Stager(c)
        with pytest.raises(Exception):
            lance.write_dataset(pa.table({"v": [f"w{i}"]}), namespace_client=stager, table_id=tid, mode="append")
        staged.append({**stager.staged, "id": tid})
    assert {s["version"] for s in staged} == {2}
    out = race(scope, lambda client, i: client.create_table_version(staged[i]))
    winner = assert_one_winner(out, {14})
    assert [v.version for v in c.list_table_versions({"id": tid}).versions] == [1, 2]
    got = lance.dataset(namespace_client=c, table_id=tid).to_table()["v"].to_pylist()
    assert sorted(got) == sorted(["seed", f"w{winner}"]), (out, got)
    assert out.count(OK) == 1


#: rounds of the concurrent-appends races (a race lost once in twelve rounds is caught in
#: twenty with probability 1 - (11/12)**20 = 82%, in each kind of writer; a backend whose
#: rounds cost tens of seconds asks for fewer: Ctx.append_rounds)
APPEND_ROUNDS = os.environ.get("LANCE_NS_APPEND_ROUNDS")
#: rounds raced at once, each on a table of its own: a round spends most of its time waiting
#: on the catalog's commits of its one table (a metastore lock, an object store's conditional
#: PUT), which a round on another table does not wait for; each table still has its 4 writers.
#: Thread rounds share this process: 4 at once cut the six slowest backends' races by 14%
#: under -n 2 (156 s -> 134 s). Process rounds run 4 writer interpreters each: 2 at once,
#: since 3 made them slower on 2 cores.
PARALLEL_ROUNDS = int(os.environ.get("LANCE_NS_PARALLEL_ROUNDS", "4"))
PARALLEL_PROCESS_ROUNDS = int(os.environ.get("LANCE_NS_PARALLEL_PROCESS_ROUNDS", "2"))


def append_rounds(scope) -> int:
    return int(APPEND_ROUNDS) if APPEND_ROUNDS else scope.ctx.append_rounds or 20


def _assert_rounds(scope, kind: str, run, at_once: int = PARALLEL_ROUNDS) -> None:
    """``run(table_id, lane)`` for each round, ``at_once`` at a time (``lane``: which of
    the rounds running at once, for writers that take one round at a time)."""
    total = append_rounds(scope)
    lanes = queue.SimpleQueue()
    for lane in range(at_once):
        lanes.put(lane)

    def one(r: int) -> str | None:
        lane = lanes.get()
        try:
            result = run(scope.child(f"{kind}{r}"), lane)
        finally:
            lanes.put(lane)
        if not result.problems:
            return None
        return (f"round {r}: " + "; ".join(result.problems[:4])
                + (f" (failed attempts: {[f[3] for f in result.failed][:2]})" if result.failed else ""))

    with ThreadPoolExecutor(at_once, thread_name_prefix="append-round") as pool:
        failures = [f for f in pool.map(one, range(total)) if f]
    assert not failures, f"{len(failures)} of {total} rounds lost or invented writes:\n" + "\n".join(failures)


# (a backend without managed versioning: test_managed_mode_is_held_or_refused checks its refusal)
@pytest.mark.needs("managed", "data")
def test_concurrent_appends_lose_nothing(scope):
    """4 threads x 6 appends to one managed table through one client object (through a
    REST backend: one REST client, each append its own HTTP requests to the one server):
    every acknowledged append held exactly once, versions 1..N, no Overwrite nobody asked for."""
    _assert_rounds(scope, "threads", lambda tid, lane: appends.run_round(scope.ctx.connect, tid))


@pytest.fixture(scope="session")
def writer_processes():
    """A set of 4 writer processes for each round running at once, shared by every backend's
    process race on this test worker: each round tells them its catalog, and a process makes
    a client of its own for it (starting 8 interpreters per backend cost ~12 s of CPU)."""
    sets = [appends.ProcessWriters() for _ in range(PARALLEL_PROCESS_ROUNDS)]
    yield sets
    for writers in sets:
        writers.close()


@pytest.mark.needs("managed", "data", "spawn")
def test_concurrent_appends_of_processes_lose_nothing(scope, writer_processes):
    """The same race between 4 processes, each with a client of its own (where another
    process can reach the catalog: not ``memory``'s, which lives in this one)."""
    for lane, writers in enumerate(writer_processes):  # an earlier race's failure ends with this one's start
        if not writers.alive():
            writers.close()
            writer_processes[lane] = appends.ProcessWriters()
    _assert_rounds(scope, "proc",
                   lambda tid, lane: appends.run_round(scope.ctx.connect, tid, processes=writer_processes[lane],
                                                       catalog=scope.ctx.spawn),
                   PARALLEL_PROCESS_ROUNDS)
