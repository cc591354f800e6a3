"""The JVM read path of the ``lance`` format (bridge/*.java, its jar from lance_ns.spark.jar): column
batches, column pruning, row counts without data, its worker pool.

CI has a JDK, so ``lance`` must be the bridge there; these tests fail rather
than skip when it is not."""

from __future__ import annotations

import lance
import pyarrow as pa
import pytest

import lance_ns.spark as ls
from lance_ns.spark import jar

from .test_datasource import events, read, rows


def executed(df) -> str:
    return df._jdf.queryExecution().executedPlan().toString()


def test_lance_is_the_jvm_bridge_and_lance_python_the_python_source(spark, lake):
    options, _ = lake
    assert jar.jar_path() is not None, "no JDK (javac) found: the bridge cannot be built"
    assert ls.register(spark) is True  # idempotent; lance is taken by the JVM class
    events(spark, 50).write.format("lance").mode("overwrite").options(**options).save("b")
    plan = executed(read(spark, options, "b"))
    assert "ColumnarToRow" in plan and "BatchScan lance[" in plan, plan
    assert "BatchScan lance_python" in executed(read(spark, options, "b", fmt="lance_python"))


def test_only_the_columns_a_query_uses_are_read(spark, lake):
    options, _ = lake
    df = events(spark, 500)
    df.write.format("lance").mode("overwrite").options(**options).save("p")
    one = read(spark, options, "p").select("score")
    scan = executed(one).split("BatchScan")[1]
    assert "score#" in scan and "id#" not in scan and "name#" not in scan, scan
    assert sorted(one.collect()) == sorted(df.select("score").collect())
    # a filter column is read too, and the answer is right
    q = read(spark, options, "p").filter("k = 2").select("name")
    assert sorted(q.collect()) == sorted(df.filter("k = 2").select("name").collect())


def test_count_reads_no_column_data(spark, lake):
    options, _ = lake
    events(spark, 1234, parts=3).write.format("lance").mode("overwrite").options(**options).save("n")
    assert read(spark, options, "n").count() == 1234
    assert read(spark, options, "n", filter="k = 3").count() == sum(1 for i in range(1234) if i % 7 == 3)
    assert read(spark, options, "n", filter="k = 99").count() == 0


def test_early_close_and_failures_leave_the_pool_usable(spark, lake, tmp_path):
    options, _ = lake
    df = events(spark, 3000, parts=3)
    df.write.format("lance").mode("overwrite").options(**options).save("l")
    for _ in range(3):  # LIMIT closes readers before their streams end
        assert len(read(spark, options, "l", batchSize="100").limit(5).collect()) == 5
    with pytest.raises(Exception, match="TableNotFound"):
        read(spark, options, "nope").count()
    with pytest.raises(Exception, match="not found"):
        spark.read.format("lance").load(str(tmp_path / "missing.lance")).count()
    assert rows(read(spark, options, "l")) == rows(df)


def test_types_the_arrow_vectors_carry(spark, tmp_path):
    import datetime
    import decimal

    table = pa.table(
        {
            "b": pa.array([True, None, False]),
            "i8": pa.array([1, -2, None], pa.int8()),
            "f": pa.array([1.5, None, -0.25], pa.float32()),
            "d": pa.array([datetime.date(2024, 2, 29), None, datetime.date(1970, 1, 1)]),
            "dec": pa.array([decimal.Decimal("1.25"), None, decimal.Decimal("-3.50")], pa.decimal128(10, 2)),
            "ls": pa.array([[1, 2], [], None], pa.large_list(pa.int64())),
            "st": pa.array([{"a": 1, "s": "x"}, None, {"a": None, "s": "z"}]),
            "m": pa.array([[("k", 1)], None, []], pa.map_(pa.string(), pa.int64())),
        }
    )
    path = str(tmp_path / "types.lance")
    lance.write_dataset(table, path)
    got = spark.read.format("lance").load(path).collect()
    ref = spark.read.format("lance_python").load(path).collect()
    assert [r.asDict(recursive=True) for r in got] == [r.asDict(recursive=True) for r in ref]
    assert got[0]["dec"] == decimal.Decimal("1.25") and got[2]["st"]["s"] == "z" and got[0]["m"] == {"k": 1}


PREDICATES = [
    "k = 3",
    "k <=> NULL",
    "NOT (k <=> 2)",
    "k IS NULL OR name = 'it''s'",
    "NOT (k > 2 AND name LIKE 'u%')",
    "d >= DATE'2024-01-03' AND d < DATE'2024-01-06'",
    "x > 1.5 OR x IS NULL",
    "x = double('NaN')",
    "name IN ('u1', 'it''s', NULL)",
    "name LIKE '%2'",
    "ts > TIMESTAMP'2024-01-01 00:00:03'",
]


def test_pushed_filters_never_change_an_answer(spark, tmp_path):
    """Every predicate against Spark's own evaluation of the same rows, with
    nulls, NaN, quotes, dates and timestamps (which stay with Spark)."""
    import datetime

    n = 12
    table = pa.table(
        {
            "id": pa.array(range(n)),
            "k": pa.array([None if i % 5 == 0 else i % 4 for i in range(n)], pa.int32()),
            "name": pa.array([None if i == 7 else ("it's" if i == 3 else f"u{i}") for i in range(n)]),
            "x": pa.array([float("nan") if i == 4 else (None if i == 9 else i * 0.5) for i in range(n)]),
            "d": pa.array([datetime.date(2024, 1, 1 + i) for i in range(n)]),
            "ts": pa.array([datetime.datetime(2024, 1, 1, 0, 0, i) for i in range(n)], pa.timestamp("us", tz="UTC")),
        }
    )
    path = str(tmp_path / "preds.lance")
    lance.write_dataset(table, path, max_rows_per_file=5)
    # the same rows as Spark's own local data, built from Python objects without Arrow
    # (built through Arrow, or written with pyarrow and read as parquet, no row answered
    # x = NaN here)
    schema = spark.read.format("lance").load(path).schema
    spark.conf.set("spark.sql.execution.arrow.pyspark.enabled", "false")
    try:
        truth = spark.createDataFrame([tuple(r.values()) for r in table.to_pylist()], schema)
    finally:
        spark.conf.set("spark.sql.execution.arrow.pyspark.enabled", "true")
    assert truth.filter("x = double('NaN')").count() == 1
    for pred in PREDICATES:
        got = sorted(r.id for r in spark.read.format("lance").load(path).filter(pred).select("id").collect())
        want = sorted(r.id for r in truth.filter(pred).select("id").collect())
        assert got == want, pred


def test_small_tables_are_broadcast_in_joins(spark, lake):
    """The scan reports rows and bytes, so Spark plans a broadcast join for a
    small table (Python sources report nothing: Spark assumes they are huge)."""
    options, _ = lake
    events(spark, 2000).write.format("lance").mode("overwrite").options(**options).save("facts")
    spark.range(7).selectExpr("cast(id as int) as k", "concat('kind', id) as kind").write.format("lance").mode(
        "overwrite"
    ).options(**options).save("kinds")
    facts, kinds = read(spark, options, "facts"), read(spark, options, "kinds")
    joined = facts.join(kinds, "k")
    planned = joined._jdf.queryExecution().sparkPlan().toString()  # before adaptive execution
    assert "BroadcastHashJoin" in planned, planned
    assert joined.count() == 2000
    stats = kinds._jdf.queryExecution().optimizedPlan().stats()
    assert int(stats.sizeInBytes()) == 7 * (4 + 32)  # rows x (int + a string's guessed 32 bytes)
    py = read(spark, options, "facts", fmt="lance_python").join(read(spark, options, "kinds", fmt="lance_python"), "k")
    assert "BroadcastHashJoin" not in py._jdf.queryExecution().sparkPlan().toString()


def test_register_tells_the_jvm_the_driver_interpreter(spark):
    """The bridge's workers fall back to it (before PATH's python3) when neither
    spark.pyspark.python nor PYSPARK_PYTHON is set (Workers.pythonExecutable)."""
    import sys

    ls.register(spark)
    loader = spark._jvm.java.lang.Thread.currentThread().getContextClassLoader()  # has spark.jars
    workers = spark._jvm.java.lang.Class.forName("lancens.spark.Workers", True, loader)
    field = workers.getDeclaredField("driverPython")
    field.setAccessible(True)
    assert field.get(None) == sys.executable


def test_concurrent_queries_share_the_worker_pool(spark, lake):
    from concurrent.futures import ThreadPoolExecutor

    options, _ = lake
    df = events(spark, 3000, parts=3)
    df.write.format("lance").mode("overwrite").options(**options).save("cc")
    want = df.filter("k = 2").count()

    def query(i):
        q = read(spark, options, "cc").filter("k = 2")
        return q.count() if i % 2 else len(q.select("name").collect())

    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(query, range(12))) == [want] * 12


def test_nested_and_quoted_column_names_reach_lance_as_name_parts(spark, tmp_path):
    """Spark names a filter's column as one string ("st.x", "`my col`"); its
    own parser (Filter.v2references) splits it, so Lance gets the right column.
    (Lance refuses dots in top-level names, and cannot project a name with a
    backtick at all, so those are not tried.)"""
    table = pa.table(
        {
            "id": pa.array(range(10)),
            "my col": pa.array(range(10)),
            "st": pa.array([{"x": i} for i in range(10)]),
        }
    )
    path = str(tmp_path / "names.lance")
    lance.write_dataset(table, path)
    df = spark.read.format("lance").load(path)
    nested = df.filter("st.x > 7")
    assert "`st`.`x` > 7" in executed(nested).split("BatchScan")[1]
    assert sorted(r.id for r in nested.collect()) == [8, 9]
    spaced = df.filter("`my col` = 3")
    assert "`my col` = 3" in executed(spaced).split("BatchScan")[1]
    assert [r.id for r in spaced.collect()] == [3]


def test_a_query_reads_the_version_its_schema_came_from(spark, lake):
    """The JVM path pins the version ``load()`` described (the plan carries
    it), so a commit in between cannot give a query another version's data;
    ``readLatest`` reads the latest version in every query, as on the Python
    source."""
    options, _ = lake
    events(spark, 30).write.format("lance").mode("overwrite").options(**options).save("pin")
    pinned = read(spark, options, "pin")
    latest = read(spark, options, "pin", readLatest="true")
    events(spark, 20).write.format("lance").mode("append").options(**options).save("pin")
    assert pinned.count() == 30 and pinned.select("id").distinct().count() == 30
    assert latest.count() == 50
    assert read(spark, options, "pin").count() == 50  # a new load sees the commit
    events(spark, 5).write.format("lance").mode("append").options(**options).save("pin")
    assert latest.count() == 55 and pinned.count() == 30


def test_views_push_filters_on_the_jvm_path(spark, lake):
    """register_views turns pushing off only for the Python source, whose
    planned read Spark reuses across queries; the JVM path plans each query."""
    options, _ = lake
    events(spark, 40).write.format("lance").mode("overwrite").options(**options).save("vw")
    assert ls.register_views(spark, options, view_name=lambda rel: "pushed_" + "_".join(rel)) == {"pushed_vw": ["vw"]}
    filtered = spark.sql("SELECT id FROM pushed_vw WHERE id > 35")
    assert "filter=" in executed(filtered).split("BatchScan")[1], executed(filtered)
    assert sorted(r.id for r in filtered.collect()) == [36, 37, 38, 39]
    assert spark.sql("SELECT count(*) FROM pushed_vw").first()[0] == 40  # no earlier filter leaks in
