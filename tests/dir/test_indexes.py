"""The manifest's in-memory indexes (impls/dir/indexes.py): the children of each
namespace and the root directories entries live in, built after a load without a
per-request pass over every entry, and kept equal to what a fresh load builds."""

from __future__ import annotations

import random

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st
from sortedcontainers import SortedList

import lance_ns
from lance_ns.impls.dir import indexes
from lance_ns.impls.dir.manifest import Manifest
from lance_ns.impls.dir.view import NAMESPACE, TABLE, Entry

from .conftest import code

#: locations of every shape a row may hold: named after its entry (the three layouts), in
#: another entry's directory, in a shared one, absolute, a URI, none
LOCATIONS = [
    ("t", "t.lance"), ("t2", "t2.lance/"), ("t3", "t3"), ("a$t", "0a1b2c3d_a$t"), ("a$t4", "0a1b2c3d_a$t4/x"),
    ("a$u", "t.lance"), ("a$v", "shared/v"), ("a$w", "shared/w"), ("b", "shared"), ("c", "/abs/c"),
    ("d", "s3://bucket/d"), ("e", None), ("f", ""), ("g", "0a1b2c3d_h"), ("h.lance", "h.lance"),
    ("i", "xxxxxxxxyi"), ("j", "j.lance.lance"), ("k", "k.lance/../m"),
]


def test_other_dirs_by_arrow_count_what_the_python_pass_counts():
    table = pa.table({"object_id": [o for o, _ in LOCATIONS], "location": [loc for _, loc in LOCATIONS]})
    expected = indexes.other_dirs(LOCATIONS)
    assert indexes.other_dirs_of_table(table) == expected
    # named after their entry: found from the directory's name, not counted
    assert expected == {"t.lance": 1, "shared": 3, "0a1b2c3d_h": 1, "xxxxxxxxyi": 1, "j.lance.lance": 1}


def test_a_directory_is_held_exactly_when_an_entrys_location_lies_in_it(tmp_path):
    m = Manifest(str(tmp_path), {}, compact_every=0)
    m.insert_many([Entry(oid, TABLE, loc) for oid, loc in LOCATIONS])
    directories = {indexes.root_dir(loc) for _, loc in LOCATIONS} | {"h", "t.lance.lance", "nobody.lance", "a$t"}
    truth = {d for d in directories if d and any(indexes.root_dir(loc) == d for _, loc in LOCATIONS)}
    for manifest in (m, _loaded(tmp_path)):
        assert {d for d in directories if d and manifest.holds_dir(d)} == truth
    # writes keep it: the owner of a shared directory leaves, its last sharer too
    for oid in ("a$u", "t", "a$v", "b"):
        m.delete([oid])
    assert m.holds_dir("t.lance") is False and m.holds_dir("shared") is True
    m.delete(["a$w"])
    fresh = _loaded(tmp_path)
    for d in directories - {None}:
        assert m.holds_dir(d) == fresh.holds_dir(d), d


def test_a_load_counts_no_directory_named_after_its_entry(tmp_path):
    """At a million tables in the layout's own directories, the view holds no directory
    name (a Counter of them all was ~130 MB, built by the first CreateNamespace)."""
    m = Manifest(str(tmp_path), {}, compact_every=0)
    m.insert_many([Entry("ns", NAMESPACE)] + [Entry(f"ns$t{i}", TABLE, f"{i:08x}_ns$t{i}") for i in range(500)]
                  + [Entry(f"r{i}", TABLE, f"r{i}.lance") for i in range(500)])
    loaded = _loaded(tmp_path)
    assert loaded.view._other_dirs == {}
    assert loaded.holds_dir("00000007_ns$t7") and loaded.holds_dir("r3.lance") and not loaded.holds_dir("r3")


def test_a_root_directory_holding_a_registered_table_is_not_a_table_of_its_own(tmp_path):
    """dir_listing_enabled: a root directory is a table unless an entry lives in it."""
    import lance

    lance.write_dataset(pa.table({"x": [1]}), str(tmp_path / "shelf" / "inner"))
    lance.write_dataset(pa.table({"x": [1]}), str(tmp_path / "loose.lance"))
    ns = lance_ns.connect("dir", {"root": str(tmp_path)})
    ns.create_namespace({"id": ["a"]})
    ns.register_table({"id": ["a", "inner"], "location": "shelf/inner"})
    for view in (ns, lance_ns.connect("dir", {"root": str(tmp_path)})):
        assert view.list_tables({"id": []}).tables == ["loose"]
        assert view.list_tables({"id": ["a"]}).tables == ["inner"]


def test_a_table_written_at_the_root_is_listed_by_the_next_listing_and_a_still_root_is_not_scanned_again(
        tmp_path, monkeypatch):
    """The root's listing is cached while the root directory's stamp is unchanged
    (lance_ns.directory_stamp): a table pylance writes there right after a listing, in the same
    clock tick, is in the next one; a root that stays still is not scanned again."""
    import time

    import lance

    from lance_ns import directory_stamp

    monkeypatch.setattr(directory_stamp, "RACY_NS", 50_000_000)
    ns = lance_ns.connect("dir", {"root": str(tmp_path)})
    lance.write_dataset(pa.table({"x": [1]}), str(tmp_path / "t0.lance"))
    for i in range(1, 8):
        assert f"t{i - 1}" in ns.list_tables({"id": []}).tables
        lance.write_dataset(pa.table({"x": [1]}), str(tmp_path / f"t{i}.lance"))
        assert f"t{i}" in ns.list_tables({"id": []}).tables
    time.sleep(0.1)
    scans, plain = [], ns._scan_root
    monkeypatch.setattr(ns, "_scan_root", lambda: scans.append(1) or plain())
    for _ in range(20):
        assert len(ns.list_tables({"id": []}).tables) == 8
    assert len(scans) <= 1  # at most the listing that finds the root still; none after it


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["add", "discard"]), st.text("abc", max_size=3)), max_size=80))
def test_few_names_answer_as_a_sorted_list_does(ops):
    few, sorted_list = indexes.FewNames(), SortedList()
    for op, name in ops:
        if op == "add" and name in sorted_list:
            continue  # the index adds a name once (add_child)
        getattr(few, op)(name)
        getattr(sorted_list, op)(name)
        assert list(few) == list(sorted_list)
        for probe in ("", "a", "b", "bb", "c", name):
            assert (probe in few) == (probe in sorted_list)
            assert few.bisect_right(probe) == sorted_list.bisect_right(probe)
        assert list(few.islice(1, 3)) == list(sorted_list.islice(1, 3))


def test_a_parent_with_many_children_becomes_a_sorted_list():
    index, names = {}, [f"t{i:05d}" for i in range(indexes.MANY + 10)]
    random.Random(7).shuffle(names)
    for name in names:
        indexes.add_child(index, ("ns", TABLE), name)
        indexes.add_child(index, ("ns", TABLE), name)  # once only
    held = index["ns", TABLE]
    assert isinstance(held, SortedList) and list(held) == sorted(names)
    built = indexes.children_index((f"ns${n}", TABLE) for n in names)
    assert isinstance(built["ns", TABLE], SortedList) and list(built["ns", TABLE]) == sorted(names)
    small = indexes.children_index([("a$x", TABLE), ("a$b", NAMESPACE), ("a$a", TABLE), ("z", NAMESPACE)])
    assert small == {("a", TABLE): ["a", "x"], ("a", NAMESPACE): ["b"], ("", NAMESPACE): ["z"]}
    assert all(isinstance(v, indexes.FewNames) for v in small.values())


def _loaded(root) -> Manifest:
    m = Manifest(str(root), {}, compact_every=0)
    m.current()
    return m


def test_creating_a_root_namespace_after_a_load_reads_no_other_entry(tmp_path):
    """A root namespace's name must not be a root table's directory: asked of the
    directory's name, not by a pass over every entry (at 1.1M entries the first
    CreateNamespace after a load took 2.2 s for that pass)."""
    writer = lance_ns.connect("dir", {"root": str(tmp_path)})
    writer.create_namespace({"id": ["a"]})
    writer.batch_commit_tables({"operations": [{"declare_table": {"id": ["a", f"t{i}"]}} for i in range(300)]})
    ns = lance_ns.connect("dir", {"root": str(tmp_path)})
    assert ns.table_exists({"id": ["a", "t7"]}) is not None  # loaded

    class Walled(dict):
        def items(self):
            raise AssertionError("every entry was read")

        values = keys = __iter__ = items

    ns.manifest.view.entries._rows = Walled(ns.manifest.view.entries._rows)
    ns.create_namespace({"id": ["b"]})
    assert code(ns.create_namespace, {"id": ["a"]}) == 2
    fresh = lance_ns.connect("dir", {"root": str(tmp_path)})
    assert fresh.list_namespaces({"id": []}).namespaces == ["a", "b"]


def test_a_tables_version_rows_are_read_from_the_ordered_ids_as_they_change(monkeypatch):
    """One table's rows of the version store (``{history}/v/{version}``) are read from the
    ordered object ids: every row under the prefix, in order, and no other row read (at
    100,000 rows of 2,000 tables a scan of every row cost ~18 ms a read, each commit reads
    several); kept equal to a scan through random additions and removals."""
    from lance_ns.impls.dir import view as view_module
    from lance_ns.impls.dir.view import TABLE_VERSION, ManifestView, row_of

    v = ManifestView()
    rng = random.Random(7)
    held: set[str] = set()

    def row(kind=TABLE_VERSION):
        return row_of(kind, None, '{"record": "{}"}')

    for table in range(40):
        for version in range(1, 6):
            v._hold(f"h{table}/v/{version:020d}", row(), None)
            held.add(f"h{table}/v/{version:020d}")
    v._hold("h1/v/x", row(TABLE), None)  # another kind under the prefix: not a version row
    v._hold("h1", row(TABLE), None)  # the prefix without its "/v/": not under it
    assert [e.object_id for e in v.under_prefix(TABLE_VERSION, "h1/v/")] == [f"h1/v/{n:020d}" for n in range(1, 6)]

    read = []
    real_row = view_module.Entries.row
    monkeypatch.setattr(view_module.Entries, "row", lambda entries, oid: read.append(oid) or real_row(entries, oid))
    for step in range(300):  # changes after the ids were ordered: a new version, a row removed, one written again
        table, version = rng.randrange(40), rng.randrange(1, 9)
        oid = f"h{table}/v/{version:020d}"
        if rng.random() < 0.4 and oid in held:
            v._forget(oid)
            held.discard(oid)
        else:
            v._hold(oid, row(), None)
            held.add(oid)
        prefix = f"h{rng.randrange(40)}/v/"
        del read[:]
        got = [e.object_id for e in v.under_prefix(TABLE_VERSION, prefix)]
        assert got == sorted(o for o in held if o.startswith(prefix)), step
        # only the rows under the prefix were read (the other kind's there too, to know its kind)
        assert sorted(read) == sorted(got + (["h1/v/x"] if prefix == "h1/v/" else []))


def test_a_managed_tables_versions_are_parsed_once_not_on_every_read(tmp_path):
    """Every answer about a managed table reads its whole history (several reads a commit):
    a version row's record is parsed the first time it is read, then never again while it
    is held (before, each read parsed every record: commits cost more with every version)."""
    import lance

    from lance_ns.impls.dir import history

    ns = lance_ns.connect("dir", {"root": str(tmp_path)})
    ns.create_namespace({"id": ["s"]})
    ns.declare_table({"id": ["s", "t"], "properties": {"managed_versioning": "true"}})
    for i in range(12):
        lance.write_dataset(pa.table({"x": [i]}), namespace_client=ns, table_id=["s", "t"], mode="append")
    assert ns.describe_table({"id": ["s", "t"]}).version == 12
    parsed = history._record.cache_info().misses
    for _ in range(5):
        assert ns.describe_table({"id": ["s", "t"]}).version == 12
        assert [v.version for v in ns.list_table_versions({"id": ["s", "t"]}).versions] == list(range(1, 13))
    assert history._record.cache_info().misses == parsed  # 10 more reads of 12 versions: nothing parsed again
    lance.write_dataset(pa.table({"x": [99]}), namespace_client=ns, table_id=["s", "t"], mode="append")
    assert ns.describe_table({"id": ["s", "t"]}).version == 13
    assert history._record.cache_info().misses == parsed + 1  # the new version's record, once
