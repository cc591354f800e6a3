"""Spark SQL through ``lancens.spark.LanceCatalog`` (issue 18), against a
directory namespace, our REST server in front of a real Hive Metastore, and
the metastore itself (fixtures in conftest.py: one session for all)."""

from __future__ import annotations

import lance
import pyarrow as pa
import pytest
from pyspark.errors import AnalysisException
from pyspark.sql import functions as F

from lance_ns.identifiers import parse_id


def rows(df) -> list[tuple]:
    return sorted(tuple(r) for r in df.collect())


def table_id(name: str) -> list[str]:
    return parse_id(name)[1:]  # without the catalog


def pylance(catalog, name: str) -> pa.Table:
    """The table as pylance reads it through the namespace."""
    return lance.dataset(namespace_client=catalog.client, table_id=table_id(name)).to_table()


def test_namespaces(spark, catalog, db):
    # a second namespace of its own, beside db: Hive has one level of namespaces
    other = f"{db}_2"
    spark.sql(f"CREATE NAMESPACE {other} WITH PROPERTIES ('purpose' = 'tests')")
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {other}")
    with pytest.raises(AnalysisException, match=r"(?s)SCHEMA_ALREADY_EXISTS.*code 2"):
        spark.sql(f"CREATE NAMESPACE {other}")
    shown = {r[0] for r in spark.sql(f"SHOW NAMESPACES IN {catalog.name}").collect()}
    assert {db.split(".", 1)[1], other.split(".", 1)[1]} <= shown
    described = {r[0]: r[1] for r in spark.sql(f"DESCRIBE NAMESPACE EXTENDED {other}").collect()}
    assert "purpose" in str(described.get("Properties")), described
    # a non-empty namespace is refused without CASCADE and emptied with it
    spark.sql(f"CREATE TABLE {other}.t (x BIGINT)")
    with pytest.raises(AnalysisException, match=r"SCHEMA_NOT_EMPTY|NON_EMPTY"):
        spark.sql(f"DROP NAMESPACE {other}")
    assert spark.sql(f"SHOW TABLES IN {other}").count() == 1
    spark.sql(f"DROP NAMESPACE {other} CASCADE")
    assert other.split(".", 1)[1] not in {r[0] for r in spark.sql(f"SHOW NAMESPACES IN {catalog.name}").collect()}
    with pytest.raises(AnalysisException, match="SCHEMA_NOT_FOUND"):
        spark.sql(f"DROP NAMESPACE {other}")
    spark.sql(f"DROP NAMESPACE IF EXISTS {other}")
    with pytest.raises(AnalysisException, match=r"(?s)SCHEMA_NOT_FOUND.*code 1\b"):
        spark.sql(f"SHOW TABLES IN {other}").collect()


def test_nested_namespaces(spark, catalog, db):
    """Namespaces inside namespaces where the backend has them (dir); Hive
    2's databases are one level: refused with its code 13."""
    child = f"{db}.inner"
    if catalog.properties["impl"] == "dir":
        spark.sql(f"CREATE NAMESPACE {child}")
        spark.sql(f"CREATE TABLE {child}.t AS SELECT 1 AS x")
        assert [r[0] for r in spark.sql(f"SHOW NAMESPACES IN {db}").collect()] == [child.split(".", 1)[1]]
        assert spark.table(f"{child}.t").count() == 1
    else:
        with pytest.raises(Exception, match=r"InvalidInputError \(code 13\).*levels deep"):
            spark.sql(f"CREATE NAMESPACE {child}")


def test_create_insert_select(spark, catalog, db):
    t = f"{db}.events"
    spark.sql(f"CREATE TABLE {t} (id BIGINT, kind STRING, amount DOUBLE) TBLPROPERTIES ('team' = 'sales')")
    assert [r.tableName for r in spark.sql(f"SHOW TABLES IN {db}").collect()] == ["events"]
    spark.sql(f"INSERT INTO {t} VALUES (1, 'view', 0.5), (2, 'buy', 9.5), (3, 'buy', NULL)")
    assert rows(spark.sql(f"SELECT * FROM {t}")) == [(1, "view", 0.5), (2, "buy", 9.5), (3, "buy", None)]
    assert rows(spark.sql(f"SELECT id FROM {t} WHERE kind = 'buy' AND amount > 1")) == [(2,)]
    assert spark.table(t).count() == 3
    extended = {r[0]: r[1] for r in spark.sql(f"DESCRIBE TABLE EXTENDED {t}").collect()}
    assert "team" in str(extended.get("Table Properties")) and extended.get("Provider") == "lance"
    # pylance reads what Spark wrote, through the namespace
    assert pylance(catalog, t).sort_by("id").to_pylist() == [
        {"id": 1, "kind": "view", "amount": 0.5},
        {"id": 2, "kind": "buy", "amount": 9.5},
        {"id": 3, "kind": "buy", "amount": None},
    ]
    spark.sql(f"INSERT OVERWRITE {t} SELECT id * 10, kind, amount FROM {t} WHERE id < 3")
    assert rows(spark.table(t)) == [(10, "view", 0.5), (20, "buy", 9.5)]


def test_spark_reads_what_pylance_wrote(spark, catalog, db):
    t = f"{db}.made_by_pylance"
    data = pa.table({"x": pa.array([1, 2, 3], pa.int64()), "s": ["a", None, "c"]})
    lance.write_dataset(data, namespace_client=catalog.client, table_id=table_id(t), mode="create")
    assert rows(spark.table(t)) == [(1, "a"), (2, None), (3, "c")]
    assert spark.sql(f"SELECT count(*) FROM {t}").collect()[0][0] == 3


def test_count_star_from_metadata(spark, catalog, db):
    t = f"{db}.counted"
    spark.range(1000).selectExpr("id AS x", "id % 7 AS y").writeTo(t).create()
    query = spark.sql(f"SELECT count(*) FROM {t}")
    plan = query._jdf.queryExecution().executedPlan().toString()
    # answered at planning from the fragments' row counts: a local row, no scan, no task
    assert "LocalTableScan" in plan and "BatchScan" not in plan, plan
    assert query.collect()[0][0] == 1000
    assert spark.sql(f"SELECT count(*) FROM {t} WHERE y = 0").collect()[0][0] == 143
    spark.sql(f"DELETE FROM {t} WHERE x < 10")  # live rows: deletions count
    assert spark.sql(f"SELECT count(*), count(*) FROM {t}").collect()[0][:] == (990, 990)


def test_dataframe_writes(spark, catalog, db):
    t = f"{db}.frames"
    df = spark.createDataFrame([(1, "a"), (2, "b")], "n BIGINT, s STRING")
    df.writeTo(t).create()
    with pytest.raises(AnalysisException, match="TABLE_OR_VIEW_ALREADY_EXISTS|already exists"):
        df.writeTo(t).create()
    df.writeTo(t).append()
    assert spark.table(t).count() == 4
    spark.createDataFrame([(9, "z")], "n BIGINT, s STRING").writeTo(t).overwrite(F.lit(True))
    assert rows(spark.table(t)) == [(9, "z")]
    df.writeTo(t).createOrReplace()
    assert rows(spark.table(t)) == [(1, "a"), (2, "b")]
    df.write.mode("append").saveAsTable(t)
    assert spark.table(t).count() == 4
    df.write.saveAsTable(f"{db}.saved")
    assert rows(spark.table(f"{db}.saved")) == [(1, "a"), (2, "b")]


def test_ctas_and_rtas(spark, catalog, db):
    spark.sql(f"CREATE TABLE {db}.src AS SELECT id, id * 2 AS twice FROM range(5)")
    assert rows(spark.table(f"{db}.src")) == [(i, 2 * i) for i in range(5)]
    spark.sql(f"REPLACE TABLE {db}.src AS SELECT 'x' AS s")
    assert rows(spark.table(f"{db}.src")) == [("x",)]
    assert pylance(catalog, f"{db}.src").to_pylist() == [{"s": "x"}]


def test_drop_table(spark, catalog, db):
    spark.sql(f"CREATE TABLE {db}.gone (x INT)")
    spark.sql(f"DROP TABLE {db}.gone")
    assert spark.sql(f"SHOW TABLES IN {db}").count() == 0
    with pytest.raises(AnalysisException, match="TABLE_OR_VIEW_NOT_FOUND"):
        spark.sql(f"DROP TABLE {db}.gone")
    spark.sql(f"DROP TABLE IF EXISTS {db}.gone")
    spark.sql(f"CREATE TABLE {db}.purged (x INT)")
    spark.sql(f"DROP TABLE {db}.purged PURGE")
    with pytest.raises(AnalysisException, match=r"TABLE_OR_VIEW_NOT_FOUND"):
        spark.table(f"{db}.purged")


def test_delete_and_time_travel(spark, catalog, db):
    t = f"{db}.history"
    spark.range(10).selectExpr("id AS x").writeTo(t).create()  # dir, hms: staged, version 1 has the rows
    before = pylance(catalog, t)
    version = lance.dataset(namespace_client=catalog.client, table_id=table_id(t)).version
    spark.sql(f"DELETE FROM {t} WHERE x >= 5 OR x = 0")
    assert rows(spark.table(t)) == [(i,) for i in range(1, 5)]
    assert pylance(catalog, t).num_rows == 4
    assert rows(spark.sql(f"SELECT * FROM {t} VERSION AS OF {version}")) == [(i,) for i in range(10)]
    assert before.num_rows == 10
    ts = lance.dataset(namespace_client=catalog.client, table_id=table_id(t)).versions()[-1]["timestamp"]
    at = ts.strftime("%Y-%m-%d %H:%M:%S.%f")
    assert spark.sql(f"SELECT count(*) FROM {t} TIMESTAMP AS OF '{at}'").collect()[0][0] == 4
    with pytest.raises(Exception, match=r"TableVersionNotFoundError \(code 11\)"):
        spark.sql(f"SELECT * FROM {t} VERSION AS OF 99").collect()
    spark.sql(f"DELETE FROM {t}")
    assert spark.table(t).count() == 0


def test_alter_table(spark, catalog, db):
    """ALTER TABLE through the namespace's AlterTable* and RenameTable operations;
    what Lance cannot do (a column comment) fails with code 0 and changes nothing."""
    t = f"{db}.altered"
    spark.sql(f"CREATE TABLE {t} (x BIGINT, y STRING)")
    spark.sql(f"INSERT INTO {t} VALUES (1, 'a')")

    spark.sql(f"ALTER TABLE {t} ADD COLUMN z INT")
    assert spark.table(t).columns == ["x", "y", "z"]
    spark.sql(f"ALTER TABLE {t} RENAME COLUMN y TO w")
    assert spark.table(t).columns == ["x", "w", "z"]
    with pytest.raises(Exception, match=r"code 0|not supported"):
        spark.sql(f"ALTER TABLE {t} ALTER COLUMN x COMMENT 'no'")
    assert spark.table(t).columns == ["x", "w", "z"]
    spark.sql(f"ALTER TABLE {t} DROP COLUMN x")
    assert rows(spark.table(t)) == [("a", None)]
    renamed = f"{db}.renamed"
    # the new name is written without the catalog (Spark's form for v2 catalogs, as Iceberg's docs show)
    spark.sql(f"ALTER TABLE {t} RENAME TO {renamed.split('.', 1)[1]}")
    assert rows(spark.table(renamed)) == [("a", None)]
    assert pylance(catalog, renamed).to_pylist() == [{"w": "a", "z": None}]
