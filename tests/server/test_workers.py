"""Several processes (issue 19.4): ``lance-ns serve --workers 2`` over one dir root keeps
the one-winner rule under concurrent conflicting load, and loses no entry."""

from __future__ import annotations

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
