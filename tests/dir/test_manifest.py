"""The __manifest table: conditional commits, the loser path, compaction."""

from __future__ import annotations

import gc
import os
import threading
import time

import lance
import pytest
from lance_namespace import CreateNamespaceRequest, ListTablesRequest

import lance_ns
from lance_ns.impls.dir import compaction
from lance_ns.impls.dir import upkeep
from lance_ns.impls.dir.manifest import Exists, Manifest
from lance_ns.impls.dir.view import NAMESPACE, TABLE, Entries, Entry


def test_schema_matches_pylance(tmp_path):
    from lance.namespace import DirectoryNamespace as Rust

    Rust(root=str(tmp_path / "rust")).create_namespace(CreateNamespaceRequest(id=["a"]))
    ours = lance_ns.connect("dir", {"root": str(tmp_path / "ours")})
    ours.create_namespace({"id": ["a"]})
    theirs = lance.dataset(str(tmp_path / "rust" / "__manifest")).schema
    mine = lance.dataset(str(tmp_path / "ours" / "__manifest")).schema
    assert mine == theirs and mine.field("object_id").metadata == theirs.field("object_id").metadata


def test_a_stale_writer_loses_and_removes_its_row(tmp_path):
    """Two writers checked the same version; the later commit backs out."""
    a = Manifest(str(tmp_path), {})
    b = Manifest(str(tmp_path), {})
    a.insert(Entry("seed", NAMESPACE))
    b.refresh()
    b.refresh = lambda: None  # b keeps believing 'x' is free, as in a race
    a.insert(Entry("x", TABLE, "x.lance"))
    with pytest.raises(Exists) as info:
        b.insert(Entry("x", TABLE, "other.lance"))
    assert info.value.entry.location == "x.lance"
    rows = lance.dataset(a.uri).to_table().column("object_id").to_pylist()
    assert sorted(rows) == ["seed", "x"]
    fresh = Manifest(str(tmp_path), {})
    assert fresh.get("x").location == "x.lance"


def test_compaction_bounds_files_and_versions(tmp_path):
    ns = lance_ns.connect(
        "dir", {"root": str(tmp_path), "manifest_compact_every": "16", "manifest_retain_versions": "4"}
    )
    ns.create_namespace({"id": ["a"]})
    for i in range(100):
        ns.declare_table({"id": ["a", f"t{i:03d}"]})
    for i in range(0, 100, 2):
        ns.drop_table({"id": ["a", f"t{i:03d}"]})
    ns.manifest.wait_for_upkeep()
    ds = lance.dataset(str(tmp_path / "__manifest"))
    assert len(ds.get_fragments()) <= 17
    assert len(ds.versions()) <= 16 + 4
    assert ds.count_rows() == 51
    assert ns.list_tables({"id": ["a"]}).tables == [f"t{i:03d}" for i in range(1, 100, 2)]
    from lance.namespace import DirectoryNamespace as Rust

    assert len(Rust(root=str(tmp_path)).list_tables(ListTablesRequest(id=["a"])).tables) == 50


def test_versions_stay_few_when_there_is_nothing_to_compact(tmp_path, monkeypatch):
    """A root grown by bulk declarations has only sealed fragments, so compaction rewrites
    nothing; its old versions are removed all the same (every read lists ``_versions/`` to
    find the latest: a pile of versions made each describe at 1M tables 2.4x slower)."""
    monkeypatch.setattr("lance_ns.impls.dir.compaction.SEALED_ROWS", 2)
    ns = lance_ns.connect(
        "dir", {"root": str(tmp_path), "manifest_compact_every": "16", "manifest_retain_versions": "4"}
    )
    ns.create_namespace({"id": ["a"]})
    for b in range(40):  # 40 commits of one sealed fragment each
        ns.batch_commit_tables({"operations": [{"declare_table": {"id": ["a", f"t{b}_{i}"]}} for i in range(2)]})
    ns.manifest.wait_for_upkeep()
    ds = lance.dataset(str(tmp_path / "__manifest"))
    assert len(ds.get_fragments()) == 41  # nothing was merged: every fragment is sealed
    assert len(ds.versions()) <= 4 + 4  # a cleanup at least every retain_versions commits
    assert len(ns.list_tables({"id": ["a"]}).tables) == 80
    from lance.namespace import DirectoryNamespace as Rust  # pylance reads the cleaned-up root

    assert len(Rust(root=str(tmp_path)).list_tables(ListTablesRequest(id=["a"])).tables) == 80


def test_a_bulk_declaration_is_stored_in_fragments_a_compaction_can_afford(tmp_path, monkeypatch):
    """A fragment with a deleted row is rewritten whole by the next compaction, so one
    bulk of many tables is stored in fragments of SEALED_ROWS to twice that, of equal
    size (no small remainder, which no compaction would merge once another append
    follows it): deregistering one of its tables dirties one of them, located without a
    scan, not one huge one."""
    monkeypatch.setattr("lance_ns.impls.dir.compaction.SEALED_ROWS", 4)
    ns = lance_ns.connect("dir", {"root": str(tmp_path), "manifest_compact_every": "0"})
    ns.create_namespace({"id": ["a"]})
    ns.batch_commit_tables({"operations": [{"declare_table": {"id": ["a", f"t{i}"]}} for i in range(10)]})
    ds = lance.dataset(str(tmp_path / "__manifest"))
    assert [f.metadata.physical_rows for f in ds.get_fragments()][-2:] == [5, 5]
    scans = []
    monkeypatch.setattr(lance.LanceDataset, "delete", lambda *a, **k: scans.append(a))  # the scanning path
    ns.deregister_table({"id": ["a", "t5"]})
    assert scans == []  # the row was found where the bulk recorded it
    dirty = [f.metadata.physical_rows for f in lance.dataset(str(tmp_path / "__manifest")).get_fragments()
             if f.metadata.deletion_file is not None]
    assert dirty == [5]
    assert ns.list_tables({"id": ["a"]}).tables == sorted(f"t{i}" for i in range(10) if i != 5)


def _fragments(*entries: Entry, root) -> Manifest:
    """A manifest with one fragment per entry (one commit each), no compaction yet."""
    m = Manifest(str(root), {}, compact_every=0)
    for e in entries:
        m.insert(e)
    return m


@pytest.mark.parametrize("when", ["while it writes", "inside its commit"])
def test_a_duplicate_committed_during_compaction_never_takes_the_name(tmp_path, monkeypatch, when):
    """A racing loser's duplicate row lands while a compaction writes, or between its last
    check and its commit (Lance then rebases the compaction over it): the winner's row must
    still come first (the compaction rewrites in place, and an append goes after), and a
    later compaction drops the duplicate."""
    a = _fragments(Entry("seed", NAMESPACE), root=tmp_path)
    loser = Manifest(str(tmp_path), {}, compact_every=0)
    loser.refresh()
    loser.refresh = lambda: None  # it checked before the winner's commit, as in a race
    a.insert(Entry("x", TABLE, "winner.lance"))
    a.insert(Entry("y", TABLE, "y.lance"))
    monkeypatch.setattr(Manifest, "_remove_fragment", lambda *a: None)  # its back-out not yet done
    owner, name = (lance.fragment, "write_fragments") if when == "while it writes" else (compaction.Rewrite, "commit")
    real = getattr(owner, name)

    def loser_commits_first(*args, **kwargs):
        with pytest.raises(Exists):
            loser.insert(Entry("x", TABLE, "loser.lance"))
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, loser_commits_first)
    a.compact()
    monkeypatch.undo()
    ds = lance.dataset(a.uri)
    assert a.upkeep.given_up == 0
    assert [f.metadata.physical_rows for f in ds.get_fragments()] == [3, 1], "merged, the loser's row after"
    assert ds.to_table(filter="object_id = 'x'").column("location").to_pylist() == ["winner.lance", "loser.lance"]
    assert Manifest(str(tmp_path), {}).get("x").location == "winner.lance"
    assert a.get("x").location == "winner.lance" and a.get("y").location == "y.lance" and a.view.duplicates
    a.compact()  # a later compaction sees the duplicate and drops it
    ds = lance.dataset(a.uri)
    assert ds.to_table(filter="object_id = 'x'").column("location").to_pylist() == ["winner.lance"]
    assert ds.count_rows() == 3


def test_a_compaction_hands_lance_only_what_it_rewrote(tmp_path, monkeypatch):
    """Every fragment it does not rewrite is Lance's to keep, with its deleted rows: the
    commit lists the new fragment alone (pylance's ``DataFile.path``, ~25 us a read, is
    read for its one file), however many fragments the table has."""
    monkeypatch.setattr("lance_ns.impls.dir.compaction.SEALED_ROWS", 20)
    m = Manifest(str(tmp_path), {}, compact_every=0)
    m.insert_many([Entry(f"big{i:03d}", TABLE, f"big{i}.lance") for i in range(200)])  # 10 sealed fragments
    assert m.delete(["big000", "big105"]) == 2  # one row in 20: below DIRTY_SHARE, left as a deletion
    for i in range(3):
        m.insert(Entry(f"t{i}", TABLE, f"t{i}.lance"))
    reads = []
    costly = lance.fragment.DataFile.path
    monkeypatch.setattr(lance.fragment.DataFile, "path", property(lambda f: reads.append(f) or costly.fget(f)))
    m.compact()
    monkeypatch.undo()
    fragments = lance.dataset(m.uri).get_fragments()
    assert [f.metadata.physical_rows for f in fragments] == [20] * 10 + [3]
    assert [i for i, f in enumerate(fragments) if f.metadata.deletion_file is not None] == [0, 5]
    assert len(reads) == 1, "the new fragment's file, not the table's"
    fresh = Manifest(str(tmp_path), {})
    assert fresh.get("big000") is None and fresh.get("big105") is None and fresh.get("big104").location == "big104.lance"
    assert [fresh.get(f"t{i}").location for i in range(3)] == ["t0.lance", "t1.lance", "t2.lance"]
    assert len(fresh.children("", TABLE)) == 201


def test_bulk_appends_and_rewrites_write_fragments_of_equal_size():
    """No small remainder: 10,000 rows are one fragment, not 8,192 and 1,808 (a remainder is
    never merged once another append follows it, and every commit lists every fragment)."""
    sealed = compaction.SEALED_ROWS
    assert compaction.rows_per_file(1) == 1
    assert compaction.rows_per_file(10_000) == 10_000
    assert compaction.rows_per_file(2 * sealed) == sealed
    for rows in (sealed - 1, sealed, 2 * sealed - 1, 100_000, 1_000_001):
        size = compaction.rows_per_file(rows)  # Lance cuts full files of this size, then the rest
        files = -(-rows // size)
        last = rows - (files - 1) * size
        assert files == max(rows // sealed, 1) and size < 2 * sealed, rows
        assert size - files < last <= size, (rows, size, last)  # equal, to a row per file


def test_duplicates_present_compact_the_whole_table_in_order(tmp_path, monkeypatch):
    """A loser's row that was never backed out (its writer died): the next load sees
    the duplicate, and compaction rewrites everything in table order, dropping it."""
    a = _fragments(Entry("seed", NAMESPACE), root=tmp_path)
    loser = Manifest(str(tmp_path), {}, compact_every=0)
    loser.refresh()
    loser.refresh = lambda: None
    a.insert(Entry("x", TABLE, "winner.lance"))
    monkeypatch.setattr(Manifest, "_remove_fragment", lambda *a: None)
    with pytest.raises(Exists):
        loser.insert(Entry("x", TABLE, "loser.lance"))
    fresh = Manifest(str(tmp_path), {})
    assert fresh.get("x").location == "winner.lance" and fresh.view.duplicates
    fresh.compact()
    rows = lance.dataset(a.uri).to_table(filter="object_id = 'x'")
    assert rows.column("location").to_pylist() == ["winner.lance"] and not fresh.view.duplicates


@pytest.fixture
def rewritten(monkeypatch) -> list[int]:
    """The rows of each fragment write as it happens (what a compaction rewrites)."""
    written: list[int] = []
    real = lance.fragment.write_fragments
    monkeypatch.setattr(lance.fragment, "write_fragments",
                        lambda rows, *a, **k: written.append(rows.num_rows) or real(rows, *a, **k))
    return written


def test_compaction_cost_does_not_grow_with_the_table(tmp_path, monkeypatch, rewritten):
    """Sealed fragments are never rewritten: with 3 sealed fragments and 32 new rows,
    a compaction reads and writes the 32 rows (counted), not the table."""
    monkeypatch.setattr("lance_ns.impls.dir.compaction.SEALED_ROWS", 100)
    m = Manifest(str(tmp_path), {}, compact_every=0)
    m.insert_many([Entry(f"big{i:04d}", TABLE, f"big{i}.lance") for i in range(300)])
    m.compact()  # three fragments of 100 rows: sealed already, nothing to do
    for i in range(32):
        m.insert(Entry(f"new{i:02d}", TABLE, f"new{i}.lance"))
    m.compact()
    assert rewritten == [32]
    ds = lance.dataset(m.uri)
    assert [f.metadata.physical_rows for f in ds.get_fragments()] == [100, 100, 100, 32]
    assert ds.count_rows() == 332 and Manifest(str(tmp_path), {}).get("new31").location == "new31.lance"
    m.delete([f"big{i:04d}" for i in range(0, 300, 25)])  # spread: 4 rows of each sealed fragment
    rewritten.clear()
    m.compact()
    assert rewritten == [], "fewer than DIRTY_SHARE of a fragment's rows deleted: it stays, deletions and all"
    m.delete([f"big{i:04d}" for i in range(1, 100, 3)])  # a third of the first sealed fragment
    m.compact()
    assert rewritten == [64], "the fragment that lost a third of its rows is rewritten, and only it"
    assert [f.metadata.physical_rows for f in lance.dataset(m.uri).get_fragments()] == [64, 100, 100, 32]
    fresh = Manifest(str(tmp_path), {})
    assert fresh.get("big0000") is None and fresh.get("big0001") is None and fresh.get("big0002").location == "big2.lance"
    assert len(fresh.children("", TABLE)) == 332 - 12 - 32


@pytest.mark.parametrize("change", ["insert", "delete"])
def test_a_commit_that_a_full_compaction_overtook_lands(tmp_path, change):
    """A full compaction (duplicates present) removes every fragment: Lance refuses a
    delete planned before it (the row's fragment is gone) and the manifest re-checks and
    deletes again; an append planned before it Lance rebases over it."""
    a = Manifest(str(tmp_path), {})
    a.insert(Entry("x", TABLE, "x.lance"))
    b = Manifest(str(tmp_path), {})
    b.refresh()
    real, calls = b.refresh, []
    b.refresh = lambda: real() if calls.append(1) or len(calls) > 1 else None  # stale on the first try
    a.view.duplicates = True  # as after a racing loser: the whole table is rewritten
    a.compact()
    if change == "insert":
        b.insert(Entry("y", TABLE, "y.lance"))
        fresh = Manifest(str(tmp_path), {})
        assert fresh.get("x").location == "x.lance" and fresh.get("y").location == "y.lance"
    else:
        assert b.delete(["x"]) == 1
        assert Manifest(str(tmp_path), {}).get("x") is None
        assert len(calls) > 1, "the first attempt must have met the compaction"


def test_changes_planned_before_a_rewrite_land_after_it(tmp_path):
    """A delete and an insert planned against the version a compaction then rewrote
    (Lance rebases them, or refuses and the manifest re-plans): both take effect."""
    a = _fragments(Entry("x", TABLE, "x.lance"), Entry("y", TABLE, "y.lance"), root=tmp_path)
    b = Manifest(str(tmp_path), {})
    b.refresh()
    real, calls = b.refresh, []
    b.refresh = lambda: real() if calls.append(1) or len(calls) > 1 else None
    a.compact()
    assert len(lance.dataset(a.uri).get_fragments()) == 1
    assert b.delete(["x"]) == 1 and calls, "planned on the version before the compaction"
    b.insert(Entry("z", TABLE, "z.lance"))
    fresh = Manifest(str(tmp_path), {})
    assert fresh.get("x") is None and fresh.get("y").location == "y.lance" and fresh.get("z").location == "z.lance"


def test_manifest_staleness_bounds_read_checks_never_writes(tmp_path):
    """``manifest_staleness_ms``: reads may answer from memory for that long (another
    process's commit shows up late), but this instance's own writes are seen at once and
    every write checks the latest version (a name taken elsewhere is still refused)."""
    root = str(tmp_path / "lake")
    other = lance_ns.connect("dir", {"root": root})
    other.create_namespace({"id": ["seed"]})
    lazy = lance_ns.connect("dir", {"root": root, "manifest_staleness_ms": "600000"})
    assert lazy.list_namespaces({}).namespaces == ["seed"]  # loaded (and checked) now
    other.create_namespace({"id": ["elsewhere"]})
    assert lazy.list_namespaces({}).namespaces == ["seed"]  # within the bound: not checked again
    lazy.create_namespace({"id": ["mine"]})  # a write checks: it sees 'elsewhere' too
    assert lazy.list_namespaces({}).namespaces == ["elsewhere", "mine", "seed"]
    other.create_namespace({"id": ["taken"]})
    with pytest.raises(lance_ns.errors.NamespaceAlreadyExistsError):
        lazy.create_namespace({"id": ["taken"]})
    eager = lance_ns.connect("dir", {"root": root})  # default 0: every read checks
    assert eager.list_namespaces({}).namespaces == ["elsewhere", "mine", "seed", "taken"]
    other.drop_namespace({"id": ["seed"]})
    assert eager.list_namespaces({}).namespaces == ["elsewhere", "mine", "taken"]


def test_another_processs_appends_are_read_alone(tmp_path, monkeypatch):
    """A commit of another process that only appended (its declares) is read by reading
    the appended fragments, not the whole manifest; a delete rewriting most of a small
    manifest loads it all (fewer rows read: tests/dir/test_changed_fragments.py has the rest)."""
    a = Manifest(str(tmp_path), {}, compact_every=0)
    a.insert_many([Entry(f"t{i:03d}", TABLE, f"t{i}.lance") for i in range(200)])
    b = Manifest(str(tmp_path), {}, compact_every=0)
    assert len(b.children("", TABLE)) == 200
    loads = []
    plain = Manifest._load
    monkeypatch.setattr(Manifest, "_load", lambda self, ds: loads.append(ds.version) or plain(self, ds))
    a.insert(Entry("new1", TABLE, "new1.lance"))
    a.insert(Entry("new2", TABLE, "new2.lance"))
    assert b.get("new2").location == "new2.lance" and "new1" in b.children("", TABLE)
    assert loads == [], "appends are read alone"
    a.delete(["t000"])
    assert b.get("t000") is None and len(b.children("", TABLE)) == 201
    assert len(loads) == 1, "a delete of most of the rows loads it all"


def test_a_fragment_pylance_rewrote_under_its_id_is_loaded_again(tmp_path):
    """pylance's DirectoryNamespace rewrites the manifest's fragment under the same id
    (merge_insert): not an append, so the whole manifest is read again."""
    from lance.namespace import DirectoryNamespace as Rust

    ours = lance_ns.connect("dir", {"root": str(tmp_path)})
    ours.create_namespace({"id": ["a"]})
    Rust(root=str(tmp_path)).create_namespace(CreateNamespaceRequest(id=["b"]))
    assert ours.list_namespaces({}).namespaces == ["a", "b"]
    ours.declare_table({"id": ["b", "t"]})


def test_a_delete_reads_only_the_fragment_holding_the_row(tmp_path, monkeypatch):
    """Where each row lives is kept through inserts, another process's appends and
    compactions (whose Overwrite renumbers every fragment), so a delete reads one
    fragment, never the table; a record gone wrong is caught and the table scanned."""
    monkeypatch.setattr("lance_ns.impls.dir.compaction.SEALED_ROWS", 100)
    m = Manifest(str(tmp_path), {}, compact_every=0)
    m.insert_many([Entry(f"big{i:04d}", TABLE, f"big{i}.lance") for i in range(300)])
    for i in range(5):
        m.insert(Entry(f"new{i}", TABLE, f"new{i}.lance"))
    other = Manifest(str(tmp_path), {}, compact_every=0)
    other.insert(Entry("theirs", TABLE, "theirs.lance"))
    read, scans = [], []
    plain_fragment, plain_table = lance.fragment.LanceFragment.delete, lance.LanceDataset.delete
    monkeypatch.setattr(lance.fragment.LanceFragment, "delete",
                        lambda f, p: read.append(f.metadata.physical_rows) or plain_fragment(f, p))
    monkeypatch.setattr(lance.LanceDataset, "delete", lambda ds, p: scans.append(p) or plain_table(ds, p))

    assert m.delete(["big0007", "new3"]) == 2 and read == [100, 1]  # two fragments, one each
    assert m.delete(["theirs"]) == 1 and read[-1] == 1, "a row another process appended"
    m.compact()  # the dirty fragment is rewritten (99 rows), the small ones merged (new0-2, new4)
    read.clear()
    assert m.delete(["new4", "big0299"]) == 2 and sorted(read) == [4, 100]
    assert m.delete(["big0007", "nothing"]) == 0 and len(read) == 2, "nothing left to read"
    assert scans == []
    fresh = Manifest(str(tmp_path), {})
    assert fresh.get("new4") is None and fresh.get("new2").location == "new2.lance"
    assert len(fresh.children("", TABLE)) == 300 + 5 + 1 - 5

    m.view._where["big0001"] = m.view._where["new0"]  # a wrong record: the row is not there
    assert m.delete(["big0001"]) == 1 and scans == ["object_id IN ('big0001')"]
    assert Manifest(str(tmp_path), {}).get("big0001") is None


def test_a_delete_opens_the_fragment_it_needs_not_every_fragments_metadata(tmp_path, monkeypatch):
    """At a million tables the manifest has ~180 fragments; reading each one's metadata
    to find one row's fragment cost a deregistration ~1.3 ms.  The fragment id is kept
    per fragment key (a hint, checked: a compaction renumbers them)."""

    monkeypatch.setattr("lance_ns.impls.dir.compaction.SEALED_ROWS", 100)
    m = Manifest(str(tmp_path), {}, compact_every=0)
    m.insert_many([Entry(f"big{i:04d}", TABLE, f"big{i}.lance") for i in range(1000)])
    for i in range(5):
        m.insert(Entry(f"new{i}", TABLE, f"new{i}.lance"))
    Manifest(str(tmp_path), {}, compact_every=0).insert(Entry("theirs", TABLE, "theirs.lance"))
    m.refresh()  # reads the other process's fragment
    keys_read = []
    plain = compaction.fragment_key
    monkeypatch.setattr(compaction, "fragment_key", lambda meta: keys_read.append(meta.id) or plain(meta))
    assert len(lance.dataset(m.uri).get_fragments()) == 16

    for oid in ["big0005", "big0999", "new2", "theirs"]:  # a bulk's, a declare's, another process's row
        keys_read.clear()
        assert m.delete([oid]) == 1 and len(keys_read) == 1, oid
    m.compact()  # the trailing run merged in place, under its first id; every other fragment as it was
    for oid in ["big0500", "new4"]:  # a kept fragment's row, a merged one's
        keys_read.clear()
        assert m.delete([oid]) == 1 and len(keys_read) == 1, oid
    other = Manifest(str(tmp_path), {}, compact_every=0)
    other.refresh()
    other.view.duplicates = True  # another process rewrites the whole table: every id is new
    other.compact()
    fragments = len(lance.dataset(m.uri).get_fragments())
    keys_read.clear()
    assert m.delete(["big0550"]) == 1 and len(keys_read) >= fragments > 5, "a stale hint: every key read once"
    keys_read.clear()
    assert m.delete(["big0600"]) == 1 and len(keys_read) == 1
    assert Manifest(str(tmp_path), {}).get("big0600") is None
    assert len(Manifest(str(tmp_path), {}).children("", TABLE)) == 1000 + 5 + 1 - 8


def _data_files(uri) -> set[str]:
    return set(os.listdir(os.path.join(uri, "data")))


def test_a_compaction_runs_beside_the_writes_and_keeps_what_they_appended(tmp_path, monkeypatch):
    """The write that makes a compaction due answers before it runs, writers go on while
    it writes, and its commit lists what they appended after its merged rows."""
    m = Manifest(str(tmp_path), {}, compact_every=4)
    writing, go_on = threading.Event(), threading.Event()
    plain = compaction.prepare

    def slow_prepare(*args, **kwargs):
        writing.set()
        assert go_on.wait(30)
        return plain(*args, **kwargs)

    monkeypatch.setattr(compaction, "prepare", slow_prepare)
    for i in range(3):  # the table's creation is version 1: the third insert makes version 4
        m.insert(Entry(f"t{i}", TABLE, f"t{i}.lance"))
    assert writing.wait(30), "the compaction started on a thread"
    m.insert(Entry("t3", TABLE, "t3.lance"))  # neither waits for the compaction
    m.insert(Entry("during", TABLE, "during.lance"))
    go_on.set()
    m.wait_for_upkeep()
    ds = lance.dataset(m.uri)
    assert [f.metadata.physical_rows for f in ds.get_fragments()] == [3, 1, 1], "merged, then what came after"
    assert ds.to_table().column("object_id").to_pylist() == ["t0", "t1", "t2", "t3", "during"]
    fresh = Manifest(str(tmp_path), {})
    assert [fresh.get(n).location for n in ("t0", "t1", "t2", "t3", "during")] == \
        ["t0.lance", "t1.lance", "t2.lance", "t3.lance", "during.lance"]
    read = []
    plain_delete = lance.fragment.LanceFragment.delete
    monkeypatch.setattr(lance.fragment.LanceFragment, "delete",
                        lambda f, p: read.append(f.metadata.physical_rows) or plain_delete(f, p))
    assert m.delete(["t1", "during"]) == 2 and sorted(read) == [1, 3], "where rows live was kept"
    assert Manifest(str(tmp_path), {}).get("t1") is None


def test_a_compaction_overtaken_by_a_delete_gives_up_and_leaves_no_files(tmp_path, monkeypatch):
    """A delete landing while a compaction writes changes a fragment it planned on: the
    compaction is given up and its files removed; after a few in a row, the next one holds
    the writers off while it writes, and completes."""
    m = Manifest(str(tmp_path), {}, compact_every=0)
    for i in range(6):
        m.insert(Entry(f"t{i}", TABLE, f"t{i}.lance"))
    plain, victims, deleters, waited = compaction.prepare, iter(["t0", "t1", "t2", "t3"]), [], []

    def overtaken(*args, **kwargs):
        done = plain(*args, **kwargs)
        deleters.append(threading.Thread(target=m.delete, args=([next(victims)],)))
        deleters[-1].start()
        deleters[-1].join(1)  # it lands first, unless the compaction holds the lock
        waited.append(deleters[-1].is_alive())
        return done

    monkeypatch.setattr(compaction, "prepare", overtaken)
    for attempt in range(upkeep.GIVE_UPS):
        before, files = len(lance.dataset(m.uri).get_fragments()), _data_files(m.uri)
        m.compact()
        assert waited[-1] is False, "the delete went on while the compaction wrote"
        assert len(lance.dataset(m.uri).get_fragments()) == before - 1, "given up (only the delete landed)"
        assert m.upkeep.given_up == attempt + 1
        assert _data_files(m.uri) <= files, "the given-up compaction's files are removed"
    m.compact()
    assert waited[-1] is True, "this one held the lock while it wrote"
    assert m.upkeep.given_up == 0
    for deleter in deleters:
        deleter.join(30)
    m.wait_for_upkeep()
    fresh = Manifest(str(tmp_path), {})
    assert [n for n in ("t0", "t1", "t2", "t3", "t4", "t5") if fresh.get(n)] == ["t4", "t5"]
    assert len(lance.dataset(m.uri).get_fragments()) == 1, "t3, t4 and t5 merged, then t3 deleted"



def test_a_delete_elsewhere_while_a_compaction_writes_is_kept_and_it_commits(tmp_path, monkeypatch):
    """Deletes spread over the table (deregistrations at a million tables) no longer make a
    compaction give up: a delete from a fragment it does not rewrite lands meanwhile, Lance
    rebases the compaction over it, and the row stays deleted."""
    monkeypatch.setattr("lance_ns.impls.dir.compaction.SEALED_ROWS", 20)
    m = Manifest(str(tmp_path), {}, compact_every=0)
    m.insert_many([Entry(f"big{i:03d}", TABLE, f"big{i}.lance") for i in range(200)])
    for i in range(3):
        m.insert(Entry(f"t{i}", TABLE, f"t{i}.lance"))
    other = Manifest(str(tmp_path), {}, compact_every=0)  # another process
    plain = compaction.prepare

    def deleted_meanwhile(*args, **kwargs):
        done = plain(*args, **kwargs)
        assert other.delete(["big050"]) == 1
        m.delete(["big150"])  # and one of this process's (the lock is free while it writes)
        return done

    monkeypatch.setattr(compaction, "prepare", deleted_meanwhile)
    m.compact()
    assert m.upkeep.given_up == 0
    fragments = lance.dataset(m.uri).get_fragments()
    assert [f.metadata.physical_rows for f in fragments] == [20] * 10 + [3], "the run merged"
    assert [i for i, f in enumerate(fragments) if f.metadata.deletion_file is not None] == [2, 7]
    for reader in (m, Manifest(str(tmp_path), {})):
        assert reader.get("big050") is None and reader.get("big150") is None
        assert reader.get("big051").location == "big51.lance" and reader.get("t2").location == "t2.lance"
        assert len(reader.children("", TABLE)) == 201


def test_a_compaction_plans_the_trailing_run_and_the_fragments_that_lost_many_rows():
    """The plan rewrites the trailing run of small fragments (a binary counter) and every
    fragment that lost DIRTY_SHARE of its rows; fewer deletions stay as deletion files."""
    from types import SimpleNamespace

    def fragment(rows, deleted=0):
        return SimpleNamespace(metadata=SimpleNamespace(
            physical_rows=rows, num_rows=rows - deleted, deletion_file=object() if deleted else None))

    sealed = compaction.SEALED_ROWS
    share = int(sealed * compaction.DIRTY_SHARE) + 1
    fragments = [fragment(sealed), fragment(sealed, share), fragment(sealed, 1), fragment(6), fragment(2), fragment(3)]
    assert compaction.plan(fragments) == [True, False, True, True, False, False]  # 6 > 2 + 3: not yet
    assert compaction.plan(fragments[:3] + [fragment(5)]) == [True, False, True, True]
    assert compaction.plan([fragment(sealed), fragment(7)]) is None
    assert compaction.plan([fragment(sealed, 1), fragment(20, 1)]) is None, "a few deleted rows are no reason"
    assert compaction.plan([fragment(sealed), fragment(7, 3)]) == [True, False]
    assert compaction.plan(fragments, everything=True) == [False] * 6
    # a sealed fragment that lost a few rows is still sealed: a trailing run that gathered
    # more rows than it holds does not walk into it, nor on through the whole table
    counter = [fragment(sealed // 2), fragment(sealed // 4), fragment(sealed // 4)]
    planned = compaction.plan([fragment(sealed, 3), fragment(sealed, 5)] + counter)
    assert planned == [True, True] + [False] * len(counter)
    # shrunk fragments (deletions left them under half of SEALED_ROWS, a sealed one after them)
    # are merged; the trailing run's young fragments after the newest sealed one are the counter's
    half = sealed // 2
    assert compaction.plan([fragment(sealed), fragment(half - 1), fragment(3), fragment(sealed), fragment(5),
                            fragment(1)]) == [True, False, False, True, True, True]
    assert compaction.plan([fragment(half - 1), fragment(sealed), fragment(half - 1)]) is None, "alone: no fewer"
    assert compaction.plan([fragment(half - 1), fragment(sealed, share)]) == [False, False], "beside a rewrite"


def test_a_namespaces_descendants_are_found_without_a_scan_of_the_manifest(tmp_path):
    """DropNamespace asks for everything inside a namespace: found through the children
    index (what the namespace holds), never by reading every entry of the manifest."""
    m = Manifest(str(tmp_path), {}, compact_every=0)
    m.insert_many([Entry("a", NAMESPACE), Entry("a$b", NAMESPACE), Entry("a$b$t1", TABLE, "x1"),
                   Entry("a$t2", TABLE, "x2"), Entry("ab", NAMESPACE), Entry("ab$t3", TABLE, "x3")]
                  + [Entry(f"other{i}", NAMESPACE) for i in range(50)])
    m.children("", NAMESPACE)  # the index, as after the first listing
    m.view.index()

    class NoScans(Entries):
        def of_kind(self, *args):
            raise AssertionError("the whole manifest was read")

        kinds = located = of_kind

    scanless = NoScans()
    scanless._rows = m.view.entries._rows
    m.view.entries = scanless
    assert sorted(e.object_id for e in m.descendants("a")) == ["a$b", "a$b$t1", "a$t2"]
    assert [e.object_id for e in m.descendants("ab")] == ["ab$t3"]
    assert m.descendants("other7") == [] and m.descendants("") == []


def test_the_garbage_collector_never_walks_the_entries(tmp_path):
    """A million entries the collector tracked made every full collection walk them all
    (0.4-0.5 s at 2.4M as objects); as tuples, each write made their dict tracked again
    until the next full collection.  Held as strings, their dict is never tracked: not
    after a load, nor after writes, properties included."""
    Manifest(str(tmp_path), {}, compact_every=0).insert_many(
        [Entry(f"t{i}", TABLE, f"t{i}.lance", {"team": "ml"} if i % 2 else None) for i in range(1000)])
    loaded = Manifest(str(tmp_path), {}, compact_every=0)
    assert loaded.get("t7") == Entry("t7", TABLE, "t7.lance", {"team": "ml"})
    loaded.insert_many([Entry("u1", TABLE, "u1.lance", {"a": "b"}), Entry("u2", TABLE, "u2.lance")])
    loaded.insert(Entry("n", NAMESPACE, None, {"owner": "x"}))
    assert not gc.is_tracked(loaded.view.entries._rows) and not gc.is_tracked(loaded.view._where)
    assert loaded.get("t8").properties is None and len(loaded.entries(TABLE)) == 1002
    assert loaded.get("u1") == Entry("u1", TABLE, "u1.lance", {"a": "b"})
    assert loaded.get("n") == Entry("n", NAMESPACE, None, {"owner": "x"})


def test_upkeep_started_from_a_daemon_thread_is_still_waited_for_at_exit(tmp_path, monkeypatch):
    """A write pylance calls back (an implementation-managed commit) runs on a pool thread
    started from pylance's own, a daemon; a thread inherits that flag.  An upkeep thread
    that was a daemon could still be inside Lance when the interpreter finalizes, which
    aborts the process (seen: 1 in 6 runs of four appenders exited with SIGABRT)."""
    m = Manifest(str(tmp_path), {}, compact_every=2)
    writing, go_on, plain, seen = threading.Event(), threading.Event(), compaction.prepare, []

    def held(*args, **kwargs):
        seen.append(threading.current_thread().daemon)
        writing.set()
        assert go_on.wait(30)
        return plain(*args, **kwargs)

    monkeypatch.setattr(compaction, "prepare", held)
    writer = threading.Thread(target=m.insert, args=(Entry("t0", TABLE, "t0.lance"),), daemon=True)
    writer.start()  # version 2 (the table's creation is 1): a compaction is due
    assert writing.wait(30)
    go_on.set()
    writer.join(30)
    m.wait_for_upkeep()
    assert seen == [False]


def test_what_a_writer_holds_is_what_a_reader_loads(tmp_path):
    """An entry's metadata is dumped once, by the write; the writer's rows in memory, the
    rows another process appended, and a fresh load all hold the same text."""
    writer, other = Manifest(str(tmp_path), {}), Manifest(str(tmp_path), {})
    writer.insert_many([Entry("t", NAMESPACE), Entry("t$a", TABLE, "a.lance", {"b": "2", "a": "1"}),
                        Entry("t$empty", TABLE, "e.lance", {}), Entry("t$none", TABLE, "n.lance")])
    other.insert_many([Entry("t$later", TABLE, "l.lance", {"z": "9"})])
    writer.current()  # loads what the other appended
    fresh = Manifest(str(tmp_path), {})
    fresh.current()
    assert writer.view.entries._rows == fresh.view.entries._rows
    assert writer.get("t$a").properties == {"a": "1", "b": "2"}
    assert writer.get("t$later").properties == {"z": "9"}
    assert writer.get("t$empty").properties is None and writer.get("t$none").properties is None


def test_fragments_shrunk_by_deletions_are_merged(tmp_path, monkeypatch, rewritten):
    """Deletions shrink sealed fragments for good: one rewritten for its deletions holds fewer
    rows, and the trailing run never reaches it past a sealed fragment.  Fragments deletions
    left under half of SEALED_ROWS are merged with a shrunk neighbour, or into a neighbour's
    rewrite, SHRUNK_MERGE_ROWS at most per compaction: the fragments stay about as many as
    the rows held need, not as many as the rows ever held.  A fresh load and pylance read it."""
    from lance.namespace import DirectoryNamespace

    monkeypatch.setattr("lance_ns.impls.dir.compaction.SEALED_ROWS", 100)
    monkeypatch.setattr("lance_ns.impls.dir.compaction.SHRUNK_MERGE_ROWS", 200)
    m = Manifest(str(tmp_path), {}, compact_every=0)
    m.insert_many([Entry("ns", NAMESPACE)] + [Entry(f"ns$t{i:04d}", TABLE, f"t{i}.lance") for i in range(1, 1_000)])

    def sizes():
        return [f.count_rows() for f in lance.dataset(m.uri).get_fragments()]

    def shrink(k: int) -> None:  # tables deregistered over time: 70 of the kth hundred, then a compaction
        assert m.delete([f"ns$t{i:04d}" for i in range(100 * k + 1, 100 * k + 71)]) == 70
        rewritten.clear()
        m.compact()

    assert sizes() == [100] * 10  # sealed fragments
    merge = compaction._merge_shrunk
    monkeypatch.setattr(compaction, "_merge_shrunk", lambda older, keep: None)  # (as before this rule)
    for k in range(8):
        shrink(k)
    assert sizes() == [30] * 8 + [100] * 2, "each shrunk for good, none merged"
    monkeypatch.setattr(compaction, "_merge_shrunk", merge)
    rewritten.clear()
    m.compact()
    assert sizes() == [180, 30, 30, 100, 100] and rewritten == [180], "the first 200 rows' worth merged"
    m.compact()
    assert sizes() == [180, 60, 100, 100]
    shrink(8)  # beside a fragment no longer shrunk (60): rewritten alone
    assert sizes() == [180, 60, 30, 100]
    assert m.delete([f"ns$t{i:04d}" for i in range(771, 781)]) == 10  # the 60 rows' fragment: rewritten for them
    rewritten.clear()
    m.compact()
    assert sizes() == [180, 80, 100] and rewritten == [80], "its shrunk neighbour merged into its rewrite"
    live = sorted(f"t{i:04d}" for i in range(1, 1_000)
                  if (i % 100 == 0 or i % 100 > 70 or i >= 900) and not 771 <= i <= 780)
    assert sorted(Manifest(str(tmp_path), {}).children("ns", TABLE)) == live
    assert m.delete(["ns$t0075", "ns$t0950"]) == 2  # found where the merges put them
    assert sorted(DirectoryNamespace(root=str(tmp_path)).list_tables(ListTablesRequest(id=["ns"])).tables) == \
        [t for t in live if t not in ("t0075", "t0950")]


def test_a_sealed_fragment_that_lost_a_few_rows_stays_out_of_the_trailing_run(tmp_path, monkeypatch, rewritten):
    """A fragment is sealed by the rows it was written with: once a deregistration took one of
    its rows, a trailing run that gathered as many rows must not take it in (and every other
    sealed fragment that lost a row after it: a rewrite of the whole table, seen in a
    simulation of 1M tables under churn, bench_fragments.py: every compaction rewrote 1M rows)."""
    monkeypatch.setattr("lance_ns.impls.dir.compaction.SEALED_ROWS", 100)
    m = Manifest(str(tmp_path), {}, compact_every=0)
    m.insert_many([Entry(f"big{i:04d}", TABLE, f"big{i}.lance") for i in range(1_000)])  # 10 sealed fragments
    assert m.delete([f"big{i:04d}" for i in range(0, 1_000, 100)]) == 10  # one row of each
    for i in range(16):  # appends of 10: the trailing run gathers 99 rows and more
        m.insert_many([Entry(f"new{i:02d}{j}", TABLE, f"new{i}{j}.lance") for j in range(10)])
        if i % 2:
            rewritten.clear()
            m.compact()
            assert sum(rewritten) <= 2 * 100, (i, rewritten)
    assert len(Manifest(str(tmp_path), {}).children("", TABLE)) == 1_000 - 10 + 160


@pytest.mark.parametrize("winner_entries", [0, 3])
def test_a_creation_overtaken_by_another_never_overwrites_it(tmp_path, monkeypatch, winner_entries):
    """Two processes' first writes on a fresh root, forced to interleave: A finds no table
    and commits its creation, but B creates the table (and commits entries) while A's
    commit is in flight.  A's creation fails rather than overwrite B's table (Lance would
    re-apply a racing create as an Overwrite of B's version), A reads B's table and lands
    its entry after B's: every entry held, one Overwrite (version 1) in the history."""
    from lance.dataset import LanceDataset

    a, b = Manifest(str(tmp_path), {}), Manifest(str(tmp_path), {})
    real = LanceDataset.commit

    def overtaken(*args, **kwargs):
        monkeypatch.setattr(LanceDataset, "commit", real)  # B's own commits run as they would
        b.insert_many([Entry(f"b{i}", NAMESPACE, None, None) for i in range(max(winner_entries, 1))])
        for i in range(1, winner_entries):
            b.insert(Entry(f"b{i}x", NAMESPACE, None, None))
        return real(*args, **kwargs)

    monkeypatch.setattr(LanceDataset, "commit", staticmethod(overtaken))
    a.insert(Entry("a0", NAMESPACE, None, None))
    fresh = Manifest(str(tmp_path), {})
    held = {e.object_id for e in fresh.entries(NAMESPACE)}
    expected = {"a0"} | {f"b{i}" for i in range(max(winner_entries, 1))} | {f"b{i}x" for i in range(1, winner_entries)}
    assert held == expected
    ds = lance.dataset(fresh.uri)
    kinds = [type(t.operation).__name__ for t in ds.get_transactions(ds.version) if t is not None]
    assert kinds.count("Overwrite") == 1, kinds


@pytest.fixture
def listings(monkeypatch):
    """The listings of ``_versions/`` reads make (each check of the latest version), counted;
    and a racy window short enough to wait out (lance_ns.directory_stamp)."""
    from lance_ns import directory_stamp
    from lance_ns.impls.dir import manifest as module

    monkeypatch.setattr(directory_stamp, "RACY_NS", 50_000_000)
    counted = []
    plain = module._latest_version
    monkeypatch.setattr(module, "_latest_version", lambda ds, *a: counted.append(1) or plain(ds, *a))
    return counted


def test_a_quiet_manifest_is_read_without_listing_its_versions(tmp_path, listings):
    """On local disk a read checks ``_versions/`` by one stat(): while no commit lands, reads
    list nothing; the next commit, another writer's, is seen by the very next read."""
    writer, reader = Manifest(str(tmp_path), {}), Manifest(str(tmp_path), {})
    writer.insert(Entry("a", NAMESPACE))
    time.sleep(0.1)
    assert reader.get("a") is not None
    listings.clear()
    reader.get("a")  # the check that finds the directory still: trusted from here
    for _ in range(50):
        assert reader.get("a") is not None and reader.get("b") is None
    assert len(listings) <= 1
    writer.insert(Entry("b", NAMESPACE))
    listings.clear()
    assert reader.get("b") == Entry("b", NAMESPACE)
    assert listings  # (listed again: once outside the lock, once under it)


def test_a_commit_in_the_tick_of_a_check_is_seen(tmp_path, listings):
    """A directory changed within the window is listed on every read, so a commit landing in
    the same clock tick as the previous check is never missed."""
    writer, reader = Manifest(str(tmp_path), {}), Manifest(str(tmp_path), {})
    writer.insert(Entry("a", NAMESPACE))
    for i in range(20):
        assert reader.get(f"n{i}") is None
        writer.insert(Entry(f"n{i}", NAMESPACE))
        assert reader.get(f"n{i}") == Entry(f"n{i}", NAMESPACE)


def test_another_process_commit_is_seen_by_the_next_read(tmp_path, listings):
    import subprocess
    import sys

    reader = Manifest(str(tmp_path), {})
    Manifest(str(tmp_path), {}).insert(Entry("a", NAMESPACE))
    time.sleep(0.1)
    reader.get("a")
    reader.get("a")  # trusted now
    code = ("import sys; from lance_ns.impls.dir.manifest import Manifest; from lance_ns.impls.dir.view import Entry; "
            "Manifest(sys.argv[1], {}).insert(Entry('from-elsewhere', 'namespace'))")
    subprocess.run([sys.executable, "-c", code, str(tmp_path)], check=True)
    assert reader.get("from-elsewhere") == Entry("from-elsewhere", NAMESPACE)
