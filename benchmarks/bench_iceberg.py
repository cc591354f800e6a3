"""ListTables on the Iceberg REST backend: 1,000 tables against a real
SeaweedFS (``weed mini``), per concurrency of the metadata loads.

ListTables must load every table's metadata to see ``table_type=lance``
(the Iceberg list answers names only), so it costs one GET per table; the
backend runs those on a thread pool (property ``list_concurrency``, default 16).

    .venv/bin/python benchmarks/bench_iceberg.py [--tables 1000] [--repeat 3]

Prints one line per concurrency: best and median seconds of ListTables.
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
from tests.servers.seaweedfs import seaweedfs_server  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tables", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--concurrency", default="1,4,16,32")
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
            times = []
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                got = client.list_tables({"id": ns}).tables
                times.append(time.perf_counter() - t0)
                assert len(got) == args.tables, len(got)
            print(
                f"list_tables of {args.tables} tables, list_concurrency={workers:>2}: "
                f"best {min(times):.2f} s, median {statistics.median(times):.2f} s"
            )


if __name__ == "__main__":
    main()
