"""Driver programs the standalone-cluster and Spark Connect tests run as their own process.

A Python process holds one SparkContext (the local session fixture's), and a
Spark Connect client switches pyspark into remote mode for the whole process
(``SPARK_CONNECT_MODE_ENABLED``), so neither can share the test process.

    python tests/spark/remote_drivers.py cluster spark://127.0.0.1:P ROOT ROWS
    python tests/spark/remote_drivers.py connect sc://127.0.0.1:P
    python tests/spark/remote_drivers.py connect_where sc://127.0.0.1:P

Each prints one ``RESULT <json>`` line for the test to check.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

#: what a driver on the test cluster needs besides build_session's defaults:
#: loopback only, and executors small enough for two 1 GiB workers
CLUSTER_CONF = {
    "spark.driver.host": "127.0.0.1",
    "spark.executor.memory": "512m",
    "spark.cores.max": "2",
}


def where_am_i(_) -> dict:
    """In a task: this Python worker's PID and the executor JVM above it (from /proc)."""
    time.sleep(0.2)  # hold the core a moment, so that both executors take tasks
    pid = os.getpid()
    ancestor = pid
    while ancestor > 1:
        cmdline = Path(f"/proc/{ancestor}/cmdline").read_bytes().split(b"\0")
        if b"org.apache.spark.executor.CoarseGrainedExecutorBackend" in cmdline:
            executor_id = cmdline[cmdline.index(b"--executor-id") + 1].decode()
            return {"python_pid": pid, "jvm_pid": ancestor, "executor_id": executor_id}
        stat = Path(f"/proc/{ancestor}/stat").read_text()
        ancestor = int(stat.rsplit(")", 1)[1].split()[1])  # the field after the state: ppid
    return {"python_pid": pid, "jvm_pid": None, "executor_id": None}


def cluster(master: str, root: str, rows: str) -> None:
    """Where tasks run, then one write and one read through a catalog, on the standalone cluster."""
    from lance_ns.spark import build_session

    catalogs = {"lake": {"impl": "dir", "root": root}}
    spark = build_session(master, "lance-ns-cluster-test", CLUSTER_CONF, catalogs=catalogs)
    sc = spark.sparkContext
    deadline = time.monotonic() + 60
    while sc._jsc.sc().getExecutorMemoryStatus().size() < 3:  # the driver and two executors
        if time.monotonic() > deadline:
            sys.exit("the executors did not register")
        time.sleep(0.2)
    tasks = sc.parallelize(range(4), 4).map(where_am_i).collect()
    result = {
        "driver_pid": os.getpid(),
        "driver_jvm_pid": sc._jvm.java.lang.ProcessHandle.current().pid(),
        "tasks": tasks,
        "app_id": sc.applicationId,
    }
    # a write job of two tasks (one per executor core), then a query that scans on the executors
    spark.sql("CREATE NAMESPACE lake.analytics")
    spark.sql("CREATE TABLE lake.analytics.events (event_id BIGINT, amount DOUBLE)")
    spark.sql(f"INSERT INTO lake.analytics.events SELECT id, id * 0.5 FROM range(0, {int(rows)}, 1, 2)")
    result["read"] = list(spark.sql("SELECT count(*), sum(amount) FROM lake.analytics.events").first())
    # a streaming query, table to table: its micro-batch's reads and writes run on the executors' bridge workers
    spark.sql("CREATE TABLE lake.analytics.events_copy (event_id BIGINT, amount DOUBLE)")
    query = (spark.readStream.table("lake.analytics.events").writeStream
             .option("checkpointLocation", os.path.join(root, "_checkpoint")).trigger(availableNow=True)
             .toTable("lake.analytics.events_copy"))
    query.awaitTermination(600)
    result["streamed"] = list(spark.sql("SELECT count(*), sum(amount) FROM lake.analytics.events_copy").first())
    result["stream_source"] = query.lastProgress["sources"][0]["description"]
    print("RESULT " + json.dumps(result), flush=True)


def run_sql(spark, catalog: str) -> dict:
    """The Connect test's statements on ``catalog``: SQL, and one append with the DataFrame API."""
    db = f"{catalog}.db"
    spark.sql(f"CREATE NAMESPACE {db}")
    spark.sql(f"CREATE TABLE {db}.t (id BIGINT, name STRING, score DOUBLE)")
    spark.sql(f"INSERT INTO {db}.t VALUES (1, 'a', 0.5), (2, 'b', NULL), (3, NULL, 2.5)")
    spark.createDataFrame([(4, "d", 4.0)], "id BIGINT, name STRING, score DOUBLE").writeTo(f"{db}.t").append()
    results = {
        "select": spark.sql(f"SELECT * FROM {db}.t ORDER BY id").collect(),
        "count": spark.sql(f"SELECT count(*) FROM {db}.t").collect(),
        "tables": spark.sql(f"SHOW TABLES IN {db}").select("tableName").collect(),
    }
    return {"results": {name: [list(row) for row in rows] for name, rows in results.items()}}


def connect(url: str) -> None:
    """A Spark Connect client: the SQL of run_sql on the server's catalog ``lake``."""
    from pyspark.sql import SparkSession

    from lance_ns.spark import register

    spark = SparkSession.builder.remote(url).getOrCreate()
    result = run_sql(spark, "lake")  # nothing registered by the client: the server's jar and Python do it
    result["session"] = type(spark).__module__
    result["register"] = register(spark)  # True: the server's session has the JVM bridge
    print("RESULT " + json.dumps(result), flush=True)
    spark.stop()


def connect_where(url: str) -> None:
    """A Spark Connect client: a catalog table written and read, and where the server ran the read's tasks."""
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    spark = SparkSession.builder.remote(url).getOrCreate()
    spark.sql("CREATE NAMESPACE IF NOT EXISTS lake.placement")
    spark.sql("CREATE OR REPLACE TABLE lake.placement.t AS SELECT id FROM range(0, 4, 1, 2)")
    where = F.udf(lambda _: json.dumps(where_am_i(None)), "string")
    got = spark.table("lake.placement.t").repartition(2).select("id", where("id").alias("at")).collect()
    result = {"rows": sorted(r.id for r in got), "tasks": [json.loads(r.at) for r in got]}
    print("RESULT " + json.dumps(result), flush=True)
    spark.stop()


if __name__ == "__main__":
    {"cluster": cluster, "connect": connect, "connect_where": connect_where}[sys.argv[1]](*sys.argv[2:])
