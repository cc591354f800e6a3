"""ListTables on the Iceberg REST backend: 1,000 tables against a real
SeaweedFS (``weed mini``), per concurrency of the metadata loads.

ListTables must load a table's metadata to see ``table_type=lance`` (the
Iceberg list answers names only), so it costs one GET per table; the backend
runs those on a thread pool (property ``list_concurrency``, default 16), and a
page of ``limit`` tables loads only the ``limit + 1`` tables it needs.

    .venv/bin/python benchmarks/bench_iceberg.py [--tables 1000] [--repeat 3] [--page 100]

Prints one line per concurrency: best and median seconds of a full ListTables
and of its first page of ``--page`` tables, measured interleaved in the same
run, and the ratio first page / full listing (issue 16: at most 0.15 for a
page of 100 from 1,000 tables).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import lance_ns  # noqa: E402
from tests.conformance.backends.iceberg import client_properties  # noqa: E402
from tests.services.seaweedfs import seaweedfs_server  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tables", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--concurrency", default="1,4,16,32")
    ap.add_argument("--page", type=int, default=100)
    args = ap.parse_args()

    with seaweedfs_server() as server:
        props = client_properties(server)
        setup = lance_ns.connect("iceberg", {**props, "list_concurrency": "32"})
        ns = [server.warehouse, f"bench{uuid.uuid4().hex[:8]}"]
        setup.create_namespace({"id": ns})
        t0 = time.perf_counter()
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda i: setup.declare_table({"id": ns + [f"t{i:05d}"]}), range(args.tables)))
        print(f"declared {args.tables} tables in {time.perf_counter() - t0:.1f} s")

        for workers in (int(w) for w in args.concurrency.split(",")):
            client = lance_ns.connect("iceberg", {**props, "list_concurrency": str(workers)})
            client.list_tables({"id": ns, "limit": 1})  # warm: config, token, connections
            full, first = [], []
            for _ in range(args.repeat):  # interleaved: both see the same machine load
                t0 = time.perf_counter()
                got = client.list_tables({"id": ns}).tables
                full.append(time.perf_counter() - t0)
                assert len(got) == args.tables, len(got)
                t0 = time.perf_counter()
                page = client.list_tables({"id": ns, "limit": args.page})
                first.append(time.perf_counter() - t0)
                assert page.tables == got[: args.page] and page.page_token == got[args.page - 1], page.page_token
            print(
                f"list_concurrency={workers:>2}: all {args.tables} tables best {min(full):.2f} s, "
                f"median {statistics.median(full):.2f} s; first page of {args.page} best {min(first):.3f} s, "
                f"median {statistics.median(first):.3f} s; first page / all: "
                f"{min(first) / min(full):.3f} (best), {statistics.median(first) / statistics.median(full):.3f} (median)"
            )
            client.close()


if __name__ == "__main__":
    main()
