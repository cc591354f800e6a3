"""The catalog comparison's operations (benchmarks/bench_spark.py), written once for both Sparks.

bench_spark.py imports this for its own session (Spark 4: our catalog, parquet) and runs it as
a script in lance-spark's venv (Spark 3.5: lance-spark, parquet), so it needs only pyspark and
the standard library.  As a script it is a long-lived worker, so that Spark's start-up is not
timed: argv[1] is a JSON configuration (``master``, ``conf``, ``rows``, ``systems`` as
:func:`system` takes them); it answers one JSON line ``{"spark": version, "systems": [...]}``
when set up, then for each line ``{"system": name, "op": op}`` on stdin the seconds the
operation took, ``{"seconds": s}`` (or ``{"error": text}``), timed there exactly as
bench_spark.py times its own: wall time around the action.  EOF ends it.
"""

from __future__ import annotations

import json
import os
import sys
import time

#: what is compared, on every system
OPS = ("write", "INSERT", "sum(x)", "count(*)", "filter")

#: the rows every system writes and reads (each Spark makes the very same ones)
COLUMNS = ("id", "CAST(id AS DOUBLE) * 0.5 AS x", "substr(sha2(cast(id AS string), 256), 1, 20) AS s")

#: rows the selective filter returns
FILTERED = 100


def source(spark, rows: int):
    """The cached DataFrame of ``rows`` rows (id int64, x float64, s 20-char string), also the
    temporary view ``src`` that INSERT reads."""
    df = spark.range(0, rows, numPartitions=2).selectExpr(*COLUMNS).cache()
    df.count()
    df.createOrReplaceTempView("src")
    return df


def where(rows: int) -> str:
    """A selective filter: ``FILTERED`` rows from the middle of the table."""
    lo = rows // 2
    return f"id >= {lo} AND id < {lo + FILTERED}"


def system(spark, df, rows: int, spec: dict) -> dict:
    """The operations of one system (``spec["kind"]``), on tables made here from ``df``: a
    table ``t`` that is read and a table ``w`` that is appended to (it grows every round).

    * ``catalog`` (``spec["namespace"]``, e.g. ``lake.bench``): SQL, and
      ``df.writeTo(...).append()`` for the write; ``spec["format"]``, if given, is the Lance
      data storage version the tables are created with;
    * ``parquet table`` (``spec["prefix"]``): the same SQL on parquet tables of the session
      catalog; ``df.write.insertInto`` for the write;
    * ``parquet path`` (``spec["root"]``): ``spark.read.parquet`` and ``df.write.parquet``;
      Spark has no SQL INSERT into a path, so its INSERT is the query's DataFrame appended.
    """
    from pyspark.sql import functions as F

    kind, filtered = spec["kind"], where(rows)
    if kind in ("catalog", "parquet table"):
        if kind == "catalog":
            spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {spec['namespace']}")
            t, w = f"{spec['namespace']}.t", f"{spec['namespace']}.w"
            for name in (t, w):
                create = df.writeTo(name)
                if spec.get("format"):  # the Lance file format (appends keep the table's)
                    create = create.option("dataStorageVersion", spec["format"])
                create.create()
            write = lambda: df.writeTo(w).append()  # noqa: E731
        else:
            t, w = f"{spec['prefix']}_t", f"{spec['prefix']}_w"
            for name in (t, w):
                df.write.format("parquet").saveAsTable(name)
            write = lambda: df.write.insertInto(w)  # noqa: E731
        return {
            "write": write,
            "INSERT": lambda: spark.sql(f"INSERT INTO {w} SELECT * FROM src"),
            "sum(x)": lambda: spark.sql(f"SELECT sum(x) FROM {t}").collect(),
            "count(*)": lambda: spark.sql(f"SELECT count(*) FROM {t}").collect(),
            "filter": lambda: spark.sql(f"SELECT * FROM {t} WHERE {filtered}").collect(),
        }
    if kind == "parquet path":
        t, w = f"{spec['root']}/t", f"{spec['root']}/w"
        for path in (t, w):
            df.write.parquet(path)
        return {
            "write": lambda: df.write.mode("append").parquet(w),
            "INSERT": lambda: spark.sql("SELECT * FROM src").write.mode("append").parquet(w),
            "sum(x)": lambda: spark.read.parquet(t).agg(F.sum("x")).collect(),
            "count(*)": lambda: spark.read.parquet(t).count(),
            "filter": lambda: spark.read.parquet(t).where(filtered).collect(),
        }
    raise ValueError(f"unknown system kind {kind!r}")


def worker() -> None:
    """The long-lived worker (see the module docstring)."""
    config = json.loads(sys.argv[1])
    answers = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # anything else printed, here or by the JVM started below, goes to stderr

    def answer(obj) -> None:
        answers.write(json.dumps(obj) + "\n")

    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master(config["master"]).appName("bench-spark-worker")
    for key, value in config["conf"].items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    rows = config["rows"]
    df = source(spark, rows)
    systems = {name: system(spark, df, rows, spec) for name, spec in config["systems"].items()}
    answer({"spark": spark.version, "systems": list(systems)})
    for line in sys.stdin:
        command = json.loads(line)
        try:
            fn = systems[command["system"]][command["op"]]
            start = time.perf_counter()
            fn()
            answer({"seconds": time.perf_counter() - start})
        except Exception as e:  # the benchmark reports it and stops
            answer({"error": f"{type(e).__name__}: {e}"[:3000]})
    spark.stop()


if __name__ == "__main__":
    worker()
