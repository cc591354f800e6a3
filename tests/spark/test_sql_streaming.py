"""Spark SQL views, streaming, and a catalog backend behind the REST server."""

from __future__ import annotations

import json

import lance
import pytest
from lance_namespace import CreateNamespaceRequest, DescribeTableRequest, ListTablesRequest

import lance_ns
import lance_ns.spark as ls
from lance_ns.errors import InvalidTableStateError
from lance_ns.spark import datasource as dsrc


def _write(df, options, table, mode="overwrite"):
    df.write.format("lance").mode(mode).options(**options).save(table)


def test_views_select_join_and_insert(spark, lake):
    options, ns = lake
    ns.create_namespace(CreateNamespaceRequest(id=["shop"]))
    _write(spark.createDataFrame([(1, "ann"), (2, "bob")], "uid long, name string"), options, "shop.users")
    _write(spark.createDataFrame([(10, 1, 5.0), (11, 2, 7.5), (12, 1, 1.0)], "oid long, uid long, amount double"),
           options, "shop.orders")

    views = ls.register_views(spark, options, "shop")
    assert views == {"orders": ["shop", "orders"], "users": ["shop", "users"]}
    totals = spark.sql(
        "SELECT u.name, sum(o.amount) AS total FROM users u JOIN orders o ON u.uid = o.uid GROUP BY u.name ORDER BY u.name"
    ).collect()
    assert [tuple(r) for r in totals] == [("ann", 6.0), ("bob", 7.5)]

    assert spark.sql("SELECT count(*) FROM users WHERE uid = 1").first()[0] == 1
    spark.sql("INSERT INTO users VALUES (3, 'cy')")
    # the view reads the latest version, and no earlier filter leaks into it
    assert spark.sql("SELECT count(*) FROM users").first()[0] == 3
    loc = ns.describe_table(DescribeTableRequest(id=["shop", "users"])).location
    assert lance.dataset(loc).version == 2
    spark.sql("INSERT OVERWRITE users VALUES (4, 'dee')")
    assert [tuple(r) for r in spark.sql("SELECT * FROM users").collect()] == [(4, "dee")]


def test_stream_from_lance_to_lance_exactly_once(spark, lake, tmp_path):
    options, ns = lake
    _write(spark.range(100).selectExpr("id"), options, "src")
    checkpoint = str(tmp_path / "ck")

    def run():
        query = (
            spark.readStream.format("lance").options(**options).load("src")
            .writeStream.format("lance").options(**options).option("checkpointLocation", checkpoint)
            .trigger(availableNow=True).start("dst")
        )
        query.awaitTermination(300)
        assert query.exception() is None

    run()
    assert ls.count("dst", options) == 100
    _write(spark.range(100, 150).selectExpr("id"), options, "src", mode="append")
    run()  # only the fragments of the new version
    dst = spark.read.format("lance").options(**options).load("dst")
    assert sorted(r.id for r in dst.collect()) == list(range(150))
    run()  # nothing new: no new commit
    loc = ns.describe_table(DescribeTableRequest(id=["dst"])).location
    assert lance.dataset(loc).version == 2


def test_a_checkpoint_the_python_source_wrote_restarts_on_the_jvm_path(spark, lake, tmp_path):
    """A stream started before reads took the JVM path (the Python source, ``lance_python``)
    goes on from its checkpoint on it: the offsets are the same text on both paths."""
    options, ns = lake
    _write(spark.range(10).selectExpr("id"), options, "src")
    checkpoint = str(tmp_path / "ck")

    def run(source_format):
        query = (
            spark.readStream.format(source_format).options(**options).load("src")
            .writeStream.format("lance").options(**options).option("checkpointLocation", checkpoint)
            .trigger(availableNow=True).start("dst")
        )
        query.awaitTermination(300)
        assert query.exception() is None, query.exception()
        return query

    run("lance_python")
    _write(spark.range(10, 15).selectExpr("id"), options, "src", mode="append")
    query = run("lance")
    progress = query.lastProgress["sources"][0]
    offsets = [json.loads(progress[k]) if isinstance(progress[k], str) else progress[k]
               for k in ("startOffset", "endOffset")]
    assert offsets == [{"version": 1}, {"version": 2}], progress  # only the new version's rows
    assert progress["description"] == "LanceStream(src)", progress
    dst = spark.read.format("lance").options(**options).load("dst")
    assert sorted(r.id for r in dst.collect()) == list(range(15))


def test_stream_source_refuses_rewrites_unless_asked(spark, lake):
    options, ns = lake
    one = dict(numPartitions=1)  # one task, one fragment per commit
    _write(spark.range(0, 10, **one), options, "s")
    _write(spark.range(0, 5, **one), options, "s", mode="append")
    _write(spark.range(0, 3, **one), options, "s")  # overwrite: v3 drops v1/v2 rows
    source = dsrc.LanceDataSource({**options, "table": "s"})
    reader = source.streamReader(source.schema())
    assert [p.value["fragments"] for p in reader.partitions({"version": 1}, {"version": 2})] == [[1]]
    with pytest.raises(InvalidTableStateError):
        reader.partitions({"version": 2}, {"version": 3})
    lenient = dsrc.LanceDataSource({**options, "table": "s", "ignoreChanges": "true"})
    assert len(lenient.streamReader(source.schema()).partitions({"version": 2}, {"version": 3})) == 1


def test_catalog_backend_through_rest_server(spark, tmp_path):
    from lance_ns.server import run_server_in_thread

    catalog = lance_ns.connect("memory", {"root": str(tmp_path / "wh")})
    catalog.create_namespace(CreateNamespaceRequest(id=["db"]))
    server = run_server_in_thread(catalog)
    try:
        options = {"impl": "rest", "rest.uri": server.url}
        df = spark.range(0, 500, numPartitions=2).selectExpr("id", "id % 3 AS k")
        _write(df, options, "db.events", mode="append")
        assert catalog.list_tables(ListTablesRequest(id=["db"])).tables == ["events"]
        back = spark.read.format("lance").options(**options).load("db.events")
        assert back.filter("k = 1").count() == df.filter("k = 1").count()
        assert ls.count("db.events", options) == 500
    finally:
        server.stop()
