"""Spark writes that never finish on their own, for tests/spark/test_killed_write.py to kill.

Each write form runs as its own job, at once, on a table of the ``lake`` catalog (``dir``,
storage-managed) or the ``managed`` one (``dir`` with ``managed_versioning``).  Every job has
two tasks: the first writes its rows and finishes (its fragment written and recorded, its
commit message with the driver), the second writes its rows and then stalls before its end,
so no job ever commits.  The test kills this whole process group with SIGKILL.

    python tests/spark/killed_write_job.py ROOT FORM:CATALOG.TABLE ...
    python tests/spark/killed_write_job.py ROOT --sql STATEMENT ... [--stream CATALOG.TABLE]
                                                                  # the writes after the kill

FORM is ``append``, ``overwrite``, ``insert-overwrite``, ``ctas`` (a table that does not exist),
``replace`` (``createOrReplace`` of an existing table: a staged RTAS) or ``stream`` (a streaming
query from the table ``CATALOG.s.stream_source`` into the table, one micro-batch whose second
task stalls; its checkpoint under ROOT).  ``--stream`` runs that query again from its checkpoint,
without the stall, after the statements.
"""

from __future__ import annotations

import sys
import threading


def stall_second_task(batches):
    """mapInArrow: the rows as they come; the second partition's task then never ends.  (Arrow,
    not pandas: each of the jobs' Python workers would import pandas, ~1.5 s of CPU apiece, all
    at once on 2 cores.)"""
    import time

    import pyspark

    yield from batches
    if pyspark.TaskContext.get().partitionId() == 1:
        time.sleep(3600)


def session(root: str, cores: int):
    from lance_ns.spark import build_session

    spark = build_session(
        f"local[{cores}]", "lance-ns-killed-write", {"spark.sql.session.timeZone": "UTC"},
        catalogs={"lake": {"impl": "dir", "root": f"{root}/lake"},
                  "managed": {"impl": "dir", "root": f"{root}/managed", "managed_versioning": "true"}})
    spark.sparkContext.setLogLevel("OFF")
    return spark


def stream(spark, root: str, table: str, stall: bool) -> None:
    """The streaming query of form ``stream`` into ``table``, until it has read all there is."""
    source = spark.readStream.option("fragmentsPerPartition", "1").table(table.rsplit(".", 1)[0] + ".stream_source")
    if stall:
        source = source.mapInArrow(stall_second_task, "n BIGINT, s STRING")
    query = (source.writeStream.option("checkpointLocation", f"{root}/checkpoint-{table}")
             .trigger(availableNow=True).toTable(table))
    query.awaitTermination()
    if query.exception() is not None:
        raise SystemExit(f"the stream into {table} failed: {query.exception()}")


def run_sql(root: str, statements: list[str], streams: list[str]) -> None:
    """The statements in turn, on the same catalogs, then the streams resumed; ``DONE`` once
    all have run."""
    import os

    spark = session(root, 2)
    for statement in statements:
        spark.sql(statement)
    for table in streams:
        stream(spark, root, table, stall=False)
    spark.stop()
    print("DONE", flush=True)
    os._exit(0)  # (Spark's and pyarrow's native threads have crashed an interpreter's teardown)


def main(root: str, jobs: list[str]) -> None:
    spark = session(root, 2 * len(jobs) + 2)
    rows = (spark.range(100, 300, numPartitions=2).selectExpr("id AS n", "CAST(id AS STRING) AS s")
            .mapInArrow(stall_second_task, "n BIGINT, s STRING"))

    def write(form: str, table: str) -> None:
        if form == "append":
            rows.writeTo(table).append()
        elif form == "overwrite":
            rows.writeTo(table).overwritePartitions()
        elif form == "insert-overwrite":
            rows.createOrReplaceTempView(f"incoming_{abs(hash(table))}")
            spark.sql(f"INSERT OVERWRITE {table} SELECT * FROM incoming_{abs(hash(table))}")
        elif form == "ctas":
            rows.writeTo(table).create()
        elif form == "replace":
            rows.writeTo(table).createOrReplace()
        elif form == "stream":
            stream(spark, root, table, stall=True)
        else:
            raise SystemExit(f"unknown write form {form!r}")

    threads = []
    for job in jobs:
        form, _, table = job.partition(":")
        threads.append(threading.Thread(target=write, args=(form, table), daemon=True))
        threads[-1].start()
    print("STARTED", flush=True)
    for thread in threads:
        thread.join()


if __name__ == "__main__":
    if sys.argv[2:3] == ["--sql"]:
        rest = sys.argv[3:]
        cut = rest.index("--stream") if "--stream" in rest else len(rest)
        run_sql(sys.argv[1], rest[:cut], rest[cut + 1:])
    else:
        main(sys.argv[1], sys.argv[2:])
