"""Several processes on one directory namespace: one winner per name, no lost entries.

Real processes (spawned: pylance is not fork-safe) wait on a shared barrier
so that their manifest commits overlap.  One pool of workers serves every
test of the module, since starting a process that imports pylance costs
seconds.
"""

from __future__ import annotations

import multiprocessing as mp
from concurrent.futures import ProcessPoolExecutor

import pytest

import lance_ns

WORKERS = 3


def _outcome(fn) -> str:
    try:
        fn()
        return "won"
    except Exception as e:  # noqa: BLE001 - the test checks the code
        return f"{type(e).__name__}:{getattr(e, 'code', None)}"


def _declare_same(root: str, table_id: list[str], barrier) -> str:
    ns = lance_ns.connect("dir", {"root": root})
    ns.list_tables({"id": table_id[:-1]})  # warm up before the race
    barrier.wait()
    return _outcome(lambda: ns.declare_table({"id": table_id}))


def _create_same(root: str, table_id: list[str], barrier) -> str:
    import lance
    import pyarrow as pa

    ns = lance_ns.connect("dir", {"root": root})
    ns.list_tables({"id": table_id[:-1]})
    barrier.wait()
    return _outcome(
        lambda: lance.write_dataset(pa.table({"x": [1, 2, 3]}), namespace_client=ns, table_id=table_id, mode="create")
    )


def _declare_many(root: str, prefix: str, count: int, barrier) -> str:
    ns = lance_ns.connect("dir", {"root": root})
    ns.list_tables({"id": ["ns"]})
    barrier.wait()
    for i in range(count):
        ns.declare_table({"id": ["ns", f"{prefix}_{i:03d}"]})
    return "done"


def _drop_same(root: str, table_id: list[str], barrier) -> str:
    ns = lance_ns.connect("dir", {"root": root})
    ns.describe_table({"id": table_id})  # every process has seen the table before the race
    barrier.wait()
    return _outcome(lambda: ns.drop_table({"id": table_id}))


@pytest.fixture(scope="module")
def race():
    ctx = mp.get_context("spawn")
    with ctx.Manager() as manager, ProcessPoolExecutor(WORKERS, mp_context=ctx) as pool:

        def run(fn, args_for):
            barrier = manager.Barrier(WORKERS, timeout=120)
            futures = [pool.submit(fn, *args_for(i), barrier) for i in range(WORKERS)]
            return [f.result(timeout=300) for f in futures]

        yield run


@pytest.mark.parametrize("table_id", [["t"], ["ns", "t"]], ids=["root", "nested"])
def test_concurrent_declares_of_one_name_have_one_winner(tmp_path, race, table_id):
    root = str(tmp_path)
    ns = lance_ns.connect("dir", {"root": root})
    ns.create_namespace({"id": ["ns"]})
    out = race(_declare_same, lambda i: (root, table_id))
    assert out.count("won") == 1, out
    assert sorted(o for o in out if o != "won") == ["TableAlreadyExistsError:5"] * (WORKERS - 1)
    assert ns.list_tables({"id": table_id[:-1]}).tables == ["t"]
    ns.describe_table({"id": table_id})


def test_concurrent_pylance_creates_have_one_winner(tmp_path, race):
    import lance

    root = str(tmp_path)
    lance_ns.connect("dir", {"root": root}).create_namespace({"id": ["ns"]})
    out = race(_create_same, lambda i: (root, ["ns", "t"]))
    assert out.count("won") == 1, out
    ns = lance_ns.connect("dir", {"root": root})
    assert lance.dataset(namespace_client=ns, table_id=["ns", "t"]).count_rows() == 3


def test_concurrent_manifest_updates_lose_no_entry(tmp_path, race):
    root = str(tmp_path)
    # a small compaction interval so that compactions race with the appends too
    ns = lance_ns.connect("dir", {"root": root, "manifest_compact_every": 8})
    ns.create_namespace({"id": ["ns"]})
    out = race(_declare_many, lambda i: (root, f"p{i}", 15))
    assert out == ["done"] * WORKERS
    expected = sorted(f"p{i}_{j:03d}" for i in range(WORKERS) for j in range(15))
    fresh = lance_ns.connect("dir", {"root": root})
    assert fresh.list_tables({"id": ["ns"]}).tables == expected


@pytest.mark.parametrize("table_id", [["t"], ["ns", "t"]], ids=["root", "nested"])
def test_concurrent_drops_of_one_table_have_one_winner(tmp_path, race, table_id):
    root = str(tmp_path)
    ns = lance_ns.connect("dir", {"root": root})
    ns.create_namespace({"id": ["ns"]})
    ns.declare_table({"id": table_id})
    out = race(_drop_same, lambda i: (root, table_id))
    assert out.count("won") == 1, out
    assert sorted(o for o in out if o != "won") == ["TableNotFoundError:4"] * (WORKERS - 1)
    assert ns.list_tables({"id": table_id[:-1]}).tables == []
