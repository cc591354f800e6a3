"""Racing clients, for every backend: exactly one winner, losers get the conflict code.

N threads (``LANCE_NS_RACE_THREADS``, default 6) wait on a barrier and then
send the same mutating request; each race runs ``LANCE_NS_RACE_ROUNDS``
times (default 2; a backend may ask for fewer, ``Ctx.race_rounds``).  For every race: one success, every loser answers the
spec's code for what it lost to (never a 5xx / Internal), and afterwards the
winner's namespace or table is intact -- for data backends readable, with
the winner's rows.  Each thread gets its own client from ``ctx.connect()``
(a new one per call for the directory backends, so two clients on one root
race through the manifest; the shared one elsewhere, so its thread safety is
tested too).
"""

from __future__ import annotations

import os
import threading
import uuid
from collections import Counter

import lance
import pyarrow as pa
import pytest
from lance_namespace import LanceNamespaceError

from lance_ns.datasets import table_to_ipc_stream

THREADS = int(os.environ.get("LANCE_NS_RACE_THREADS", "6"))
ROUNDS = os.environ.get("LANCE_NS_RACE_ROUNDS")
OK = "ok"


def rounds(scope) -> range:
    """How many times each race runs on this backend."""
    return range(int(ROUNDS) if ROUNDS else scope.ctx.race_rounds or 2)


def race(scope, fn, n: int = THREADS) -> list:
    """Run ``fn(client, i)`` in ``n`` threads released together; outcome per thread:
    "ok", the error's integer code, or the repr of an exception without one."""
    clients = [scope.ctx.connect() for _ in range(n)]
    barrier = threading.Barrier(n, timeout=60)
    out: list = [None] * n

    def run(i):
        barrier.wait()
        try:
            fn(clients[i], i)
            out[i] = OK
        except LanceNamespaceError as e:
            # server faults keep their message for the assertion's report
            out[i] = int(e.code) if int(e.code) not in (17, 18) else f"{int(e.code)}: {str(e)[:300]}"
        except Exception as e:  # noqa: BLE001 - reported by the assertion
            out[i] = repr(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    return out


def assert_one_winner(out: list, loser_codes: set[int]) -> int:
    """Exactly one OK, every other outcome a code in ``loser_codes``; the winner's index."""
    counts = Counter(out)
    assert counts[OK] == 1, f"expected one winner: {out}"
    assert all(o == OK or o in loser_codes for o in out), f"losers must answer {sorted(loser_codes)}: {out}"
    return out.index(OK)


def rows(i: int) -> pa.Table:
    """Thread ``i``'s data: i+1 rows, so the table tells whose write it holds."""
    return pa.table({"id": pa.array(range(i + 1), pa.int64()), "who": [f"writer{i}"] * (i + 1)})


def sibling(scope) -> list[str]:
    """A namespace name free for a race (inside the suite's namespace when the backend nests)."""
    name = f"r{uuid.uuid4().hex[:8]}"
    return scope.child(name) if scope.has("nested") else scope.ctx.parent + [scope.id[-1] + name]


def count_rows(scope, tid) -> int:
    return lance.dataset(namespace_client=scope.client, table_id=tid).count_rows()


# -- namespaces ------------------------------------------------------------------------


def test_create_namespace_race(scope):
    c = scope.client
    for _ in rounds(scope):
        ns = sibling(scope)
        try:
            out = race(scope, lambda cl, i: cl.create_namespace({"id": ns, "properties": {"who": str(i)}}))
            winner = assert_one_winner(out, {2})
            c.namespace_exists({"id": ns})
            if scope.has("ns_properties"):
                assert c.describe_namespace({"id": ns}).properties.get("who") == str(winner)
        finally:
            c.drop_namespace({"id": ns, "mode": "Skip"})


def test_create_namespace_exist_ok_race_all_succeed(scope):
    c = scope.client
    ns = sibling(scope)
    try:
        out = race(scope, lambda cl, i: cl.create_namespace({"id": ns, "mode": "ExistOk"}))
        assert out == [OK] * THREADS, out
        c.namespace_exists({"id": ns})
    finally:
        c.drop_namespace({"id": ns, "mode": "Skip"})


def test_drop_namespace_race(scope):
    c = scope.client
    for _ in rounds(scope):
        ns = sibling(scope)
        c.create_namespace({"id": ns})
        out = race(scope, lambda cl, i: cl.drop_namespace({"id": ns}))
        if scope.has("drop_missing_ok"):  # the Iceberg spec: dropping a missing namespace succeeds
            assert out == [OK] * THREADS, out
        else:
            assert_one_winner(out, {1})
        with pytest.raises(LanceNamespaceError) as info:
            c.namespace_exists({"id": ns})
        assert int(info.value.code) == 1


def test_declare_into_namespace_being_dropped(scope):
    """Declares racing a Restrict drop: either the drop wins and no declare does,
    or the drop answers NotEmpty and the declared tables are all there."""
    c = scope.client
    for _ in rounds(scope):
        ns = sibling(scope)
        c.create_namespace({"id": ns})
        out = race(
            scope, lambda cl, i: cl.drop_namespace({"id": ns}) if i == 0 else cl.declare_table({"id": ns + [f"t{i}"]})
        )
        try:
            declared = [f"t{i}" for i, o in enumerate(out) if i and o == OK]
            if out[0] == OK:
                assert all(o in (1,) for o in out[1:]), f"a declare won in a dropped namespace: {out}"
                with pytest.raises(LanceNamespaceError):
                    c.namespace_exists({"id": ns})
            else:
                assert out[0] == 3, out
                assert all(o in (OK, 1) for o in out[1:]), out
                assert sorted(c.list_tables({"id": ns}).tables) == sorted(declared)
        finally:
            c.drop_namespace({"id": ns, "mode": "Skip", "behavior": "Cascade"}) if scope.has("cascade") else _empty(c, ns)


def _empty(c, ns):
    try:
        for t in c.list_tables({"id": ns}).tables:
            c.drop_table({"id": ns + [t]})
    except LanceNamespaceError:
        pass
    c.drop_namespace({"id": ns, "mode": "Skip"})


# -- tables ------------------------------------------------------------------------------


def test_declare_table_race(scope):
    c = scope.client
    for r in rounds(scope):
        tid = scope.child(f"decl{r}")
        out = race(scope, lambda cl, i: cl.declare_table({"id": tid, "properties": {"who": str(i)}}))
        winner = assert_one_winner(out, {5})
        assert c.list_tables({"id": scope.id}).tables.count(f"decl{r}") == 1
        if scope.has("table_properties"):
            assert c.describe_table({"id": tid}).properties.get("who") == str(winner)


@pytest.mark.needs("data")
def test_create_table_race(scope):
    c = scope.client
    for r in rounds(scope):
        tid = scope.child(f"create{r}")
        out = race(scope, lambda cl, i: cl.create_table({"id": tid}, table_to_ipc_stream(rows(i))))
        winner = assert_one_winner(out, {5})
        assert count_rows(scope, tid) == winner + 1, "the table must hold the winner's rows"
        c.describe_table({"id": tid})


@pytest.mark.needs("data")
def test_create_declared_table_race(scope):
    """A declared table created by several clients at once: the first commit decides."""
    c = scope.client
    for r in rounds(scope):
        tid = scope.child(f"declcreate{r}")
        c.declare_table({"id": tid})
        out = race(scope, lambda cl, i: cl.create_table({"id": tid}, table_to_ipc_stream(rows(i))))
        winner = assert_one_winner(out, {5})
        assert count_rows(scope, tid) == winner + 1


@pytest.mark.needs("data", "register")
def test_register_table_race(scope):
    c = scope.client
    for r in rounds(scope):
        tid = scope.child(f"reg{r}")
        lance.write_dataset(rows(2), namespace_client=c, table_id=tid, mode="create")
        location = c.deregister_table({"id": tid}).location
        out = race(scope, lambda cl, i: cl.register_table({"id": tid, "location": location}))
        assert_one_winner(out, {5})
        assert count_rows(scope, tid) == 3


@pytest.mark.parametrize("op", ["drop_table", "deregister_table"])
def test_drop_table_race(scope, op):
    c = scope.client
    for r in rounds(scope):
        tid = scope.child(f"{op}{r}")
        if scope.has("data"):
            lance.write_dataset(rows(2), namespace_client=c, table_id=tid, mode="create")
        else:
            c.declare_table({"id": tid})
        out = race(scope, lambda cl, i: getattr(cl, op)({"id": tid}))
        assert_one_winner(out, {4})
        with pytest.raises(LanceNamespaceError) as info:
            c.describe_table({"id": tid})
        assert int(info.value.code) == 4


def test_create_and_drop_of_one_table(scope):
    """Creates racing drops: no 5xx; a create loses with 5 (exists) or 14 (a drop
    overtook it: whether its table was ever visible is unknown), a drop with 4;
    and the table exists exactly when the acknowledged creates and drops say so
    -- holding an acknowledged creator's rows."""
    c = scope.client
    data = scope.has("data")
    # where racing drops of one table can each succeed (a limit of the service the backend
    # declares: Hive Metastore has no conditional drop), two acknowledged drops may have
    # removed one table: the table may then be left only if a create may have made it
    drops_settle = "test_drop_table_race" not in scope.ctx.race_limits
    for r in rounds(scope):
        tid = scope.child(f"cd{r}")

        def op(cl, i):
            if i % 2:
                return cl.drop_table({"id": tid})
            if data:
                return cl.create_table({"id": tid}, table_to_ipc_stream(rows(i)))
            return cl.declare_table({"id": tid})

        out = race(scope, op)
        creates = [o for i, o in enumerate(out) if i % 2 == 0]
        drops = [o for i, o in enumerate(out) if i % 2]
        assert all(o in (OK, 5, 14) for o in creates), out
        assert all(o in (OK, 4) for o in drops), out
        # each drop removed one created table; 14s may or may not have created one
        least = creates.count(OK) - drops.count(OK)
        most = least + creates.count(14)
        if not drops_settle:
            most = 1 if creates.count(OK) + creates.count(14) else 0
        try:
            c.describe_table({"id": tid})
            alive = 1
        except LanceNamespaceError as e:
            assert int(e.code) == 4, out
            alive = 0
        assert least <= alive <= most, f"{alive} table(s) left after {out}"
        if alive:
            if data:
                acknowledged = {i + 1 for i, o in enumerate(out) if i % 2 == 0 and o == OK}
                assert count_rows(scope, tid) in acknowledged
            c.drop_table({"id": tid})


# -- renames ------------------------------------------------------------------------------


def test_rename_table_race(scope):
    """Racing renames of one table to different names: one winner; a loser answers
    4 (the table was gone when it looked) or 14 (renamed under it) and leaves no
    entry behind; the winner's table keeps its location and properties.  (One
    declared table per round: the data path is checked by the scenario's
    table.rename.data.)"""
    c = scope.client
    for r in rounds(scope):
        src = scope.child(f"mv{r}")
        c.declare_table({"id": src, "properties": {"origin": "mover"}})
        location = c.describe_table({"id": src}).location
        out = race(scope, lambda cl, i: cl.rename_table({"id": src, "new_table_name": f"mv{r}to{i}"}))
        winner = assert_one_winner(out, {4, 14})
        names = set(c.list_tables({"id": scope.id}).tables)
        assert f"mv{r}" not in names and f"mv{r}to{winner}" in names, (out, sorted(names))
        assert not {f"mv{r}to{i}" for i in range(THREADS) if i != winner} & names, (out, sorted(names))
        moved = c.describe_table({"id": scope.child(f"mv{r}to{winner}")})
        assert moved.location == location
        if scope.has("table_properties"):
            assert moved.properties.get("origin") == "mover"


def test_rename_into_one_name_race(scope):
    """Racing renames of different tables onto one name: one winner, the losers
    answer 5 and keep their own tables."""
    c = scope.client
    n = min(THREADS, 4)  # one round of at most 4 racers: each needs a table declared first
    for r in range(1):
        sources = [scope.child(f"in{r}s{i}") for i in range(n)]
        for i, src in enumerate(sources):
            c.declare_table({"id": src, "properties": {"who": str(i)}})
        out = race(scope, lambda cl, i: cl.rename_table({"id": sources[i], "new_table_name": f"in{r}"}), n=n)
        winner = assert_one_winner(out, {5})
        names = set(c.list_tables({"id": scope.id}).tables)
        assert {f"in{r}s{i}" for i in range(n) if i != winner} <= names, (out, sorted(names))
        assert f"in{r}s{winner}" not in names
        if scope.has("table_properties"):
            assert c.describe_table({"id": scope.child(f"in{r}")}).properties.get("who") == str(winner)
