"""Structured Streaming through ``lancens.spark.LanceCatalog`` (issue 18):
``readStream.table`` and ``writeStream.toTable`` on catalog tables, exactly
once across a restart from the checkpoint; the source and the sink are the JVM
path's (``LanceStream``, ``LanceWrite``: the bridge's workers), as every batch read
and write is, not Spark's Python source."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest
from pyspark.errors import StreamingQueryException

from tests.spark.test_catalog import pylance, rows


@pytest.mark.parametrize("catalog", ["dir"], indirect=True)
def test_stream_between_catalog_tables(spark, catalog, db, tmp_path):
    source, sink = f"{db}.clicks", f"{db}.clicks_copy"
    spark.sql(f"CREATE TABLE {source} (id BIGINT, page STRING)")
    spark.sql(f"CREATE TABLE {sink} (id BIGINT, page STRING)")
    checkpoint = tmp_path / "checkpoint"

    def run_until_caught_up():
        query = (
            spark.readStream.table(source)
            .writeStream.option("checkpointLocation", str(checkpoint))
            .trigger(availableNow=True)
            .toTable(sink)
        )
        query.awaitTermination(120)
        assert query.exception() is None, query.exception()
        shown = io.StringIO()
        with contextlib.redirect_stdout(shown):
            query.explain()  # the last micro-batch's plan
        assert "LanceWrite(stream append of" in shown.getvalue(), shown.getvalue()
        assert query.lastProgress["sources"][0]["description"].startswith("LanceStream("), query.lastProgress

    spark.sql(f"INSERT INTO {source} VALUES (1, 'a'), (2, 'b')")
    run_until_caught_up()
    spark.sql(f"INSERT INTO {source} VALUES (3, 'c')")
    spark.sql(f"INSERT INTO {source} VALUES (4, 'd')")
    run_until_caught_up()  # a restart from the checkpoint: only the new rows
    expected = [(1, "a"), (2, "b"), (3, "c"), (4, "d")]
    assert rows(spark.table(sink)) == expected

    # the sink committed the last batch but the checkpoint never recorded it
    # (a crash in between): the restart replays it, and the sink skips it
    last = max((checkpoint / "commits").glob("[0-9]*"), key=lambda p: int(p.name))
    last.unlink()
    last.with_name(f".{last.name}.crc").unlink(missing_ok=True)  # Hadoop's checksum beside it
    run_until_caught_up()
    assert rows(spark.table(sink)) == expected
    assert sorted(tuple(r.values()) for r in pylance(catalog, sink).to_pylist()) == expected


def _fail_second_task(batches):
    """mapInArrow: the first partition's rows pass; the second task fails after its rows,
    late enough for the first to have finished (its files written, its message with the driver)."""
    import time

    import pyspark

    yield from batches
    if pyspark.TaskContext.get().partitionId() == 1:
        time.sleep(3)
        raise RuntimeError("a task of this micro-batch fails")


@pytest.mark.parametrize("catalog", ["dir"], indirect=True)
def test_a_failed_micro_batch_commits_nothing_and_the_restart_writes_it_once(spark, catalog, db, tmp_path):
    """A micro-batch one of whose tasks fails is aborted: its finished task's files are deleted
    and no version is committed; the query started again from its checkpoint writes the batch
    once."""
    source, sink = f"{db}.events", f"{db}.events_copy"
    spark.sql(f"CREATE TABLE {source} (id BIGINT, page STRING)")
    spark.sql(f"CREATE TABLE {sink} (id BIGINT, page STRING)")
    spark.createDataFrame([(i, f"p{i}") for i in range(20)], "id BIGINT, page STRING").repartition(2) \
        .writeTo(source).append()
    checkpoint = str(tmp_path / "checkpoint")
    before = pylance(catalog, sink)
    location = catalog.client.describe_table({"id": [db.split(".")[1], "events_copy"]}).location

    def data_files():
        return sorted(p.name for p in (Path(location) / "data").glob("*")) if (Path(location) / "data").exists() else []

    def run(stream):
        query = (stream.writeStream.option("checkpointLocation", checkpoint).trigger(availableNow=True)
                 .toTable(sink))
        with contextlib.suppress(StreamingQueryException):  # a failed query raises it here
            query.awaitTermination(120)
        return query.exception()

    stream = spark.readStream.option("fragmentsPerPartition", "1").table(source)
    failed = run(stream.mapInArrow(_fail_second_task, "id BIGINT, page STRING"))
    assert failed is not None and "a task of this micro-batch fails" in str(failed)
    assert pylance(catalog, sink).equals(before) and data_files() == []  # nothing committed, nothing left
    assert run(stream) is None  # the same micro-batch, from the checkpoint
    assert sorted(pylance(catalog, sink).to_pylist(), key=lambda r: r["id"]) == \
        [{"id": i, "page": f"p{i}"} for i in range(20)]
