"""Per-operation latency of the Glue namespace vs the raw boto3 calls (moto).

"raw" times a plain boto3 Glue client making the minimal call that answers the
same question; "lance-ns" times ``GlueNamespace`` doing the operation with its
checks (namespace exists, Lance-table filter, sorting).  ``ratio`` = lance-ns /
raw medians; ``calls`` = Glue requests lance-ns makes vs raw.  moto is local,
so this measures our overhead per request, not AWS latency.

    .venv/bin/python benchmarks/bench_glue.py            # starts its own moto server
    .venv/bin/python benchmarks/bench_glue.py -n 300 --tables 50
"""

from __future__ import annotations

import argparse
import sys
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for tests.services.moto

import boto3  # noqa: E402

import lance_ns  # noqa: E402
from common import median_time  # noqa: E402
from tests.services.moto import ACCOUNT_ID, REGION, client_kwargs, moto_server  # noqa: E402


def count_calls(client, fn) -> int:
    seen = []

    def count(**kwargs):
        seen.append(1)

    client.meta.events.register("before-send.glue", count)
    fn()
    client.meta.events.unregister("before-send.glue", count)
    return len(seen)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=100, help="repetitions per operation")
    ap.add_argument("--tables", type=int, default=20, help="tables in the listed database")
    args = ap.parse_args()
    with moto_server() as endpoint:
        raw = boto3.client("glue", **client_kwargs(endpoint))
        ns = lance_ns.connect(
            "glue",
            {"endpoint": endpoint, "region": REGION, "catalog_id": ACCOUNT_ID,
             "access_key_id": "testing", "secret_access_key": "testing", "root": "s3://bench/wh"},
        )  # fmt: skip
        db = f"bench_{uuid.uuid4().hex[:8]}"
        ns.create_namespace({"id": [db]})
        for i in range(args.tables):
            ns.declare_table({"id": [db, f"t{i:03d}"]})
        ns.list_namespaces({"id": []})  # warm-up (and the catalog-API probe)
        ops = {
            "DescribeNamespace": (lambda: ns.describe_namespace({"id": [db]}), lambda: raw.get_database(Name=db)),
            "DescribeTable": (
                lambda: ns.describe_table({"id": [db, "t000"]}),
                lambda: raw.get_table(DatabaseName=db, Name="t000"),
            ),
            "TableExists": (
                lambda: ns.table_exists({"id": [db, "t000"]}),
                lambda: raw.get_table(DatabaseName=db, Name="t000"),
            ),
            f"ListTables({args.tables})": (
                lambda: ns.list_tables({"id": [db]}),
                lambda: raw.get_tables(DatabaseName=db),
            ),
            "ListNamespaces": (lambda: ns.list_namespaces({"id": []}), lambda: raw.get_databases()),
        }
        print(f"{'operation':<18} {'raw ms':>8} {'lance-ns ms':>12} {'ratio':>6} {'calls':>6}")
        for name, (ours, theirs) in ops.items():
            r = median_time(theirs, args.n) * 1000
            o = median_time(ours, args.n) * 1000
            calls = f"{count_calls(ns.glue, ours)}/{count_calls(raw, theirs)}"
            print(f"{name:<18} {r:8.2f} {o:12.2f} {o / r:6.2f} {calls:>6}")
        for i in range(args.tables):
            ns.deregister_table({"id": [db, f"t{i:03d}"]})
        ns.drop_namespace({"id": [db]})


if __name__ == "__main__":
    main()
