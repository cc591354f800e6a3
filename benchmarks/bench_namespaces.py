"""The directory namespace with many namespaces: 1k, 10k and 100k namespaces of 10 tables
each in one root, each figure printed as the ratio to its value at 1k namespaces.

    python benchmarks/bench_namespaces.py              # 1k, 10k, 100k namespaces (~15 min)
    python benchmarks/bench_namespaces.py --quick      # 1k and 10k

Issue 32's other shape of a multi-tenant lake (goal 1: "and 100,000 namespaces of 10
tables"), beside ``bench_scale.py``'s one namespace of a million tables.  The root is
grown through the public API only: CreateNamespace one at a time (the spec has no bulk
form), then the tables by BatchCommitTables of ``--batch`` DeclareTable operations spread
over the namespaces.  At every size it measures on the grown root, median and p99 per
call (goal: within 1.5x of the value at 1k namespaces, p99 included):

* DescribeNamespace, NamespaceExists and the first and a middle page of 100 of the
  root's ListNamespaces (which lists every namespace);
* DescribeTable, TableExists and ListTables of a namespace (its 10 tables);
* CreateNamespace and DropNamespace (of a new, empty one), DeclareTable into an
  existing namespace and DeregisterTable of it;
* cold start: a new process (interpreter and imports included) answering its first
  DescribeTable, and the resident memory it holds once its manifest is loaded;
* the rates the root grew at: namespaces/s (one by one) and tables/s (bulk).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_scale import GOAL, _interleaved, _p, cold_start  # noqa: E402

TABLES_PER = 10


def grow(ns, start: int, size: int, batch: int) -> tuple[float, float]:
    """Namespaces n<start>..n<size-1> (one by one), then their tables (in bulk):
    (namespaces/s, tables/s)."""
    t = time.perf_counter()
    for k in range(start, size):
        ns.create_namespace({"id": [f"n{k}"]})
    ns_rate = (size - start) / (time.perf_counter() - t)
    ids = [[f"n{k}", f"t{j}"] for k in range(start, size) for j in range(TABLES_PER)]
    t = time.perf_counter()
    for lo in range(0, len(ids), batch):
        ns.batch_commit_tables({"operations": [{"declare_table": {"id": i}} for i in ids[lo:lo + batch]]})
    ns.manifest.wait_for_upkeep()  # (bench_scale.grow says why)
    return ns_rate, len(ids) / (time.perf_counter() - t)


def _calls(fn, n: int) -> list[float]:
    """Seconds taken by each of ``fn(0)`` .. ``fn(n - 1)`` (bench_scale's timing loop, one label)."""
    return _interleaved({"calls": fn}, n)["calls"]


def measure(ns, root: str, size: int, rounds: int) -> dict:
    picks = [f"n{(k * 7919) % size}" for k in range(rounds)]  # spread over the root
    middle = ns.list_namespaces({"id": [], "limit": 100, "page_token": f"n{size // 2}"}).page_token or ""
    fig = {
        "describe_ns": _calls(lambda i: ns.describe_namespace({"id": [picks[i % rounds]]}), rounds * 4),
        "ns_exists": _calls(lambda i: ns.namespace_exists({"id": [picks[i % rounds]]}), rounds * 4),
        "ns_page_first": _calls(lambda i: ns.list_namespaces({"id": [], "limit": 100}), rounds * 4),
        "ns_page_middle": _calls(lambda i: ns.list_namespaces({"id": [], "limit": 100, "page_token": middle}),
                                 rounds * 4),
        "describe": _calls(lambda i: ns.describe_table({"id": [picks[i % rounds], f"t{i % TABLES_PER}"]}), rounds * 4),
        "exists": _calls(lambda i: ns.table_exists({"id": [picks[i % rounds], f"t{i % TABLES_PER}"]}), rounds * 4),
        "list_tables": _calls(lambda i: ns.list_tables({"id": [picks[i % rounds]]}), rounds * 4),
        "create_ns": _calls(lambda i: ns.create_namespace({"id": [f"new{size}_{i}"]}), rounds),
        "declare": _calls(lambda i: ns.declare_table({"id": [picks[i], f"d{size}"]}), rounds),
        "drop": _calls(lambda i: ns.deregister_table({"id": [picks[i], f"d{size}"]}), rounds),
        "drop_ns": _calls(lambda i: ns.drop_namespace({"id": [f"new{size}_{i}"]}), rounds),
    }
    ns.manifest.wait_for_upkeep()  # a compaction still running here is not a new process's cost
    os.sync()
    cold = [cold_start(root, "t0", namespace=picks[i]) for i in range(3)]
    return {
        **{k: (statistics.median(v), _p(v, 0.99)) for k, v in fig.items()},
        "cold": (statistics.median(c["wall"] for c in cold), max(c["wall"] for c in cold)),
        "rss_mb": max(c["rss_mb"] for c in cold),
    }


LABELS = (("describe_ns", "DescribeNamespace"), ("ns_exists", "NamespaceExists"),
          ("ns_page_first", "ListNamespaces page 1"), ("ns_page_middle", "ListNamespaces middle"),
          ("describe", "DescribeTable"), ("exists", "TableExists"), ("list_tables", "ListTables (10)"),
          ("create_ns", "CreateNamespace"), ("drop_ns", "DropNamespace"), ("declare", "DeclareTable"),
          ("drop", "DeregisterTable"), ("cold", "cold start"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="stop at 10,000 namespaces")
    ap.add_argument("--sizes", help="comma-separated numbers of namespaces (default 1000,10000[,100000])")
    ap.add_argument("--batch", type=int, default=10_000, help="tables per bulk BatchCommitTables")
    ap.add_argument("--rounds", type=int, default=20, help="calls per figure and size (reads: 4x as many)")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else (
        [1_000, 10_000] + ([] if args.quick else [100_000]))

    import lance_ns

    root = tempfile.mkdtemp(prefix="scale-namespaces-")
    try:
        ns = lance_ns.connect("dir", {"root": root})
        # the first calls of a process import and cache what later sizes reuse: warm them on a root of its own
        warm = tempfile.mkdtemp(prefix="scale-namespaces-warm-")
        try:
            warm_ns = lance_ns.connect("dir", {"root": warm})
            grow(warm_ns, 0, 100, args.batch)
            measure(warm_ns, warm, 100, args.rounds)
        finally:
            shutil.rmtree(warm, ignore_errors=True)
        results, have = {}, 0
        for size in sizes:
            ns_rate, table_rate = grow(ns, have, size, args.batch)
            have = size
            results[size] = {"ns_rate": ns_rate, "table_rate": table_rate, **measure(ns, root, size, args.rounds)}
            print(f"  {size:>7,} namespaces ({size * TABLES_PER:,} tables): created {ns_rate:,.0f}/s, "
                  f"tables declared {table_rate:,.0f}/s, describe {results[size]['describe'][0] * 1e6:.0f} us, "
                  f"cold start {results[size]['cold'][0]:.2f} s, {results[size]['rss_mb']:.0f} MB", flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)

    base = results[sizes[0]]
    print(f"\nlance-ns dir, namespaces of {TABLES_PER} tables; ratio = value / value at {sizes[0]:,} namespaces "
          f"(goal <= {GOAL}x)")
    print(f"{'figure':<30}" + "".join(f"{s:>14,}" for s in sizes))
    for key, label in LABELS:
        for q, qname in ((0, "median"), (1, "p99" if key != "cold" else "max")):
            row = f"{label + ' ' + qname:<30}"
            for s in sizes:
                r = results[s][key][q] / base[key][q]
                row += f"{r:>10.2f}x{'' if r <= GOAL else ' !':<3}"
            print(row)
    print(f"{'namespaces created /s':<30}" + "".join(f"{results[s]['ns_rate']:>14,.0f}" for s in sizes)
          + "   (one CreateNamespace at a time, while growing)")
    print(f"{'tables declared /s':<30}" + "".join(f"{results[s]['table_rate']:>14,.0f}" for s in sizes)
          + "   (bulk, spread over the namespaces)")
    print(f"{'cold-start memory MB':<30}" + "".join(f"{results[s]['rss_mb']:>14.0f}" for s in sizes)
          + "   (goal < 1024)")
    print("absolute at the first size: " + ", ".join(f"{label} {base[key][0] * 1e3:.2f} ms" for key, label in LABELS))


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    main()
