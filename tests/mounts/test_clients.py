"""Clients nobody here wrote, through ``lance-ns serve`` of a mounts namespace: pylance's
Rust ``RestNamespace`` and DuckDB's Lance extension each write a table into one mount and
read one from another, and the mounted service's own client sees what they wrote.  (Our
Spark catalog does the same in tests/spark/test_mounts.py.)  DuckDB writes with INSERT:
its CREATE TABLE AS (1.5.5) leaves a table no other client reads rows from until DuckDB
attaches again, with or without the mounts (tests/interop/test_duckdb.py).

The server mounts a local directory as ``local`` and pylance's own REST server
(``RestAdapter`` over pylance's ``DirectoryNamespace``) as ``py``."""

from __future__ import annotations

import lance
import lance.namespace
import pyarrow as pa
import pytest
from lance_namespace import ListTablesRequest

import lance_ns
from tests.server.conftest import lance_ns_serve

pytestmark = pytest.mark.slow


@pytest.fixture
def world(tmp_path):
    """(the server's URL, a native client of each mount: ours of ``local``, pylance's of ``py``)."""
    adapter = lance.namespace.RestAdapter("dir", {"root": str(tmp_path / "py")}, host="127.0.0.1", port=0)
    adapter.start()
    try:
        py_uri = f"http://127.0.0.1:{adapter.port}"
        args = ["--impl", "mounts", "--no-ui",
                "--prop", "local.impl=dir", "--prop", f"local.root={tmp_path / 'local'}",
                "--prop", "py.impl=rest", "--prop", f"py.uri={py_uri}"]
        with lance_ns_serve(args) as served:
            local = lance_ns.connect("dir", {"root": str(tmp_path / "local")})
            yield served.url, local, lance.namespace.RestNamespace(uri=py_uri)
    finally:
        adapter.stop()


def test_pylances_rest_client_writes_into_one_mount_and_reads_another(world):
    url, local, py = world
    client = lance.namespace.RestNamespace(uri=url)  # pylance's Rust client of our server
    client.create_namespace(lance.namespace.CreateNamespaceRequest(id=["local", "sales"]))
    ours = pa.table({"id": [1, 2, 3]})
    lance.write_dataset(ours, namespace_client=client, table_id=["local", "sales", "orders"], mode="create")
    lance.write_dataset(pa.table({"id": [4]}), namespace_client=client, table_id=["local", "sales", "orders"],
                        mode="append")
    # the mounted directory's own client sees it, both versions
    native = lance.dataset(namespace_client=local, table_id=["sales", "orders"])
    assert native.to_table().column("id").to_pylist() == [1, 2, 3, 4] and native.version == 2
    # pylance writes natively into its own server; pylance reads it through our mounts
    py.create_namespace(lance.namespace.CreateNamespaceRequest(id=["db"]))
    theirs = pa.table({"k": ["a", "b"]})
    lance.write_dataset(theirs, namespace_client=py, table_id=["db", "theirs"], mode="create")
    assert lance.dataset(namespace_client=client, table_id=["py", "db", "theirs"]).to_table() == theirs
    listed = client.list_namespaces(lance.namespace.ListNamespacesRequest(id=[]))
    assert sorted(listed.namespaces) == ["local", "py"]
    # the root's ListAllTables, paged by pylance following our tokens (mount by mount); pylance's
    # own DirectoryNamespace answers ListAllTables with no tables, so the py mount adds none
    lance.write_dataset(ours, namespace_client=client, table_id=["local", "sales", "returns"], mode="create")
    pages, token = [], None
    for _ in range(5):
        page = client.list_all_tables(ListTablesRequest(limit=1, page_token=token))
        pages.append(page.tables)
        token = page.page_token
        if not token:
            break
    assert [t for p in pages for t in p] == ["local$sales$orders", "local$sales$returns"], pages
    assert all(len(p) <= 1 for p in pages), pages


def test_duckdb_writes_into_one_mount_and_reads_another(world):
    from tests.interop.test_duckdb import _connect

    url, local, py = world
    local.create_namespace({"id": ["sales"]})
    lance.write_dataset(pa.table({"x": [1, 2]}), namespace_client=local, table_id=["sales", "orders"], mode="create")
    py.create_namespace(lance.namespace.CreateNamespaceRequest(id=["db"]))
    lance.write_dataset(pa.table({"k": [10, 20, 30]}), namespace_client=py, table_id=["db", "theirs"], mode="create")
    con = _connect()
    con.execute(f"ATTACH 'local$sales' AS shop (TYPE LANCE, ENDPOINT '{url}')")
    con.execute(f"ATTACH 'py$db' AS other (TYPE LANCE, ENDPOINT '{url}')")
    assert con.execute("SELECT sum(k) FROM other.main.theirs").fetchall() == [(60,)]
    con.execute("INSERT INTO shop.main.orders SELECT k FROM other.main.theirs")
    native = lance.dataset(namespace_client=local, table_id=["sales", "orders"])
    assert sorted(native.to_table().column("x").to_pylist()) == [1, 2, 10, 20, 30]
    con.execute("INSERT INTO other.main.theirs SELECT x * 2 FROM shop.main.orders WHERE x < 3")
    seen = lance.dataset(namespace_client=py, table_id=["db", "theirs"])  # pylance's own client of its server
    assert sorted(seen.to_table().column("k").to_pylist()) == [2, 4, 10, 20, 30]

