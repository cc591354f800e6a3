"""UPDATE and MERGE INTO through ``lancens.spark.LanceCatalog`` (issue 18):
Spark's group-based copy-on-write, one Lance commit against the version the
statement read.  Against a directory namespace and our REST server in front
of a real Hive Metastore (the conftest's one session and catalogs)."""

from __future__ import annotations

import os
from pathlib import Path

import lance
import pyarrow as pa
import pytest

from tests.spark.once import once_per_job
from tests.spark.test_catalog import pylance, rows, table_id

#: dir, and one catalog backend through the REST server
pytestmark = pytest.mark.parametrize("catalog", ["dir", pytest.param("rest", marks=pytest.mark.slow)], indirect=True)


def test_update(spark, catalog, db):
    t = f"{db}.accounts"
    spark.sql(f"CREATE TABLE {t} (id BIGINT, owner STRING, balance DOUBLE)")
    spark.sql(f"INSERT INTO {t} VALUES (1, 'ann', 10.0), (2, 'bob', 20.0), (3, 'cy', NULL)")
    spark.sql(f"UPDATE {t} SET balance = balance * 2, owner = upper(owner) WHERE id >= 2")
    expected = [(1, "ann", 10.0), (2, "BOB", 40.0), (3, "CY", None)]
    assert rows(spark.table(t)) == expected
    spark.sql(f"UPDATE {t} SET balance = coalesce(balance, 0) + 1")  # every row
    expected = [(1, "ann", 11.0), (2, "BOB", 41.0), (3, "CY", 1.0)]
    assert rows(spark.table(t)) == expected
    # pylance reads the same rows, with the table's own schema
    got = pylance(catalog, t)
    assert sorted(tuple(r.values()) for r in got.to_pylist()) == expected
    assert got.schema.names == ["id", "owner", "balance"]


def test_merge_into(spark, catalog, db):
    t = f"{db}.stock"
    spark.sql(f"CREATE TABLE {t} (sku STRING, qty BIGINT)")
    spark.sql(f"INSERT INTO {t} VALUES ('a', 1), ('b', 2), ('c', 3)")
    spark.createDataFrame([("a", 10), ("b", 0), ("d", 4)], "sku STRING, qty BIGINT").createOrReplaceTempView("delivery")
    spark.sql(f"""
        MERGE INTO {t} AS s USING delivery AS d ON s.sku = d.sku
        WHEN MATCHED AND d.qty = 0 THEN DELETE
        WHEN MATCHED THEN UPDATE SET s.qty = s.qty + d.qty
        WHEN NOT MATCHED THEN INSERT (sku, qty) VALUES (d.sku, d.qty)
    """)
    expected = [("a", 11), ("c", 3), ("d", 4)]
    assert rows(spark.table(t)) == expected
    assert sorted(tuple(r.values()) for r in pylance(catalog, t).to_pylist()) == expected

    # a source row matching one target row twice: Spark's cardinality error, nothing written
    version = lance.dataset(namespace_client=catalog.client, table_id=table_id(t)).version
    spark.createDataFrame([("a", 1), ("a", 2)], "sku STRING, qty BIGINT").createOrReplaceTempView("twice")
    with pytest.raises(Exception, match="MERGE_CARDINALITY_VIOLATION"):
        spark.sql(f"MERGE INTO {t} AS s USING twice AS d ON s.sku = d.sku WHEN MATCHED THEN UPDATE SET s.qty = d.qty")
    assert lance.dataset(namespace_client=catalog.client, table_id=table_id(t)).version == version
    assert rows(spark.table(t)) == expected


def test_concurrent_commit_fails_the_statement(spark, catalog, db, tmp_path):
    """A writer commits while UPDATE runs (from inside the statement's own
    tasks, so after it read its version): the UPDATE fails with code 14
    and the table is what the other writer made it."""
    t = f"{db}.raced"
    spark.sql(f"CREATE TABLE {t} (x BIGINT)")
    spark.sql(f"INSERT INTO {t} VALUES (1), (2)")
    uri = lance.dataset(namespace_client=catalog.client, table_id=table_id(t)).uri
    marker = str(tmp_path / "committed")

    def concurrent_writer():
        import lance as pylance_in_worker

        pylance_in_worker.write_dataset(pa.table({"x": pa.array([100], pa.int64())}), uri, mode="append")

    spark.udf.register("concurrent_writer", once_per_job(marker, concurrent_writer), "bigint")
    with pytest.raises(Exception, match=r"ConcurrentModificationError.*code 14"):
        spark.sql(f"UPDATE {t} SET x = concurrent_writer(x) + 10")
    assert os.path.exists(marker)
    assert rows(spark.table(t)) == [(1,), (2,), (100,)]
    # the failed statement's data files were deleted: only committed fragments' files remain
    dataset = lance.dataset(uri)
    committed = {f.path for fragment in dataset.get_fragments() for f in fragment.metadata.files}
    on_disk = {p.name for p in (Path(uri.removeprefix("file://")) / "data").iterdir()}
    assert on_disk == committed
