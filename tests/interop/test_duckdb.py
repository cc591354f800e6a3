"""DuckDB's own Lance extension (PyPI ``duckdb`` + ``duckdb-extension-lance``) as a
client of ``lance-ns serve`` and of a lance-ns directory root.

The extension embeds Lance's Rust REST client and DirectoryNamespace: nobody here
wrote a line of it.  Every statement's result is read back by pylance and lance-ns,
and tables lance-ns wrote are read by DuckDB.

What DuckDB 1.5.5's extension itself gets wrong (asserted, so that a fixed release
shows up as an unexpected pass):

* ``DROP TABLE ns.main.t`` sends the bare name ``t`` (no namespace), so it drops
  ``t`` at the root or answers "not found";
* a table made by ``CREATE TABLE ... AS`` is not in the attached catalog until the
  namespace is attached again (its table list is read once per ATTACH);
* it resolves a name first at the root (``/v1/table/t/describe``) and only then in
  the attached namespace, so a root table of the same name shadows the namespace's.
"""

from __future__ import annotations

import lance
import pyarrow as pa
import pytest

import lance_ns
from tests.server.conftest import lance_ns_serve

duckdb = pytest.importorskip("duckdb", reason="duckdb is in the test extra: pip install -e '.[test]'")
extension = pytest.importorskip("duckdb_extension_lance", reason="duckdb-extension-lance is in the test extra")

pytestmark = pytest.mark.slow


def _connect():
    from pathlib import Path

    found = sorted(Path(extension.__file__).parent.glob("extensions/*/lance.duckdb_extension"))
    assert found, "duckdb-extension-lance ships no lance.duckdb_extension"
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    con.execute(f"LOAD '{found[-1]}'")
    return con


@pytest.fixture(params=["dir", "memory"])
def served(request, tmp_path):
    """``lance-ns serve`` in front of the directory namespace and of a catalog backend."""
    root = tmp_path / "lake"
    with lance_ns_serve(["--impl", request.param, "--prop", f"root={root}", "--no-ui"]) as srv:
        yield srv, lance_ns.connect("rest", {"uri": srv.url})


def _rows(con, sql):
    return con.execute(sql).fetchall()


def test_duckdb_reads_and_writes_a_served_namespace(served):
    srv, ns = served
    ns.create_namespace({"id": ["sales"]})
    lance.write_dataset(pa.table({"x": [1, 2, 3], "y": ["a", "b", "c"]}), namespace_client=ns,
                        table_id=["sales", "orders"], mode="create")
    attach = f"ATTACH 'sales' AS shop (TYPE LANCE, ENDPOINT '{srv.url}')"
    con = _connect()
    con.execute(attach)

    assert _rows(con, "SELECT database, schema, name, column_names, column_types FROM (SHOW ALL TABLES)") == [
        ("shop", "main", "orders", ["x", "y"], ["BIGINT", "VARCHAR"])]
    assert _rows(con, "SELECT sum(x), count(*) FROM shop.main.orders") == [(6, 3)]

    con.execute("INSERT INTO shop.main.orders VALUES (10, 'z')")
    assert lance.dataset(namespace_client=ns, table_id=["sales", "orders"]).to_table().column("x").to_pylist() == [1, 2, 3, 10]

    # CREATE TABLE AS lands in the attached namespace, never at the root
    assert _rows(con, "CREATE TABLE shop.main.totals AS SELECT range AS k, range * 2 AS v FROM range(5)") == [(5,)]
    assert ns.list_tables({"id": ["sales"]}).tables == ["orders", "totals"]
    assert ns.list_tables({"id": []}).tables == []
    con.execute("DETACH shop")
    con.execute(attach)  # DuckDB reads the table list once per ATTACH
    assert _rows(con, "SELECT sum(k), sum(v) FROM shop.main.totals") == [(10, 20)]

    assert _rows(con, "UPDATE shop.main.totals SET v = 0 WHERE k = 4") == [(1,)]
    assert _rows(con, "DELETE FROM shop.main.totals WHERE k = 1") == [(1,)]
    con.execute("ALTER TABLE shop.main.totals ADD COLUMN note INTEGER")
    expected = [(0, 0, None), (2, 4, None), (3, 6, None), (4, 0, None)]
    assert _rows(con, "SELECT * FROM shop.main.totals ORDER BY k") == expected

    # pylance through lance-ns, and lance-ns's own data path, see exactly that
    table = lance.dataset(namespace_client=ns, table_id=["sales", "totals"]).to_table().sort_by("k")
    assert table.column_names == ["k", "v", "note"]
    assert list(zip(*(table.column(c).to_pylist() for c in table.column_names))) == expected
    assert ns.count_table_rows({"id": ["sales", "totals"]}).count == 4
    described = ns.describe_table({"id": ["sales", "totals"], "load_detailed_metadata": True})
    assert described.version == lance.dataset(namespace_client=ns, table_id=["sales", "totals"]).version


def test_a_body_id_joined_by_the_delimiter_names_the_path_table(served):
    """What the extension sends (``{"id": ["sales$orders"]}`` on ``/v1/table/sales$orders/...``)
    is the same request as the list form; a body naming another table is refused with 13."""
    import httpx

    srv, ns = served
    ns.create_namespace({"id": ["sales"]})
    ns.declare_table({"id": ["sales", "orders"]})
    for body_id in (["sales$orders"], ["sales", "orders"]):
        answer = httpx.post(f"{srv.url}/v1/table/sales$orders/describe", json={"id": body_id})
        assert answer.status_code == 200, answer.text
    for body_id in (["orders"], ["sales$other"], ["sales$$orders"], "sales$orders"):
        answer = httpx.post(f"{srv.url}/v1/table/sales$orders/describe", json={"id": body_id})
        assert answer.status_code == 400 and answer.json()["code"] == 13, (body_id, answer.text)
    answer = httpx.post(f"{srv.url}/v1/table/sales|orders/describe?delimiter=|", json={"id": ["sales|orders"]})
    assert answer.status_code == 200, answer.text


@pytest.mark.xfail(strict=True, reason="DuckDB 1.5.5's DROP TABLE sends the table name without its namespace "
                                       "(POST /v1/table/t/drop): a bug of the extension, not worked around here")
def test_duckdb_drop_table_drops_the_namespace_table(served):
    srv, ns = served
    ns.create_namespace({"id": ["sales"]})
    lance.write_dataset(pa.table({"x": [1]}), namespace_client=ns, table_id=["sales", "gone"], mode="create")
    con = _connect()
    con.execute(f"ATTACH 'sales' AS shop (TYPE LANCE, ENDPOINT '{srv.url}')")
    try:
        con.execute("DROP TABLE shop.main.gone")
    finally:
        assert ns.list_tables({"id": ["sales"]}).tables in (["gone"], [])
    assert ns.list_tables({"id": ["sales"]}).tables == []


def test_duckdb_attaches_a_lance_ns_directory_root(tmp_path):
    """``ATTACH '<root>' (TYPE LANCE)``: DuckDB's embedded DirectoryNamespace on a root
    lance-ns wrote (root tables, beside a nested namespace), and lance-ns reads what it wrote."""
    root = str(tmp_path / "lake")
    ns = lance_ns.connect("dir", {"root": root})
    ns.create_namespace({"id": ["sales"]})
    lance.write_dataset(pa.table({"x": [1, 2, 3]}), namespace_client=ns, table_id=["top"], mode="create")
    lance.write_dataset(pa.table({"x": [5]}), namespace_client=ns, table_id=["sales", "nested"], mode="create")
    con = _connect()
    con.execute(f"ATTACH '{root}' AS lake (TYPE LANCE)")
    assert _rows(con, "SELECT name, column_names FROM (SHOW ALL TABLES)") == [("top", ["x"])]
    assert _rows(con, "SELECT sum(x) FROM lake.main.top") == [(6,)]
    con.execute("INSERT INTO lake.main.top VALUES (4)")
    assert _rows(con, "CREATE TABLE lake.main.made AS SELECT 7 AS a") == [(1,)]

    fresh = lance_ns.connect("dir", {"root": root})
    assert fresh.list_tables({"id": []}).tables == ["made", "top"]
    assert sorted(lance.dataset(namespace_client=fresh, table_id=["top"]).to_table().column("x").to_pylist()) == [1, 2, 3, 4]
    assert lance.dataset(namespace_client=fresh, table_id=["made"]).to_table().column("a").to_pylist() == [7]
    assert fresh.list_tables({"id": ["sales"]}).tables == ["nested"]
