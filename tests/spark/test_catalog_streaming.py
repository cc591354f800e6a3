"""Structured Streaming through ``lancens.spark.LanceCatalog`` (issue 18):
``readStream.table`` and ``writeStream.toTable`` on catalog tables, exactly
once across a restart from the checkpoint; the source and the sink are the JVM
path's (``LanceStream``, ``LanceWrite``: the bridge's workers), as every batch read
and write is, not Spark's Python source."""

from __future__ import annotations

import contextlib
import io

import pytest

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
