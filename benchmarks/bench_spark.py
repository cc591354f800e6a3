"""Spark throughput: the ``lance`` source vs Spark's parquet vs pylance alone.

    python benchmarks/bench_spark.py                 # 1M rows, local[2], 3 rounds
    python benchmarks/bench_spark.py --rows 5000000 --rounds 5

One cached DataFrame (id int64, x float64, s 20-char string) is written and
read by each system in turn, interleaved round by round so that load from
other processes hits all of them alike.  Reported: the median time of each
operation, rows/s, and the ratio of rows/s to Spark parquet's (>1 = faster).

* write: ``df.write`` (overwrite) / ``lance.write_dataset`` of the same rows;
* full scan: every column read, through Spark's ``noop`` sink /
  ``to_table()``;
* one-column aggregate: ``sum(x)`` as a user writes it (no option): Spark
  tells parquet and the lance format (JVM read path) which column it needs.

"lance source" is ``format("lance")``: with a JDK its reads take the JVM
column-batch path (``lance_ns/spark/bridge/*.java``), writes always run in Python.
"lance python" is the same table read through the pure Python source
(``format("lance_python")``, what ``lance`` is without a JDK); it is given
``columns=x`` for the aggregate, since Python sources get no column pruning.

"lance catalog" is the same through the SQL catalog ``lancens.spark.LanceCatalog``
(``spark.sql.catalog.lake``, a directory namespace): ``SELECT sum(x) FROM
lake.bench.t``, ``df.writeTo("lake.bench.w").append()`` for the write, and
``SELECT count(*)`` (answered from the table's metadata) against parquet's
``count()``.  ``--session builder`` makes the session with
``SparkSession.builder`` and exactly the settings ``python -m
lance_ns.spark.bridge`` prints (no ``register`` call), as a user's own session.

``--cluster`` runs the same on a Spark standalone cluster started here: a
master and two 1-core workers, each its own JVM, from pyspark's jars
(tests/servers/spark_cluster.py), so every read and write crosses executor
JVMs and their Python workers; the driver only plans and commits.

"python floor" is what any Spark Python data source costs at best: a writer
that drops the Arrow batches it is handed, and a reader whose two partitions
yield ``x`` from memory (no I/O, one column).  Where the lance source is close
to it, the rest of its time is Spark's JVM <-> Python path, not Lance.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
from pathlib import Path

from common import timed


def _floor_source(rows: int):
    """The cheapest possible Python data source (see the module docstring)."""
    from pyspark.sql.datasource import (
        DataSource,
        DataSourceArrowWriter,
        DataSourceReader,
        InputPartition,
        WriterCommitMessage,
    )

    class Drop(DataSourceArrowWriter):
        def write(self, iterator):
            for _ in iterator:
                pass
            return WriterCommitMessage()

    class Memory(DataSourceReader):
        def partitions(self):
            half = rows // 2
            return [InputPartition((0, half)), InputPartition((half, rows))]

        def read(self, partition):
            import numpy as np
            import pyarrow as pa

            lo, hi = partition.value
            yield pa.RecordBatch.from_arrays([pa.array(np.arange(lo, hi, dtype="float64") * 0.5)], names=["x"])

    class Floor(DataSource):
        @classmethod
        def name(cls):
            return "pyfloor"

        def schema(self):
            return "x double"

        def reader(self, schema):
            return Memory()

        def writer(self, schema, overwrite):
            return Drop()

    return Floor


def catalog_ops(spark, df) -> dict[str, dict]:
    """The catalog's rows (catalog ``lake``): sum(x), append and count(*)."""
    spark.sql("CREATE NAMESPACE IF NOT EXISTS lake.bench")
    df.writeTo("lake.bench.t").createOrReplace()
    df.writeTo("lake.bench.w").createOrReplace()

    def agg_catalog():
        spark.sql("SELECT sum(x) FROM lake.bench.t").collect()

    def w_catalog():
        df.writeTo("lake.bench.w").append()

    def count_catalog():
        spark.sql("SELECT count(*) FROM lake.bench.t").collect()

    return {"sum(x)": {"lance catalog": agg_catalog}, "write": {"lance catalog": w_catalog},
            "count(*)": {"lance catalog": count_catalog}}


def _builder_session(master: str, conf: dict[str, str], catalogs: dict):
    """A session as a user builds one: SparkSession.builder and the settings
    ``python -m lance_ns.spark.bridge`` prints (jar, catalogs, JVM flags)."""
    import os
    import sys

    from pyspark.sql import SparkSession

    from lance_ns.spark.jar import jar_path
    from lance_ns.spark.session import submit_conf

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.master(master).appName("bench-spark-builder")
    for key, value in {**submit_conf(catalogs, jar_path()), **conf}.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


def start_cluster(args) -> dict[str, str]:
    """``--cluster``: start a standalone master and two 1-core workers (stopped at exit),
    point ``args.master`` at it, and return the driver settings it needs."""
    import atexit
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for tests.servers.spark_cluster
    from tests.servers.spark_cluster import SparkStandalone

    workdir = Path(tempfile.mkdtemp(prefix="bench-spark-cluster-"))
    cluster = SparkStandalone(workdir, workers=2, worker_memory="2g").start()
    atexit.register(shutil.rmtree, workdir, ignore_errors=True)
    atexit.register(cluster.stop)  # runs first
    args.master = cluster.url
    return {"spark.driver.host": "127.0.0.1", "spark.executor.memory": "1500m", "spark.cores.max": "2"}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--dir", help="scratch directory (default: a temp dir, removed)")
    parser.add_argument("--ops", default="write,full scan,sum(x),count(*)", help="comma-separated subset to run")
    parser.add_argument(
        "--session",
        choices=("build_session", "builder"),
        default="build_session",
        help="builder: SparkSession.builder with the documented settings, no register() call",
    )
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", help="extra Spark settings")
    parser.add_argument(
        "--cluster", action="store_true", help="on a standalone master + two 1-core workers started here (not --master)"
    )
    args = parser.parse_args()
    cluster_conf = start_cluster(args) if args.cluster else {}

    import lance
    import pyarrow.compute as pc

    from lance_ns.spark import build_session, register

    conf = {"spark.ui.showConsoleProgress": "false", **cluster_conf, **dict(c.split("=", 1) for c in args.conf)}
    scratch = Path(args.dir or tempfile.mkdtemp(prefix="bench-spark-"))
    catalogs = {"lake": {"impl": "dir", "root": str(scratch / "lake")}}
    if args.session == "builder":
        spark = _builder_session(args.master, conf, catalogs)
        bridge = "lance-ns-spark" in spark.conf.get("spark.jars", "")
    else:
        spark = build_session(args.master, "bench-spark", conf, catalogs=catalogs)
        bridge = register(spark)  # True: format("lance") reads through the JVM bridge
    spark.sparkContext.setLogLevel("ERROR")
    spark.dataSource.register(_floor_source(args.rows))
    paths = {k: str(scratch / k) for k in ("lance_src", "parquet", "pylance")}

    df = spark.range(0, args.rows, numPartitions=2).selectExpr(
        "id", "CAST(id AS DOUBLE) * 0.5 AS x", "substr(sha2(cast(id AS string), 256), 1, 20) AS s"
    ).cache()
    df.count()
    arrow = df.toArrow()  # pylance gets the very same rows

    def w_lance():
        df.write.format("lance").mode("overwrite").save(paths["lance_src"])

    def w_parquet():
        df.write.mode("overwrite").parquet(paths["parquet"])

    def w_pylance():
        lance.write_dataset(arrow, paths["pylance"], mode="overwrite")

    def scan_lance():
        spark.read.format("lance").load(paths["lance_src"]).write.format("noop").mode("overwrite").save()

    def scan_parquet():
        spark.read.parquet(paths["parquet"]).write.format("noop").mode("overwrite").save()

    def scan_python():
        spark.read.format("lance_python").load(paths["lance_src"]).write.format("noop").mode("overwrite").save()

    def scan_pylance():
        lance.dataset(paths["pylance"]).to_table()

    def agg_lance():
        spark.read.format("lance").load(paths["lance_src"]).agg({"x": "sum"}).collect()

    def agg_python():
        spark.read.format("lance_python").option("columns", "x").load(paths["lance_src"]).agg({"x": "sum"}).collect()

    def agg_parquet():
        spark.read.parquet(paths["parquet"]).agg({"x": "sum"}).collect()

    def w_floor():
        df.write.format("pyfloor").mode("overwrite").save()

    def agg_floor():
        spark.read.format("pyfloor").load().agg({"x": "sum"}).collect()

    def agg_pylance():
        pc.sum(lance.dataset(paths["pylance"]).to_table(columns=["x"])["x"])

    ops = {
        "write": {"lance source": w_lance, "spark parquet": w_parquet, "pylance": w_pylance, "python floor": w_floor},
        "full scan": {
            "lance source": scan_lance,
            "lance python": scan_python,
            "spark parquet": scan_parquet,
            "pylance": scan_pylance,
        },
        "sum(x)": {
            "lance source": agg_lance,
            "lance python": agg_python,
            "spark parquet": agg_parquet,
            "pylance": agg_pylance,
            "python floor": agg_floor,
        },
    }
    def count_parquet():
        spark.read.parquet(paths["parquet"]).count()

    ops["count(*)"] = {"spark parquet": count_parquet}
    for op, systems in catalog_ops(spark, df).items():
        ops[op].update(systems)
    ops = {k: v for k, v in ops.items() if k in args.ops.split(",")}
    if "count(*)" in ops and "write" not in ops:
        w_parquet()  # count(*) reads parquet's files
    # warm-up: JIT, Python workers and their imports, file caches
    for group in ops.values():
        for fn in group.values():
            fn()
    times: dict[tuple[str, str], list[float]] = {}
    for r in range(args.rounds):
        for op, group in ops.items():
            systems = list(group.items())
            systems = systems[r % len(systems) :] + systems[: r % len(systems)]  # rotate the order
            for name, fn in systems:
                times.setdefault((op, name), []).extend(timed(fn))

    print(
        f"rows={args.rows} master={args.master} session={args.session} rounds={args.rounds} lance reads: "
        f"{'JVM bridge' if bridge else 'Python source'} (median seconds, rows/s, ratio to parquet)"
    )
    for op, group in ops.items():
        base = statistics.median(times[(op, "spark parquet")])
        for name in group:
            med = statistics.median(times[(op, name)])
            print(f"  {op:<10} {name:<14} {med:7.3f}s {args.rows / med / 1e6:7.2f}M rows/s  x{base / med:5.2f}")
    spark.stop()
    if not args.dir:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
