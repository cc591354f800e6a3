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


def _ipc(table: pa.Table) -> bytes:
    import io

    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    return sink.getvalue()


def test_a_new_table_of_a_dropped_name_moves_aside_and_owns_its_location(tmp_path):
    """CreateTable, which writes the data anyway, looks at the default location first."""
    ns = _ns(tmp_path)
    lance.write_dataset(pa.table({"x": [1]}), namespace_client=ns, table_id=["a", "t"], mode="create")
    default = ns.describe_table({"id": ["a", "t"]}).location
    ns.drop_table({"id": ["a", "t"]})
    ns.create_table({"id": ["a", "t"]}, _ipc(pa.table({"x": [1, 2, 3]})))
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


def test_a_declaration_after_a_drop_makes_no_storage_call(tmp_path, monkeypatch):
    """DeclareTable is metadata-only (the protocol's words): it takes the default location
    without looking at storage, so pylance's create (declare, then write) reuses a dropped
    table's directory beside its marker (the window docs/reliability.md names)."""
    ns = _ns(tmp_path)
    lance.write_dataset(pa.table({"x": [1]}), namespace_client=ns, table_id=["a", "t"], mode="create")
    default = ns.describe_table({"id": ["a", "t"]}).location
    ns.drop_table({"id": ["a", "t"]})

    def no_storage(*args, **kwargs):
        raise AssertionError("DeclareTable touched storage")

    monkeypatch.setattr(storage, "filesystem", no_storage)
    monkeypatch.setattr(storage, "open_lance", no_storage)
    assert ns.declare_table({"id": ["a", "t"]}).location == default
    assert ns.declare_table({"id": ["a", "u"], "location": str(tmp_path / "a" / "elsewhere.lance")}).location


def test_a_drop_outlasts_a_late_writer_landing_files_while_it_deletes(tmp_path):
    """A writer still landing files in the directory (a CreateTable that lost the
    first commit) makes the removal meet ENOTEMPTY: the drop removes it again once
    the writer is done, never answering an error for a drop already committed."""
    import threading
    import time

    location = tmp_path / "t.lance"
    (location / "data").mkdir(parents=True)
    for i in range(200):
        (location / "data" / f"old{i}").write_bytes(b"x")
    stop = threading.Event()

    def late_writer():
        end, i = time.monotonic() + 0.08, 0
        while time.monotonic() < end:
            (location / "data").mkdir(parents=True, exist_ok=True)
            (location / "data" / f"late{i}").write_bytes(b"x")
            i += 1
        stop.set()

    writer = threading.Thread(target=late_writer)
    writer.start()
    storage.delete_location(str(location))
    writer.join()
    storage.delete_location(str(location))  # what the writer landed after the last pass
    assert not location.exists()
