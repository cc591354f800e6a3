"""The ``lance`` Spark source against the directory namespace, on local[2].

Read tests run twice through the ``fmt`` fixture: ``lance`` (the JVM
column-batch read path, lance_ns/spark/bridge/*.java) and ``lance_python`` (the pure
Python source, which ``lance`` is when no JDK is installed).
"""

from __future__ import annotations

import datetime
import os
import sys

import lance
import pyarrow as pa
import pytest
from lance_namespace import CreateNamespaceRequest, DescribeTableRequest, ListTablesRequest

import lance_ns.spark as ls
from lance_ns.errors import TableNotFoundError
from lance_ns.spark.jobfiles import ABORTED, JOBS_DIR, JobFiles


@pytest.fixture(params=["lance", "lance_python"])
def fmt(request):
    return request.param


def read(spark, options, table=None, *, fmt="lance", **more):
    reader = spark.read.format(fmt).options(**options, **more)
    return reader.load(table) if table else reader.load()


def events(spark, n=1000, parts=2):
    return spark.range(0, n, numPartitions=parts).selectExpr(
        "id", "cast(id % 7 as int) as k", "concat('user', cast(id % 13 as string)) as name", "id * 0.5 as score"
    )


def wait_for_tasks(spark, timeout=60.0):
    """Until no task runs: a failed job's other tasks end (or are killed) later."""
    import time

    tracker = spark.sparkContext._jsc.sc().statusTracker()  # Python's lacks running-task counts

    def running():
        return sum(e.numRunningTasks() for e in tracker.getExecutorInfos())

    deadline = time.monotonic() + timeout
    while running() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not running(), "Spark tasks still running"


def rows(df, order="id"):
    return [tuple(r) for r in df.orderBy(order).collect()]


def location(ns, table_id):
    return ns.describe_table(DescribeTableRequest(id=table_id)).location


def files_under(path):
    """Every file of a table except failed write jobs' ABORTED markers (see jobfiles)."""
    found = sorted(os.path.relpath(os.path.join(d, f), path) for d, _, fs in os.walk(path) for f in fs)
    return [f for f in found if not (f.startswith(JOBS_DIR + "/") and f.endswith("/" + ABORTED))]


def test_workers_run_the_driver_interpreter(spark):
    seen = spark.range(0, 4, numPartitions=2).rdd.map(lambda _: __import__("sys").executable).collect()
    assert set(seen) == {sys.executable}
    assert spark.conf.get("spark.sql.python.filterPushdown.enabled") == "true"


def test_python_env_keeps_explicit_settings(monkeypatch):
    monkeypatch.setenv("PYSPARK_PYTHON", "/opt/other/python")
    monkeypatch.delenv("PYSPARK_DRIVER_PYTHON", raising=False)
    ls.python_env()
    assert os.environ["PYSPARK_PYTHON"] == "/opt/other/python"
    assert os.environ["PYSPARK_DRIVER_PYTHON"] == sys.executable


def test_write_declares_table_and_reads_back_by_identifier(spark, lake, fmt):
    options, ns = lake
    ns.create_namespace(CreateNamespaceRequest(id=["db"]))
    df = events(spark)
    df.write.format("lance").mode("overwrite").options(**options).save("db.events")

    assert ns.list_tables(ListTablesRequest(id=["db"])).tables == ["events"]
    ds = lance.dataset(location(ns, ["db", "events"]))
    assert ds.version == 1 and ds.count_rows() == 1000
    back = read(spark, options, "db.events", fmt=fmt)
    assert back.schema == df.schema
    assert rows(back) == rows(df)
    # one partition per fragment: each of the two write tasks wrote one
    assert back.rdd.getNumPartitions() == len(ds.get_fragments()) == 2
    # the same table through the `table` option and a custom delimiter
    assert read(spark, options, table="db/events", delimiter="/", fmt=fmt).count() == 1000
    assert ls.count("db.events", options) == 1000
    assert ls.count("db.events", options, filter="k = 3") == df.filter("k = 3").count()


def test_append_overwrite_and_time_travel(spark, lake, fmt):
    options, ns = lake
    df = events(spark, 300)
    df.write.format("lance").mode("append").options(**options).save("t")  # creates
    df.write.format("lance").mode("append").options(**options).save("t")
    ds = lance.dataset(location(ns, ["t"]))
    assert ds.version == 2 and ds.count_rows() == 600
    ds.tags.create("first", 1)
    events(spark, 10).write.format("lance").mode("overwrite").options(**options).save("t")

    assert read(spark, options, "t", fmt=fmt).count() == 10
    assert read(spark, options, "t", version="2", fmt=fmt).count() == 600
    assert rows(read(spark, options, "t", tag="first", fmt=fmt)) == rows(df)
    assert ls.count("t", {**options, "version": "1"}) == 300
    with pytest.raises(Exception, match="version"):
        read(spark, options, "t", version="1", tag="first", fmt=fmt).count()


def test_filters_are_pushed_and_correct(spark, lake, fmt):
    options, _ = lake
    df = events(spark, 2000)
    df.write.format("lance").mode("overwrite").options(**options).save("f")
    push = {**options, "pushFilters": "true"}
    cond = "k = 3 AND name LIKE 'user1%' AND id >= 10 AND id IN (24, 94, 500, 1900) AND name IS NOT NULL"
    pushed = read(spark, push, "f", fmt=fmt).filter(cond)
    if fmt == "lance_python":
        plan = pushed._jdf.queryExecution().optimizedPlan().toString()
        assert "Filter" not in plan, plan  # every conjunct was taken by the source
    else:  # the JVM path pushes every conjunct and lets Spark re-check them
        scan = pushed._jdf.queryExecution().executedPlan().toString()
        for sql in ("`k` = 3", "starts_with(`name`, 'user1')", "`id` >= 10", "`id` IN (24, 94, 500, 1900)"):
            assert sql in scan, scan
    assert rows(pushed) == rows(df.filter(cond)) != []
    # decimals are not translated: Spark keeps that filter, the answer stays right
    dec = read(spark, push, "f", fmt=fmt).filter("score >= 10 AND k = 1")
    assert "score" in dec._jdf.queryExecution().optimizedPlan().toString()
    assert rows(dec) == rows(df.filter("score >= 10 AND k = 1"))
    # OR reaches only the JVM path; either way the answer stays right
    either = "k = 3 OR id < 5"
    got = read(spark, push, "f", fmt=fmt).filter(either)
    assert rows(got) == rows(df.filter(either))
    assert ("OR" in got._jdf.queryExecution().executedPlan().toString().split("BatchScan")[-1]) == (fmt == "lance")
    # a raw Lance filter option combines with pushed ones
    assert read(spark, push, "f", fmt=fmt, filter="id < 100").filter("k = 1").count() == df.filter(
        "id < 100 AND k = 1"
    ).count()


def test_reused_dataframe_is_not_filtered_by_an_earlier_query(spark, lake, fmt):
    """Spark 4.3 reuses a relation's planned read for later scans without
    filters; by default the source must not let a pushed filter leak."""
    options, _ = lake
    events(spark, 100).write.format("lance").mode("overwrite").options(**options).save("r")
    df = read(spark, options, "r", fmt=fmt)
    assert df.filter("k = 3").count() == 14
    assert df.count() == 100
    assert df.filter("k = 1").count() == 15


def test_columns_option_and_user_schema(spark, lake, fmt):
    options, _ = lake
    events(spark, 100).write.format("lance").mode("overwrite").options(**options).save("c")
    some = read(spark, options, "c", columns="score, id", fmt=fmt)
    assert some.columns == ["score", "id"]
    assert some.agg({"score": "sum"}).first()[0] == sum(i * 0.5 for i in range(100))
    typed = spark.read.format(fmt).options(**options).schema("name string, id bigint").load("c")
    assert typed.columns == ["name", "id"]
    assert rows(typed)[:2] == [("user0", 0), ("user1", 1)]
    with pytest.raises(Exception, match="nope"):
        read(spark, options, "c", columns="id,nope", fmt=fmt).schema


def test_lance_types_are_converted_to_spark_exactly(spark, tmp_path, fmt):
    table = pa.table(
        {
            "id": pa.array([1, 2], pa.int32()),
            "name": pa.array(["a", None], pa.large_string()),
            "vec": pa.array([[1.0, 2.0], [3.0, 4.0]], pa.list_(pa.float32(), 2)),
            "ts": pa.array([datetime.datetime(2024, 1, 1, 12), None], pa.timestamp("us", tz="UTC")),
            "blob": pa.array([b"x", b"yz"], pa.large_binary()),
        },
        schema=pa.schema(
            [
                pa.field("id", pa.int32(), nullable=False),
                pa.field("name", pa.large_string()),
                pa.field("vec", pa.list_(pa.float32(), 2)),
                pa.field("ts", pa.timestamp("us", tz="UTC")),
                pa.field("blob", pa.large_binary()),
            ]
        ),
    )
    path = str(tmp_path / "typed.lance")
    lance.write_dataset(table, path)
    df = spark.read.format(fmt).load(path)
    assert df.schema.simpleString() == "struct<id:int,name:string,vec:array<float>,ts:timestamp,blob:binary>"
    assert not df.schema["id"].nullable
    got = [r.asDict() for r in df.orderBy("id").collect()]
    assert got[0]["vec"] == [1.0, 2.0] and got[1]["blob"] == bytearray(b"yz") and got[1]["name"] is None
    assert got[0]["ts"].replace(tzinfo=None) == datetime.datetime(2024, 1, 1, 12)


def _failing(spark, n=400):
    from pyspark.sql.functions import udf

    @udf("long")
    def explode_at_300(x):
        if x == 300:
            raise ValueError("boom at 300")
        return x

    return events(spark, n).withColumn("id", explode_at_300("id"))


def test_failed_job_leaves_table_unchanged_without_orphans(spark, lake):
    options, ns = lake
    events(spark, 200).write.format("lance").mode("overwrite").options(**options).save("t")
    path = location(ns, ["t"])
    before = files_under(path)
    for mode in ("append", "overwrite"):
        with pytest.raises(Exception, match="boom at 300"):
            _failing(spark).write.format("lance").mode(mode).options(**options).save("t")
        wait_for_tasks(spark)  # Spark fails the job before its other task has ended
        assert lance.dataset(path).version == 1
        assert files_under(path) == before
    assert read(spark, options, "t").count() == 200


def _written(path, n, storage_options=None):
    from lance.fragment import write_fragments

    frags = write_fragments(
        pa.table({"a": list(range(n))}), path, max_rows_per_file=2, storage_options=storage_options
    )
    return [f.path for frag in frags for f in frag.files]


def test_job_files_task_finishing_after_abort_deletes_its_own_files(tmp_path):
    # The race Spark leaves open: abort() runs with the messages of finished
    # tasks while another task is still writing; that task's message is
    # dropped, so it must notice the abort itself.
    path = str(tmp_path / "t.lance")
    job = JobFiles(path)
    early, late = _written(path, 4), _written(path, 2)
    assert job.record(early)
    job.abort([])  # no message reached the driver; the record did
    assert not job.record(late)  # finished after the abort
    assert [f for f in files_under(path) if f.startswith("data/")] == []


def test_job_files_commit_forgets_records_and_keeps_data(tmp_path):
    path = str(tmp_path / "t.lance")
    job = JobFiles(path)
    paths = _written(path, 3)
    assert job.record(paths)
    job.finish()
    assert sorted(f for f in files_under(path)) == sorted(f"data/{p}" for p in paths)
    assert not os.path.exists(os.path.join(path, JOBS_DIR))


def test_failed_create_leaves_no_table(spark, lake):
    options, ns = lake
    with pytest.raises(Exception, match="boom at 300"):
        _failing(spark).write.format("lance").mode("append").options(**options).save("never")
    with pytest.raises(TableNotFoundError):
        ns.describe_table(DescribeTableRequest(id=["never"]))
    assert ns.list_tables(ListTablesRequest(id=[])).tables == []


def test_append_with_other_columns_is_refused(spark, lake):
    options, ns = lake
    events(spark, 50).write.format("lance").mode("overwrite").options(**options).save("t")
    with pytest.raises(Exception, match="cannot append"):
        spark.range(5).write.format("lance").mode("append").options(**options).save("t")
    # columns in another order are matched by name
    events(spark, 50).select("score", "name", "k", "id").write.format("lance").mode("append").options(
        **options
    ).save("t")
    assert lance.dataset(location(ns, ["t"])).version == 2
    assert read(spark, options, "t").filter("id = 7").select("score").collect()[0][0] == 3.5


def test_plain_path_without_namespace(spark, tmp_path, fmt):
    path = str(tmp_path / "plain.lance")
    events(spark, 20).write.format("lance").mode("overwrite").save(path)
    assert lance.dataset(path).count_rows() == 20
    assert spark.read.format(fmt).load(path).count() == 20
    assert ls.count(options={"path": path}) == 20
    with pytest.raises(Exception, match="not found"):
        spark.read.format(fmt).load(str(tmp_path / "missing.lance")).count()
