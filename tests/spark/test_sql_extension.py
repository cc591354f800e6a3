"""The lance SQL extension (``lancens.spark.LanceSqlExtensions``, issue 55): lance-spark's
statements and search functions on our catalog, over a directory, a Hive Metastore and our
REST server in front of one (the ``catalog`` fixture), each result exact and what it did
read back by pylance through the namespace."""

from __future__ import annotations

import lance
import pyarrow as pa
import pytest
from pyspark.errors import AnalysisException, ParseException

from .test_catalog import rows, table_id

DIM = 8


def vectors(n: int, start: int = 0) -> pa.Array:
    return pa.array([[float(i), float(i % 5)] * (DIM // 2) for i in range(start, start + n)], pa.list_(pa.float32(), DIM))


def make_table(spark, catalog, db, name: str = "items", batches: int = 3, per: int = 100) -> str:
    """``db.name`` written by Spark: id, text, a vector column (by lance-spark's table property), one
    fragment per INSERT."""
    table = f"{db}.{name}"
    spark.sql(f"CREATE TABLE {table} (id BIGINT, text STRING, vec ARRAY<FLOAT> NOT NULL) "
              f"TBLPROPERTIES ('vec.arrow.fixed-size-list.size' = '{DIM}')")
    for b in range(batches):
        lo = b * per
        spark.sql(f"INSERT INTO {table} SELECT id, CASE WHEN id % 10 = 0 THEN concat('zebra ', id) "
                  f"ELSE concat('cat ', id) END, transform(sequence(1, {DIM}), x -> CAST(id AS FLOAT)) "
                  f"FROM range({lo}, {lo + per})")
    return table


def dataset(catalog, name: str, **kw):
    return lance.dataset(namespace_client=catalog.client, table_id=table_id(name), **kw)


def analysis_error(spark, sql: str) -> str:
    with pytest.raises(AnalysisException) as e:
        spark.sql(sql).collect()
    return str(e.value)


def test_vector_columns_come_from_lance_sparks_table_property(spark, catalog, db):
    table = make_table(spark, catalog, db, batches=1, per=3)
    assert dataset(catalog, table).schema.field("vec").type == pa.list_(pa.float32(), DIM)
    assert rows(spark.sql(f"SELECT id, vec[0] FROM {table}")) == [(0, 0.0), (1, 1.0), (2, 2.0)]
    message = analysis_error(spark, f"CREATE TABLE {db}.bad (v ARRAY<STRING>) TBLPROPERTIES "
                                    "('v.arrow.fixed-size-list.size' = '4')")
    assert "code 13" in message and "ARRAY<FLOAT>" in message


def test_indexes_created_listed_used_and_dropped(spark, catalog, db):
    table = make_table(spark, catalog, db)
    n = len(dataset(catalog, table).get_fragments())  # (each INSERT writes a fragment per task)
    created = spark.sql(f"ALTER TABLE {table} CREATE INDEX id_idx USING btree (id)")
    assert created.columns == ["fragments_indexed", "index_name"] and rows(created) == [(n, "id_idx")]
    assert rows(spark.sql(f"ALTER TABLE {table} CREATE INDEX text_idx USING fts (text) WITH (with_position = true)")) \
        == [(n, "text_idx")]
    assert rows(spark.sql(f"ALTER TABLE {table} CREATE INDEX vec_idx USING ivf_pq (vec) "
                          "WITH (num_partitions = 2, num_sub_vectors = 2, distance_type = 'l2')")) == [(n, "vec_idx")]
    shown = spark.sql(f"SHOW INDEXES FROM {table}")
    assert shown.columns == ["name", "fields", "index_type", "num_indexed_fragments", "num_indexed_rows",
                             "num_unindexed_fragments", "num_unindexed_rows"]
    assert rows(shown) == [("id_idx", ["id"], "btree", n, 300, 0, 0), ("text_idx", ["text"], "inverted", n, 300, 0, 0),
                           ("vec_idx", ["vec"], "ivf_pq", n, 300, 0, 0)]
    ds = dataset(catalog, table)
    assert sorted(d.name for d in ds.describe_indices()) == ["id_idx", "text_idx", "vec_idx"]
    # pylance's own searches use them
    assert "ANN" in ds.scanner(nearest={"column": "vec", "q": [1.0] * DIM, "k": 3}).explain_plan()
    assert sorted(ds.to_table(full_text_query="zebra", columns=["id"]).column("id").to_pylist()) == list(range(0, 300, 10))
    assert "ScalarIndexQuery" in ds.scanner(filter="id = 7").explain_plan()
    assert rows(spark.sql(f"ALTER TABLE {table} DROP INDEX text_idx")) == [("text_idx", "dropped")]
    assert sorted(d.name for d in dataset(catalog, table).describe_indices()) == ["id_idx", "vec_idx"]


def test_bad_index_statements_are_analysis_errors_and_write_nothing(spark, catalog, db):
    table = make_table(spark, catalog, db, batches=1)
    version = dataset(catalog, table).version
    short = table.split(".", 1)[1]
    for sql, words in (
        (f"ALTER TABLE {table} CREATE INDEX i USING btree (nope)", ["code 13", "nope"]),
        (f"ALTER TABLE {table} CREATE INDEX i USING ivf_pq (text)", ["code 13"]),  # a vector index on strings
        (f"ALTER TABLE {table} CREATE INDEX i USING hash (id)", ["code 13", "unknown index method"]),
        (f"ALTER TABLE {table} CREATE INDEX i USING btree (id) WITH (colour = 'red')", ["code 13", "colour"]),
        (f"ALTER TABLE {table} DROP INDEX missing", ["missing"]),
        (f"ALTER TABLE {table} OPTIMIZE INDEX missing", ["missing"]),
    ):
        message = analysis_error(spark, sql)
        assert short in message and all(w in message for w in words), (sql, message)
    assert dataset(catalog, table).version == version and not dataset(catalog, table).describe_indices()
    with pytest.raises(ParseException, match=r"PARSE_SYNTAX_ERROR.*lance SQL: expected '\('"):
        spark.sql(f"ALTER TABLE {table} CREATE INDEX i USING btree id")


def test_optimize_and_refresh_index(spark, catalog, db):
    table = make_table(spark, catalog, db)
    spark.sql(f"ALTER TABLE {table} CREATE INDEX id_idx USING btree (id)")
    n = len(dataset(catalog, table).get_fragments())
    spark.sql(f"INSERT INTO {table} SELECT id, 'cat', transform(sequence(1, {DIM}), x -> 0.5f) FROM range(300, 350)")
    added = len(dataset(catalog, table).get_fragments()) - n
    refreshed = spark.sql(f"ALTER TABLE {table} REFRESH INDEX id_idx")
    assert refreshed.columns == ["fragments_indexed", "segments_added", "index_name"]
    assert rows(refreshed) == [(added, 1, "id_idx")]
    version = dataset(catalog, table).version
    assert rows(spark.sql(f"ALTER TABLE {table} REFRESH INDEX id_idx")) == [(0, 0, "id_idx")]  # nothing new
    assert dataset(catalog, table).version == version  # and nothing committed
    optimized = spark.sql(f"ALTER TABLE {table} OPTIMIZE INDEX id_idx WITH (num_indices_to_merge = 2)")
    assert optimized.columns == ["index_name", "fragments_indexed", "segments_before", "segments_after"]
    assert rows(optimized) == [("id_idx", n + added, 2, 1)]
    stats = dataset(catalog, table).stats.index_stats("id_idx")
    assert (stats["num_indexed_rows"], stats["num_unindexed_rows"]) == (350, 0)


def test_optimize_compacts_and_vacuum_keeps_tagged_versions(spark, catalog, db):
    table = make_table(spark, catalog, db, batches=4, per=25)
    before = dataset(catalog, table)
    rows_before = sorted(before.to_table(columns=["id"]).column("id").to_pylist())
    n = len(before.get_fragments())
    assert n >= 4
    spark.sql(f"ALTER TABLE {table} CREATE TAG kept AS OF VERSION 2")
    compacted = spark.sql(f"OPTIMIZE {table} WITH (target_rows_per_fragment = 1000)")
    assert compacted.columns == ["fragments_removed", "fragments_added", "files_removed", "files_added"]
    assert rows(compacted) == [(n, 1, n, 1)]
    after = dataset(catalog, table)
    assert len(after.get_fragments()) == 1 and sorted(after.to_table(columns=["id"]).column("id").to_pylist()) == rows_before
    versions_before = [v["version"] for v in after.versions()]
    vacuumed = spark.sql(f"VACUUM {table} WITH (before_version = {after.version})")
    assert vacuumed.columns == ["bytes_removed", "old_versions"]
    (removed_bytes, removed), = rows(vacuumed)
    kept = [v["version"] for v in dataset(catalog, table).versions()]
    assert removed == len(versions_before) - len(kept) > 0 and removed_bytes > 0
    assert kept == [2, after.version]  # the tagged version and the latest
    assert dataset(catalog, table, version="kept").count_rows() == 25  # time travel to the tag still works
    assert rows(spark.sql(f"OPTIMIZE {table}")) == [(0, 0, 0, 0)]  # nothing left to compact


def test_tags_and_branches(spark, catalog, db):
    table = make_table(spark, catalog, db, batches=3, per=10)
    assert rows(spark.sql(f"ALTER TABLE {table} CREATE TAG first AS OF VERSION 2")) == [("first",)]
    assert rows(spark.sql(f"ALTER TABLE {table} CREATE TAG latest")) == [("latest",)]
    assert rows(spark.sql(f"ALTER TABLE {table} CREATE TAG again AS OF TAG first")) == [("again",)]
    assert rows(spark.sql(f"ALTER TABLE {table} CREATE TAG IF NOT EXISTS first AS OF VERSION 3")) == [("first",)]
    shown = spark.sql(f"SHOW TAGS IN {table}")
    assert shown.columns == ["name", "branch", "version", "created_at", "updated_at", "manifest_size"]
    assert [(r[0], r[1], r[2]) for r in rows(shown)] == [("again", None, 2), ("first", None, 2), ("latest", None, 4)]
    assert {k: v["version"] for k, v in dataset(catalog, table).tags.list().items()} == \
        {"again": 2, "first": 2, "latest": 4}
    assert "first" in analysis_error(spark, f"ALTER TABLE {table} CREATE TAG first")
    assert rows(spark.sql(f"ALTER TABLE {table} DROP TAG again")) == [("again",)]
    assert rows(spark.sql(f"ALTER TABLE {table} DROP TAG IF EXISTS again")) == [("again",)]
    assert "again" in analysis_error(spark, f"ALTER TABLE {table} DROP TAG again")
    assert sorted(dataset(catalog, table).tags.list()) == ["first", "latest"]
    assert rows(spark.sql(f"ALTER TABLE {table} CREATE BRANCH exp AS OF TAG first")) == [("exp",)]
    branches = spark.sql(f"SHOW BRANCHES FROM {table}")
    assert branches.columns == ["name", "parent_branch", "parent_version", "created_at", "manifest_size"]
    assert [(r[0], r[1], r[2]) for r in rows(branches)] == [("exp", None, 2)]
    assert list(dataset(catalog, table).branches.list()) == ["exp"]
    assert rows(spark.sql(f"ALTER TABLE {table} DROP BRANCH exp")) == [("exp",)]
    assert rows(spark.sql(f"ALTER TABLE {table} DROP BRANCH IF EXISTS exp")) == [("exp",)]
    assert not dataset(catalog, table).branches.list()


def test_unenforced_primary_key(spark, catalog, db):
    table = f"{db}.keyed"
    spark.sql(f"CREATE TABLE {table} (id BIGINT NOT NULL, name STRING NOT NULL, note STRING)")
    done = spark.sql(f"ALTER TABLE {table} SET UNENFORCED PRIMARY KEY (id, name)")
    assert done.columns == ["status", "primary_key_columns"] and rows(done) == [("OK", "id,name")]
    schema = dataset(catalog, table).schema
    meta = {f.name: {k.decode(): v.decode() for k, v in (f.metadata or {}).items()} for f in schema}
    assert meta["id"]["lance-schema:unenforced-primary-key"] == "true"
    assert meta["name"]["lance-schema:unenforced-primary-key:position"] == "2"
    assert "once" in analysis_error(spark, f"ALTER TABLE {table} SET UNENFORCED PRIMARY KEY (id)")
    other = f"{db}.loose"
    spark.sql(f"CREATE TABLE {other} (id BIGINT, note STRING)")
    assert "nullable" in analysis_error(spark, f"ALTER TABLE {other} SET UNENFORCED PRIMARY KEY (id)")


def test_vector_search_returns_pylances_rows(spark, catalog, db):
    table = make_table(spark, catalog, db)
    spark.sql(f"ALTER TABLE {table} CREATE INDEX vec_idx USING ivf_flat (vec) WITH (num_partitions = 2)")
    ds = dataset(catalog, table)
    query = [3.2] * DIM
    theirs = ds.to_table(columns=["id"], nearest={"column": "vec", "q": query, "k": 5}).to_pylist()
    ours = spark.sql(f"SELECT id, _distance FROM VECTOR_SEARCH(table => '{table}', query_vector => array("
                     f"{', '.join(map(str, query))}), vector_column => 'vec', num_results => 5) ORDER BY _distance")
    assert ours.columns == ["id", "_distance"]
    assert [(r.id, pytest.approx(r._distance)) for r in ours.collect()] == [(t["id"], t["_distance"]) for t in theirs]
    positional = spark.sql(f"SELECT * FROM VECTOR_SEARCH('{table}', array({', '.join(map(str, query))}), 2)")
    assert positional.columns == ["id", "text", "vec", "_distance"] and positional.count() == 2
    batch = spark.sql(f"SELECT query_index, id FROM VECTOR_SEARCH(table => '{table}', query_vector => "
                      f"array(array({', '.join(['1.0'] * DIM)}), array({', '.join(['250.0'] * DIM)})), k => 1, "
                      "columns => array('id'))")
    assert rows(batch) == [(0, 1), (1, 250)]
    filtered = spark.sql(f"SELECT id FROM VECTOR_SEARCH(table => '{table}', query_vector => array("
                         f"{', '.join(['1.0'] * DIM)}), k => 3, filter => 'id >= 100', prefilter => true, "
                         "columns => array('id'))")
    assert sorted(r.id for r in filtered.collect()) == [100, 101, 102]
    message = analysis_error(spark, f"SELECT * FROM VECTOR_SEARCH(table => '{table}', query_vector => array(1.0), "
                                    "vector_column => 'nope')")
    assert "code 13" in message and "nope" in message


def test_full_text_search_returns_pylances_rows(spark, catalog, db):
    table = make_table(spark, catalog, db)
    spark.sql(f"ALTER TABLE {table} CREATE INDEX text_idx USING fts (text)")
    ds = dataset(catalog, table)
    theirs = ds.to_table(columns=["id"], full_text_query="zebra", limit=7).to_pylist()
    ours = spark.sql(f"SELECT id, _score FROM SEARCH(table => '{table}', query => 'zebra', k => 7) ORDER BY _score DESC")
    assert ours.columns == ["id", "_score"]
    assert sorted(r.id for r in ours.collect()) == sorted(t["id"] for t in theirs)
    assert [pytest.approx(r._score) for r in ours.collect()] == sorted((t["_score"] for t in theirs), reverse=True)
    assert spark.sql(f"SELECT * FROM SEARCH('{table}', 'nothinglikethis')").count() == 0


def test_statements_of_a_table_outside_a_lance_catalog_are_refused(spark):
    with pytest.raises(ParseException, match="not in a lance-ns catalog"):
        spark.sql("OPTIMIZE spark_catalog.default.t")
    assert spark.sql("SELECT 1 AS x").collect()[0].x == 1  # every other SQL is Spark's own


def test_a_managed_tables_statements_commit_through_the_namespace(spark, tmp_path):
    """On an implementation-managed table the namespace records every version the
    statements commit: OPTIMIZE's compaction and CREATE INDEX are versions it lists."""
    import lance_ns
    from lance_ns.spark.session import catalog_conf

    root = str(tmp_path / "managed")
    props = {"impl": "dir", "root": root, "managed_versioning": "true"}
    for key, value in catalog_conf({"lance_managed_sql": props}).items():
        spark.conf.set(key, value)
    client = lance_ns.connect("dir", {"root": root, "managed_versioning": "true"})
    spark.sql("CREATE NAMESPACE lance_managed_sql.db")
    table = "lance_managed_sql.db.t"
    spark.sql(f"CREATE TABLE {table} (id BIGINT)")
    for lo in (0, 10, 20):
        spark.sql(f"INSERT INTO {table} SELECT id FROM range({lo}, {lo + 10})")
    assert client.describe_table({"id": ["db", "t"]}).managed_versioning
    listed = lambda: [v.version for v in client.list_table_versions({"id": ["db", "t"]}).versions]  # noqa: E731
    before = listed()
    n = len(lance.dataset(namespace_client=client, table_id=["db", "t"]).get_fragments())
    assert rows(spark.sql(f"OPTIMIZE {table}")) == [(n, 1, n, 1)]
    compacted = listed()
    spark.sql(f"ALTER TABLE {table} CREATE INDEX id_idx USING btree (id)")
    indexed = listed()
    # each statement committed versions the namespace lists, without a gap
    assert len(before) < len(compacted) < len(indexed) and indexed == list(range(1, len(indexed) + 1))
    ds = lance.dataset(namespace_client=client, table_id=["db", "t"])
    assert ds.version == indexed[-1] and len(ds.get_fragments()) == 1 and ds.count_rows() == 30
    assert [d.name for d in ds.describe_indices()] == ["id_idx"]
    spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW managed_src AS SELECT _rowaddr, id * 2 AS twice FROM {table}")
    spark.sql(f"ALTER TABLE {table} ADD COLUMNS twice FROM managed_src")  # a Merge committed through the namespace
    assert listed() == indexed + [indexed[-1] + 1]
    assert lance.dataset(namespace_client=client, table_id=["db", "t"]).to_table().column("twice").to_pylist() == \
        [i * 2 for i in range(30)]


def test_search_without_a_full_text_index_is_an_analysis_error(spark, catalog, db):
    table = make_table(spark, catalog, db, batches=1, per=10)
    message = analysis_error(spark, f"SELECT * FROM SEARCH('{table}', 'zebra')")
    assert "code 13" in message and "full-text index" in message


def test_backfill_adds_and_updates_columns_by_row_address(spark, catalog, db):
    table = f"{db}.people"
    spark.sql(f"CREATE TABLE {table} (id BIGINT, name STRING)")
    for lo in (0, 3):
        spark.sql(f"INSERT INTO {table} SELECT id, concat('n', id) FROM range({lo}, {lo + 3})")
    addressed = spark.sql(f"SELECT id, _rowaddr, _fragid FROM {table}").collect()
    assert all(r._fragid == r._rowaddr >> 32 for r in addressed) and len({r._fragid for r in addressed}) >= 2
    view = f"scores_{db.split('.')[-1]}"
    spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW {view} AS SELECT _rowaddr, _fragid, id * 100 AS score, "
              f"upper(name) AS loud FROM {table} WHERE id % 2 = 0")
    added = spark.sql(f"ALTER TABLE {table} ADD COLUMNS score, loud FROM {view}")
    assert added.columns == [] and added.collect() == []
    assert rows(spark.sql(f"SELECT id, score, loud FROM {table}")) == [
        (0, 0, "N0"), (1, None, None), (2, 200, "N2"), (3, None, None), (4, 400, "N4"), (5, None, None)]
    spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW {view} AS SELECT _rowaddr, _fragid, 'changed' AS name, -1L AS score "
              f"FROM {table} WHERE id IN (1, 4)")
    spark.sql(f"ALTER TABLE {table} UPDATE COLUMNS name, score FROM {view}")
    held = dataset(catalog, table).to_table().sort_by("id").to_pylist()
    assert [(r["id"], r["name"], r["score"]) for r in held] == [
        (0, "n0", 0), (1, "changed", -1), (2, "n2", 200), (3, "n3", None), (4, "changed", -1), (5, "n5", None)]
    version = dataset(catalog, table).version
    assert "score" in analysis_error(spark, f"ALTER TABLE {table} ADD COLUMNS score FROM {view}")
    assert "nope" in analysis_error(spark, f"ALTER TABLE {table} UPDATE COLUMNS nope FROM {view}")
    spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW {view} AS SELECT 1 AS extra")
    assert "_rowaddr" in analysis_error(spark, f"ALTER TABLE {table} ADD COLUMNS extra FROM {view}")
    assert dataset(catalog, table).version == version  # the refused ones wrote nothing


def test_full_text_predicates_filter_with_the_index(spark, catalog, db):
    table = make_table(spark, catalog, db)
    spark.sql(f"ALTER TABLE {table} CREATE INDEX text_idx USING fts (text) WITH (with_position = true)")
    spark.sql(f"INSERT INTO {table} SELECT 1000, 'zebra crossing', transform(sequence(1, {DIM}), x -> 0.0f)")  # unindexed
    ds = dataset(catalog, table)
    from lance.query import MatchQuery, PhraseQuery

    theirs = sorted(ds.to_table(columns=["id"], full_text_query=MatchQuery("zebra", "text")).column("id").to_pylist())
    spark.sql(f"USE {db}")  # lance-spark's form: the functions of the current catalog, unqualified
    try:
        short = table.rsplit(".", 1)[1]
        found = spark.sql(f"SELECT id FROM {short} WHERE lance_match(text, 'zebra')")
        assert "fullText=" in found._jdf.queryExecution().executedPlan().toString()  # the scan answers it
        assert sorted(r.id for r in found.collect()) == theirs and len(theirs) == 31
        assert spark.sql(f"SELECT count(*) FROM {short} WHERE lance_match(text, 'zebra') AND id < 100").collect()[0][0] == 10
        phrase = sorted(ds.to_table(columns=["id"], full_text_query=PhraseQuery("zebra crossing", "text")).column("id")
                        .to_pylist())
        assert [r.id for r in spark.sql(f"SELECT id FROM {short} WHERE lance_match_phrase(text, 'zebra crossing')")
                .collect()] == phrase == [1000]
        fuzzy = spark.sql(f"SELECT id FROM {short} WHERE lance_match(text, 'zebr', 'fuzziness=1') AND id < 30")
        assert sorted(r.id for r in fuzzy.collect()) == [0, 10, 20]
        assert "colour" in analysis_error(spark, f"SELECT id FROM {short} WHERE lance_match(text, 'x', 'colour=red')")
        assert "full-text index" in analysis_error(spark, f"SELECT id FROM {short} WHERE lance_match(id, 'x')")
        with pytest.raises(Exception, match="answered by a lance table's full-text index"):
            spark.sql(f"SELECT id FROM {short} WHERE lance_match(text, 'zebra') OR id = 3").collect()
    finally:
        spark.sql("USE spark_catalog.default")


@pytest.mark.parametrize("method, column", [("bitmap", "tag"), ("label_list", "labels"), ("ngram", "text"),
                                            ("zonemap", "id"), ("bloomfilter", "id"), ("ivf_sq", "vec"),
                                            ("ivf_hnsw_sq", "vec")])
def test_every_index_method(spark, _catalogs, method, column):
    """Every method, on the directory catalog (the index is Lance's, whichever catalog names the table)."""
    catalog = _catalogs("dir")
    db = f"{catalog.name}.methods"
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {db}")
    table = f"{db}.m_{method}"
    spark.sql(f"CREATE TABLE {table} (id BIGINT, text STRING, tag STRING, labels ARRAY<STRING>, vec ARRAY<FLOAT> NOT NULL) "
              f"TBLPROPERTIES ('vec.arrow.fixed-size-list.size' = '{DIM}')")
    spark.sql(f"INSERT INTO {table} SELECT id, concat('word', id), IF(id % 2 = 0, 'even', 'odd'), array('a', "
              f"IF(id % 3 = 0, 'b', 'c')), transform(sequence(1, {DIM}), x -> CAST(id + x AS FLOAT)) FROM range(300)")
    n = len(dataset(catalog, table).get_fragments())
    options = " WITH (num_partitions = 2)" if method.startswith("ivf") else ""
    assert rows(spark.sql(f"ALTER TABLE {table} CREATE INDEX i USING {method} ({column}){options}")) == [(n, "i")]
    (shown,) = rows(spark.sql(f"SHOW INDEXES FROM {table}"))
    assert shown[:2] == ("i", [column]) and shown[4] == 300, shown
    assert [d.name for d in dataset(catalog, table).describe_indices()] == ["i"]


def test_a_search_plan_shows_no_secret_of_the_catalog(spark, tmp_path):
    import lance_ns
    from lance_ns.spark.session import catalog_conf

    props = {"impl": "dir", "root": str(tmp_path / "s"), "storage.aws_secret_access_key": "sekrit-0011"}
    for key, value in catalog_conf({"lance_secret": props}).items():
        spark.conf.set(key, value)
    client = lance_ns.connect("dir", {"root": str(tmp_path / "s")})
    client.create_namespace({"id": ["db"]})
    lance.write_dataset(pa.table({"id": [1, 2], "vec": vectors(2)}), namespace_client=client, table_id=["db", "t"],
                        mode="create")
    found = spark.sql(f"SELECT id FROM VECTOR_SEARCH('lance_secret.db.t', array({', '.join(['1.0'] * DIM)}), 1)")
    assert [r.id for r in found.collect()] == [2]  # (id 2 holds the vector of ones)
    plan = found._jdf.queryExecution().toString()
    assert "VECTOR_SEARCH(lance_secret.db.t)" in plan and "sekrit-0011" not in plan
