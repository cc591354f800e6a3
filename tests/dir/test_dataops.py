"""The data operations (DataOperations) through the directory namespace."""

from __future__ import annotations

import os

import lance
import numpy as np
import pyarrow as pa
import pytest
from lance_namespace import CreateTableRequest, InsertIntoTableRequest

import lance_ns

from .conftest import code, ipc, sample


def rows(resp) -> pa.Table:
    return pa.ipc.open_file(pa.py_buffer(resp.data)).read_all()


def vectors(n: int, dim: int = 8) -> pa.Table:
    rng = np.random.default_rng(7)
    flat = pa.array(rng.random(n * dim, dtype=np.float32))
    return pa.table({"id": pa.array(range(n), pa.int64()), "v": pa.FixedSizeListArray.from_arrays(flat, dim)})


def test_create_table_modes(ns):
    out = ns.create_table({"id": ["t"]}, ipc(sample(3)))
    assert out.version == 1 and out.location.endswith("t.lance")
    assert code(ns.create_table, {"id": ["t"]}, ipc(sample(5))) == 5
    assert ns.create_table({"id": ["t"], "mode": "ExistOk"}, ipc(sample(5))).version == 1
    assert ns.create_table(CreateTableRequest(id=["t"], mode="Overwrite"), ipc(sample(5))).version == 2
    assert ns.count_table_rows({"id": ["t"]}).count == 5


def test_failed_create_leaves_nothing(ns, root):
    ns.create_namespace({"id": ["a"]})
    assert code(ns.create_table, {"id": ["a", "t"]}, b"not arrow") == 13
    # data pylance cannot store (a dense union): the write fails after the declaration
    union = pa.UnionArray.from_dense(
        pa.array([0, 1], pa.int8()), pa.array([0, 0], pa.int32()), [pa.array([1]), pa.array(["a"])]
    )
    bad = pa.table({"u": union})
    for tid in (["a", "t"], ["r"]):
        with pytest.raises(lance_ns.errors.LanceNamespaceError):
            ns.create_table({"id": tid}, ipc(bad))
    assert ns.list_tables({"id": ["a"]}).tables == []
    assert ns.list_tables({"id": []}).tables == []
    assert sorted(os.listdir(root)) == ["__manifest"]
    ns.create_table({"id": ["a", "t"]}, ipc(sample(3)))  # the name is free again


def test_insert_merge_update_delete_count(ns):
    ns.create_table({"id": ["t"]}, ipc(sample(10)))
    r = ns.insert_into_table(InsertIntoTableRequest(id=["t"]), ipc(sample(5, 10)))
    assert r.num_inserted_rows == 5 and r.version == 2
    assert ns.count_table_rows({"id": ["t"]}).count == 15
    assert ns.count_table_rows({"id": ["t"], "version": 1}).count == 10
    assert ns.count_table_rows({"id": ["t"], "predicate": "id >= 12"}).count == 3
    upsert = pa.table({"id": pa.array([0, 100], pa.int64()), "name": ["zero", "hundred"]})
    m = ns.merge_insert_into_table(
        {"id": ["t"], "on": ["id"], "when_matched_update_all": True, "when_not_matched_insert_all": True}, ipc(upsert)
    )
    assert (m.num_updated_rows, m.num_inserted_rows) == (1, 1)
    u = ns.update_table({"id": ["t"], "predicate": "id < 3", "updates": [["name", "'small'"]]})
    assert u.updated_rows == 3
    ns.delete_from_table({"id": ["t"], "predicate": "id >= 10"})
    assert ns.count_table_rows({"id": ["t"]}).count == 10
    got = rows(ns.query_table({"id": ["t"], "k": 100, "vector": {}, "filter": "name = 'small'", "columns": {"column_names": ["id"]}}))
    assert got.column_names == ["id"] and sorted(got["id"].to_pylist()) == [0, 1, 2]
    assert ns.insert_into_table({"id": ["t"], "mode": "Overwrite"}, ipc(sample(2))).num_inserted_rows == 2
    assert ns.count_table_rows({"id": ["t"]}).count == 2


def test_errors_carry_codes(ns):
    ns.create_table({"id": ["t"]}, ipc(sample(3)))
    assert code(ns.count_table_rows, {"id": ["ghost"]}) == 4
    assert code(ns.count_table_rows, {"id": ["t"], "version": 42}) == 11
    bad = pa.table({"other": [1.5]})
    assert code(ns.insert_into_table, {"id": ["t"]}, ipc(bad)) in (13, 20)
    assert code(ns.query_table, {"id": ["t"], "k": 1, "vector": {}, "columns": {"column_names": ["nope"]}}) in (12, 13)
    assert code(ns.count_table_rows, {"id": ["t"], "predicate": "no_such_column > 1"}) in (12, 13)


def test_first_insert_into_a_declared_table_creates_it(ns):
    ns.declare_table({"id": ["d"]})
    assert code(ns.count_table_rows, {"id": ["d"]}) == 4
    assert ns.insert_into_table({"id": ["d"]}, ipc(sample(4))).version == 1
    assert ns.count_table_rows({"id": ["d"]}).count == 4
    assert ns.describe_table({"id": ["d"], "check_declared": True}).is_only_declared is False


def test_vector_query_and_indices(ns):
    data = vectors(300)
    ns.create_table({"id": ["v"]}, ipc(data))
    q = data["v"][17].as_py()
    got = rows(ns.query_table({"id": ["v"], "k": 3, "vector": {"single_vector": q}, "columns": {"column_names": ["id"]}}))
    assert got["id"][0].as_py() == 17 and got.num_rows == 3
    ns.create_table_scalar_index({"id": ["v"], "column": "id", "index_type": "BTREE", "name": "id_idx"})
    ns.create_table_index({"id": ["v"], "column": "v", "index_type": "IVF_PQ", "name": "v_idx",
                           "num_partitions": 2, "num_sub_vectors": 2, "distance_type": "l2"})
    assert code(ns.create_table_scalar_index, {"id": ["v"], "column": "id", "index_type": "BTREE", "name": "id_idx"}) == 7
    listed = ns.list_table_indices({"id": ["v"]}).indexes
    assert [(i.index_name, i.columns) for i in listed] == [("id_idx", ["id"]), ("v_idx", ["v"])]
    stats = ns.describe_table_index_stats({"id": ["v"], "index_name": "id_idx"})
    assert stats.num_indexed_rows == 300
    ns.drop_table_index({"id": ["v"], "index_name": "id_idx"})
    assert [i.index_name for i in ns.list_table_indices({"id": ["v"]}).indexes] == ["v_idx"]
    assert code(ns.drop_table_index, {"id": ["v"], "index_name": "id_idx"}) == 6


def test_versions_restore_and_tags(ns):
    ns.create_table({"id": ["t"]}, ipc(sample(2)))
    ns.insert_into_table({"id": ["t"]}, ipc(sample(3, 2)))
    ns.insert_into_table({"id": ["t"]}, ipc(sample(4, 5)))
    versions = [v.version for v in ns.list_table_versions({"id": ["t"]}).versions]
    assert versions == [1, 2, 3]
    page = ns.list_table_versions({"id": ["t"], "descending": True, "limit": 2})
    assert [v.version for v in page.versions] == [3, 2]
    rest = ns.list_table_versions({"id": ["t"], "descending": True, "limit": 2, "page_token": page.page_token})
    assert [v.version for v in rest.versions] == [1] and rest.page_token is None
    assert ns.describe_table_version({"id": ["t"], "version": 2}).version.version == 2
    assert code(ns.describe_table_version, {"id": ["t"], "version": 9}) == 11

    ns.create_table_tag({"id": ["t"], "tag": "first", "version": 1})
    assert code(ns.create_table_tag, {"id": ["t"], "tag": "first", "version": 2}) == 9
    assert code(ns.create_table_tag, {"id": ["t"], "tag": "bad", "version": 99}) == 11
    assert ns.get_table_tag_version({"id": ["t"], "tag": "first"}).version == 1
    ns.update_table_tag({"id": ["t"], "tag": "first", "version": 2})
    assert ns.list_table_tags({"id": ["t"]}).tags["first"].version == 2
    d = ns.describe_table({"id": ["t"], "tag": "first", "load_detailed_metadata": True})
    assert d.version == 2
    ns.delete_table_tag({"id": ["t"], "tag": "first"})
    assert code(ns.get_table_tag_version, {"id": ["t"], "tag": "first"}) == 8

    ns.restore_table({"id": ["t"], "version": 1})
    assert ns.count_table_rows({"id": ["t"]}).count == 2
    assert ns.describe_table({"id": ["t"], "load_detailed_metadata": True}).version == 4


def test_pylance_write_modes_through_namespace(ns):
    ns.create_namespace({"id": ["a"]})
    for tid in (["root_t"], ["a", "nested_t"]):
        lance.write_dataset(sample(4), namespace_client=ns, table_id=tid, mode="create")
        with pytest.raises(Exception):
            lance.write_dataset(sample(4), namespace_client=ns, table_id=tid, mode="create")
        lance.write_dataset(sample(2, 4), namespace_client=ns, table_id=tid, mode="append")
        assert lance.dataset(namespace_client=ns, table_id=tid).count_rows() == 6
        lance.write_dataset(sample(1), namespace_client=ns, table_id=tid, mode="overwrite")
        ds = lance.dataset(namespace_client=ns, table_id=tid)
        assert ds.count_rows() == 1 and ds.version == 3
    assert ns.list_tables({"id": []}).tables == ["root_t"]
    assert ns.list_tables({"id": ["a"]}).tables == ["nested_t"]
