"""`lance-ns serve --workers 2` over a large directory namespace while tables are deregistered.

Every worker process holds the manifest in memory.  A deregistration one worker commits
is a delete in the manifest that the other must read before its next answer, and one
that Lance commits on top of the other worker's commit (two workers writing at once)
must bring its own copy up to date the same way.  Each used to load the whole manifest
again (2.2 s at 1.1M entries): under a steady trickle of deletes a worker spent its time
reloading.  Now each reads the fragments the commits changed.

For a root of 1,000 tables and one of ``--size`` (grown by BatchCommitTables, in one
namespace), one server each, with two workers: ``--clients`` threads call DescribeTable
in a closed loop for ``--seconds``, each call on a connection of its own, quiet, and then
while ``--writers`` more threads each deregister a table every ``--every`` seconds (tables
declared for it beforehand), also each on a connection of its own, so that both workers
commit; the two phases alternate ``--repeats`` times (the machine's drift falls on both).
Printed: describes/s and p99 of each phase, the ratio of the writes phase to the quiet one
(the peer, measured in the same minutes: goal 1.2x, issue 32's bound for the server in
front), and each size against 1,000.

    .venv/bin/python benchmarks/bench_workers.py                      # 100,000 tables (~4 min)
    .venv/bin/python benchmarks/bench_workers.py --size 1000000       # ~10 min, most of it growing
    .venv/bin/python benchmarks/bench_workers.py --root /big/root     # an existing root (namespace "t")
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_rest import closed_loop, start_ours, stop  # noqa: E402
from bench_scale import _p, grow, table_names  # noqa: E402

GOAL = 1.2


def phase(conns, names, seconds: float, deregister=None, every: float = 0.5, writers: int = 1) -> dict:
    """Describes from each client in a closed loop; with ``deregister``, ``writers`` more
    threads each deregister a table every ``every`` seconds meanwhile."""
    stop_writes = threading.Event()
    writes = [0] * writers

    def writer(k: int):
        while not stop_writes.wait(every):
            deregister(k)
            writes[k] += 1

    counters = [iter(range(k, 10**9, len(conns))) for k in range(len(conns))]
    calls = [lambda c=c, n=n: c(names[next(n) % len(names)]) for c, n in zip(conns, counters)]
    threads = [threading.Thread(target=writer, args=(k,)) for k in range(writers)] if deregister else []
    for thread in threads:
        thread.start()
    try:
        cell = closed_loop(calls, seconds)
    finally:
        stop_writes.set()
        for thread in threads:
            thread.join()
    if cell["errors"]:
        raise RuntimeError(f"{cell['errors']} failed describes")
    lat = cell["lat"]
    return {"rate": len(lat) / cell["elapsed"], "p99": _p(lat, 0.99), "max": max(lat), "writes": sum(writes)}


def measure(root: str, size: int, args) -> dict:
    import lance_ns

    proc, url = start_ours(root, threads=8, extra=("--workers", "2"))
    try:
        # a connection per describe, as from many short-lived clients (Spark tasks): the kernel
        # spreads them over the workers; a client's kept-alive connection would stay on one
        # worker, and a worker stalled by a reload would hold up only the clients it happens to have
        def post(name: str, operation: str) -> None:
            request = urllib.request.Request(f"{url}/v1/table/t${name}/{operation}", data=b"{}", method="POST",
                                             headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=120) as response:
                response.read()

        def describe(name: str) -> None:
            post(name, "describe")

        conns = [describe] * args.clients
        writer = lance_ns.connect("rest", {"uri": url, "max_retries": 0})
        tag = os.urandom(3).hex()
        victims = iter(f"gone_{tag}_{i}" for i in range(10**9))
        wanted = int(args.seconds / args.every * args.repeats) + 10
        # each writer's tables declared by a batch of their own: in a fragment of their own, as
        # tables declared at different times are (two workers' deletes then touch different
        # fragments, and Lance commits one on top of the other instead of refusing it)
        pending = [[next(victims) for _ in range(wanted)] for _ in range(args.writers)]
        for batch in pending:
            writer.batch_commit_tables({"operations": [{"declare_table": {"id": ["t", n]}} for n in batch]})
        left = [iter(batch) for batch in pending]
        names = []
        for name in table_names(size, 200):  # (a root given may have lost some: those are not asked for)
            try:
                writer.describe_table({"id": ["t", name]})
                names.append(name)
            except lance_ns.errors.TableNotFoundError:
                pass
        # both workers answer from a loaded manifest before anything is timed (a cold worker
        # answers its first reads by a scan and loads on a thread)
        deadline = time.time() + 300
        while time.time() < deadline:
            t = time.perf_counter()
            for c in conns:
                c(names[0])
            if time.perf_counter() - t < 0.05 * len(conns):
                break
        time.sleep(args.warm)
        quiet, busy = [], []
        for r in range(args.repeats):
            order = ("quiet", "busy") if r % 2 == 0 else ("busy", "quiet")
            for which in order:
                if which == "quiet":
                    quiet.append(phase(conns, names, args.seconds))
                else:
                    # a connection per deregistration too: each worker commits some, and reads the others'
                    busy.append(phase(conns, names, args.seconds,
                                      lambda k: post(next(left[k]), "deregister"), args.every, args.writers))
        return {
            "quiet": {k: statistics.median(c[k] for c in quiet) for k in ("rate", "p99", "max")},
            "busy": {k: statistics.median(c[k] for c in busy) for k in ("rate", "p99", "max")},
            "writes": sum(c["writes"] for c in busy),
        }
    finally:
        stop(proc)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=100_000, help="tables of the large root (default 100,000)")
    ap.add_argument("--root", help="an existing large root to use (tables in namespace 't'), instead of growing one")
    ap.add_argument("--clients", type=int, default=4, help="describing clients (default 4)")
    ap.add_argument("--seconds", type=float, default=15, help="seconds per phase (default 15)")
    ap.add_argument("--every", type=float, default=0.5, help="seconds between a writer's deregistrations (default 0.5)")
    ap.add_argument("--writers", type=int, default=1,
                    help="deregistering threads (default 1); with 2 or more, commits of the two workers land on "
                         "top of each other's")
    ap.add_argument("--repeats", type=int, default=2, help="quiet/busy pairs per root (default 2)")
    ap.add_argument("--warm", type=float, default=20, help="seconds for the workers' background loads")
    ap.add_argument("--batch", type=int, default=10_000)
    args = ap.parse_args()

    import lance_ns

    made = []
    try:
        roots = {}
        for size, given in ((1_000, None), (args.size, args.root)):
            if given:
                roots[size] = given
                continue
            root = tempfile.mkdtemp(prefix=f"bench-workers-{size}-")
            made.append(root)
            ns = lance_ns.connect("dir", {"root": root})
            ns.create_namespace({"id": ["t"]})
            rate = grow(ns, 0, size, args.batch)
            print(f"grew {size:,} tables ({rate:,.0f}/s)", flush=True)
            roots[size] = root
        results = {size: measure(root, size, args) for size, root in roots.items()}
    finally:
        for root in made:
            shutil.rmtree(root, ignore_errors=True)

    print(f"\nlance-ns serve --workers 2, {args.clients} clients describing; busy: {args.writers} thread(s) each "
          f"deregistering a table every {args.every} s (goal: busy within {GOAL}x of quiet)")
    base = results[1_000]
    for size, r in results.items():
        q, b = r["quiet"], r["busy"]
        ratio = q["rate"] / b["rate"]
        print(f"{size:>10,} tables: quiet {q['rate']:,.0f}/s p99 {q['p99'] * 1e3:.1f} ms max {q['max'] * 1e3:.0f} ms | "
              f"busy {b['rate']:,.0f}/s p99 {b['p99'] * 1e3:.1f} ms max {b['max'] * 1e3:.0f} ms "
              f"({r['writes']} deregistrations) | quiet/busy {ratio:.2f}x{'' if ratio <= GOAL else ' !'} | "
              f"busy at 1,000 / busy here: {base['busy']['rate'] / b['rate']:.2f}x")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    main()
