"""Several processes (issue 19.4): ``lance-ns serve --workers 2`` over one dir root keeps
the one-winner rule under concurrent conflicting load, and loses no entry."""

from __future__ import annotations

import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

import lance_ns

from .conftest import lance_ns_serve

CLIENTS = 8
ROUNDS = 6


def _worker_pids(pid: int) -> set[int]:
    children = Path(f"/proc/{pid}/task/{pid}/children")
    return {int(p) for p in children.read_text().split()} if children.exists() else set()


def _served_by(metrics_dir: Path) -> set[int]:
    """The processes that served a request (each writes its own counter file)."""
    return {int(f.stem.rsplit("_", 1)[1]) for f in metrics_dir.glob("counter_*.db")}


@pytest.mark.slow  # a supervisor and two workers start cold (pylance imports): ~10 s
def test_two_workers_hold_the_one_winner_rule_under_concurrent_conflicting_load(tmp_path):
    root = tmp_path / "lake"
    args = ["--impl", "dir", "--prop", f"root={root}", "--workers", "2", "--log-level", "warning"]
    metrics_dir = tmp_path / "metrics"
    metrics_dir.mkdir()
    with lance_ns_serve(args, env={"PROMETHEUS_MULTIPROC_DIR": str(metrics_dir)}) as served:
        assert len(_worker_pids(served.proc.pid)) >= 2, "two worker processes"
        assert httpx.post(f"{served.url}/v1/namespace/db/create", json={}).status_code == 200
        # a new connection per request: the two workers' accept loops share them out
        no_keepalive = httpx.Limits(max_keepalive_connections=0)
        clients = [httpx.Client(base_url=served.url, timeout=60, limits=no_keepalive) for _ in range(CLIENTS)]
        try:
            for c in clients:  # warm both workers (their first request opens the namespace) before the races
                assert c.get("/v1/namespace/db/table/list").status_code == 200
            # on a loaded machine the second worker may still be starting: until it serves,
            # every connection goes to the first, and the races would not span two processes
            deadline = time.monotonic() + 60
            while len(_served_by(metrics_dir) & _worker_pids(served.proc.pid)) < 2:
                assert time.monotonic() < deadline, "the second worker never accepted a connection"
                assert clients[0].get("/v1/namespace/db/table/list").status_code == 200
            outcomes = []
            with ThreadPoolExecutor(CLIENTS) as pool:
                for round_ in range(ROUNDS):
                    barrier = threading.Barrier(CLIENTS)

                    def declare(c: httpx.Client, name=f"t{round_}") -> tuple[int, int | None]:
                        barrier.wait()
                        r = c.post(f"/v1/table/db${name}/declare", json={})
                        return r.status_code, (r.json().get("code") if r.status_code != 200 else None)

                    outcomes.append(list(pool.map(declare, clients)))
                # distinct names at once: no manifest update may be lost between the processes
                barrier = threading.Barrier(CLIENTS)

                def declare_own(i: int) -> int:
                    barrier.wait()
                    return clients[i].post(f"/v1/table/db$own{i}/declare", json={}).status_code

                own = list(pool.map(declare_own, range(CLIENTS)))
            metrics = clients[0].get("/metrics").text
            workers = _worker_pids(served.proc.pid)
        finally:
            for c in clients:
                c.close()
    for round_, results in enumerate(outcomes):
        assert results.count((200, None)) == 1, (round_, results)
        assert sorted(r for r in results if r != (200, None)) == [(409, 5)] * (CLIENTS - 1), (round_, results)
    assert own == [200] * CLIENTS
    tables = lance_ns.connect("dir", {"root": str(root)}).list_tables({"id": ["db"]}).tables
    assert sorted(tables) == sorted([f"t{i}" for i in range(ROUNDS)] + [f"own{i}" for i in range(CLIENTS)])
    # both processes served requests (each writes its own counter file), and /metrics sums them
    served_by = _served_by(metrics_dir)
    assert len(served_by & workers) == 2, (served_by, workers)
    from .test_operations import samples

    declares = samples(metrics)
    total = sum(v for (name, labels), v in declares.items()
                if name == "lance_ns_requests_total" and ("operation", "DeclareTable") in labels)
    assert total == ROUNDS * CLIENTS + CLIENTS


def _requests_by_worker(metrics_dir: Path, operation: str) -> dict[int, float]:
    """pid -> requests of ``operation`` it has answered (each worker's own counter file)."""
    from prometheus_client.mmap_dict import MmapedDict

    counts: dict[int, float] = {}
    for f in metrics_dir.glob("counter_*.db"):
        pid = int(f.stem.rsplit("_", 1)[1])
        for key, value, *_ in MmapedDict.read_all_values_from_file(str(f)):
            if "lance_ns_requests_total" in key and f'"{operation}"' in key:
                counts[pid] = counts.get(pid, 0) + value
    return counts


def _answered_by_both(metrics_dir: Path, operation: str, before: dict[int, float], workers: set[int]) -> bool:
    """Whether two worker processes answered ``operation`` since ``before`` (``workers``: the
    supervisor's children, which may hold a helper process of multiprocessing's too)."""
    after = _requests_by_worker(metrics_dir, operation)
    return sum(after.get(pid, 0) > before.get(pid, 0) for pid in workers) >= 2


def _clients_on_both_workers(make, probe, metrics_dir: Path, workers: set[int], each: int,
                             seconds: float = 60) -> list:
    """``2 * each`` clients of ``make()``, ``each`` of whose kept-alive connections went to one
    worker and ``each`` to the other, alternating: consecutive requests by consecutive clients
    then go to both processes, whichever worker the accept loops hand a new connection.  Both
    workers have answered ``probe`` when it returns (on a loaded machine the second may take
    a while to start serving)."""
    by_worker: dict[int, list] = {}
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        client = make()
        before = _requests_by_worker(metrics_dir, "DescribeTable")
        probe(client)
        after = _requests_by_worker(metrics_dir, "DescribeTable")
        answered = [p for p in workers if after.get(p, 0) > before.get(p, 0)]
        if len(answered) != 1:  # (not attributable: another request ran meanwhile)
            continue
        pid = answered[0]
        if len(by_worker.setdefault(pid, [])) < each:
            by_worker[pid].append(client)
        full = [placed for placed in by_worker.values() if len(placed) == each]
        if len(full) == 2:
            return [c for pair in zip(*full) for c in pair]
    raise AssertionError(f"a worker never answered, or not {each} connections to each of two: {by_worker}")


GROWN = 30_000  # three sealed fragments of 10,000 rows: a compaction rewrites far fewer than the manifest holds
GONE = 1_100  # deregistered from the first: over compaction.DIRTY_SHARE of it, so it is rewritten


@pytest.mark.slow  # ~30 s: a grown root, two workers started cold, ~1,300 requests of pylance's client
def test_workers_read_each_others_deletes_and_compactions_by_the_fragments_changed(tmp_path):
    """pylance's Rust ``RestNamespace``, on fresh connections spread over ``serve --workers 2``:
    each worker reads the other's deregistrations and compactions by the fragments they changed
    (each loads the manifest whole once, at its first request, and never again), and every
    answer pylance gets, from either worker, and pylance's own DirectoryNamespace over the root,
    agree with what was done."""
    import lance
    import pyarrow as pa
    from lance.namespace import DirectoryNamespace, RestNamespace
    from lance_namespace import (DeclareTableRequest, DeregisterTableRequest, DescribeTableRequest,
                                 ListTablesRequest, TableExistsRequest)

    root = tmp_path / "lake"
    ours = lance_ns.connect("dir", {"root": str(root)})
    ours.create_namespace({"id": ["db"]})
    for lo in range(0, GROWN, 10_000):
        ours.batch_commit_tables({"operations": [{"declare_table": {"id": ["db", f"x{i}"]}}
                                                 for i in range(lo, lo + 10_000)]})
    ours.manifest.wait_for_upkeep()
    metrics_dir, log = tmp_path / "metrics", tmp_path / "serve.log"
    metrics_dir.mkdir()
    args = ["--impl", "dir", "--prop", f"root={root}", "--workers", "2", "--log-level", "debug"]
    with lance_ns_serve(args, env={"PROMETHEUS_MULTIPROC_DIR": str(metrics_dir)}, log_file=log) as served:
        workers = _worker_pids(served.proc.pid)
        assert len(workers) >= 2, "two worker processes"

        def client() -> RestNamespace:  # a client of its own: a connection of its own, to either worker
            return RestNamespace(uri=served.url)

        def describe(c, name: str):
            return c.describe_table(DescribeTableRequest(id=["db", name]))

        def answers(c) -> None:
            assert describe(c, "x1").location

        # both workers load the grown manifest (their first request) before anything changes
        clients = _clients_on_both_workers(client, answers, metrics_dir, workers, each=4)
        before = _requests_by_worker(metrics_dir, "DeregisterTable")
        gone = [f"x{i}" for i in range(0, 9 * GONE, 9)]  # spread over the first fragment (x0-x9999)
        for i, name in enumerate(gone):
            clients[i % len(clients)].deregister_table(DeregisterTableRequest(id=["db", name]))
            if i % 100 == 0:  # declares between: appends, and the trailing runs compactions merge
                clients[(i + 1) % len(clients)].declare_table(DeclareTableRequest(id=["db", f"new{i}"]))
        new = [f"new{i}" for i in range(0, GONE, 100)]
        # pylance writes a table with data through the server (its own commit into its own directory)
        lance.write_dataset(pa.table({"a": [1, 2, 3]}), namespace_client=clients[0], table_id=["db", "written"],
                            mode="create")
        assert _answered_by_both(metrics_dir, "DeregisterTable", before, workers), \
            "the deregistrations must be spread over both workers, so that each reads the other's"

        # every answer, from fresh connections to either worker, agrees with what was done
        before = _requests_by_worker(metrics_dir, "DescribeTable")
        for i, name in enumerate(gone[::37] + ["x5", "x9998", "x15001", "x29999"] + new + ["written"]):
            c = client() if i % 2 else clients[i % len(clients)]
            if name in gone:
                for ask in (lambda: describe(c, name), lambda: c.table_exists(TableExistsRequest(id=["db", name]))):
                    with pytest.raises(Exception, match="(?i)not found|does not exist"):
                        ask()
            else:
                c.table_exists(TableExistsRequest(id=["db", name]))  # (raises when absent)
                assert describe(c, name).location, name
        assert _answered_by_both(metrics_dir, "DescribeTable", before, workers)
        listed, token = [], None
        while True:
            page = client().list_tables(ListTablesRequest(id=["db"], page_token=token, limit=5_000))
            listed += page.tables
            token = page.page_token
            if not token:
                break
        assert lance.dataset(namespace_client=clients[1], table_id=["db", "written"]).count_rows() == 3
    expected = sorted(set(f"x{i}" for i in range(GROWN)) - set(gone) | set(new) | {"written"})
    assert sorted(listed) == expected
    # what the workers committed is what our library and pylance's own DirectoryNamespace read
    assert sorted(lance_ns.connect("dir", {"root": str(root)}).list_tables({"id": ["db"]}).tables) == expected
    pylance_dir = DirectoryNamespace(root=str(root))
    assert sorted(pylance_dir.list_tables(ListTablesRequest(id=["db"])).tables) == expected

    lines = log.read_text().splitlines()
    whole = [line for line in lines if "__manifest: version" in line and "loaded whole" in line]
    changed = [line for line in lines if "__manifest: version" in line and "read by the fragments it changed" in line]
    assert len(whole) == 2, "each worker loads the manifest whole once, at its first request:\n" + \
        "\n".join(whole)
    # a compaction moves rows without dropping or adding any; deregistrations replace one
    # fragment's deletion file and drop its entries: one, or several when a worker catches up on
    # more than one of the other's (which clients share a worker is up to the accept loops)
    compactions = [line for line in changed
                   if re.search(r"\([1-9]\d* gone, [1-9]\d* new\): 0 entries dropped, 0 added", line)]
    deletes = [line for line in changed if re.search(r"\(1 gone, 1 new\): [1-9]\d* entries dropped, 0 added", line)]
    assert compactions and deletes, "each worker reads the other's changes by the fragments changed:\n" + \
        "\n".join(changed[:50])


@pytest.mark.slow  # a supervisor and two workers start cold (pylance imports): ~10 s
def test_the_metrics_directory_the_server_made_is_removed_when_it_stops(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    args = ["--impl", "dir", "--prop", f"root={tmp_path / 'root'}", "--workers", "2", "--log-level", "warning"]
    # an empty PROMETHEUS_MULTIPROC_DIR is unset to the server: it makes its own under TMPDIR
    with lance_ns_serve(args, env={"TMPDIR": str(tmp), "PROMETHEUS_MULTIPROC_DIR": ""}) as served:
        assert httpx.get(f"{served.url}/metrics", timeout=30).status_code == 200
        made = list(tmp.glob("lance-ns-metrics-*"))
        assert len(made) == 1, made  # the workers keep their counters there
        served.stop()
    assert served.proc.returncode is not None
    assert not list(tmp.glob("lance-ns-metrics-*")), "the server's own metrics directory outlived it"
