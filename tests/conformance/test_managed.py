"""Implementation-managed tables on every backend: held with a compare-and-swap, or refused.

A backend class declares ``supports_managed_versioning`` (capability "managed").
Where it does, racing commits of one version have exactly one winner and the
losers answer the conflict code (14); where it does not, a table asking for
managed versioning is refused with code 0 and the reason (never a table that
silently is not managed).  The scenario's checks (lance_ns.conformance.checks_managed)
cover the operations' fields.
"""

from __future__ import annotations

import lance
import pyarrow as pa
import pytest
from lance_namespace import LanceNamespaceError

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


def test_racing_commits_of_one_version_have_one_winner(scope):
    if not scope.has("managed"):
        pytest.skip("the backend declares no managed versioning: test_managed_mode_is_held_or_refused checks its refusal")
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
