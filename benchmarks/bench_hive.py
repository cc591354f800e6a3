"""Per-operation latency of the Hive namespace vs the raw Thrift calls.

For each namespace operation, the "raw" column times the plain generated
Thrift client (pymetastore, one connection) doing the minimal calls that
answer the same question; "lance-ns" times ``Hive2Namespace`` (pool of 3)
doing the operation, including its checks (parent exists, Lance-table
filter, ...).  ``ratio`` = lance-ns / raw medians; ``rt`` = Thrift round trips
lance-ns makes vs raw.

    .venv/bin/python benchmarks/bench_hive.py            # starts its own HMS 2.3
    .venv/bin/python benchmarks/bench_hive.py --uri thrift://127.0.0.1:9083 -n 300
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for tests.services.hms

import lance_ns  # noqa: E402
from common import timed_pair  # noqa: E402
from pymetastore.hive_metastore import ttypes as hms  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--uri", help="thrift://host:port of a running metastore (default: start HMS 2.3)")
    ap.add_argument("-n", type=int, default=200, help="iterations per operation")
    ap.add_argument("--tables", type=int, default=10, help="tables in the listed database")
    args = ap.parse_args()

    from tests.services.hms import HiveMetastore

    server = None
    uri = args.uri
    if not uri:
        server = HiveMetastore(tempfile.mkdtemp(prefix="bench-hms-")).start()
        uri = server.uri
    host, port = uri.removeprefix("thrift://").split(":")
    from tests.hive.conftest import raw_client

    raw, transport = raw_client(host, int(port))
    root = tempfile.mkdtemp(prefix="bench-hive-root-")
    ns = lance_ns.connect("hive2", {"uri": uri, "root": root})
    db = f"bench{uuid.uuid4().hex[:8]}"
    ns.create_namespace({"id": [db]})
    for i in range(args.tables):
        ns.declare_table({"id": [db, f"t{i:03d}"]})
    names = raw.get_all_tables(db)
    template = raw.get_table(db, "t000")

    def raw_create():
        t = hms.Table(
            tableName="tnew",
            dbName=db,
            tableType="EXTERNAL_TABLE",
            parameters={"EXTERNAL": "TRUE", "table_type": "lance"},
            partitionKeys=[],
            sd=hms.StorageDescriptor(cols=[], location=f"{root}/{db}/tnew.lance", serdeInfo=hms.SerDeInfo(parameters={})),
        )
        raw.create_table(t)

    def drop_new():
        try:
            raw.drop_table(db, "tnew", False)
        except hms.NoSuchObjectException:
            pass

    # name: (lance-ns op, raw equivalent, setup before each, round trips ns/raw)
    cases = {
        "DescribeNamespace": (lambda: ns.describe_namespace({"id": [db]}), lambda: raw.get_database(db), None, "1/1"),
        "ListNamespaces": (lambda: ns.list_namespaces({"id": []}), lambda: raw.get_all_databases(), None, "1/1"),
        "NamespaceExists": (lambda: ns.namespace_exists({"id": [db]}), lambda: raw.get_database(db), None, "1/1"),
        "DescribeTable": (lambda: ns.describe_table({"id": [db, "t000"]}), lambda: raw.get_table(db, "t000"), None, "1/1"),
        "TableExists": (lambda: ns.table_exists({"id": [db, "t000"]}), lambda: raw.get_table(db, "t000"), None, "1/1"),
        f"ListTables ({args.tables})": (
            lambda: ns.list_tables({"id": [db]}),
            lambda: raw.get_table_objects_by_name(db, raw.get_all_tables(db)),
            None,
            "3/2",
        ),
        "DeclareTable": (lambda: ns.declare_table({"id": [db, "tnew"]}), raw_create, drop_new, "3/1"),
    }
    assert template.tableType == "EXTERNAL_TABLE" and len(names) == args.tables

    print(f"metastore {uri}, n={args.n}, medians in ms (p90 in brackets)")
    print(f"{'operation':<20} {'raw':>14} {'lance-ns':>14} {'ratio':>6} {'rt':>5}")
    for name, (op, raw_op, setup, rt) in cases.items():
        for _ in range(10):  # warm-up
            if setup:
                setup()
            op()
            if setup:
                setup()
            raw_op()
        r, o = timed_pair(raw_op, op, args.n, setup)
        mr, mo = statistics.median(r) * 1e3, statistics.median(o) * 1e3
        pr, po = statistics.quantiles(r, n=10)[-1] * 1e3, statistics.quantiles(o, n=10)[-1] * 1e3
        print(f"{name:<20} {mr:6.2f} [{pr:5.2f}] {mo:6.2f} [{po:5.2f}] {mo / mr:6.2f} {rt:>5}")
    drop_new()
    ns.drop_namespace({"id": [db], "behavior": "Cascade"})
    ns.close()
    transport.close()
    if server:
        server.stop()


if __name__ == "__main__":
    main()
