"""lance-spark, the Lance project's own JVM Spark connector (``org.lance``, Maven Central), as a
client of ``lance-ns serve``: its catalog ``org.lance.spark.LanceNamespaceSparkCatalog`` with
``impl=rest`` talks to our server over the Lance REST protocol and reads and writes the tables'
data itself (lance-core over JNI, at the locations our server answers).  Both directions are
read back exactly: what Spark wrote, by pylance through lance-ns's REST client here; what
pylance wrote through our server before the job, by Spark; and what a Spark session of ours
wrote before the job, one table per write form of our catalog (``OUR_WRITES``), by lance-spark,
DuckDB's Lance extension and pylance.

It runs on Spark 3.5 (pyspark 3.5.5) in a venv of its own, the jars first on the driver's class
path: what Maven serves here and why is in tests/services/lance_spark.py (shared with
benchmarks/bench_spark.py).

One Spark session runs every statement (``JOB`` below, a list of named steps, each answering
its rows or its error); the tests then assert step by step.  What lance-spark 0.4.0 cannot do,
or does differently from Spark's or the spec's contract, is asserted as its current behaviour
in a ``test_difference_*`` test that names it.  Not run: a ``MAP`` column, whose write panics
inside lance-core's encoder (``not yet implemented: Implement encoding for field ... type=map``)
and aborts the JVM.
"""

from __future__ import annotations

import datetime
import decimal
import fcntl
import json
import os
import re
import shutil
import subprocess
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

import lance
import pyarrow as pa
import pytest

import lance_ns
from tests.services.lance_spark import (
    ARTIFACT,
    PYSPARK,
    VERSION,
    Unavailable,
    job_env,
    make_python,
    resolve_classpath,
    serve_dir,
)

#: one Spark job serves every test here: under pytest-xdist they share a worker
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("lance-spark")]

#: the Spark job: runs the named steps of argv[3] (a JSON file) in one session and writes
#: {name: {"ok": true, "rows": [...]}} or {name: {"ok": false, "error": class, "message": ...}}
#: to argv[4].  A step is SQL, or ``py:`` and a Python expression over ``spark``.
JOB = textwrap.dedent('''
    import datetime, decimal, json, sys
    from pyspark.sql import Row, SparkSession

    url, classpath, plan, out = sys.argv[1:5]
    spark = (SparkSession.builder.master("local[2]").appName("lance-spark-interop")
             .config("spark.driver.extraClassPath", classpath)
             .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
             .config("spark.driver.host", "127.0.0.1")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "2")
             .config("spark.sql.session.timeZone", "UTC")
             .config("spark.sql.extensions", "org.lance.spark.extensions.LanceSparkSessionExtensions")
             .config("spark.sql.catalog.lance", "org.lance.spark.LanceNamespaceSparkCatalog")
             .config("spark.sql.catalog.lance.impl", "rest")
             .config("spark.sql.catalog.lance.uri", url)
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
''') + textwrap.dedent('''

    def plain(v):
        if isinstance(v, Row):
            return {k: plain(x) for k, x in v.asDict().items()}
        if isinstance(v, (list, tuple)):
            return [plain(x) for x in v]
        if isinstance(v, (bytes, bytearray)):
            return "hex:" + bytes(v).hex()
        if isinstance(v, (datetime.date, datetime.datetime)):
            return v.isoformat()
        if isinstance(v, decimal.Decimal):
            return str(v)
        return v

    results = {}
    for name, step in json.load(open(plan)):
        try:
            if step.startswith("py:"):
                value = eval(step[3:], {"spark": spark})
                rows = None if value is None else plain(value)
            else:
                rows = [[plain(x) for x in r] for r in spark.sql(step).collect()]
            results[name] = {"ok": True, "rows": rows}
        except Exception as e:
            java = getattr(e, "java_exception", None) or getattr(e, "_origin", None)
            cls = java.getClass().getName() if java is not None else type(e).__name__
            message = java.getMessage() if java is not None else str(e)
            results[name] = {"ok": False, "error": cls, "message": str(message)[:4000]}
    spark.stop()
    json.dump(results, open(out, "w"))
''')
#: the same steps in a session of ours: lance_ns.spark.build_session, our catalog (impl rest on
#: our server) named ``lance`` as theirs is, our SQL extension (what build_session sets); and
#: ``shared``, our catalog on the server lance-spark's job then talks to (OUR_WRITES)
OUR_JOB = textwrap.dedent('''
    import datetime, decimal, json, sys
    from pyspark.sql import Row
    from lance_ns.spark import build_session

    url, plan, out, shared = sys.argv[1:5]
    spark = build_session("local[2]", "lance-ns-sql-extension", {"spark.sql.session.timeZone": "UTC"},
                          catalogs={"lance": {"impl": "rest", "uri": url}, "shared": {"impl": "rest", "uri": shared}})
    spark.sparkContext.setLogLevel("OFF")
''') + JOB[JOB.index("def plain(v):"):]


# -- the connector and its environment (tests/services/lance_spark.py) ----------------------

@pytest.fixture(scope="session")
def lance_spark_classpath() -> str:
    try:
        return resolve_classpath()
    except Unavailable as e:
        pytest.fail(str(e))


@pytest.fixture(scope="session")
def lance_spark_python(tmp_path_factory) -> Path:
    """A venv of its own with only pyspark (the version the connector was built for)."""
    return make_python(tmp_path_factory.mktemp("lance-spark") / "venv")


# -- what pylance writes before the job (read by Spark) -------------------------------------

MINE_V1 = [[1, "x"], [2, "y"], [3, "z"]]
MINE_V2 = MINE_V1 + [[4, "w"]]

TYPES = pa.table({
    "i64": pa.array([1, None], pa.int64()),
    "i32": pa.array([2, 3], pa.int32()),
    "f64": pa.array([0.5, None], pa.float64()),
    "f32": pa.array([1.5, 2.5], pa.float32()),
    "s": pa.array(["a", None], pa.string()),
    "ls": pa.array(["x", "y"], pa.large_string()),
    "b": pa.array([True, False]),
    "d": pa.array([datetime.date(2024, 1, 2), None], pa.date32()),
    "ts": pa.array([datetime.datetime(2024, 1, 2, 3, 4, 5), None], pa.timestamp("us", tz="UTC")),
    "tsn": pa.array([datetime.datetime(2024, 1, 2, 3, 4, 5), None], pa.timestamp("us")),
    "bin": pa.array([b"ab", b""], pa.binary()),
    "lst": pa.array([[1, 2], []], pa.list_(pa.int64())),
    "vec": pa.array([[1.0, 2.0], [3.0, 4.0]], pa.list_(pa.float32(), 2)),
    "st": pa.array([{"a": 1, "b": "q"}, None], pa.struct([("a", pa.int64()), ("b", pa.string())])),
    "dec": pa.array([decimal.Decimal("1.23"), None], pa.decimal128(10, 2)),
})
TYPES_SCHEMA = ("struct<i64:bigint,i32:int,f64:double,f32:float,s:string,ls:string,b:boolean,d:date,"
                "ts:timestamp,tsn:timestamp_ntz,bin:binary,lst:array<bigint>,vec:array<float>,"
                "st:struct<a:bigint,b:string>,dec:decimal(10,2)>")
TYPES_ROWS = [
    [1, 2, 0.5, 1.5, "a", "x", True, "2024-01-02", "2024-01-02T03:04:05", "2024-01-02T03:04:05", "hex:6162",
     [1, 2], [1.0, 2.0], {"a": 1, "b": "q"}, "1.23"],
    [None, 3, None, 2.5, None, "y", False, None, None, None, "hex:", [], [3.0, 4.0], None, None],
]


#: the table both connectors' SQL extensions work on (seed_twin writes it the same for each)
TWIN = "lance.ext.twin"
#: lance-spark's statements, run by its session and by ours on twin tables (test_sql_extension_*)
SQL_STEPS = [
    ("sql_create_index", f"ALTER TABLE {TWIN} CREATE INDEX id_idx USING btree (id)"),
    ("sql_create_fts", f"ALTER TABLE {TWIN} CREATE INDEX text_idx USING fts (text) WITH (base_tokenizer = 'simple', "
                       "language = 'English', max_token_length = 40, lower_case = true, stem = false, "
                       "remove_stop_words = false, ascii_folding = false, with_position = true)"),
    ("sql_show_indexes", f"SHOW INDEXES FROM {TWIN}"),
    ("sql_optimize", f"OPTIMIZE {TWIN} WITH (target_rows_per_fragment = 100000)"),
    ("sql_count", f"SELECT count(*), sum(id) FROM {TWIN}"),
    ("sql_show_indexes_optimized", f"SHOW INDEXES IN {TWIN}"),
    ("sql_vacuum", f"VACUUM {TWIN} WITH (before_version = 4)"),
    ("sql_primary_key", f"ALTER TABLE {TWIN} SET UNENFORCED PRIMARY KEY (id)"),
    ("sql_drop_index", f"ALTER TABLE {TWIN} DROP INDEX text_idx"),
    ("sql_show_indexes_end", f"SHOW INDEXES FROM {TWIN}"),
    ("sql_bad_column", f"ALTER TABLE {TWIN} CREATE INDEX bad_idx USING btree (nope)"),
]


def seed_twin(ns) -> None:
    """ext.twin: a NOT NULL id and a text, 3 fragments of 100 rows, written by pylance."""
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("text", pa.string())])
    for i, mode in enumerate(("create", "append", "append")):
        ids = list(range(i * 100, i * 100 + 100))
        rows = pa.table({"id": ids, "text": [f"zebra {n}" if n % 10 == 0 else f"cat {n}" for n in ids]}, schema=schema)
        lance.write_dataset(rows, namespace_client=ns, table_id=["ext", "twin"], mode=mode)


def seed(ns) -> str:
    """pylance writes through our server: ext.mine (two versions), ext.types, ext.twin, a root table.
    Answers a time between mine's two versions, for TIMESTAMP AS OF (UTC)."""
    ns.create_namespace({"id": ["ext"]})
    mine = ["ext", "mine"]
    table = lambda rows: pa.table({"k": pa.array([r[0] for r in rows], pa.int64()), "s": [r[1] for r in rows]})
    lance.write_dataset(table(MINE_V1), namespace_client=ns, table_id=mine, mode="create")
    time.sleep(0.5)
    between = datetime.datetime.now(datetime.timezone.utc)
    time.sleep(0.5)
    lance.write_dataset(table(MINE_V2[3:]), namespace_client=ns, table_id=mine, mode="append")
    lance.write_dataset(TYPES, namespace_client=ns, table_id=["ext", "types"], mode="create")
    lance.write_dataset(pa.table({"q": pa.array([7], pa.int32())}), namespace_client=ns, table_id=["toplevel"],
                        mode="create")
    seed_twin(ns)
    return between.strftime("%Y-%m-%d %H:%M:%S.%f")


# -- what a Spark session of ours writes before the job (read by lance-spark, DuckDB, pylance) --

OURS = "shared.ours"
#: each write form of our catalog (issue 54), one table each: (step name, SQL or py:) in order
OUR_WRITES = [
    ("ns", f"CREATE NAMESPACE {OURS}"),
    # INSERT, then df.writeTo().append()
    ("appended_create", f"CREATE TABLE {OURS}.appended (id BIGINT, s STRING)"),
    ("appended_insert", f"INSERT INTO {OURS}.appended VALUES (1, 'a'), (2, 'b')"),
    ("appended_df", "py:spark.createDataFrame([(3, 'c')], 'id BIGINT, s STRING')"
                    f".writeTo('{OURS}.appended').append()"),
    # CTAS (staged), then INSERT OVERWRITE
    ("ctas", f"CREATE TABLE {OURS}.ctas AS SELECT * FROM VALUES (1L, 'a'), (2L, 'b') AS v(id, s)"),
    ("overwritten_ctas", f"CREATE TABLE {OURS}.overwritten AS SELECT * FROM VALUES (1L, 'a') AS v(id, s)"),
    ("overwritten", f"INSERT OVERWRITE {OURS}.overwritten VALUES (10, 'x'), (11, 'y')"),
    # RTAS (staged replace)
    ("rtas_ctas", f"CREATE TABLE {OURS}.rtas AS SELECT * FROM VALUES (1L, 'a') AS v(id, s)"),
    ("rtas", f"CREATE OR REPLACE TABLE {OURS}.rtas AS SELECT * FROM VALUES (7L, 'q'), (8L, 'r') AS v(id, s)"),
    # overwrite by a condition
    ("where_create", f"CREATE TABLE {OURS}.replaced_where (id BIGINT, s STRING)"),
    ("where_insert", f"INSERT INTO {OURS}.replaced_where VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd')"),
    ("where_overwrite", "py:spark.createDataFrame([(30, 'z')], 'id BIGINT, s STRING')"
                        f".writeTo('{OURS}.replaced_where').overwrite(__import__('pyspark.sql.functions', "
                        "fromlist=['col']).col('id') >= 3)"),
    # the row-level commands
    ("rows_create", f"CREATE TABLE {OURS}.row_level (id BIGINT, s STRING)"),
    ("rows_insert", f"INSERT INTO {OURS}.row_level VALUES (1, 'a'), (2, 'b'), (3, 'c')"),
    ("rows_update", f"UPDATE {OURS}.row_level SET s = 'B' WHERE id = 2"),
    ("rows_delete", f"DELETE FROM {OURS}.row_level WHERE id = 1"),
    ("rows_merge", f"MERGE INTO {OURS}.row_level t USING (SELECT * FROM VALUES (3L, 'C'), (4L, 'd') AS v(id, s)) v "
                   "ON t.id = v.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"),
    # a streaming sink (exactly-once micro-batches of the Python source)
    ("streamed", f"py:spark.readStream.table('{OURS}.appended').writeStream"
                 ".option('checkpointLocation', __import__('tempfile').mkdtemp())"
                 f".trigger(availableNow=True).toTable('{OURS}.streamed').awaitTermination()"),
]
#: what each of those tables holds at the end, ordered by id
OUR_TABLES = {
    "appended": [[1, "a"], [2, "b"], [3, "c"]],
    "ctas": [[1, "a"], [2, "b"]],
    "overwritten": [[10, "x"], [11, "y"]],
    "rtas": [[7, "q"], [8, "r"]],
    "replaced_where": [[1, "a"], [2, "b"], [30, "z"]],
    "row_level": [[2, "B"], [3, "C"], [4, "d"]],
    "streamed": [[1, "a"], [2, "b"], [3, "c"]],
}


def run_ours(shared_url: str, work: Path) -> None:
    """ONE Spark session of ours runs OUR_WRITES into the root lance-spark's job reads next
    (catalog ``shared`` on ``shared_url``) and SQL_STEPS on a twin of the table lance-spark's
    session works on (catalog ``lance``, a server of its own); ``ours-results.json``."""
    from tests.server.conftest import LANCE_NS

    with serve_dir(work / "twin-root", work / "twin-server.log") as twin:
        ns = lance_ns.connect("rest", {"uri": twin.url})
        ns.create_namespace({"id": ["ext"]})
        seed_twin(ns)
        (work / "ours-job.py").write_text(OUR_JOB)
        (work / "ours-plan.json").write_text(json.dumps(OUR_WRITES + SQL_STEPS))
        python = Path(LANCE_NS).parent / "python"
        done = subprocess.run([str(python), str(work / "ours-job.py"), twin.url, str(work / "ours-plan.json"),
                               str(work / "ours-results.json"), shared_url],
                              capture_output=True, text=True, timeout=600, cwd=work)
        assert done.returncode == 0, (done.stdout[-3000:], done.stderr[-6000:])


# -- what the Spark job does ----------------------------------------------------------------

ORDERS = "lance.sales.orders"
SELECT_ORDERS = f"SELECT * FROM {ORDERS} ORDER BY id"
#: sales.orders after each of the job's commits (version 1 is CREATE TABLE's empty dataset)
ORDERS_VERSIONS = {
    1: [],
    2: [[1, "a", 1.5], [2, "b", 2.5], [3, "c", 3.5]],                     # INSERT
    3: [[1, "a", 1.5], [3, "c", 3.5]],                                     # DELETE
    4: [[1, "a", 1.5], [3, "C", 35.0]],                                    # UPDATE
    5: [[1, "z", 9.0], [3, "C", 35.0], [4, "d", 4.5]],                     # MERGE INTO
    6: [[1, "z", 9.0], [3, "C", 35.0], [4, "d", 4.5], [5, "e", 5.5]],      # df.writeTo().append()
}
TYPED_COLUMNS = ("i64 BIGINT, i32 INT, f64 DOUBLE, f32 FLOAT, s STRING, b BOOLEAN, d DATE, ts TIMESTAMP, "
                 "tsn TIMESTAMP_NTZ, bin BINARY, lst ARRAY<BIGINT>, st STRUCT<a: BIGINT, b: STRING>, dec DECIMAL(10,2)")
TYPED_VALUES = ("(1, 2, 0.5, 1.5, 'a', true, DATE'2024-01-02', TIMESTAMP'2024-01-02 03:04:05', "
                "TIMESTAMP_NTZ'2024-01-02 03:04:05', X'6162', array(1, 2), named_struct('a', 1, 'b', 'q'), 1.23), "
                "(NULL, 3, NULL, 2.5, NULL, false, NULL, NULL, NULL, X'', array(), NULL, NULL)")


def plan(between: str) -> list[tuple[str, str]]:
    steps = [
        ("show_ns_start", "SHOW NAMESPACES IN lance"),
        ("create_ns", "CREATE NAMESPACE lance.sales"),
        ("create_ns_again", "CREATE NAMESPACE lance.sales"),
        ("create_ns_if_not_exists", "CREATE NAMESPACE IF NOT EXISTS lance.sales"),
        ("create_ns_props", "CREATE NAMESPACE lance.team WITH DBPROPERTIES ('team' = 'data', 'tier' = 'gold')"),
        ("create_ns_nested", "CREATE NAMESPACE lance.team.inner"),
        ("show_ns", "SHOW NAMESPACES IN lance"),
        ("show_ns_nested", "SHOW NAMESPACES IN lance.team"),
        ("describe_ns", "DESCRIBE NAMESPACE EXTENDED lance.team"),
        ("alter_ns", "ALTER NAMESPACE lance.sales SET DBPROPERTIES ('k' = 'v')"),
        # our table, version by version
        ("create_table", f"CREATE TABLE {ORDERS} (id BIGINT, name STRING, amount DOUBLE)"),
        ("create_table_again", f"CREATE TABLE {ORDERS} (id BIGINT, name STRING, amount DOUBLE)"),
        ("select_empty", SELECT_ORDERS),
        ("insert", f"INSERT INTO {ORDERS} VALUES (1, 'a', 1.5), (2, 'b', 2.5), (3, 'c', 3.5)"),
        ("select_2", SELECT_ORDERS),
        ("delete", f"DELETE FROM {ORDERS} WHERE id = 2"),
        ("select_3", SELECT_ORDERS),
        ("update", f"UPDATE {ORDERS} SET amount = amount * 10, name = upper(name) WHERE id = 3"),
        ("select_4", SELECT_ORDERS),
        ("merge", f"MERGE INTO {ORDERS} t USING (SELECT * FROM VALUES (1L, 'z', 9.0D), (4L, 'd', 4.5D) "
                  "AS s(id, name, amount)) s ON t.id = s.id "
                  "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"),
        ("select_5", SELECT_ORDERS),
        ("append_df", "py:spark.createDataFrame([(5, 'e', 5.5)], 'id BIGINT, name STRING, amount DOUBLE')"
                      f".writeTo('{ORDERS}').append()"),
        ("select_6", SELECT_ORDERS),
        ("aggregate", f"SELECT count(*), sum(id), sum(amount) FROM {ORDERS}"),
        ("filter", f"SELECT id FROM {ORDERS} WHERE amount > 5 AND name <> 'e' ORDER BY id"),
        *[(f"version_{v}", f"SELECT * FROM {ORDERS} VERSION AS OF {v} ORDER BY id") for v in ORDERS_VERSIONS],
        ("version_missing", f"SELECT * FROM {ORDERS} VERSION AS OF 99"),
        ("select_missing_table", "SELECT * FROM lance.sales.nope"),
        ("show_tables", "SHOW TABLES IN lance.sales"),
        # tables pylance wrote through our server
        ("show_tables_ext", "SHOW TABLES IN lance.ext"),
        ("mine", "SELECT * FROM lance.ext.mine ORDER BY k"),
        ("mine_v1", "SELECT * FROM lance.ext.mine VERSION AS OF 1 ORDER BY k"),
        ("mine_between", f"SELECT * FROM lance.ext.mine TIMESTAMP AS OF '{between}' ORDER BY k"),
        ("mine_count", "SELECT count(*), sum(k) FROM lance.ext.mine"),
        ("types_schema", "py:spark.table('lance.ext.types').schema.simpleString()"),
        ("types", "SELECT * FROM lance.ext.types ORDER BY i32"),
        ("show_tables_root", "SHOW TABLES IN lance"),
        ("toplevel", "SELECT * FROM lance.toplevel"),
        # more writes
        ("create_typed", f"CREATE TABLE lance.sales.typed ({TYPED_COLUMNS})"),
        ("insert_typed", f"INSERT INTO lance.sales.typed VALUES {TYPED_VALUES}"),
        ("ctas", f"CREATE TABLE lance.sales.summary AS SELECT id, name FROM {ORDERS} WHERE id < 4"),
        ("insert_overwrite", f"INSERT OVERWRITE lance.sales.summary SELECT id * 10, name FROM {ORDERS} WHERE id >= 4"),
        ("select_summary", "SELECT * FROM lance.sales.summary ORDER BY id"),
        ("create_nested_table", "CREATE TABLE lance.team.inner.deep (x INT)"),
        ("insert_nested_table", "INSERT INTO lance.team.inner.deep VALUES (1), (2)"),
        ("select_nested_table", "SELECT sum(x) FROM lance.team.inner.deep"),
        # table properties and ALTER
        ("create_tagged", "CREATE TABLE lance.sales.tagged (a INT) TBLPROPERTIES ('team' = 'sales')"),
        ("insert_tagged", "INSERT INTO lance.sales.tagged VALUES (1)"),
        ("show_tblproperties", "SHOW TBLPROPERTIES lance.sales.tagged"),
        ("alter_add_column", "ALTER TABLE lance.sales.tagged ADD COLUMNS (b STRING)"),
        ("alter_set_tblproperties", "ALTER TABLE lance.sales.tagged SET TBLPROPERTIES ('k' = 'v')"),
        ("rename_table", "ALTER TABLE lance.sales.tagged RENAME TO lance.sales.renamed"),
        ("describe_table", "DESCRIBE TABLE EXTENDED lance.sales.tagged"),
        # names that need escaping in the URL path
        ("create_ns_unicode", "CREATE NAMESPACE lance.`été`"),
        ("create_table_odd_name", "CREATE TABLE lance.`été`.`ç%t+x?y#z` (a INT)"),
        ("insert_odd_name", "INSERT INTO lance.`été`.`ç%t+x?y#z` VALUES (2)"),
        ("select_odd_name", "SELECT * FROM lance.`été`.`ç%t+x?y#z`"),
        ("create_ns_space", "CREATE NAMESPACE lance.`my ns`"),
        # drops
        ("create_dropped", "CREATE TABLE lance.sales.dropped (a INT)"),
        ("insert_dropped", "INSERT INTO lance.sales.dropped VALUES (1)"),
        ("drop_table", "DROP TABLE lance.sales.dropped"),
        ("drop_table_gone", "SELECT * FROM lance.sales.dropped"),
        ("create_scratch", "CREATE TABLE lance.sales.scratch (a INT)"),
        ("insert_scratch", "INSERT INTO lance.sales.scratch VALUES (1)"),
        ("drop_table_purge", "DROP TABLE lance.sales.scratch PURGE"),
        ("drop_table_if_exists", "DROP TABLE IF EXISTS lance.sales.scratch"),
        ("drop_ns_not_empty", "DROP NAMESPACE lance.team"),
        ("drop_ns_cascade", "DROP NAMESPACE lance.team CASCADE"),
        ("show_ns_end", "SHOW NAMESPACES IN lance"),
        ("show_tables_end", "SHOW TABLES IN lance.sales"),
        *SQL_STEPS,
        # the tables a Spark session of ours wrote before the job, one per write form
        *[(f"ours_{table}", f"SELECT * FROM lance.ours.{table} ORDER BY id") for table in OUR_TABLES],
    ]
    assert len({name for name, _ in steps}) == len(steps)
    return steps


@dataclass
class Run:
    url: str  # a server on the job's root, up while the tests read
    root: Path
    log: Path  # the request log of the server the Spark job talked to
    results: dict
    seconds: float
    ours: dict  # what the session of ours answered (run_ours)

    @property
    def ns(self):
        return lance_ns.connect("rest", {"uri": self.url})

    def ok(self, name: str):
        result = self.results[name]
        assert result["ok"], (name, result)
        return result["rows"]

    def error(self, name: str) -> tuple[str, str]:
        result = self.results[name]
        assert not result["ok"], (name, result)
        return result["error"], result["message"]

    def requests(self) -> list[str]:
        """``METHOD /path STATUS`` of every request the job's server logged."""
        return re.findall(r"lance_ns\.server (\w+ \S+ \d{3}) ", self.log.read_text())


def run_job(request, work: Path) -> None:
    """Our server on a fresh root; pylance seeds it; ONE Spark session runs the whole plan;
    ``results.json`` appears when it is all done."""
    classpath = request.getfixturevalue("lance_spark_classpath")
    python = request.getfixturevalue("lance_spark_python")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    with serve_dir(work / "root", work / "server.log") as served:
        between = seed(lance_ns.connect("rest", {"uri": served.url}))
        run_ours(served.url, work)
        (work / "job.py").write_text(JOB)
        (work / "plan.json").write_text(json.dumps(plan(between)))
        env = job_env(python)
        started = time.monotonic()
        done = subprocess.run([str(python), str(work / "job.py"), served.url, classpath, str(work / "plan.json"),
                               str(work / "job-results.json")],
                              capture_output=True, text=True, env=env, cwd=work, timeout=900)
        seconds = time.monotonic() - started
        assert done.returncode == 0 and (work / "job-results.json").exists(), (done.stdout[-3000:], done.stderr[-6000:])
    (work / "seconds").write_text(f"{seconds:.1f}")
    (work / "job-results.json").replace(work / "results.json")


@pytest.fixture(scope="module")
def run(request, tmp_path_factory):
    """The job's results, and a server on its root for the tests' reads.  Under pytest-xdist
    the first worker here runs the job and the others wait for its results (a lock file):
    ``xdist_group`` does not keep these tests on one worker with pytest 9.2, whose items
    ignore the ``_nodeid`` that xdist 3.8 rewrites to group them."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the session's directory, shared by the workers
    work = base / "lance-spark-run"
    with open(base / "lance-spark-run.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (work / "results.json").exists():
            run_job(request, work)
    results = json.loads((work / "results.json").read_text())
    with serve_dir(work / "root", work / f"reads-{os.getpid()}.log") as served:
        yield Run(served.url, work / "root", work / "server.log", results, float((work / "seconds").read_text()),
                  json.loads((work / "ours-results.json").read_text()))


@pytest.fixture(scope="module")
def ours(run) -> dict:
    """The SQL extension's statements (SQL_STEPS) run by a Spark session of ours (our catalog on our
    server, our extension) on a twin of the table lance-spark's session works on: their results
    (run_ours, before lance-spark's job)."""
    return run.ours


#: the statements whose answer is the same row for row from lance-spark 0.4.0's extension and ours
SAME_ANSWER = ("sql_create_index", "sql_create_fts", "sql_show_indexes", "sql_optimize", "sql_count",
               "sql_show_indexes_optimized")
#: bytes a removed version's files may differ by between twin tables: each version's manifest
#: holds its commit time, whose nanoseconds Lance writes as a protobuf varint of 1 to 5 bytes
VARINT_SLACK = 4


def test_sql_extension_answers_as_lance_spark(run, ours):
    """lance-spark's own SQL extension and ours, the same statements on twin tables: CREATE INDEX
    (btree, fts with every tokenizer option), SHOW INDEXES before and after OPTIMIZE, OPTIMIZE's
    metrics, VACUUM's: the same columns, the same rows (VACUUM's bytes up to the commit times'
    encodings)."""
    for name in SAME_ANSWER:
        assert ours[name] == run.results[name], (name, ours[name], run.results[name])
    (ours_bytes, ours_versions), = ours["sql_vacuum"]["rows"]
    (their_bytes, their_versions), = run.results["sql_vacuum"]["rows"]
    assert ours_versions == their_versions == 3
    assert abs(ours_bytes - their_bytes) <= VARINT_SLACK * ours_versions, (ours_bytes, their_bytes)
    assert ours["sql_show_indexes"]["rows"] == [["id_idx", ["id"], "btree", 3, 300, 0, 0],
                                                ["text_idx", ["text"], "inverted", 3, 300, 0, 0]]
    assert ours["sql_optimize"]["rows"] == [[3, 1, 3, 1]]


def test_difference_sql_extension_statements_lance_spark_0_4_0_fails(run, ours):
    """DROP INDEX and SET UNENFORCED PRIMARY KEY, which lance-spark's documentation gives
    (answers ``index_name, status`` and ``status, primary_key_columns``), fail inside
    lance-spark 0.4.0 with Spark's INTERNAL_ERROR; ours answer as the documentation says."""
    for name in ("sql_drop_index", "sql_primary_key"):
        error, message = run.error(name)
        assert error == "org.apache.spark.SparkException" and "INTERNAL_ERROR" in message, (name, message)
    assert ours["sql_drop_index"]["rows"] == [["text_idx", "dropped"]]
    assert ours["sql_primary_key"]["rows"] == [["OK", "id"]]
    assert ours["sql_show_indexes_end"]["rows"] == [["id_idx", ["id"], "btree", 1, 300, 0, 0]]


def test_difference_an_index_of_a_missing_column(run, ours):
    """lance-spark 0.4.0 starts the build and fails in a task (a SparkException, the job
    aborted); ours answers Spark's AnalysisException with the table and the code before
    anything runs, as issue 55 asks."""
    error, message = run.error("sql_bad_column")
    assert error == "org.apache.spark.SparkException" and "column 'nope' does not exist" in message
    assert ours["sql_bad_column"]["error"] == "org.apache.spark.sql.AnalysisException"
    assert "ext.twin" in ours["sql_bad_column"]["message"] and "code 13" in ours["sql_bad_column"]["message"]


# -- namespaces ------------------------------------------------------------------------------

def test_namespaces(run):
    assert sorted(run.ok("show_ns_start")) == [["ext"], ["ours"]]  # seeded by pylance and by our Spark
    assert run.ok("create_ns") == []
    assert run.ok("create_ns_if_not_exists") == []
    error, message = run.error("create_ns_again")  # exists -> Spark's own error
    assert error.endswith("NamespaceAlreadyExistsException"), message
    assert run.ok("create_ns_props") == [] and run.ok("create_ns_nested") == []
    assert sorted(run.ok("show_ns")) == [["ext"], ["ours"], ["sales"], ["team"]]
    assert run.ok("show_ns_nested") == [["team.inner"]]
    describe = dict(map(tuple, run.ok("describe_ns")))
    assert describe["Namespace Name"] == "team"
    assert "(team,data)" in describe["Properties"] and "(tier,gold)" in describe["Properties"], describe
    # DESCRIBE NAMESPACE answers from our DescribeNamespace: the properties arrived
    assert "POST /v1/namespace/team/describe 200" in run.requests()


def test_namespace_drops(run):
    # DROP NAMESPACE of a non-empty namespace: our 409 code 3; CASCADE drops it and what is in it
    assert run.ok("drop_ns_cascade") == []
    assert sorted(run.ok("show_ns_end")) == [["`été`"], ["ext"], ["ours"], ["sales"]]  # Spark quotes a non-identifier
    assert "POST /v1/namespace/team/drop 409" in run.requests()
    assert "POST /v1/namespace/team/drop 200" in run.requests()
    assert sorted(run.ns.list_namespaces({"id": []}).namespaces) == ["ext", "ours", "sales", "été"]
    assert not list(run.root.glob("*team$inner$deep*")), "CASCADE left the nested table's data"


# -- our table through Spark, read back by pylance -----------------------------------------

def test_create_insert_select(run):
    assert run.ok("create_table") == []
    error, message = run.error("create_table_again")
    assert error.endswith("TableAlreadyExistsException"), message
    assert run.ok("select_empty") == []
    assert run.ok("insert") == []
    assert run.ok("select_2") == ORDERS_VERSIONS[2]
    assert run.ok("show_tables") == [["sales", "orders", False]]


def test_delete_update_merge_append(run):
    for step, version in (("delete", 3), ("update", 4), ("merge", 5), ("append_df", 6)):
        assert run.ok(step) in ([], None), step
        assert run.ok(f"select_{version}") == ORDERS_VERSIONS[version], step
    assert run.ok("aggregate") == [[4, 13, 54.0]]
    assert run.ok("filter") == [[1], [3]]


def test_pylance_reads_what_spark_wrote(run):
    ns = run.ns
    assert ns.list_tables({"id": ["sales"]}).tables == ["orders", "summary", "tagged", "typed"]
    ds = lance.dataset(namespace_client=ns, table_id=["sales", "orders"])
    assert ds.schema == pa.schema([("id", pa.int64()), ("name", pa.string()), ("amount", pa.float64())])
    assert ds.version == 6
    assert [v["version"] for v in ds.versions()] == list(ORDERS_VERSIONS)
    for version, rows in ORDERS_VERSIONS.items():
        table = lance.dataset(namespace_client=ns, table_id=["sales", "orders"], version=version).to_table()
        assert sorted(map(list, zip(*table.to_pydict().values()))) == rows, version
    assert ns.count_table_rows({"id": ["sales", "orders"]}).count == 4

    summary = lance.dataset(namespace_client=ns, table_id=["sales", "summary"]).to_table().sort_by("id")
    assert summary.to_pylist() == [{"id": 40, "name": "d"}, {"id": 50, "name": "e"}]
    assert run.ok("ctas") == [] and run.ok("insert_overwrite") == []
    assert run.ok("select_summary") == [[40, "d"], [50, "e"]]


def test_every_write_form_of_ours_is_read_by_lance_spark_duckdb_and_pylance(run):
    """What our catalog's write forms wrote (OUR_WRITES: INSERT, append, CTAS, INSERT OVERWRITE,
    RTAS, overwrite by a condition, UPDATE/DELETE/MERGE, a streaming sink), read exactly by
    lance-spark (lance-core over JNI), by DuckDB's Lance extension and by pylance."""
    from tests.interop.test_duckdb import _connect

    failed = {name: run.ours[name] for name, _ in OUR_WRITES if not run.ours[name]["ok"]}
    assert not failed, failed
    for table, rows in OUR_TABLES.items():
        assert run.ok(f"ours_{table}") == rows, table
        got = lance.dataset(namespace_client=run.ns, table_id=["ours", table]).to_table().sort_by("id")
        assert [[r["id"], r["s"]] for r in got.to_pylist()] == rows, table
    con = _connect()
    con.execute(f"ATTACH 'ours' AS ours (TYPE LANCE, ENDPOINT '{run.url}')")
    for table, rows in OUR_TABLES.items():
        assert [list(r) for r in con.execute(f"SELECT id, s FROM ours.main.{table} ORDER BY id").fetchall()] == rows, table


def test_pylance_reads_spark_types(run):
    assert run.ok("create_typed") == [] and run.ok("insert_typed") == []
    ds = lance.dataset(namespace_client=run.ns, table_id=["sales", "typed"])
    assert ds.schema == pa.schema([
        ("i64", pa.int64()), ("i32", pa.int32()), ("f64", pa.float64()), ("f32", pa.float32()),
        ("s", pa.string()), ("b", pa.bool_()), ("d", pa.date32()), ("ts", pa.timestamp("us", tz="UTC")),
        ("tsn", pa.timestamp("us")), ("bin", pa.binary()), ("lst", pa.list_(pa.int64())),
        ("st", pa.struct([("a", pa.int64()), ("b", pa.string())])), ("dec", pa.decimal128(10, 2)),
    ])
    rows = ds.to_table().sort_by("i32").to_pylist()
    first = rows[0]
    assert first["ts"] == datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)
    assert {k: v for k, v in first.items() if k != "ts"} == {
        "i64": 1, "i32": 2, "f64": 0.5, "f32": 1.5, "s": "a", "b": True, "d": datetime.date(2024, 1, 2),
        "tsn": datetime.datetime(2024, 1, 2, 3, 4, 5), "bin": b"ab", "lst": [1, 2], "st": {"a": 1, "b": "q"},
        "dec": decimal.Decimal("1.23")}
    assert {k: v for k, v in rows[1].items() if k != "st"} == {
        "i64": None, "i32": 3, "f64": None, "f32": 2.5, "s": None, "b": False, "d": None, "ts": None,
        "tsn": None, "bin": b"", "lst": [], "dec": None}


def test_difference_null_struct_written_as_struct_of_nulls(run):
    """lance-spark 0.4.0 writes a NULL struct as a struct whose fields are NULL (Spark reads it
    back so too): the row's nullness is lost, not by our server (it never sees the data)."""
    ds = lance.dataset(namespace_client=run.ns, table_id=["sales", "typed"])
    assert ds.to_table().sort_by("i32").to_pylist()[1]["st"] == {"a": None, "b": None}


def test_nested_namespace_table(run):
    assert run.ok("create_nested_table") == [] and run.ok("insert_nested_table") == []
    assert run.ok("select_nested_table") == [[3]]
    assert "POST /v1/table/team$inner$deep/declare 200" in run.requests()


# -- time travel ----------------------------------------------------------------------------

def test_version_as_of(run):
    for version, rows in ORDERS_VERSIONS.items():
        assert run.ok(f"version_{version}") == rows, version
    # a missing version: our DescribeTable answers 404 code 11, surfaced in the error
    error, message = run.error("version_missing")
    assert '"code":11' in message and "TABLE_VERSION_NOT_FOUND" in message, (error, message)


# -- the reverse: pylance wrote, Spark reads ------------------------------------------------

def test_spark_reads_what_pylance_wrote(run):
    assert run.ok("show_tables_ext") == [["ext", "mine", False], ["ext", "twin", False], ["ext", "types", False]]
    assert run.ok("mine") == MINE_V2
    assert run.ok("mine_count") == [[4, 10]]
    assert run.ok("mine_v1") == MINE_V1
    assert run.ok("mine_between") == MINE_V1  # TIMESTAMP AS OF a time between versions 1 and 2
    assert run.ok("types_schema") == TYPES_SCHEMA
    assert run.ok("types") == TYPES_ROWS
    assert run.ok("show_tables_root") == [["", "toplevel", False]]
    assert run.ok("toplevel") == [[7]]
    # and nothing Spark did changed them
    ds = lance.dataset(namespace_client=run.ns, table_id=["ext", "mine"])
    assert ds.version == 2 and ds.to_table().num_rows == 4


# -- drops ----------------------------------------------------------------------------------

def test_drop_table_deregisters_and_purge_drops(run):
    """DROP TABLE is DeregisterTable (the data stays at its location), DROP TABLE ... PURGE is
    DropTable (our dir namespace deletes the data it owns): lance-spark's mapping."""
    requests = run.requests()
    assert run.ok("drop_table") == []
    assert "TABLE_NOT_FOUND" in run.error("drop_table_gone")[1]
    assert "POST /v1/table/sales$dropped/deregister 200" in requests
    assert "POST /v1/table/sales$dropped/drop 200" not in requests
    assert list(run.root.glob("*_sales$dropped/_versions/*.manifest")), "deregister deleted the data"
    assert run.ok("drop_table_purge") == [] and run.ok("drop_table_if_exists") == []
    assert "POST /v1/table/sales$scratch/drop 200" in requests
    assert not list(run.root.glob("*sales$scratch*"))
    assert run.ok("show_tables_end") == [["sales", "orders", False], ["sales", "summary", False],
                                         ["sales", "tagged", False], ["sales", "typed", False]]


# -- named differences: what lance-spark 0.4.0 cannot do or does its own way ------------------

def test_difference_drop_non_empty_namespace_is_a_plain_runtime_error(run):
    """Without CASCADE our server refuses a non-empty namespace (409, code 3) as the spec says;
    lance-spark passes it on as a bare RuntimeException instead of Spark's
    SCHEMA_NOT_EMPTY (NonEmptyNamespaceException)."""
    error, message = run.error("drop_ns_not_empty")
    assert error == "java.lang.RuntimeException", (error, message)
    assert "NAMESPACE_NOT_EMPTY" in message and '"code":3' in message


def test_difference_alter_not_supported(run):
    """ALTER NAMESPACE, ALTER TABLE ADD COLUMNS / SET TBLPROPERTIES and RENAME TO are refused by
    the catalog itself (no request reaches our server, which implements AlterTableAddColumns
    and RenameTable)."""
    expected = {"alter_ns": "Namespace alteration is not supported",
                "alter_add_column": "Table alteration is not supported",
                "alter_set_tblproperties": "Table alteration is not supported",
                "rename_table": "Table renaming is not supported"}
    for step, message in expected.items():
        assert run.error(step) == ("java.lang.UnsupportedOperationException", message), step
    assert not any("/rename" in r or "add_columns" in r for r in run.requests())


def test_difference_tblproperties_are_not_sent(run):
    """CREATE TABLE ... TBLPROPERTIES: lance-spark's DeclareTable carries no properties, so the
    table has none in our catalog and SHOW TBLPROPERTIES is empty."""
    assert run.ok("create_tagged") == [] and run.ok("insert_tagged") == []
    assert run.ok("show_tblproperties") == []
    assert not run.ns.describe_table({"id": ["sales", "tagged"]}).properties


def test_names_escaped_in_the_path(run):
    """Non-ASCII and URL-reserved characters (``%``, ``+``, ``?``, ``#``) in names travel
    percent-encoded and name the same table on both sides."""
    assert run.ok("create_ns_unicode") == [] and run.ok("create_table_odd_name") == []
    assert run.ok("insert_odd_name") == [] and run.ok("select_odd_name") == [[2]]
    ds = lance.dataset(namespace_client=run.ns, table_id=["été", "ç%t+x?y#z"])
    assert ds.to_table().to_pylist() == [{"a": 2}]


def test_difference_space_in_a_name_is_sent_as_plus(run):
    """A space in a name cannot be used: lance-spark's REST client (lance-core's Rust
    ``RestNamespace``, also pylance's) form-encodes path segments, a space as ``+`` (and a
    ``+`` as ``%2B``), while a URL path's ``+`` is a plus (RFC 3986).  Our server, like the
    reference ``RestAdapter``, reads the path id ``my+ns``, which differs from the body's
    ``my ns``: 400, code 13.  lance-spark reports "Failed to create namespace"."""
    assert run.error("create_ns_space") == ("java.lang.RuntimeException", "Failed to create namespace")
    assert "POST /v1/namespace/my+ns/create 400" in run.requests()
    assert "my ns" not in run.ns.list_namespaces({"id": []}).namespaces


def test_difference_describe_table_names_the_directory(run):
    """DESCRIBE TABLE EXTENDED shows the table's storage directory name as its Name (ours is
    ``<hash>_sales$tagged``), not ``tagged``, and no location or properties."""
    describe = {row[0]: row[1] for row in run.ok("describe_table")}
    assert describe["Name"].endswith("_sales$tagged"), describe
    assert describe["Table Properties"] == "[]"


def test_difference_missing_table_is_not_spark_table_not_found(run):
    """A missing table answers 404 code 4 from our DescribeTable; lance-spark surfaces the REST
    error text in a RuntimeException rather than Spark's TABLE_OR_VIEW_NOT_FOUND."""
    error, message = run.error("select_missing_table")
    assert error == "java.lang.RuntimeException", (error, message)
    assert "TABLE_NOT_FOUND" in message and '"code":4' in message


def test_no_server_error(run):
    """Every request lance-spark made got a considered answer: no 5xx."""
    requests = run.requests()
    assert len(requests) > 50
    assert not [r for r in requests if r.rsplit(" ", 1)[1].startswith("5")], requests
    print(f"\nlance-spark {ARTIFACT}:{VERSION} on pyspark {PYSPARK}: {len(requests)} requests, "
          f"Spark job {run.seconds:.1f} s")
