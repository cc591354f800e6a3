"""End-to-end Spark pipeline on Lance tables addressed through a namespace.

    python examples/pipeline.py                        # directory namespace in a temp dir
    python examples/pipeline.py --root /tmp/lake --rows 1000000
    python examples/pipeline.py --rest-uri http://127.0.0.1:2333   # any Lance REST server
    python examples/pipeline.py --master spark://127.0.0.1:7077 --conf spark.driver.host=127.0.0.1

1. generate a click-stream of ``--rows`` events with Spark;
2. write it as ``analytics.events`` (the table is declared in the namespace);
3. transform: per-user daily totals, written as ``analytics.daily_totals``;
4. read both back by identifier (with filter pushdown and column selection)
   and print a summary.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time

import lance_ns
from lance_namespace import CreateNamespaceRequest, ListTablesRequest
from lance_ns.errors import NamespaceAlreadyExistsError


def namespace_options(args) -> dict[str, str]:
    if args.rest_uri:
        return {"impl": "rest", "rest.uri": args.rest_uri}
    return {"impl": "dir", "dir.root": args.root or tempfile.mkdtemp(prefix="lance-ns-pipeline-")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", help="directory namespace root (default: a new temp dir)")
    parser.add_argument("--rest-uri", help="use a Lance REST namespace server instead")
    parser.add_argument("--rows", type=int, default=200_000, help="events to generate (default 200000)")
    parser.add_argument("--namespace", default="analytics", help="namespace for the tables")
    parser.add_argument("--master", default="local[2]", help="Spark master URL (default local[2])")
    parser.add_argument(
        "--conf", action="append", default=[], metavar="KEY=VALUE", help="a Spark setting (repeatable)"
    )
    args = parser.parse_args(argv)

    started = time.monotonic()
    options = namespace_options(args)
    ns = lance_ns.from_config(options)
    try:
        ns.create_namespace(CreateNamespaceRequest(id=[args.namespace]))
    except NamespaceAlreadyExistsError:
        pass

    from lance_ns.spark import build_session, count

    conf = {"spark.sql.session.timeZone": "UTC", **dict(c.split("=", 1) for c in args.conf)}
    spark = build_session(args.master, "lance-ns-pipeline", conf)
    spark.sparkContext.setLogLevel("ERROR")
    events_id, totals_id = f"{args.namespace}.events", f"{args.namespace}.daily_totals"

    # 1-2. generate and write the raw events
    events = spark.range(0, args.rows, numPartitions=2).selectExpr(
        "id AS event_id",
        "cast(id * 7919 % 5000 AS long) AS user_id",
        "element_at(array('view', 'click', 'cart', 'buy'), cast(id % 4 AS int) + 1) AS kind",
        "cast(round((id * 31 % 10000) / 100.0, 2) AS double) AS amount",
        "date_add(date'2025-01-01', cast(id % 30 AS int)) AS day",
    )
    t = time.monotonic()
    events.write.format("lance").mode("overwrite").options(**options).save(events_id)
    write_s = time.monotonic() - t

    # 3. transform: read back through the namespace, aggregate, write
    src = spark.read.format("lance").options(**options).load(events_id)
    totals = (
        src.filter("kind IN ('cart', 'buy')")  # pushed down to Lance
        .groupBy("user_id", "day")
        .agg({"amount": "sum", "event_id": "count"})
        .withColumnRenamed("sum(amount)", "spent")
        .withColumnRenamed("count(event_id)", "purchases")
    )
    totals.write.format("lance").mode("overwrite").options(**options).save(totals_id)

    # 4. read back and summarise
    n_events = count(events_id, options)
    n_totals = count(totals_id, options)
    spent = spark.read.format("lance").options(**options).option("columns", "spent").load(totals_id)
    total_spent = spent.agg({"spent": "sum"}).first()[0]
    top = (
        spark.read.format("lance").options(**options).load(totals_id)
        .groupBy("user_id").sum("spent").orderBy("sum(spent)", ascending=False).limit(3).collect()
    )
    expected = events.filter("kind IN ('cart', 'buy')").agg({"amount": "sum"}).first()[0]
    ok = n_events == args.rows and abs(total_spent - expected) < 1e-6 * max(1.0, abs(expected))

    tables = ns.list_tables(ListTablesRequest(id=[args.namespace])).tables
    print(f"namespace: {options}")
    print(f"{events_id}: {n_events} rows (written in {write_s:.1f}s)")
    print(f"{totals_id}: {n_totals} rows, total spent {total_spent:.2f}")
    print("top spenders: " + ", ".join(f"user {r[0]} ({r[1]:.2f})" for r in top))
    print(f"tables in {args.namespace}: {tables}")
    print(f"check: {'OK' if ok else 'MISMATCH'} in {time.monotonic() - started:.1f}s")
    spark.stop()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
