"""Sync throughput in register mode: tables a second moved from one namespace to another,
against the limit, the destination's own RegisterTable called directly for the same tables.

    python benchmarks/bench_sync.py [--tables 500] [--repeat 5] [--src dir] [--dst memory|dir]

A sync must at least register every table at the destination, so the limit is one
RegisterTable per table on the destination itself (same backend, same tables, fresh
destination each sample).  Sync also reads the source (a tree walk, DescribeNamespace and
DescribeTable per item) and asks the destination what it holds before planning; the ratio
shows what planning, resumability and the checks cost on top.  The samples alternate
(``timed_pair``) so both see the same machine; medians are compared, throughput
sync / limit.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from itertools import count

import pyarrow as pa

import lance_ns
from common import timed_pair
from lance_ns import sync
from lance_ns.datasets import table_to_ipc_stream


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=300, help="tables in the source (in 10 namespaces; one row each)")
    parser.add_argument("--repeat", type=int, default=5, help="samples of each")
    parser.add_argument("--src", choices=("dir", "memory"), default="dir")
    parser.add_argument("--dst", choices=("dir", "memory"), default="memory")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        src = lance_ns.connect(args.src, {"root": f"{tmp}/src"})
        spaces = [f"ns{i}" for i in range(10)]
        for space in spaces:
            src.create_namespace({"id": [space]})
        ids = [[spaces[i % 10], f"t{i}"] for i in range(args.tables)]
        one_row = table_to_ipc_stream(pa.table({"x": [1]}))
        for table_id in ids:
            src.create_table({"id": table_id}, one_row)
        locations = {tuple(t): src.describe_table({"id": t}).location for t in ids}
        fresh = count()

        def destination():
            props = {"root": f"{tmp}/dst{next(fresh)}", "allow_external_locations": "true"}
            return lance_ns.connect(args.dst, props)

        def run_sync():
            report = sync.sync(src, destination(), mode="register")
            assert len(report.done) == len(ids) + len(spaces) and not report.failed

        def run_limit():
            dst = destination()
            for space in spaces:
                dst.create_namespace({"id": [space]})
            for table_id in ids:
                dst.register_table({"id": table_id, "location": locations[tuple(table_id)]})

        print(f"{args.tables} tables in {len(spaces)} namespaces, {args.src} -> {args.dst}, "
              f"{args.repeat} samples each, alternated")
        limit, synced = timed_pair(run_limit, run_sync, args.repeat)
        per_limit, per_sync = statistics.median(limit), statistics.median(synced)
        print(f"limit (RegisterTable on the destination) {args.tables / per_limit:8.0f} tables/s")
        print(f"sync --mode register                     {args.tables / per_sync:8.0f} tables/s")
        print(f"throughput sync / limit {per_limit / per_sync:.2f}")


if __name__ == "__main__":
    main()
