"""LanceDB over lance-ns backends, found by name: ``lancedb.connect(namespace_client_impl=
"lance_ns.dir", ...)`` goes through ``lance_namespace.connect``, which must resolve our name
(not pylance's own ``dir``), and every table operation LanceDB makes must work on our backend."""

from __future__ import annotations

import lance
import lancedb
import pyarrow as pa
import pytest

import lance_ns

VECTOR = pa.list_(pa.float32(), 2)


def rows(ids, vectors) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "vector": pa.array(vectors, VECTOR)})


@pytest.mark.parametrize("impl", ["lance_ns.dir", "lance_ns.memory"])
def test_lancedb_creates_adds_and_searches_through_a_lance_ns_backend(tmp_path, impl):
    props = {"root": str(tmp_path / "lake")} if impl == "lance_ns.dir" else {}
    db = lancedb.connect(namespace_client_impl=impl, namespace_client_properties=props)
    backend = lance_ns.load_class(impl.removeprefix("lance_ns."))
    assert type(db._namespace_client) is backend  # ours, not pylance's native client

    db.create_namespace(["shop"])
    table = db.create_table("items", data=rows([1, 2, 3], [[0, 0], [1, 1], [5, 5]]), namespace_path=["shop"])
    table.add(rows([4], [[1.1, 0.9]]))

    assert db.list_tables(namespace_path=["shop"]).tables == ["items"]
    reopened = db.open_table("items", namespace_path=["shop"])
    assert reopened.count_rows() == 4
    nearest = reopened.search([1.0, 1.0]).limit(2).to_arrow()
    assert nearest.column("id").to_pylist() == [2, 4]
    assert nearest.column("_distance").to_pylist()[0] == pytest.approx(0.0)

    if impl == "lance_ns.dir":  # what LanceDB wrote is a table of our namespace, readable without LanceDB
        ns = lance_ns.connect("dir", props)
        assert ns.list_tables({"id": ["shop"]}).tables == ["items"]
        ds = lance.dataset(namespace_client=ns, table_id=["shop", "items"])
        assert sorted(ds.to_table().column("id").to_pylist()) == [1, 2, 3, 4]


def test_lancedb_reports_a_missing_table_of_a_lance_ns_backend(tmp_path):
    db = lancedb.connect(namespace_client_impl="lance_ns.dir", namespace_client_properties={"root": str(tmp_path)})
    with pytest.raises(Exception) as info:
        db.open_table("nope")
    assert "nope" in str(info.value)
