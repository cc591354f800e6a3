"""Our DirectoryNamespace and pylance's own (Rust) one read each other's directories.

Each direction builds the same tree (namespaces with properties, tables with
data, declared tables, at the root and nested) with one implementation and
checks it through the other, down to reading the rows with pylance.
"""

from __future__ import annotations

import io
import os

import lance
import pyarrow as pa
import pytest
from lance.namespace import DirectoryNamespace as RustDirectoryNamespace
from lance_namespace import (
    CreateNamespaceRequest,
    CreateTableRequest,
    DeclareTableRequest,
    DescribeNamespaceRequest,
    DescribeTableRequest,
    DeregisterTableRequest,
    ListNamespacesRequest,
    ListTablesRequest,
)

import lance_ns


def ipc(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    return sink.getvalue()


DATA = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "s": ["a", "b", "c"]})


def build(ns) -> None:
    """The same tree through any LanceNamespace."""
    ns.create_namespace(CreateNamespaceRequest(id=["sales"], properties={"owner": "team-a"}))
    ns.create_namespace(CreateNamespaceRequest(id=["sales", "eu"]))
    ns.create_table(CreateTableRequest(id=["top"]), ipc(DATA))
    ns.create_table(CreateTableRequest(id=["sales", "orders"]), ipc(DATA))
    ns.create_table(CreateTableRequest(id=["sales", "eu", "deep"]), ipc(DATA))
    ns.declare_table(DeclareTableRequest(id=["planned"]))
    ns.declare_table(DeclareTableRequest(id=["sales", "eu", "planned"]))


def check(ns) -> None:
    """What both implementations must see in that tree."""
    assert ns.list_namespaces(ListNamespacesRequest(id=[])).namespaces == ["sales"]
    assert ns.list_namespaces(ListNamespacesRequest(id=["sales"])).namespaces == ["eu"]
    assert ns.describe_namespace(DescribeNamespaceRequest(id=["sales"])).properties == {"owner": "team-a"}
    assert sorted(ns.list_tables(ListTablesRequest(id=[])).tables) == ["planned", "top"]
    assert ns.list_tables(ListTablesRequest(id=["sales"])).tables == ["orders"]
    assert sorted(ns.list_tables(ListTablesRequest(id=["sales", "eu"])).tables) == ["deep", "planned"]
    for tid in (["top"], ["sales", "orders"], ["sales", "eu", "deep"]):
        d = ns.describe_table(DescribeTableRequest(id=tid, check_declared=True))
        assert d.is_only_declared is False
        assert lance.dataset(d.location).to_table() == DATA
        assert lance.dataset(namespace_client=ns, table_id=tid).to_table() == DATA
    for tid in (["planned"], ["sales", "eu", "planned"]):
        assert ns.describe_table(DescribeTableRequest(id=tid, check_declared=True)).is_only_declared is True


def same_location(a: str, b: str) -> bool:
    return a.removeprefix("file://").rstrip("/") == b.removeprefix("file://").rstrip("/")


def test_ours_reads_pylance_directory(tmp_path):
    rust = RustDirectoryNamespace(root=str(tmp_path))
    build(rust)
    ours = lance_ns.connect("dir", {"root": str(tmp_path)})
    check(ours)
    for tid in (["top"], ["sales", "eu", "deep"], ["planned"]):
        mine = ours.describe_table(DescribeTableRequest(id=tid)).location
        theirs = rust.describe_table(DescribeTableRequest(id=tid)).location
        assert same_location(mine, theirs)


def test_pylance_reads_our_directory(tmp_path):
    ours = lance_ns.connect("dir", {"root": str(tmp_path)})
    build(ours)
    rust = RustDirectoryNamespace(root=str(tmp_path))
    check(rust)
    for tid in (["top"], ["sales", "eu", "deep"], ["sales", "eu", "planned"]):
        mine = ours.describe_table(DescribeTableRequest(id=tid)).location
        theirs = rust.describe_table(DescribeTableRequest(id=tid)).location
        assert same_location(mine, theirs)


def test_both_write_one_directory(tmp_path):
    """Interleaved writes by both implementations keep one consistent manifest."""
    ours = lance_ns.connect("dir", {"root": str(tmp_path)})
    rust = RustDirectoryNamespace(root=str(tmp_path))
    ours.create_namespace(CreateNamespaceRequest(id=["a"]))
    rust.create_namespace(CreateNamespaceRequest(id=["b"]))
    rust.declare_table(DeclareTableRequest(id=["a", "from_rust"]))
    ours.declare_table(DeclareTableRequest(id=["b", "from_ours"]))
    for ns in (ours, rust):
        assert ns.list_namespaces(ListNamespacesRequest(id=[])).namespaces == ["a", "b"]
        assert ns.list_tables(ListTablesRequest(id=["a"])).tables == ["from_rust"]
        assert ns.list_tables(ListTablesRequest(id=["b"])).tables == ["from_ours"]
    with pytest.raises(Exception):
        rust.declare_table(DeclareTableRequest(id=["b", "from_ours"]))
    with pytest.raises(lance_ns.errors.TableAlreadyExistsError):
        ours.declare_table(DeclareTableRequest(id=["a", "from_rust"]))
    # each removes the other's row (ours deletes from the one fragment holding it)
    ours.deregister_table(DeregisterTableRequest(id=["a", "from_rust"]))
    rust.deregister_table(DeregisterTableRequest(id=["b", "from_ours"]))
    for ns in (ours, rust):
        assert ns.list_tables(ListTablesRequest(id=["a"])).tables == []
        assert ns.list_tables(ListTablesRequest(id=["b"])).tables == []



def test_pylance_commits_reach_a_quiet_lance_ns_at_its_next_read(tmp_path, monkeypatch):
    """A lance-ns whose root has been still (it checks the manifest's version by one stat() of
    _versions/, lance_ns.directory_stamp) sees pylance's next commit, a table with data too, at
    its very next read; and pylance sees ours.  Rounds, each after the root went still again."""
    import time

    from lance_ns import directory_stamp

    monkeypatch.setattr(directory_stamp, "RACY_NS", 50_000_000)
    ours = lance_ns.connect("dir", {"root": str(tmp_path)})
    rust = RustDirectoryNamespace(root=str(tmp_path))
    ours.create_namespace(CreateNamespaceRequest(id=["a"]))
    for i in range(5):
        time.sleep(0.1)
        ours.list_tables(ListTablesRequest(id=["a"]))  # the check that finds the root still
        assert ours.manifest._versions_stamp.unchanged(ours.manifest.version)  # trusted: reads would stat only
        rust.declare_table(DeclareTableRequest(id=["a", f"rust{i}"]))
        assert f"rust{i}" in ours.list_tables(ListTablesRequest(id=["a"])).tables
        lance.write_dataset(DATA, namespace_client=rust, table_id=["a", f"data{i}"], mode="create")
        assert lance.dataset(namespace_client=ours, table_id=["a", f"data{i}"]).to_table() == DATA
        ours.declare_table(DeclareTableRequest(id=["a", f"ours{i}"]))
        assert f"ours{i}" in rust.list_tables(ListTablesRequest(id=["a"])).tables


def test_properties_cross_both_ways_while_each_holds_the_manifest_open(tmp_path):
    """Properties pylance writes reach an open lance-ns through the rows it appends, held
    as read, not parsed and dumped again; the properties ours writes reach pylance."""
    ours = lance_ns.connect("dir", {"root": str(tmp_path)})
    rust = RustDirectoryNamespace(root=str(tmp_path))
    ours.create_namespace(CreateNamespaceRequest(id=["a"], properties={"owner": "ours"}))
    assert ours.list_namespaces(ListNamespacesRequest(id=[])).namespaces == ["a"]  # loaded before pylance writes
    rust.create_namespace(CreateNamespaceRequest(id=["b"], properties={"owner": "rust", "tier": "gold"}))
    rust.declare_table(DeclareTableRequest(id=["b", "t"], properties={"k": "v"}))
    assert ours.describe_namespace(DescribeNamespaceRequest(id=["b"])).properties == {"owner": "rust", "tier": "gold"}
    assert ours.describe_table(DescribeTableRequest(id=["b", "t"])).properties == {"k": "v"}
    ours.declare_table(DeclareTableRequest(id=["a", "u"], properties={"k2": "v2"}))
    assert rust.describe_namespace(DescribeNamespaceRequest(id=["a"])).properties == {"owner": "ours"}
    # pylance shows every key of the entry, lance-ns's ownership mark too (ours keeps it to itself)
    assert rust.describe_table(DescribeTableRequest(id=["a", "u"])).properties == {"k2": "v2", "lance_ns.owned": "true"}
    assert ours.describe_table(DescribeTableRequest(id=["a", "u"])).properties == {"k2": "v2"}


def test_a_namespace_tree_dropped_by_ours_is_gone_for_pylance_and_back(tmp_path):
    """Our Cascade DropNamespace (found through the children index) removes the whole tree,
    a namespace whose name shares the prefix stays, and pylance sees exactly that and can
    reuse the name; what pylance writes there is read back by ours."""
    ours = lance_ns.connect("dir", {"root": str(tmp_path), "manifest_compact_every": "4"})
    rust = RustDirectoryNamespace(root=str(tmp_path))
    for ns in (["a"], ["a", "b"], ["ab"]):
        ours.create_namespace(CreateNamespaceRequest(id=ns))
    rust.declare_table(DeclareTableRequest(id=["a", "b", "deep"]))
    ours.declare_table(DeclareTableRequest(id=["a", "top"]))
    ours.declare_table(DeclareTableRequest(id=["ab", "kept"]))
    ours.drop_namespace({"id": ["a"], "behavior": "Cascade"})
    ours.manifest.wait_for_upkeep()
    assert rust.list_namespaces(ListNamespacesRequest(id=[])).namespaces == ["ab"]
    assert rust.list_tables(ListTablesRequest(id=["ab"])).tables == ["kept"]
    rust.create_namespace(CreateNamespaceRequest(id=["a"]))
    rust.declare_table(DeclareTableRequest(id=["a", "top"]))
    assert ours.list_namespaces({"id": ["a"]}).namespaces == []
    assert ours.list_tables({"id": ["a"]}).tables == ["top"]


def test_deregistered_root_tables_are_hidden_both_ways(tmp_path):
    ours = lance_ns.connect("dir", {"root": str(tmp_path)})
    ours.create_table(CreateTableRequest(id=["keep"]), ipc(DATA))
    ours.create_table(CreateTableRequest(id=["gone"]), ipc(DATA))
    ours.deregister_table(DeregisterTableRequest(id=["gone"]))
    assert (tmp_path / "gone.lance" / ".lance-deregistered").read_bytes() == b""  # pylance tests only that it is there
    rust = RustDirectoryNamespace(root=str(tmp_path))
    assert rust.list_tables(ListTablesRequest(id=[])).tables == ["keep"]

    single = tmp_path / "single"
    rust1 = RustDirectoryNamespace(root=str(single), manifest_enabled="false")
    rust1.create_table(CreateTableRequest(id=["keep"]), ipc(DATA))
    rust1.create_table(CreateTableRequest(id=["gone"]), ipc(DATA))
    rust1.deregister_table(DeregisterTableRequest(id=["gone"]))
    ours1 = lance_ns.connect("dir", {"root": str(single), "manifest_enabled": "false"})
    assert ours1.list_tables(ListTablesRequest(id=[])).tables == ["keep"]
    # and our register brings it back for both
    ours1.register_table({"id": ["gone"], "location": "gone.lance"})
    assert sorted(rust1.list_tables(ListTablesRequest(id=[])).tables) == ["gone", "keep"]


def test_single_level_mode_matches_pylance(tmp_path):
    rust = RustDirectoryNamespace(root=str(tmp_path), manifest_enabled="false")
    rust.create_table(CreateTableRequest(id=["t1"]), ipc(DATA))
    rust.declare_table(DeclareTableRequest(id=["d1"]))
    ours = lance_ns.connect("dir", {"root": str(tmp_path), "manifest_enabled": "false"})
    assert ours.list_tables(ListTablesRequest(id=[])).tables == ["d1", "t1"]
    ours.declare_table(DeclareTableRequest(id=["d2"]))
    ours.create_table(CreateTableRequest(id=["t2"]), ipc(DATA))
    assert rust.list_tables(ListTablesRequest(id=[])).tables == ["d1", "d2", "t1", "t2"]
    assert lance.dataset(namespace_client=rust, table_id=["t2"]).to_table() == DATA
    assert not (tmp_path / "__manifest").exists()
    with pytest.raises(lance_ns.errors.UnsupportedOperationError):
        ours.create_namespace({"id": ["x"]})


def test_seed_spec_bare_table_directories(tmp_path):
    lance.write_dataset(DATA, str(tmp_path / "legacy"))
    (tmp_path / "empty_dir").mkdir()
    ours = lance_ns.connect("dir", {"root": str(tmp_path)})
    assert ours.list_tables(ListTablesRequest(id=[])).tables == ["empty_dir", "legacy"]
    d = ours.describe_table(DescribeTableRequest(id=["legacy"], load_detailed_metadata=True))
    assert d.location == str(tmp_path / "legacy") and d.version == 1
    assert lance.dataset(namespace_client=ours, table_id=["legacy"]).to_table() == DATA
    off = lance_ns.connect("dir", {"root": str(tmp_path), "bare_table_dirs": "false"})
    assert off.list_tables(ListTablesRequest(id=[])).tables == []


def test_both_ways_on_s3():
    """The same on object storage (a real moto S3 server)."""
    import boto3

    from tests.services.moto import client_kwargs, moto_server, s3_storage_options

    with moto_server() as endpoint:
        boto3.client("s3", **client_kwargs(endpoint)).create_bucket(Bucket="lance-dir-interop")
        opts = s3_storage_options(endpoint)
        props = {"root": "s3://lance-dir-interop/lake", **{f"storage.{k}": v for k, v in opts.items()}}
        ours = lance_ns.connect("dir", props)
        ours.create_namespace({"id": ["a"]})
        lance.write_dataset(DATA, namespace_client=ours, table_id=["a", "w"], mode="create")
        ours.declare_table({"id": ["r"]})
        rust = RustDirectoryNamespace(**props)
        assert rust.list_namespaces(ListNamespacesRequest(id=[])).namespaces == ["a"]
        assert rust.list_tables(ListTablesRequest(id=["a"])).tables == ["w"]
        assert rust.list_tables(ListTablesRequest(id=[])).tables == ["r"]
        # pylance's namespace vends no storage options, so the reader passes them
        assert lance.dataset(namespace_client=rust, table_id=["a", "w"], storage_options=opts).to_table() == DATA
        rust.create_namespace(CreateNamespaceRequest(id=["b"]))
        rust.declare_table(DeclareTableRequest(id=["b", "z"]))
        assert ours.list_namespaces({"id": []}).namespaces == ["a", "b"]
        assert ours.list_tables({"id": ["b"]}).tables == ["z"]


# -- a root holding lance-ns implementation-managed tables -------------------------------------------------


def _rows(ds) -> list[int]:
    return sorted(ds.to_table().column("id").to_pylist())


def _ours_managed(root) -> "lance_ns.dir":
    ours = lance_ns.connect("dir", {"root": str(root), "managed_versioning": "true"})
    ours.create_namespace(CreateNamespaceRequest(id=["io"]))
    lance.write_dataset(DATA, namespace_client=ours, table_id=["io", "it"], mode="create")
    lance.write_dataset(DATA, namespace_client=ours, table_id=["io", "it"], mode="append")
    lance.write_dataset(DATA, namespace_client=ours, table_id=["top"], mode="create")
    return ours


@pytest.mark.parametrize("tracking", ["true", "false"])
def test_pylance_writes_a_root_holding_our_managed_tables(tmp_path, tracking):
    """pylance's DirectoryNamespace (version tracking on and off) creates and appends to
    its own tables, nested and at the root, beside lance-ns managed tables, and reads
    ours; lance-ns lists, reads and appends to what pylance wrote.  (Before, the
    managed history lived in __manifest as rows pylance refused: "Invalid object type".)"""
    ours = _ours_managed(tmp_path)
    theirs = RustDirectoryNamespace(root=str(tmp_path), manifest_enabled="true",
                                    table_version_tracking_enabled=tracking)
    for tid in (["io", "pt"], ["pt_top"]):
        lance.write_dataset(DATA, namespace_client=theirs, table_id=tid, mode="create")
        lance.write_dataset(DATA, namespace_client=theirs, table_id=tid, mode="append")
    assert _rows(lance.dataset(namespace_client=theirs, table_id=["io", "it"])) == [1, 1, 2, 2, 3, 3]
    assert sorted(theirs.list_tables(ListTablesRequest(id=["io"])).tables) == ["it", "pt"]

    fresh = lance_ns.connect("dir", {"root": str(tmp_path)})
    assert fresh.list_tables(ListTablesRequest(id=["io"])).tables == ["it", "pt"]
    assert sorted(fresh.list_tables(ListTablesRequest(id=[])).tables) == ["pt_top", "top"]
    for tid in (["io", "pt"], ["pt_top"]):
        lance.write_dataset(DATA, namespace_client=fresh, table_id=tid, mode="append")
        assert _rows(lance.dataset(namespace_client=fresh, table_id=tid)) == [1, 1, 1, 2, 2, 2, 3, 3, 3]
    # our managed table is still ours: its history goes on through lance-ns
    lance.write_dataset(DATA, namespace_client=fresh, table_id=["io", "it"], mode="append")
    assert fresh.describe_table(DescribeTableRequest(id=["io", "it"])).version == 3
    assert _rows(lance.dataset(namespace_client=theirs, table_id=["io", "it"])) == [1, 1, 1, 2, 2, 2, 3, 3, 3]


def test_a_root_with_version_rows_in_its_manifest_is_moved_out_when_opened(tmp_path):
    """A root an earlier lance-ns wrote (managed history as ``table_version`` rows of
    __manifest) is repaired by the first lance-ns that opens it: the rows move to the
    version store, the history stays whole, and pylance can write the root again."""
    import json

    from lance_ns.impls.dir.manifest import Manifest
    from lance_ns.impls.dir.view import TABLE_VERSION, Entry

    ours = _ours_managed(tmp_path)
    described = ours.describe_table(DescribeTableRequest(id=["io", "it"]))
    history = [r.model_dump() for r in ours.list_table_versions({"id": ["io", "it"]}).versions]
    assert [r["version"] for r in history] == [1, 2]
    # rewrite the root as an earlier release left it: the rows in __manifest, keyed by the
    # table's object id, and a table entry without its history id
    old = Manifest(str(tmp_path), {})
    entry = old.get("io$it")
    old.delete(["io$it"])
    old.insert(Entry("io$it", entry.kind, entry.location,
                     {k: v for k, v in entry.properties.items() if k != "lance_ns.history"}))
    old.insert_many([Entry(f"io$it/v/{r['version']:020d}", TABLE_VERSION, None,
                           {"record": json.dumps({k: v for k, v in r.items() if v is not None})}) for r in history])
    import shutil
    shutil.rmtree(tmp_path / "_lance_ns")
    with pytest.raises(Exception, match="(?i)object type"):  # what pylance made of such a root
        lance.write_dataset(DATA, namespace_client=RustDirectoryNamespace(root=str(tmp_path)),
                            table_id=["io", "broken"], mode="create")

    reopened = lance_ns.connect("dir", {"root": str(tmp_path)})
    assert reopened.list_tables(ListTablesRequest(id=["io"])).tables == ["it"]  # the first read moves them
    assert Manifest(str(tmp_path), {}).entries(TABLE_VERSION) == []
    assert reopened.describe_table(DescribeTableRequest(id=["io", "it"])).version == described.version
    lance.write_dataset(DATA, namespace_client=RustDirectoryNamespace(root=str(tmp_path)),
                        table_id=["io", "pt"], mode="create")
    lance.write_dataset(DATA, namespace_client=reopened, table_id=["io", "it"], mode="append")
    assert [v.version for v in reopened.list_table_versions({"id": ["io", "it"]}).versions] == [1, 2, 3]
    # renamed, the table keeps the history it had under its old object id
    reopened.rename_table({"id": ["io", "it"], "new_table_name": "it2"})
    assert reopened.describe_table(DescribeTableRequest(id=["io", "it2"])).version == 3
    assert _rows(lance.dataset(namespace_client=reopened, table_id=["io", "it2"])) == [1, 1, 1, 2, 2, 2, 3, 3, 3]


@pytest.mark.parametrize("theirs_change", ["declare", "deregister"])
def test_pylance_committing_while_our_compaction_writes(tmp_path, monkeypatch, theirs_change):
    """Our manifest compaction writes on a thread, without the writers' lock; pylance's
    DirectoryNamespace (another writer we do not coordinate with) commits meanwhile.
    Either change of theirs is followed by pylance's own compaction, an Overwrite of the
    whole manifest (seen with pylance 14: a declare is a merge-insert, then one fragment
    of every row), so what ours planned on is gone: ours gives up, removing its files,
    and both sides see the same tables, each once."""
    import threading

    from lance_ns.impls.dir import compaction

    root = str(tmp_path)
    ours = lance_ns.connect("dir", {"root": root, "manifest_compact_every": "4"})
    ours.create_namespace({"id": ["t"]})
    writing, go_on, plain, written = threading.Event(), threading.Event(), compaction.prepare, []

    def held(*args, **kwargs):
        writing.set()
        assert go_on.wait(30)
        done = plain(*args, **kwargs)
        written.extend(compaction.file_path(f) for meta in done.written for f in meta.files)
        return done

    monkeypatch.setattr(compaction, "prepare", held)
    for i in range(3):  # the third makes a compaction due
        ours.declare_table({"id": ["t", f"o{i}"]})
    assert writing.wait(30), "our compaction is writing"
    theirs = RustDirectoryNamespace(root=root)
    if theirs_change == "declare":
        theirs.declare_table(DeclareTableRequest(id=["t", "p0"]))
        expected = ["o0", "o1", "o2", "p0"]
    else:
        theirs.deregister_table(DeregisterTableRequest(id=["t", "o1"]))
        expected = ["o0", "o2"]
    go_on.set()
    ours.manifest.wait_for_upkeep()

    rows = lance.dataset(f"{root}/__manifest").to_table().column("object_id").to_pylist()
    assert sorted(rows) == sorted(["t"] + [f"t${n}" for n in expected]), "each entry once, none lost"
    assert ours.manifest.upkeep.given_up == 1, "what it planned on was rewritten by theirs: given up"
    assert written and not set(written) & set(os.listdir(f"{root}/__manifest/data")), \
        "no data file of the given-up compaction is left"
    fresh = lance_ns.connect("dir", {"root": root})
    assert fresh.list_tables({"id": ["t"]}).tables == expected
    assert sorted(RustDirectoryNamespace(root=root).list_tables(ListTablesRequest(id=["t"])).tables) == expected
    ours.declare_table({"id": ["t", "after"]})  # and ours goes on writing
    ours.deregister_table({"id": ["t", "o2"]})  # a delete after pylance renumbered every fragment
    assert sorted(RustDirectoryNamespace(root=root).list_tables(ListTablesRequest(id=["t"])).tables) == \
        sorted([n for n in expected if n != "o2"] + ["after"])


def test_pylance_reads_and_writes_a_manifest_our_compaction_rewrote_in_place(tmp_path, monkeypatch):
    """Our compaction commits as Lance's Update in place and leaves a fragment with a few
    deleted rows as it is, deletion file and all: pylance's DirectoryNamespace sees the
    deregistered table gone and every other one where ours says, and what it declares
    there ours reads."""
    monkeypatch.setattr("lance_ns.impls.dir.compaction.SEALED_ROWS", 20)
    root = str(tmp_path)
    ours = lance_ns.connect("dir", {"root": root, "manifest_compact_every": "0"})
    ours.create_namespace({"id": ["t"]})
    ours.batch_commit_tables({"operations": [{"declare_table": {"id": ["t", f"b{i:03d}"]}} for i in range(200)]})
    ours.deregister_table({"id": ["t", "b005"]})  # one row in 20: below DIRTY_SHARE, kept as a deletion
    for i in range(3):
        ours.declare_table({"id": ["t", f"n{i}"]})
    ours.manifest.compact()
    fragments = lance.dataset(f"{root}/__manifest").get_fragments()
    assert any(f.metadata.deletion_file is not None for f in fragments), "a kept fragment with its deletion"
    assert fragments[-1].metadata.physical_rows == 3, "the run merged in place"

    theirs = RustDirectoryNamespace(root=root)
    for name in ("b000", "b006", "b199", "n0", "n2"):
        theirs_location = theirs.describe_table(DescribeTableRequest(id=["t", name])).location
        assert theirs_location.removeprefix("file://") == ours.describe_table({"id": ["t", name]}).location, name
    with pytest.raises(Exception, match="(?i)not found|does not exist"):
        theirs.describe_table(DescribeTableRequest(id=["t", "b005"]))
    theirs.declare_table(DeclareTableRequest(id=["t", "p0"]))
    fresh = lance_ns.connect("dir", {"root": root})
    assert fresh.describe_table({"id": ["t", "p0"]}).location == \
        theirs.describe_table(DescribeTableRequest(id=["t", "p0"])).location.removeprefix("file://")
    assert len(fresh.list_tables({"id": ["t"]}).tables) == 200 - 1 + 3 + 1
