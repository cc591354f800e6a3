"""Every DataFrameWriterV2 mode through ``lancens.spark.LanceCatalog``, and
the SQL Spark maps onto them: create, replace, createOrReplace, append,
overwrite(condition) (``INSERT INTO ... REPLACE WHERE``), overwritePartitions
(the whole table: it is unpartitioned) and INSERT OVERWRITE.  An overwrite by
condition is one Lance commit that deletes the matching rows and adds the
new ones; a condition Lance cannot take is refused before anything is
written.  The conftest's one session and catalogs; a managed-versioning
directory catalog of this module's own."""

from __future__ import annotations

import glob
import json
import os
import threading
from decimal import Decimal
from pathlib import Path

import lance
import pyarrow as pa
import pytest
from pyspark.sql import functions as F

from tests.spark.conftest import Catalog
from tests.spark.once import once_per_job
from tests.spark.test_catalog import rows, table_id

SCHEMA = "n BIGINT, s STRING"
#: dir, and one catalog backend through the REST server
backends = pytest.mark.parametrize("catalog", ["dir", pytest.param("rest", marks=pytest.mark.slow)], indirect=True)


#: Spark's refusals of a condition: one it cannot make a source filter of, one the table cannot take
REFUSED = r"cannot translate expression to source filter|does not support overwrite by expression: lance_\w+\.db"


def dataset(catalog, name: str) -> lance.LanceDataset:
    return lance.dataset(namespace_client=catalog.client, table_id=table_id(name))


def frame(spark, *values):
    return spark.createDataFrame(list(values), SCHEMA)


def files(ds: lance.LanceDataset) -> set[str]:
    """Every data and deletion file in the table's directory."""
    root = Path(ds.uri.removeprefix("file://"))
    dirs = [root / d for d in ("data", "_deletions") if (root / d).exists()]
    return {str(p.relative_to(root)) for d in dirs for p in d.iterdir()}


@backends
def test_every_writer_mode(spark, catalog, db):
    t = f"{db}.modes"
    frame(spark, (1, "a"), (2, "b")).writeTo(t).create()
    assert rows(spark.table(t)) == [(1, "a"), (2, "b")]
    frame(spark, (3, "c"), (4, "d")).writeTo(t).append()
    assert rows(spark.table(t)) == [(1, "a"), (2, "b"), (3, "c"), (4, "d")]
    frame(spark, (20, "x"), (30, "y")).writeTo(t).overwrite((F.col("n") >= 2) & (F.col("n") <= 3))
    assert rows(spark.table(t)) == [(1, "a"), (4, "d"), (20, "x"), (30, "y")]
    frame(spark, (5, "e")).writeTo(t).overwrite(F.col("s").isin("a", "zz") | F.col("s").isNull())
    assert rows(spark.table(t)) == [(4, "d"), (5, "e"), (20, "x"), (30, "y")]
    frame(spark, (6, "f")).writeTo(t).overwrite(F.lit(True))
    assert rows(spark.table(t)) == [(6, "f")]
    frame(spark, (7, "g"), (8, "h")).writeTo(t).overwritePartitions()  # unpartitioned: the whole table
    assert rows(spark.table(t)) == [(7, "g"), (8, "h")]
    spark.createDataFrame([("z",)], "s STRING").writeTo(t).replace()
    assert rows(spark.table(t)) == [("z",)]
    frame(spark, (9, "i")).writeTo(t).createOrReplace()
    assert rows(spark.table(t)) == [(9, "i")]
    frame(spark, (10, "j")).writeTo(f"{db}.fresh").createOrReplace()
    assert rows(spark.table(f"{db}.fresh")) == [(10, "j")]
    # pylance reads what Spark wrote, in the table's schema
    assert dataset(catalog, t).to_table().to_pylist() == [{"n": 9, "s": "i"}]
    # every batch write is the bridge's own (no Spark Python worker): an append, an overwrite
    for statement in (f"INSERT INTO {t} VALUES (11, 'k')", f"INSERT OVERWRITE {t} VALUES (12, 'l')"):
        plan = spark.sql(f"EXPLAIN {statement}").collect()[0][0]
        assert "LanceWrite(" in plan, plan


@backends
def test_overwrite_by_condition_is_one_commit(spark, catalog, db):
    t = f"{db}.atomic"
    frame(spark, (1, "a"), (2, "b"), (3, "c")).coalesce(1).writeTo(t).create()
    frame(spark, (4, "d")).writeTo(t).append()
    before = dataset(catalog, t)
    old_rows = rows(spark.table(t))
    frame(spark, (2, "B"), (5, "e")).writeTo(t).overwrite((F.col("n") == 2) | (F.col("n") == 4))
    after = dataset(catalog, t)
    assert after.version == before.version + 1  # one commit: deletion and new rows together
    assert after.read_transaction(after.version).operation.__class__.__name__ == "Update"
    assert rows(spark.table(t)) == [(1, "a"), (2, "B"), (3, "c"), (5, "e")]
    # the version before is untouched
    assert rows(spark.sql(f"SELECT * FROM {t} VERSION AS OF {before.version}")) == old_rows
    assert sorted(tuple(r.values()) for r in before.to_table().to_pylist()) == old_rows
    # a condition matching nothing only adds
    frame(spark, (6, "f")).writeTo(t).overwrite(F.col("n") > 100)
    assert rows(spark.table(t)) == [(1, "a"), (2, "B"), (3, "c"), (5, "e"), (6, "f")]


@backends
def test_refused_conditions_write_nothing(spark, catalog, db):
    """Conditions that do not become Lance SQL with Spark's semantics are
    refused at planning: no version, no file."""
    t = f"{db}.refused"
    spark.sql(f"CREATE TABLE {t} (n BIGINT, s STRING, d DECIMAL(10, 2))")
    spark.sql(f"INSERT INTO {t} VALUES (1, 'a', 1.50), (2, 'b', 2.50)")
    before = dataset(catalog, t)
    on_disk = files(before)
    new = spark.createDataFrame([(3, "c", None)], "n BIGINT, s STRING, d DECIMAL(10, 2)")
    spark.udf.register("shout", lambda s: s.upper(), "string")
    for condition in (
        F.col("n") % 2 == 0,  # arithmetic: no source filter (Spark's own refusal)
        F.col("d") > 2,  # a decimal value: not carried exactly to the worker
        F.expr("shout(s) = 'A'"),  # a Python UDF
    ):
        with pytest.raises(Exception, match=REFUSED):
            new.writeTo(t).overwrite(condition)
        assert dataset(catalog, t).version == before.version
    with pytest.raises(Exception, match=REFUSED):
        spark.sql(f"INSERT INTO {t} REPLACE WHERE n % 2 = 0 SELECT 3, 'c', NULL")
    assert dataset(catalog, t).version == before.version
    assert files(dataset(catalog, t)) == on_disk
    assert rows(spark.table(t)) == [(1, "a", Decimal("1.50")), (2, "b", Decimal("2.50"))]


@backends
def test_sql_paths(spark, catalog, db):
    t = f"{db}.sql"
    spark.sql(f"CREATE TABLE {t} (n BIGINT, s STRING)")
    spark.sql(f"INSERT INTO {t} VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    version = dataset(catalog, t).version
    spark.sql(f"INSERT INTO {t} REPLACE WHERE n >= 2 SELECT n * 10, s FROM VALUES (2, 'x') AS v(n, s)")
    assert rows(spark.table(t)) == [(1, "a"), (20, "x")]
    assert dataset(catalog, t).version == version + 1
    spark.sql(f"INSERT INTO {t} REPLACE WHERE s = 'a' AND n = 1 SELECT 100, 'z'")
    assert rows(spark.table(t)) == [(20, "x"), (100, "z")]
    spark.sql(f"INSERT OVERWRITE {t} SELECT 7, 'g'")
    assert rows(spark.table(t)) == [(7, "g")]
    spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    try:  # unpartitioned: dynamic overwrite still replaces the table
        spark.sql(f"INSERT OVERWRITE {t} SELECT 8, 'h'")
    finally:
        spark.conf.unset("spark.sql.sources.partitionOverwriteMode")
    assert rows(spark.table(t)) == [(8, "h")]
    spark.sql(f"CREATE OR REPLACE TABLE {t} AS SELECT 'only' AS word")
    assert rows(spark.table(t)) == [("only",)]
    assert dataset(catalog, t).to_table().to_pylist() == [{"word": "only"}]


@backends
def test_concurrent_delete_fails_the_overwrite(spark, catalog, db, tmp_path):
    """Another writer deletes from the table while overwrite(condition) runs
    (from inside the write's own tasks): Lance's conflict check refuses the
    commit, the table is what the other writer made it, and neither the
    job's data files nor its deletion files are left behind."""
    t = f"{db}.raced"
    frame(spark, (1, "a"), (2, "b"), (3, "c")).coalesce(1).writeTo(t).create()
    uri = dataset(catalog, t).uri
    marker = str(tmp_path / "deleted")

    def concurrent_delete():
        import lance as pylance_in_worker

        pylance_in_worker.dataset(uri).delete("n = 1")

    spark.udf.register("concurrent_delete", once_per_job(marker, concurrent_delete), "bigint")
    incoming = spark.sql("SELECT concurrent_delete(10) AS n, 'x' AS s")
    with pytest.raises(Exception, match=r"(?i)conflict"):
        incoming.writeTo(t).overwrite(F.col("n") == 2)
    assert os.path.exists(marker)
    assert rows(spark.table(t)) == [(2, "b"), (3, "c")]
    latest = lance.dataset(uri)
    committed = {f"data/{f.path}" for fr in latest.get_fragments() for f in fr.metadata.files} | {
        fr.metadata.deletion_file.path(fr.fragment_id) for fr in latest.get_fragments() if fr.metadata.deletion_file
    }
    assert files(latest) == committed


def test_replace_where_option_of_the_source(spark, lake):
    """The same overwrite through format("lance"): mode overwrite with a
    Lance SQL ``replaceWhere``; a predicate Lance cannot bind is code 13,
    before any task writes."""
    options, ns = lake
    ns.create_namespace({"id": ["db"]})
    writer = lambda df: df.write.format("lance").options(**options)  # noqa: E731
    writer(frame(spark, (1, "a"), (2, "b"))).mode("overwrite").save("db.t")
    writer(frame(spark, (3, "c"))).mode("overwrite").option("replaceWhere", "s = 'a'").save("db.t")
    read = lambda: rows(spark.read.format("lance").options(**options).load("db.t"))  # noqa: E731
    assert read() == [(2, "b"), (3, "c")]
    with pytest.raises(Exception, match=r"code 13|InvalidInputError"):
        writer(frame(spark, (4, "d"))).mode("overwrite").option("replaceWhere", "nope = 1").save("db.t")
    with pytest.raises(Exception, match="need an overwrite"):
        writer(frame(spark, (4, "d"))).mode("append").option("replaceWhere", "n = 1").save("db.t")
    assert read() == [(2, "b"), (3, "c")]


# ------------------------------------------------------------ staged CTAS and RTAS
#
# On every catalog kind: dir and hms stage a CTAS (nothing in the namespace until its job
# succeeded); a REST server's client cannot tell a new table's location beforehand, so its
# CTAS takes Spark's non-atomic path (created first, dropped if the job fails).  Every kind
# stages an RTAS.


def _fail_the_second_task(spark) -> None:
    """``fail_late(n)``: n, except that the task holding n = 5 raises, after a pause in which
    the other task writes and records its fragment."""

    def fail_late(n):
        if n == 5:
            import time

            time.sleep(2)
            raise RuntimeError("this task fails")
        return n

    spark.udf.register("fail_late", fail_late, "bigint")


def _files_of(catalog, name: str) -> list[str]:
    """The data files in any directory of the catalog named after table ``name``."""
    return glob.glob(f"{catalog.root}/**/*{name}*/data/*", recursive=True)


def test_a_failed_ctas_leaves_no_table_and_no_file(spark, catalog, db):
    from lance_ns.errors import TableNotFoundError

    t = f"{db}.failedctas"
    _fail_the_second_task(spark)
    with pytest.raises(Exception, match="this task fails"):
        spark.sql(f"CREATE TABLE {t} AS SELECT fail_late(id) AS n, 'x' AS s FROM range(0, 8, 1, 2)")
    assert spark.sql(f"SHOW TABLES IN {db}").count() == 0
    with pytest.raises(TableNotFoundError):
        catalog.client.describe_table({"id": table_id(t)})
    assert _files_of(catalog, "failedctas") == []
    spark.sql(f"CREATE TABLE {t} AS SELECT id AS n, 'x' AS s FROM range(0, 8, 1, 2)")
    assert rows(spark.table(t)) == [(i, "x") for i in range(8)]
    staged = catalog.properties["impl"] != "rest"
    assert dataset(catalog, t).version == (1 if staged else 2)  # staged: the table appeared with its rows


def test_a_ctas_table_has_its_tblproperties_and_its_drop_deletes_its_data(spark, catalog, db):
    t = f"{db}.propped"
    spark.sql(f"CREATE TABLE {t} TBLPROPERTIES ('team' = 'sales', 'vec.arrow.fixed-size-list.size' = '2') "
              "AS SELECT id, array(CAST(id AS FLOAT), 1.0f) AS vec FROM range(3)")
    assert catalog.client.describe_table({"id": table_id(t)}).properties["team"] == "sales"
    extended = {r[0]: r[1] for r in spark.sql(f"DESCRIBE TABLE EXTENDED {t}").collect()}
    assert "team" in str(extended.get("Table Properties"))
    ds = dataset(catalog, t)
    assert ds.schema.field("vec").type == pa.list_(pa.field("element", pa.float32()), 2)
    assert ds.count_rows() == 3
    data = Path(ds.uri.removeprefix("file://")) / "data"
    assert list(data.iterdir())
    spark.sql(f"DROP TABLE {t}")  # the namespace owns a CTAS's table: its data goes with it
    assert not data.exists() or not list(data.iterdir())


def test_an_rtas_leaves_the_old_table_as_it_was_until_its_commit(spark, catalog, db, tmp_path):
    t = f"{db}.replaced"
    frame(spark, (1, "a"), (2, "b")).writeTo(t).create()
    before = dataset(catalog, t)
    old = {"rows": rows(spark.table(t)), "files": files(before),
           "fragments": [f.metadata.to_json() for f in before.get_fragments()]}
    _fail_the_second_task(spark)
    with pytest.raises(Exception, match="this task fails"):
        spark.sql(f"REPLACE TABLE {t} AS SELECT fail_late(id) AS n, 'x' AS s FROM range(0, 8, 1, 2)")
    after = dataset(catalog, t)
    assert after.version == before.version
    assert {"rows": rows(spark.table(t)), "files": files(after),
            "fragments": [f.metadata.to_json() for f in after.get_fragments()]} == old
    # while the replacing job runs, readers see the old table
    seen, uri = tmp_path / "seen.json", before.uri

    def read_the_table():
        import json

        import lance as pylance_in_worker

        seen.write_text(json.dumps(pylance_in_worker.dataset(uri).to_table().to_pylist()))

    spark.udf.register("read_during", once_per_job(tmp_path / "read", read_the_table), "bigint")
    spark.sql(f"REPLACE TABLE {t} AS SELECT read_during(id) AS w FROM range(3)")
    assert sorted(json.loads(seen.read_text()), key=lambda r: r["n"]) == [{"n": 1, "s": "a"}, {"n": 2, "s": "b"}]
    assert rows(spark.table(t)) == [(0,), (1,), (2,)]
    # one Overwrite commit of the table: its history still reaches the replaced rows
    assert dataset(catalog, t).version == before.version + 1
    assert rows(spark.sql(f"SELECT * FROM {t} VERSION AS OF {before.version}")) == old["rows"]


# ------------------------------------------------------------ managed tables


@pytest.fixture(scope="module")
def managed(spark, tmp_path_factory):
    """A directory catalog whose tables are implementation-managed: every
    commit goes through the namespace."""
    import lance_ns
    from lance_ns.spark.catalog import catalog_config

    props = {"impl": "dir", "root": str(tmp_path_factory.mktemp("managed")), "managed_versioning": "true"}
    client = lance_ns.from_config(catalog_config(props))
    yield Catalog(spark, "lance_managed", props, client)
    client.close()


def test_managed_table(spark, managed):
    spark.sql("CREATE NAMESPACE IF NOT EXISTS lance_managed.db")
    t = "lance_managed.db.m"
    frame(spark, (1, "a"), (2, "b")).writeTo(t).create()
    ns = managed.client
    assert ns.describe_table({"id": ["db", "m"]}).managed_versioning
    published = lambda: [v.version for v in ns.list_table_versions({"id": ["db", "m"]}).versions]  # noqa: E731
    before = published()
    frame(spark, (3, "c")).writeTo(t).overwrite(F.col("n") == 1)
    assert rows(spark.table(t)) == [(2, "b"), (3, "c")]
    assert published() == before + [before[-1] + 1]  # the commit went through the namespace
    frame(spark, (4, "d")).writeTo(t).overwritePartitions()
    assert rows(spark.table(t)) == [(4, "d")]
    assert published()[-1] == before[-1] + 2
    assert lance.dataset(namespace_client=ns, table_id=["db", "m"]).to_table().to_pylist() == [{"n": 4, "s": "d"}]


# ------------------------------------------------------------ concurrent jobs

#: rounds of two appending jobs racing (a race that shows once in five runs is a bug)
APPEND_RACE_ROUNDS = 5


def _append_racing(spark, t: str, rounds: int) -> None:
    """``rounds`` rounds of two Spark jobs (two driver threads) appending distinct rows to ``t``
    at once; a job refused with the conflict code (14) runs again, as a pipeline would."""
    from concurrent.futures import ThreadPoolExecutor

    def append(rows: list[tuple[int, str]], start: threading.Barrier) -> None:
        start.wait()
        for _ in range(5):
            try:
                frame(spark, *rows).writeTo(t).append()
                return
            except Exception as e:  # noqa: BLE001 - a conflict is answered by running the job again
                if "code 14" not in str(e) and "ConcurrentModification" not in str(e):
                    raise
        raise AssertionError(f"an append to {t} was refused 5 times")

    with ThreadPoolExecutor(2) as pool:
        for r in range(rounds):
            start = threading.Barrier(2, timeout=120)
            jobs = [pool.submit(append, rows, start)
                    for rows in ([(r * 10 + 1, "a"), (r * 10 + 2, "a")], [(r * 10 + 5, "b")])]
            for job in jobs:
                job.result()  # (a job's error raised here)


def _raced_rows(rounds: int) -> list[tuple[int, str]]:
    return sorted([(0, "seed")] + [(r * 10 + i, s) for r in range(rounds) for i, s in ((1, "a"), (2, "a"), (5, "b"))])


@backends
def test_two_jobs_appending_at_once_both_land(spark, catalog, db):
    """Two Spark jobs appending to one table at once: every row of both lands, once."""
    t = f"{db}.raced"
    frame(spark, (0, "seed")).writeTo(t).create()
    _append_racing(spark, t, APPEND_RACE_ROUNDS)
    assert rows(spark.table(t)) == _raced_rows(APPEND_RACE_ROUNDS)
    assert sorted((r["n"], r["s"]) for r in dataset(catalog, t).to_table().to_pylist()) == _raced_rows(APPEND_RACE_ROUNDS)


def test_two_jobs_appending_at_once_to_a_managed_table_both_land(spark, managed):
    """The same race on an implementation-managed table, where every commit is published
    through the namespace: every row lands once, and each job's commit is one published version."""
    spark.sql("CREATE NAMESPACE IF NOT EXISTS lance_managed.db")
    t = "lance_managed.db.raced"
    frame(spark, (0, "seed")).writeTo(t).create()
    ns = managed.client
    before = [v.version for v in ns.list_table_versions({"id": ["db", "raced"]}).versions]
    _append_racing(spark, t, APPEND_RACE_ROUNDS)
    assert rows(spark.table(t)) == _raced_rows(APPEND_RACE_ROUNDS)
    after = [v.version for v in ns.list_table_versions({"id": ["db", "raced"]}).versions]
    assert after == before + list(range(before[-1] + 1, before[-1] + 1 + 2 * APPEND_RACE_ROUNDS))
    read = lance.dataset(namespace_client=ns, table_id=["db", "raced"]).to_table().to_pylist()
    assert sorted((r["n"], r["s"]) for r in read) == _raced_rows(APPEND_RACE_ROUNDS)
