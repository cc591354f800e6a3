"""A catalog's dropped table keeps its directory taken (.lance-dropped); the
next table of the name gets a fresh sibling location, which the namespace owns
(its drop deletes the data) -- the race work on the unified catalog."""

import os

import lance
import pyarrow as pa

import lance_ns
from lance_ns import storage


def _ns(tmp_path):
    ns = lance_ns.connect("memory", {"root": str(tmp_path)})
    ns.create_namespace({"id": ["a"]})
    return ns


def test_a_dropped_tables_directory_keeps_only_the_marker(tmp_path):
    ns = _ns(tmp_path)
    lance.write_dataset(pa.table({"x": [1, 2]}), namespace_client=ns, table_id=["a", "t"], mode="create")
    location = ns.describe_table({"id": ["a", "t"]}).location
    ns.drop_table({"id": ["a", "t"]})
    assert os.listdir(location) == [storage.DROPPED_MARKER]


def test_a_new_table_of_a_dropped_name_moves_aside_and_owns_its_location(tmp_path):
    ns = _ns(tmp_path)
    lance.write_dataset(pa.table({"x": [1]}), namespace_client=ns, table_id=["a", "t"], mode="create")
    default = ns.describe_table({"id": ["a", "t"]}).location
    ns.drop_table({"id": ["a", "t"]})
    lance.write_dataset(pa.table({"x": [1, 2, 3]}), namespace_client=ns, table_id=["a", "t"], mode="create")
    fresh = ns.describe_table({"id": ["a", "t"]}).location
    assert fresh != default and storage.is_fresh_variant(fresh, default)
    assert lance.dataset(fresh).count_rows() == 3
    ns.drop_table({"id": ["a", "t"]})  # owned: its data goes
    assert os.listdir(fresh) == [storage.DROPPED_MARKER]


def test_fresh_variant_is_recognised_and_nothing_else():
    base = "/r/a/t.lance"
    assert storage.is_fresh_variant(storage.fresh_variant(base), base)
    assert storage.is_fresh_variant(storage.fresh_variant("s3://b/w/a/t"), "s3://b/w/a/t")
    assert not storage.is_fresh_variant(base, base)
    assert not storage.is_fresh_variant("/r/a/t-other.lance", base)
    assert not storage.is_fresh_variant("/r/a/t-0123456789.lance", base)
    assert not storage.is_fresh_variant("/r/a/u-01234567.lance", base)
