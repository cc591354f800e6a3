"""The streaming sink: one micro-batch of N rows from parquet files into ``lance`` (the JVM
bridge's ``LanceWrite``), into ``lance_python`` (the same writer run by Spark's Python data
source workers, the path streams took before) and into Spark's own parquet file sink, the peer.

    python benchmarks/bench_spark_streaming.py [--rows 1000000] [--rounds 5]

Each round runs the three sinks in turn (a new query each, ``trigger(availableNow=True)``, its
own checkpoint and table), so a drifting machine load hits them alike; the first round warms
the JVM and the workers and is not counted.  A query's time includes its start and its one
commit, as a user's micro-batch does.  Prints the best time of each and the throughput ratios
lance / lance_python and lance / parquet.  Needs the ``spark`` extra and a Java runtime.
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
        sinks = {"lance": lake, "lance_python": lake, "parquet": {}}
        times: dict[str, list[float]] = {name: [] for name in sinks}
        for rnd in range(args.rounds + 1):
            for name, options in sinks.items():
                target = f"{name}_{rnd}" if name != "parquet" else str(scratch / f"parquet_{rnd}")
                writer = (spark.readStream.schema(schema).parquet(source).writeStream.format(name).options(**options)
                          .option("checkpointLocation", str(scratch / f"checkpoint_{name}_{rnd}"))
                          .trigger(availableNow=True))
                start = time.perf_counter()
                query = writer.start(target)
                query.awaitTermination()
                elapsed = time.perf_counter() - start
                if query.exception() is not None:
                    raise SystemExit(f"{name}: {query.exception()}")
                if rnd:
                    times[name].append(elapsed)
                reader = spark.read.format(name).options(**options)
                written = (reader.load(target) if name != "parquet" else spark.read.parquet(target)).count()
                if written != args.rows:
                    raise SystemExit(f"{name} wrote {written} rows, not {args.rows}")
        best = {name: min(ts) for name, ts in times.items()}
        print(f"{args.rows} rows, one micro-batch per query, best of {args.rounds} rounds ({args.master}):")
        for name, seconds in best.items():
            print(f"  {name:13} {seconds:6.3f} s   all: {', '.join(f'{t:.3f}' for t in times[name])}")
        print(f"throughput lance / lance_python: {best['lance_python'] / best['lance']:.2f}x")
        print(f"throughput lance / parquet:      {best['parquet'] / best['lance']:.2f}x")
    finally:
        spark.stop()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
