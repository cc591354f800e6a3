"""Another process's commits are read by the fragments they changed (Manifest._load_changed):
its declares append fragments, its deletes give one fragment more deletions, its compaction
merges a few.  A reader reads those, not the whole manifest (a full load took 2.2 s at 1.1M
entries), and ends up holding exactly what a fresh load of the same version holds."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from lance_ns.impls.dir import compaction, indexes
from lance_ns.impls.dir.manifest import Exists, Manifest
from lance_ns.impls.dir.view import NAMESPACE, TABLE, Entry

#: one fragment of this many rows: sealed (compaction.SEALED_ROWS), never merged again
SEALED = 9_000
#: rows grown at first: three sealed fragments (a change reads at most the rows held)
GROWN = 3 * SEALED


def view(m: Manifest) -> dict:
    """Everything the in-memory copy holds besides the dataset, in comparable form."""
    m.current()
    return {
        "version": m.version,
        "entries": dict(m.view.entries._rows),
        "where": dict(m.view._where),
        "fragment ids": dict(m.view._fragment_ids),
        "children": {key: list(names) for key, names in m.view.index().items() if len(names)},
        "other dirs": +Counter(m.view._other_dirs if m.view._other_dirs is not None
                               else indexes.other_dirs(m.view.entries.located())),
    }


def fresh_view(root) -> dict:
    return view(Manifest(str(root), {}, compact_every=0))


@pytest.fixture
def counted(monkeypatch):
    """Full loads per manifest, and the rows read: whole, or their object_ids only."""
    loads, rows_read = Counter(), Counter()
    plain_load = Manifest._load

    def load(self, ds, *args):
        loads[id(self)] += 1
        return plain_load(self, ds, *args)

    from lance_ns.impls.dir import view as module

    plain_oids, plain_rows = module._oids_by_key, module._rows

    def oids_by_key(ds, fragments):
        found = plain_oids(ds, fragments)
        rows_read["object ids"] += len(found)
        return found

    def rows(table, keys):
        for item in plain_rows(table, keys):
            rows_read["rows"] += 1
            yield item

    monkeypatch.setattr(Manifest, "_load", load)
    monkeypatch.setattr(module, "_oids_by_key", oids_by_key)
    monkeypatch.setattr(module, "_rows", rows)
    return loads, rows_read


def _grown(root) -> Manifest:
    writer = Manifest(str(root), {}, compact_every=0, retain_versions=100)
    writer.insert_many([Entry("ns", NAMESPACE), Entry("other", NAMESPACE)]
                       + [Entry(f"ns$t{i:05d}", TABLE, f"{i:08x}_ns$t{i:05d}") for i in range(GROWN)])
    return writer


def test_a_delete_and_a_compaction_elsewhere_read_only_the_fragments_they_changed(tmp_path, counted):
    loads, rows_read = counted
    writer = _grown(tmp_path)
    reader = Manifest(str(tmp_path), {}, compact_every=0)
    assert len(reader.children("ns", TABLE)) == GROWN  # loaded, children index built
    assert loads[id(reader)] == 1

    # declares: appended fragments, read alone
    writer.insert_many([Entry(f"other$s{i}", TABLE, f"shared/s{i}") for i in range(5)])
    writer.insert(Entry("other$x", TABLE, "x.lance"))
    rows_read.clear()
    reader.current()
    assert rows_read["rows"] == 6 and rows_read["object ids"] == 0
    assert view(reader) == fresh_view(tmp_path)

    # a delete in a sealed fragment and one in a small one: their object_ids read twice (as
    # held, as now), no row read whole, nothing else read
    writer.delete(["ns$t00007", "other$s1"])
    rows_read.clear()
    reader.current()
    assert rows_read["rows"] == 0 and rows_read["object ids"] == 2 * (GROWN // 3 + 1 + 5) - 2, rows_read
    assert reader.get("ns$t00007") is None and reader.get("other$s1") is None
    assert view(reader) == fresh_view(tmp_path)

    # a compaction merging the small trailing fragments: they alone are read
    writer.compact()
    rows_read.clear()
    reader.current()
    assert 0 < rows_read["object ids"] == rows_read["rows"] <= 5, rows_read
    assert view(reader) == fresh_view(tmp_path)
    assert loads[id(reader)] == 1, "no full load after the first"


def test_random_changes_elsewhere_leave_the_reader_holding_what_a_fresh_load_holds(tmp_path, counted):
    loads, rows_read = counted
    rng = random.Random(32)
    writer = _grown(tmp_path)
    reader = Manifest(str(tmp_path), {}, compact_every=0)
    reader.children("ns", TABLE)
    names = iter(range(10**6))
    for step in range(40):
        what = rng.choice(["declare", "declare", "delete", "delete", "compact", "namespace"])
        if what == "declare":
            parent = rng.choice(["ns", "other"])
            writer.insert_many([Entry(f"{parent}$n{n}", TABLE, rng.choice([f"{n}.lance", f"shared/{n}", None]),
                                      rng.choice([None, {"k": str(n)}]))
                                for n in (next(names) for _ in range(rng.randint(1, 40)))])
        elif what == "namespace":
            writer.insert(Entry(f"ns{next(names)}", NAMESPACE))
        elif what == "delete":  # newer rows, and at most one of a sealed fragment (two: a full load reads less)
            newer = [oid for oid, _ in writer.view.entries.kinds() if "$n" in oid or oid.startswith("ns") and "$" not in oid]
            newer.remove("ns")
            grown = [f"ns$t{rng.randrange(GROWN):05d}"] * rng.randint(0, 1)
            writer.delete(rng.sample(newer, min(len(newer), rng.randint(1, 20))) + grown)
        else:
            writer.compact()
        if what == "delete" or rng.random() < 0.7:  # the reader also sees several changes at once
            assert view(reader) == fresh_view(tmp_path), (step, what)
    assert view(reader) == fresh_view(tmp_path)
    assert loads[id(reader)] == 1, "every change was read by its fragments"
    assert rows_read["object ids"] > GROWN / 3, "deletes of sealed fragments among them"


def test_a_reader_whose_version_was_cleaned_up_takes_the_rows_it_held_from_memory(tmp_path, counted):
    """The fragments the reader held are read at its loaded version; once another process's
    cleanup removed their files (an idle server worker, a Spark executor), the rows they
    held are taken from what the reader holds, not from a full load.  Where a row's fragment
    is not known, a full load decides."""
    loads, _ = counted
    writer = _grown(tmp_path)
    writer.insert_many([Entry(f"other$s{i}", TABLE, f"s{i}.lance") for i in range(3)])
    reader = Manifest(str(tmp_path), {}, compact_every=0)
    reader.current()
    writer.delete(["other$s0"])
    writer.compact()  # the trailing run merged: the files the reader holds are replaced
    compaction_files = {compaction.fragment_key(f.metadata) for f in writer.view.ds.get_fragments()}
    from lance_ns.impls.dir.upkeep import cleanup

    cleanup(writer.loaded_copy(), retain_versions=1)
    with pytest.raises(Exception, match="(?i)not found|no such file"):  # (what the reader would have read)
        reader.view.ds.to_table()
    assert view(reader) == fresh_view(tmp_path)
    assert reader.get("other$s0") is None and reader.get("other$s2") is not None
    assert loads[id(reader)] == 1
    assert set(reader.view._fragment_ids) == compaction_files

    reader.view._where["other$s1"] = None  # (as an insert racing another commit may leave it)
    writer.insert_many([Entry(f"other$u{i}", TABLE, f"u{i}.lance") for i in range(40)])
    writer.delete(["other$s1"])
    writer.compact()
    cleanup(writer.loaded_copy(), retain_versions=1)
    assert view(reader) == fresh_view(tmp_path)
    assert loads[id(reader)] == 2


def test_a_racing_losers_row_met_outside_an_append_is_left_to_a_full_load(tmp_path, counted):
    """A duplicate row (a racing loser's, not yet backed out) decides the winner by table
    order: read by an append it comes after every row held and loses; met in a changed
    fragment, the reader loads it all (which row comes first is the full load's to tell)."""
    loads, _ = counted
    writer = _grown(tmp_path)
    reader = Manifest(str(tmp_path), {}, compact_every=0)
    reader.current()
    # a loser's row appended behind the writer's back (as a racing process would)
    import lance
    import pyarrow as pa

    from lance_ns.impls.dir.manifest import SCHEMA

    row = pa.table({"object_id": ["ns$t00001"], "object_type": [TABLE], "location": ["loser.lance"],
                    "metadata": [None], "base_objects": pa.nulls(1, SCHEMA.field("base_objects").type)},
                   schema=SCHEMA)
    lance.write_dataset(row, writer.uri, mode="append")
    assert reader.get("ns$t00001").location == f"{1:08x}_ns$t00001"  # the first row wins
    assert reader.view.duplicates and loads[id(reader)] == 1
    assert view(reader) == fresh_view(tmp_path)
    writer.delete(["ns$t00002"])  # a changed fragment, duplicates held: a full load
    assert view(reader) == fresh_view(tmp_path) and loads[id(reader)] == 2


def test_a_deletion_undone_by_a_restore_is_read_as_the_row_it_brings_back(tmp_path, counted):
    """Lance's restore makes an older version the latest: a fragment of the same files with
    fewer deletions holds rows the reader does not hold, which only a full load can give."""
    import lance

    loads, _ = counted
    writer = _grown(tmp_path)
    before = writer.version
    writer.delete(["ns$t00003"])
    reader = Manifest(str(tmp_path), {}, compact_every=0)
    assert reader.get("ns$t00003") is None
    lance.dataset(writer.uri, version=before).restore()
    assert reader.get("ns$t00003").location == f"{3:08x}_ns$t00003"
    assert view(reader) == fresh_view(tmp_path) and loads[id(reader)] == 2


def test_a_commit_landing_on_top_of_another_process_s_reads_the_change_not_the_whole(tmp_path, counted):
    """An insert or a delete that Lance commits on top of another process's commit (made
    between this process's check and its commit: two server workers writing at once) brings
    the copy up to date by the fragments changed, its own commit's among them."""
    loads, _ = counted
    writer = _grown(tmp_path)
    process = Manifest(str(tmp_path), {}, compact_every=0)
    process.current()
    plain = process._private

    def meanwhile(change):  # the other process commits right before this one's commit
        def private():
            process._private = plain
            change()
            return plain()
        process._private = private

    meanwhile(lambda: writer.insert_many([Entry("other$a", TABLE, "a.lance")]))
    process.insert_many([Entry("ns$mine", TABLE, "mine.lance"), Entry("other$b", TABLE, "b.lance")])
    assert process.version == writer.version + 1
    assert view(process) == fresh_view(tmp_path)

    meanwhile(lambda: writer.delete(["ns$t00011"]))
    assert process.delete(["ns$t00003", "ns$mine"]) == 2
    meanwhile(lambda: writer.insert(Entry("other$c", TABLE, "c.lance")))
    assert process.delete(["other$a"]) == 1
    assert process.get("ns$t00011") is None and process.get("other$c") is not None
    assert view(process) == fresh_view(tmp_path)
    assert loads[id(process)] == 1, "no full load after the first"

    meanwhile(lambda: writer.insert(Entry("other$lost", TABLE, "theirs.lance")))  # a race it loses
    with pytest.raises(Exists):
        process.insert(Entry("other$lost", TABLE, "mine.lance"))
    assert process.get("other$lost").location == "theirs.lance"
    assert view(process) == fresh_view(tmp_path) and loads[id(process)] == 1
