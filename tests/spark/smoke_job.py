"""A smoke subset of the catalog suite, run by tests/spark/test_supported_range.py in a
process whose ``pyspark`` is another release of the supported range (its own install, first
on PYTHONPATH).  Builds the bridge jar for that Spark, then: a namespace, CREATE TABLE,
INSERT, a filtered read, COUNT(*), UPDATE, DELETE and MERGE (row-level commands), CTAS, the SQL
extension's CREATE INDEX / SHOW INDEXES, the ``lance`` format's JVM read path, and what
Spark wrote read back by pylance through our namespace.  Prints ``RESULT <json>`` (with the
jar used and the ``javac`` found, if any).

    python tests/spark/smoke_job.py ROOT
"""

from __future__ import annotations

import json
import os
import sys


def main(root: str) -> dict:
    import pyspark

    import lance_ns
    from lance_ns.spark import build_session
    from lance_ns.spark.jar import _javac, jar_path

    jar = jar_path()
    spark = build_session("local[2]", "lance-ns-smoke", {"spark.sql.session.timeZone": "UTC"},
                          catalogs={"lake": {"impl": "dir", "root": root}})
    spark.sparkContext.setLogLevel("ERROR")
    sql = spark.sql
    sql("CREATE NAMESPACE lake.s")
    sql("CREATE TABLE lake.s.t (id BIGINT, name STRING, score DOUBLE)")
    sql("INSERT INTO lake.s.t VALUES (1, 'a', 1.5), (2, 'b', 2.5), (3, 'c', 3.5), (4, 'd', 4.5)")
    filtered = [r.id for r in sql("SELECT id FROM lake.s.t WHERE score > 2 ORDER BY id").collect()]
    count = sql("SELECT count(*) AS n FROM lake.s.t").collect()[0].n
    sql("UPDATE lake.s.t SET score = score * 10 WHERE id = 2")
    sql("DELETE FROM lake.s.t WHERE id = 4")
    spark.createDataFrame([(3, "C"), (5, "e")], "id BIGINT, name STRING").createOrReplaceTempView("changes")
    sql("MERGE INTO lake.s.t t USING changes c ON t.id = c.id "
        "WHEN MATCHED THEN UPDATE SET name = c.name WHEN NOT MATCHED THEN INSERT (id, name, score) VALUES (c.id, c.name, 0.5)")
    sql("CREATE TABLE lake.s.copy AS SELECT id, name FROM lake.s.t WHERE id < 3")
    sql("ALTER TABLE lake.s.t CREATE INDEX by_id USING btree (id)")
    indexes = [(r.name, r.index_type) for r in sql("SHOW INDEXES FROM lake.s.t").collect()]
    rows = sorted((r.id, r.name, r.score) for r in sql("SELECT * FROM lake.s.t").collect())
    ns = lance_ns.connect("dir", {"root": root})
    location = ns.describe_table({"id": ["s", "t"]}).location
    plan = spark.read.format("lance").load(location)._jdf.queryExecution().executedPlan().toString()

    import lance

    by_pylance = sorted(tuple(r.values()) for r in lance.dataset(location).to_table().to_pylist())
    copy = ns.describe_table({"id": ["s", "copy"]}).location
    copied = sorted(r["id"] for r in lance.dataset(copy).to_table().to_pylist())
    java_home = spark.sparkContext._jvm.java.lang.System.getProperty("java.home")
    spark.stop()
    return {"pyspark": pyspark.__version__, "jar": jar, "javac": _javac(), "java_home": java_home, "filtered": filtered, "count": count,
            "rows": rows, "pylance": by_pylance, "copied": copied, "indexes": indexes,
            "jvm_scan": "BatchScan" in plan and "lance" in plan.lower() and "Python" not in plan}


if __name__ == "__main__":
    result = main(sys.argv[1])
    print("RESULT " + json.dumps(result), flush=True)
    os._exit(0)  # (Spark's and pyarrow's native threads have crashed an interpreter's teardown)
