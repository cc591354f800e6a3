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


def append_rounds(scope) -> int:
    return int(APPEND_ROUNDS) if APPEND_ROUNDS else scope.ctx.append_rounds or 20


def _assert_rounds(scope, kind: str, run) -> None:
    failures = []
    total = append_rounds(scope)
    for r in range(total):
        result = run(scope.child(f"{kind}{r}"))
        if result.problems:
            failures.append(f"round {r}: " + "; ".join(result.problems[:4])
                            + (f" (failed attempts: {[f[3] for f in result.failed][:2]})" if result.failed else ""))
    assert not failures, f"{len(failures)} of {total} rounds lost or invented writes:\n" + "\n".join(failures)


# (a backend without managed versioning: test_managed_mode_is_held_or_refused checks its refusal)
@pytest.mark.needs("managed", "data")
def test_concurrent_appends_lose_nothing(scope):
    """4 threads x 6 appends to one managed table through one client object (through a
    REST backend: 4 clients of one server): every acknowledged append held exactly once,
    versions 1..N, no Overwrite nobody asked for."""
    _assert_rounds(scope, "threads", lambda tid: appends.run_round(scope.ctx.connect, tid))


@pytest.mark.needs("managed", "data", "spawn")
def test_concurrent_appends_of_processes_lose_nothing(scope):
    """The same race between 4 processes, each with a client of its own (where another
    process can reach the catalog: not ``memory``'s, which lives in this one)."""
    impl, props = scope.ctx.spawn
    with appends.ProcessWriters(impl, props) as writers:
        _assert_rounds(scope, "proc", lambda tid: appends.run_round(scope.ctx.connect, tid, processes=writers))
