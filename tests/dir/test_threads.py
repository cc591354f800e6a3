"""One DirectoryNamespace shared by the threads of a server: the manifest's
dataset object is read by every thread while some of them commit."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import lance_ns

from .conftest import code


def _outcome(fn) -> str:
    try:
        fn()
        return "ok"
    except Exception as e:  # noqa: BLE001 - the test checks the type and code
        return f"{type(e).__name__}:{getattr(e, 'code', None)}"


def test_declares_and_drops_do_not_break_concurrent_describes(tmp_path):
    ns = lance_ns.connect("dir", {"root": str(tmp_path), "manifest_compact_every": "8"})
    ns.create_namespace({"id": ["a"]})
    ns.declare_table({"id": ["a", "steady"]})
    stop = threading.Event()

    def churn(worker: int) -> list[str]:
        out = []
        for i in range(12):
            tid = ["a", f"w{worker}_{i}"]
            out.append(_outcome(lambda: ns.declare_table({"id": tid})))
            out.append(_outcome(lambda: ns.drop_table({"id": tid})))
        return out

    def describe() -> list[str]:
        out = []
        while not stop.is_set():
            out.append(_outcome(lambda: ns.describe_table({"id": ["a", "steady"]})))
            out.append(_outcome(lambda: ns.list_tables({"id": ["a"]})))
        return out

    with ThreadPoolExecutor(6) as pool:
        readers = [pool.submit(describe) for _ in range(2)]
        writers = [pool.submit(churn, w) for w in range(4)]
        written = [o for f in writers for o in f.result(timeout=600)]
        stop.set()
        read = [o for f in readers for o in f.result(timeout=60)]
    assert set(written) == {"ok"}, sorted(set(written))
    assert read and set(read) == {"ok"}, sorted(set(read))
    assert ns.list_tables({"id": ["a"]}).tables == ["steady"]


def test_racing_drops_of_one_table_have_one_winner(tmp_path):
    ns = lance_ns.connect("dir", {"root": str(tmp_path)})
    ns.create_namespace({"id": ["a"]})
    for round_ in range(5):
        tid = ["a", f"t{round_}"]
        ns.declare_table({"id": tid})
        barrier = threading.Barrier(4)

        def drop():
            barrier.wait()
            return _outcome(lambda: ns.drop_table({"id": tid}))

        with ThreadPoolExecutor(4) as pool:
            out = [f.result(timeout=120) for f in [pool.submit(drop) for _ in range(4)]]
        assert sorted(out) == ["TableNotFoundError:4"] * 3 + ["ok"], out
        assert code(ns.describe_table, {"id": tid}) == 4


def test_racing_drops_from_two_clients_of_one_root_have_one_winner(tmp_path):
    """Two clients (as two servers on one root): each has its own manifest copy."""
    clients = [lance_ns.connect("dir", {"root": str(tmp_path)}) for _ in range(2)]
    clients[0].create_namespace({"id": ["a"]})
    for round_ in range(5):
        tid = ["a", f"t{round_}"]
        clients[0].declare_table({"id": tid})
        for c in clients:
            c.describe_table({"id": tid})  # both believe the table exists
        barrier = threading.Barrier(2)

        def drop(c):
            barrier.wait()
            return _outcome(lambda: c.drop_table({"id": tid}))

        with ThreadPoolExecutor(2) as pool:
            out = [f.result(timeout=120) for f in [pool.submit(drop, c) for c in clients]]
        assert sorted(out) == ["TableNotFoundError:4", "ok"], out


def test_racing_declares_keep_the_winners_location_through_compactions(tmp_path):
    """Clients of one root race declares of one name while the manifest compacts
    every other commit: the acknowledged declare's location is the table's, for good."""
    root = str(tmp_path)
    lance_ns.connect("dir", {"root": root}).create_namespace({"id": ["a"]})
    clients = [lance_ns.connect("dir", {"root": root, "manifest_compact_every": "2"}) for _ in range(4)]
    for round_ in range(12):
        tid = ["a", f"t{round_}"]
        barrier = threading.Barrier(len(clients))

        def declare(ns):
            barrier.wait()
            try:
                outcome = ns.declare_table({"id": tid}).location
            except lance_ns.errors.LanceNamespaceError as e:
                outcome = int(e.code)
            # what every client sees right after, while losers back out and others compact
            return outcome, [ns.describe_table({"id": tid}).location for _ in range(3)]

        with ThreadPoolExecutor(len(clients)) as pool:
            out = list(pool.map(declare, clients))
        won = [o for o, _ in out if isinstance(o, str)]
        assert len(won) == 1 and sorted(o for o, _ in out if not isinstance(o, str)) == [5] * 3, out
        seen = {loc for _, locs in out for loc in locs} | {ns.describe_table({"id": tid}).location for ns in clients}
        assert seen == set(won), f"the name moved away from the acknowledged declare's location: {out}"
    fresh = lance_ns.connect("dir", {"root": root})
    assert fresh.list_tables({"id": ["a"]}).tables == sorted(f"t{r}" for r in range(12))
