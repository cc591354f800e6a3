"""Structured Streaming on the JVM path against Spark's Python data source path and parquet.

    python benchmarks/bench_spark_streaming.py [--rows 1000000] [--rounds 5]

* **sink**: one micro-batch of N rows from parquet files into ``lance`` (the JVM bridge's
  ``LanceWrite``), into ``lance_python`` (the same writer run by Spark's Python data source
  workers, the path streams took before) and into Spark's own parquet file sink, the peer;
* **source**: one micro-batch of the N rows of a Lance table into a Lance table, read by
  ``lance`` (the JVM bridge's ``LanceStream``) and by ``lance_python`` (the same reader run by
  Spark's Python workers), the sink ``lance`` for both.

Each round runs every variant of a cell in turn (a new query each, ``trigger(availableNow=True)``,
its own checkpoint and table), so a drifting machine load hits them alike; the first round warms
the JVM and the workers and is not counted.  A query's time includes its start and its one
commit, as a user's micro-batch does.  Prints the best time of each and the throughput ratios.
Needs the ``spark`` extra and a Java runtime.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=5, help="counted rounds (one more warms up)")
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args()

    from lance_ns.spark import build_session, register

    scratch = Path(tempfile.mkdtemp(prefix="bench-spark-streaming-"))
    spark = build_session(args.master, "bench-spark-streaming", {"spark.ui.showConsoleProgress": "false"})
    try:
        if not register(spark):
            raise SystemExit("format('lance') is not the JVM bridge here (no jar for this Spark and no JDK)")
        spark.sparkContext.setLogLevel("ERROR")
        source = str(scratch / "source")
        spark.range(args.rows).selectExpr("id", "id * 2 AS x", "concat('s', id) AS s").repartition(2).write.parquet(source)
        schema = spark.read.parquet(source).schema
        lake = {"impl": "dir", "dir.root": str(scratch / "lake")}
        spark.read.parquet(source).write.format("lance").mode("overwrite").options(**lake).save("source")

        def parquet_files():
            return spark.readStream.schema(schema).parquet(source)

        def lance_table(fmt):
            return lambda: spark.readStream.format(fmt).options(**lake).load("source")

        cells = {
            "sink": {sink: (parquet_files, sink) for sink in ("lance", "lance_python", "parquet")},
            "source": {fmt: (lance_table(fmt), "lance") for fmt in ("lance", "lance_python")},
        }
        times: dict[tuple[str, str], list[float]] = {}
        for rnd in range(args.rounds + 1):
            for cell, variants in cells.items():
                for name, (read, sink) in variants.items():
                    elapsed = run_query(spark, scratch, read(), sink, lake, f"{cell}_{name}_{rnd}", args.rows)
                    if rnd:
                        times.setdefault((cell, name), []).append(elapsed)
        best = {key: min(ts) for key, ts in times.items()}
        print(f"{args.rows} rows, one micro-batch per query, best of {args.rounds} rounds ({args.master}):")
        for (cell, name), seconds in best.items():
            print(f"  {cell:6} {name:13} {seconds:6.3f} s   all: {', '.join(f'{t:.3f}' for t in times[(cell, name)])}")
        print(f"sink   throughput lance / lance_python: {best['sink', 'lance_python'] / best['sink', 'lance']:.2f}x")
        print(f"sink   throughput lance / parquet:      {best['sink', 'parquet'] / best['sink', 'lance']:.2f}x")
        print(f"source throughput lance / lance_python: {best['source', 'lance_python'] / best['source', 'lance']:.2f}x")
    finally:
        spark.stop()
        shutil.rmtree(scratch, ignore_errors=True)


def run_query(spark, scratch: Path, stream, sink: str, lake: dict, name: str, rows: int) -> float:
    """Seconds of one availableNow query of ``stream`` into a new table (or parquet directory)
    ``name`` of ``sink``; checks that it wrote ``rows`` rows."""
    options = lake if sink != "parquet" else {}
    target = name if sink != "parquet" else str(scratch / name)
    writer = (stream.writeStream.format(sink).options(**options)
              .option("checkpointLocation", str(scratch / f"checkpoint_{name}")).trigger(availableNow=True))
    start = time.perf_counter()
    query = writer.start(target)
    query.awaitTermination()
    elapsed = time.perf_counter() - start
    if query.exception() is not None:
        raise SystemExit(f"{name}: {query.exception()}")
    written = (spark.read.format(sink).options(**options).load(target) if sink != "parquet"
               else spark.read.parquet(target)).count()
    if written != rows:
        raise SystemExit(f"{name} wrote {written} rows, not {rows}")
    return elapsed


if __name__ == "__main__":
    main()
