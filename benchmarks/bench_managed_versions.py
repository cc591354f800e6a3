"""What an append to an implementation-managed table costs as the table ages: ours (``dir``,
``managed_versioning=true``) against pylance's Rust DirectoryNamespace with
``table_version_tracking_enabled=true`` (its managed mode), both through pylance's
``write_dataset(namespace_client=...)``, and the limit: an append straight to storage (no
namespace at all).

    python benchmarks/bench_managed_versions.py [--versions 10,100,1000] [--appends 20]

Each table is grown to each count of versions, then timed over ``--appends`` appends (of one
row each), the three alternated append by append so they see the same machine.  Printed:
milliseconds an append, and ours as throughput against pylance's and against the limit.  A
namespace that reads a table's whole history on every commit shows here as a cost growing with
the versions (ours did: ~7 ms an append at 10 versions, 26 ms at 1,000, as pylance's does, before
its version reads went to an index and its records were parsed once: 12-13 ms at 1,000).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

import lance
import pyarrow as pa
from lance.namespace import DirectoryNamespace as PylanceDirectoryNamespace
from lance_namespace import CreateNamespaceRequest, DeclareTableRequest

import lance_ns

ROW = pa.table({"x": pa.array([1], pa.int64())})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--versions", default="10,100,1000", help="versions to grow each table to, comma-separated")
    parser.add_argument("--appends", type=int, default=20, help="appends timed at each count")
    args = parser.parse_args()
    counts = sorted(int(v) for v in args.versions.split(","))
    with tempfile.TemporaryDirectory() as root:
        ours = lance_ns.connect("dir", {"root": f"{root}/ours"})
        theirs = PylanceDirectoryNamespace(root=f"{root}/theirs", manifest_enabled="true",
                                           table_version_tracking_enabled="true")
        tid = ["s", "t"]
        ours.create_namespace(CreateNamespaceRequest(id=["s"]))
        ours.declare_table(DeclareTableRequest(id=tid, properties={"managed_versioning": "true"}))
        lance.write_dataset(ROW, namespace_client=ours, table_id=tid, mode="append")  # version 1, as the others
        theirs.create_namespace(CreateNamespaceRequest(id=["s"]))
        lance.write_dataset(ROW, namespace_client=theirs, table_id=tid, mode="create")
        plain = f"{root}/plain.lance"
        lance.write_dataset(ROW, plain, mode="create")
        writers = {
            "ours": lambda: lance.write_dataset(ROW, namespace_client=ours, table_id=tid, mode="append"),
            "pylance": lambda: lance.write_dataset(ROW, namespace_client=theirs, table_id=tid, mode="append"),
            "storage": lambda: lance.write_dataset(ROW, plain, mode="append"),
        }
        print(f"ms an append of one row ({args.appends} timed at each count, alternated); ratios are throughput")
        print(f"{'versions':>8} {'ours':>8} {'pylance':>8} {'storage':>8}  {'ours/pylance':>12} {'ours/storage':>12}")
        held = 1
        for count in counts:
            for _ in range(count - held):  # grow every table to ``count`` versions
                for write in writers.values():
                    write()
            held = count
            times: dict[str, list[float]] = {name: [] for name in writers}
            for _ in range(args.appends):
                for name, write in writers.items():
                    start = time.perf_counter()
                    write()
                    times[name].append(time.perf_counter() - start)
            held += args.appends
            ms = {name: statistics.median(t) * 1000 for name, t in times.items()}
            print(f"{count:>8} {ms['ours']:8.2f} {ms['pylance']:8.2f} {ms['storage']:8.2f}  "
                  f"{ms['pylance'] / ms['ours']:12.2f} {ms['storage'] / ms['ours']:12.2f}")
        assert ours.describe_table({"id": tid}).version == held  # every append landed
        ours.close()


if __name__ == "__main__":
    main()
