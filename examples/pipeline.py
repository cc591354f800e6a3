"""End-to-end Spark pipeline on Lance tables, addressed in SQL through a lance-ns catalog.

    python examples/pipeline.py                        # directory namespace in a temp dir
    python examples/pipeline.py --root /tmp/lake --rows 1000000
    python examples/pipeline.py --rest-uri http://127.0.0.1:2333   # any Lance REST server
    python examples/pipeline.py --master spark://127.0.0.1:7077 --conf spark.driver.host=127.0.0.1

The session has a catalog ``lake`` (``lancens.spark.LanceCatalog`` over the
namespace), so tables are ``lake.<namespace>.<table>`` in SQL and the DataFrame API:

1. generate a click-stream of ``--rows`` events in SQL and ``INSERT INTO``
   ``lake.analytics.events`` (made with ``CREATE TABLE``);
2. transform: per-user daily totals with ``SELECT ... FROM lake.analytics.events``
   (the filter is pushed down to Lance), appended with ``writeTo(...).append()``
   to ``lake.analytics.daily_totals``;
3. read both back in SQL (``count(*)`` from metadata) and print a summary.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time


def catalog_properties(args) -> dict[str, str]:
    """The catalog's namespace: ``impl`` and the impl's properties, without a prefix."""
    if args.rest_uri:
        return {"impl": "rest", "uri": args.rest_uri}
    return {"impl": "dir", "root": args.root or tempfile.mkdtemp(prefix="lance-ns-pipeline-")}


def spark_setting(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key, value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", help="directory namespace root (default: a new temp dir)")
    parser.add_argument("--rest-uri", help="use a Lance REST namespace server instead")
    parser.add_argument("--rows", type=int, default=200_000, help="events to generate (default 200000)")
    parser.add_argument("--namespace", default="analytics", help="namespace for the tables")
    parser.add_argument("--master", default="local[2]", help="Spark master URL (default local[2])")
    parser.add_argument(
        "--conf", action="append", default=[], type=spark_setting, metavar="KEY=VALUE",
        help="a Spark setting (repeatable)",
    )
    args = parser.parse_args(argv)

    started = time.monotonic()
    properties = catalog_properties(args)

    from lance_ns.spark import build_session

    conf = {"spark.sql.session.timeZone": "UTC", **dict(args.conf)}
    spark = build_session(args.master, "lance-ns-pipeline", conf, catalogs={"lake": properties})
    spark.sparkContext.setLogLevel("ERROR")
    db = f"lake.{args.namespace}"
    events, totals = f"{db}.events", f"{db}.daily_totals"

    # 1. the raw events: a fresh table, filled by one INSERT (one Lance commit)
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {db}")
    spark.sql(f"DROP TABLE IF EXISTS {events}")
    spark.sql(f"DROP TABLE IF EXISTS {totals}")
    spark.sql(
        f"CREATE TABLE {events} (event_id BIGINT, user_id BIGINT, kind STRING, amount DOUBLE, day DATE) "
        "TBLPROPERTIES ('source' = 'examples/pipeline.py')"
    )
    spark.sql(f"""
        SELECT id AS event_id,
               id * 7919 % 5000 AS user_id,
               element_at(array('view', 'click', 'cart', 'buy'), CAST(id % 4 AS INT) + 1) AS kind,
               CAST(round((id * 31 % 10000) / 100.0, 2) AS DOUBLE) AS amount,
               date_add(DATE'2025-01-01', CAST(id % 30 AS INT)) AS day
        FROM range(0, {args.rows}, 1, 2)
    """).createOrReplaceTempView("generated")
    t = time.monotonic()
    spark.sql(f"INSERT INTO {events} SELECT * FROM generated")
    write_s = time.monotonic() - t

    # 2. transform, read through the catalog; appended with the DataFrame API
    spark.sql(f"CREATE TABLE {totals} (user_id BIGINT, day DATE, spent DOUBLE, purchases BIGINT)")
    daily = spark.sql(f"""
        SELECT user_id, day, sum(amount) AS spent, count(event_id) AS purchases
        FROM {events} WHERE kind IN ('cart', 'buy')
        GROUP BY user_id, day
    """)
    daily.writeTo(totals).append()

    # 3. read back and summarise
    n_events = spark.sql(f"SELECT count(*) FROM {events}").first()[0]  # from metadata
    n_totals = spark.sql(f"SELECT count(*) FROM {totals}").first()[0]
    total_spent = spark.sql(f"SELECT sum(spent) FROM {totals}").first()[0]
    top = spark.sql(
        f"SELECT user_id, sum(spent) AS s FROM {totals} GROUP BY user_id ORDER BY s DESC, user_id LIMIT 3"
    ).collect()
    expected = spark.sql("SELECT sum(amount) FROM generated WHERE kind IN ('cart', 'buy')").first()[0]
    ok = n_events == args.rows and abs(total_spent - expected) < 1e-6 * max(1.0, abs(expected))

    tables = sorted(r.tableName for r in spark.sql(f"SHOW TABLES IN {db}").collect())
    print(f"catalog lake: {properties}")
    print(f"{events}: {n_events} rows (inserted in {write_s:.1f}s)")
    print(f"{totals}: {n_totals} rows, total spent {total_spent:.2f}")
    print("top spenders: " + ", ".join(f"user {r[0]} ({r[1]:.2f})" for r in top))
    print(f"tables in {db}: {tables}")
    print(f"check: {'OK' if ok else 'MISMATCH'} in {time.monotonic() - started:.1f}s")
    spark.stop()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
