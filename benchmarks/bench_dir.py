"""Our DirectoryNamespace vs pylance's Rust ``lance.namespace.DirectoryNamespace``.

Both run in the same process on the same machine, on the same directories
(each reads the other's layout), and every ratio printed is ours / theirs
for times (lower is better for us) and ours / theirs for rates.

    python benchmarks/bench_dir.py           # 10k tables (several minutes)
    python benchmarks/bench_dir.py --quick   # 1k tables

Phases:
1. growth: each implementation declares tables one by one into a fresh
   namespace (ours up to N, pylance's up to --rust-growth, default 1000,
   since it slows as its manifest grows); declare rate and manifest size;
2. reads on namespaces of 1k and N tables (the directory ours built in 1)
   and on a root of 1k ``<name>.lance`` tables:
   one unpaged list, one page (limit=100), paged enumeration (limit=100),
   describe, exists, describe from 8 threads;
3. declares into the N-table namespace, create (declare + write data).
"""

from __future__ import annotations

import argparse
import io
import os
import random
import shutil
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa
from lance.namespace import DirectoryNamespace as RustDirectoryNamespace
from lance_namespace import (
    CreateNamespaceRequest,
    CreateTableRequest,
    DeclareTableRequest,
    DescribeTableRequest,
    ListTablesRequest,
    TableExistsRequest,
)

import lance_ns
from common import median_time
from lance_ns.impls.dir.manifest import table_bytes


def dir_size(path: str) -> int:
    return sum(os.path.getsize(os.path.join(p, f)) for p, _, fs in os.walk(path) for f in fs)


def enumerate_all(ns, ns_id, limit=100) -> int:
    count, token = 0, None
    while True:
        resp = ns.list_tables(ListTablesRequest(id=ns_id, limit=limit, page_token=token))
        count += len(resp.tables)
        token = resp.page_token
        if not token:
            return count


def ipc_bytes() -> bytes:
    t = pa.table({"id": pa.array(range(10), pa.int64())})
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, t.schema) as w:
        w.write_table(t)
    return sink.getvalue()


class Report:
    def __init__(self):
        self.rows = []

    def add(self, what: str, ours: float, theirs: float, unit: str, higher_better: bool = False):
        ratio = ours / theirs if theirs else float("inf")
        self.rows.append((what, ours, theirs, unit, ratio, higher_better))
        better = (ratio >= 1) if higher_better else (ratio <= 1)
        print(f"{what:<44} ours {ours:>11.4g} {unit:<6} rust {theirs:>11.4g} {unit:<6} "
              f"ratio {ratio:>7.3f} {'OK' if better else 'slower'}", flush=True)

    def single(self, what: str, ours: float, unit: str, note: str = ""):
        print(f"{what:<44} ours {ours:>11.4g} {unit:<6} {note}", flush=True)


def growth(report: Report, base: str, n: int, rust_n: int) -> tuple[str, float]:
    """Declares into a fresh namespace, one by one; returns our root."""
    ours_root = os.path.join(base, "ours")
    ours = lance_ns.connect("dir", {"root": ours_root})
    ours.create_namespace(CreateNamespaceRequest(id=["big"]))
    chunk = max(n // 10, 1)
    rates = []
    t_all = time.perf_counter()
    for start in range(0, n, chunk):
        t0 = time.perf_counter()
        for i in range(start, min(start + chunk, n)):
            ours.declare_table(DeclareTableRequest(id=["big", f"t{i:05d}"]))
        rates.append(chunk / (time.perf_counter() - t0))
    ours_total = time.perf_counter() - t_all
    report.single(f"ours: declare rate per {chunk} (first..last)", rates[0], "/s",
                  "-> " + ", ".join(f"{r:.0f}" for r in rates[1:]))
    ours_size = table_bytes(ours.manifest.uri, ours.manifest.storage_options)

    rust_root = os.path.join(base, "rust")
    rust = RustDirectoryNamespace(root=rust_root)
    rust.create_namespace(CreateNamespaceRequest(id=["big"]))
    rchunk = max(rust_n // 5, 1)
    rrates = []
    for start in range(0, rust_n, rchunk):
        t0 = time.perf_counter()
        for i in range(start, min(start + rchunk, rust_n)):
            rust.declare_table(DeclareTableRequest(id=["big", f"t{i:05d}"]))
        rrates.append(rchunk / (time.perf_counter() - t0))
    print(f"{'rust: declare rate per ' + str(rchunk) + ' (first..last)':<44} rust {rrates[0]:>11.4g} /s     -> "
          + ", ".join(f"{r:.0f}" for r in rrates[1:]), flush=True)
    rust_size = dir_size(os.path.join(rust_root, "__manifest"))
    ours_at = n
    if rust_n == n:
        report.add(f"manifest bytes at {n} tables", ours_size, rust_size, "B")
    else:
        report.single(f"manifest bytes at {ours_at} tables", ours_size, "B")
        report.single(f"rust manifest bytes at {rust_n} tables", rust_size, "B",
                      f"(rust files: {sum(len(fs) for _, _, fs in os.walk(os.path.join(rust_root, '__manifest')))})")
    report.single(f"ours: average declare rate over {n}", n / ours_total, "/s")
    return ours_root


def reads(report: Report, root: str, ns_id: list[str], n: int, repeat: int):
    ours = lance_ns.connect("dir", {"root": root})
    rust = RustDirectoryNamespace(root=root)
    names = [f"t{i:05d}" for i in range(n)]
    for impl in (ours, rust):  # warm up: open the manifest once
        assert len(impl.list_tables(ListTablesRequest(id=ns_id)).tables) == n
    report.add(f"[{n}] list all (one call)",
               median_time(lambda: ours.list_tables(ListTablesRequest(id=ns_id)), repeat),
               median_time(lambda: rust.list_tables(ListTablesRequest(id=ns_id)), repeat), "s")
    report.add(f"[{n}] list one page (limit=100)",
               median_time(lambda: ours.list_tables(ListTablesRequest(id=ns_id, limit=100)), repeat),
               median_time(lambda: rust.list_tables(ListTablesRequest(id=ns_id, limit=100)), repeat), "s")
    assert enumerate_all(ours, ns_id) == n
    report.add(f"[{n}] paged enumeration (limit=100)",
               median_time(lambda: enumerate_all(ours, ns_id), 1),
               median_time(lambda: enumerate_all(rust, ns_id), 1), "s")
    sample_ids = [ns_id + [random.Random(i).choice(names)] for i in range(200)]

    def describe_all(impl):
        for tid in sample_ids:
            impl.describe_table(DescribeTableRequest(id=tid))

    def exists_all(impl):
        for tid in sample_ids:
            impl.table_exists(TableExistsRequest(id=tid))

    report.add(f"[{n}] describe x200",
               median_time(lambda: describe_all(ours)), median_time(lambda: describe_all(rust)), "s")
    report.add(f"[{n}] exists x200", median_time(lambda: exists_all(ours)), median_time(lambda: exists_all(rust)), "s")

    def threaded(impl):
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda tid: impl.describe_table(DescribeTableRequest(id=tid)), sample_ids * 2))

    report.add(f"[{n}] describe x400 from 8 threads", median_time(lambda: threaded(ours), repeat),
               median_time(lambda: threaded(rust), repeat), "s")


def declares_into(report: Report, root: str, ns_id: list[str], n: int, count: int):
    """Declare rate into an existing n-table namespace (each impl in its own copy)."""
    rates = []
    for label, make in (("ours", lambda r: lance_ns.connect("dir", {"root": r})),
                        ("rust", lambda r: RustDirectoryNamespace(root=r))):
        copy = root + f"-{label}-copy"
        shutil.copytree(root, copy)
        impl = make(copy)
        impl.list_tables(ListTablesRequest(id=ns_id, limit=1))
        t0 = time.perf_counter()
        for i in range(count):
            impl.declare_table(DeclareTableRequest(id=ns_id + [f"new_{label}_{i:04d}"]))
        rates.append(count / (time.perf_counter() - t0))
        shutil.rmtree(copy, ignore_errors=True)
    report.add(f"[{n}] declares into the namespace", rates[0], rates[1], "/s", higher_better=True)


def creates(report: Report, base: str, count: int):
    data = ipc_bytes()
    times = []
    for label, make in (("ours", lambda r: lance_ns.connect("dir", {"root": r})),
                        ("rust", lambda r: RustDirectoryNamespace(root=r))):
        impl = make(os.path.join(base, f"create-{label}"))
        impl.create_namespace(CreateNamespaceRequest(id=["c"]))
        t0 = time.perf_counter()
        for i in range(count):
            impl.create_table(CreateTableRequest(id=["c", f"t{i:04d}"]), data)
        times.append((time.perf_counter() - t0) / count)
    report.add("create_table (declare + write 10 rows)", times[0], times[1], "s/op")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="1k tables instead of 10k")
    ap.add_argument("--tables", type=int, default=None)
    ap.add_argument("--rust-growth", type=int, default=1000, help="tables pylance's impl declares in phase 1")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = ap.parse_args()
    n = args.tables or (1000 if args.quick else 10000)
    rust_n = min(args.rust_growth, n)
    base = tempfile.mkdtemp(prefix="bench-dir-")
    report = Report()
    print(f"tables={n} base={base}", flush=True)
    try:
        print("-- growth", flush=True)
        root = growth(report, base, n, rust_n)
        print("-- reads", flush=True)
        small_root = os.path.join(base, "small")
        small = lance_ns.connect("dir", {"root": small_root})
        small.create_namespace(CreateNamespaceRequest(id=["k1"]))
        for i in range(1000):
            small.declare_table(DeclareTableRequest(id=["k1", f"t{i:05d}"]))
            small.declare_table(DeclareTableRequest(id=[f"t{i:05d}"]))  # root tables: <name>.lance dirs
        reads(report, small_root, ["k1"], 1000, 5)
        print("-- reads at the root (manifest + directory listing)", flush=True)
        reads(report, small_root, [], 1000, 5)
        if n != 1000:
            reads(report, root, ["big"], n, 3)
        print("-- writes", flush=True)
        declares_into(report, root, ["big"], n, 100)
        creates(report, base, 30)
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
