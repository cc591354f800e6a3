"""Bulk declaration (BatchCommitTables of DeclareTable operations, ``lance-ns table
declare --from``): one manifest commit for the whole batch, all or none."""

from __future__ import annotations

import gc
import json

import pytest

import lance_ns
from lance_ns.errors import TableAlreadyExistsError
from lance_ns.impls.dir.layout import MARKER_HELPERS
from tests.cli.conftest import run_cli


@pytest.fixture
def ns(tmp_path):
    ns = lance_ns.connect("dir", {"root": str(tmp_path / "lake"), "manifest_compact_every": "0"})
    ns.create_namespace({"id": ["t"]})
    return ns


@pytest.fixture
def helper_spawns(monkeypatch):
    """Every batch of 2 or more writes its markers from helper processes; the helpers started."""
    import subprocess

    from lance_ns.impls.dir import layout

    monkeypatch.setattr(layout, "HELPER_MARKERS", 2)
    spawned, plain = [], subprocess.Popen
    monkeypatch.setattr(layout.subprocess, "Popen", lambda *a, **k: spawned.append(a) or plain(*a, **k))
    return spawned


def _declares(names):
    return {"operations": [{"declare_table": {"id": ["t", n]}} for n in names]}


def test_a_bulk_declare_is_one_manifest_commit(ns):
    before = ns.manifest.version
    ns.batch_commit_tables(_declares([f"x{i}" for i in range(2000)]))
    assert ns.manifest.version == before + 1  # 2,000 tables, one commit
    page = ns.list_tables({"id": ["t"], "limit": 100})
    assert len(page.tables) == 100 and page.page_token
    assert ns.describe_table({"id": ["t", "x1999"], "check_declared": True}).is_only_declared


def test_a_bulk_declare_with_one_taken_name_declares_none(ns):
    ns.declare_table({"id": ["t", "taken"]})
    before = ns.manifest.version
    with pytest.raises(TableAlreadyExistsError):
        ns.batch_commit_tables(_declares(["a", "b", "taken", "c"]))
    assert ns.manifest.version == before
    assert ns.list_tables({"id": ["t"]}).tables == ["taken"]
    assert not any((ns.files.exists(ns.default_location(["t"], n) + "/.lance-reserved")) for n in "abc")


def test_the_cli_declares_a_file_in_batches(tmp_path):
    root = tmp_path / "lake"
    lance_ns.connect("dir", {"root": str(root)}).create_namespace({"id": ["db"]})
    listing = tmp_path / "tenants.txt"
    lines = [f"tenant{i}" for i in range(6)] + ['{"id": ["gold"], "properties": {"tier": "gold"}}', "# a comment", ""]
    listing.write_text("\n".join(lines))
    lake = ["--impl", "dir", "--prop", f"root={root}"]
    ran = run_cli("table", "declare", "db", "--from", str(listing), "--batch", "3", "--json", *lake)
    assert ran.rc == 0, ran.err
    said = json.loads(ran.out)
    assert said["declared"] == 7 and said["seconds"] >= 0
    assert gc.get_freeze_count() == 0  # the objects it kept out of the collector's walks are handed back
    ns = lance_ns.connect("dir", {"root": str(root)})
    assert len(ns.list_tables({"id": ["db"]}).tables) == 7
    assert ns.describe_table({"id": ["db", "gold"]}).properties["tier"] == "gold"
    # again: the first batch is refused whole, and the answer says how far it got
    again = run_cli("table", "declare", "db", "--from", str(listing), "--json", *lake)
    assert again.rc != 0 and json.loads(again.out)["code"] == 5
    assert "0 tables declared" in json.loads(again.out)["error"]
    bad = tmp_path / "bad.txt"
    bad.write_text('{"id": ["x"], "colour": "red"}\n')
    refused = run_cli("table", "declare", "db", "--from", str(bad), "--json", *lake)
    assert refused.rc != 0 and json.loads(refused.out)["code"] == 13 and "bad.txt:1" in json.loads(refused.out)["error"]


def test_pylance_sees_and_fills_what_a_bulk_declare_made(ns, tmp_path, helper_spawns):
    """A client we did not write (pylance's DirectoryNamespace) lists the tables of a bulk
    declaration (markers written by the helper process) and writes one of them; ours
    reads what it wrote."""
    import lance
    import pyarrow as pa
    from lance.namespace import DirectoryNamespace
    from lance_namespace import ListTablesRequest

    ns.batch_commit_tables(_declares(["p0", "p1", "p2"]))
    assert len(helper_spawns) == MARKER_HELPERS
    theirs = DirectoryNamespace(root=str(tmp_path / "lake"))
    assert {"p0", "p1", "p2"} <= set(theirs.list_tables(ListTablesRequest(id=["t"])).tables)
    lance.write_dataset(pa.table({"x": [1, 2, 3]}), namespace_client=theirs, table_id=["t", "p1"], mode="append")
    assert lance.dataset(namespace_client=ns, table_id=["t", "p1"]).to_table()["x"].to_pylist() == [1, 2, 3]


def _table_dirs(ns) -> set[str]:
    return {name for name, is_dir in ns.files.list_dir(ns.root) if is_dir and not name.startswith("_")}


def test_a_helper_process_writes_the_markers_while_the_batch_is_planned(ns, helper_spawns):
    ns.batch_commit_tables(_declares([f"h{i}" for i in range(300)]))
    assert len(helper_spawns) == MARKER_HELPERS
    assert len(_table_dirs(ns)) == 300
    for i in (0, 150, 299):
        location = ns.describe_table({"id": ["t", f"h{i}"]}).location
        assert ns.files.exists(location + "/.lance-reserved")
    assert ns.describe_table({"id": ["t", "h299"], "check_declared": True}).is_only_declared


def test_a_batch_that_loses_a_name_to_another_process_leaves_none_of_its_markers(ns, helper_spawns, monkeypatch):
    """Checked free, taken by another process before the commit: the commit refuses
    the batch after the helper wrote its markers; none of them is left."""
    other = lance_ns.connect("dir", {"root": ns.root})
    plain = ns.create_table_entries

    def racing(planned):
        other.declare_table({"id": ["t", "a150"]})
        return plain(planned)

    monkeypatch.setattr(ns, "create_table_entries", racing)
    with pytest.raises(TableAlreadyExistsError):
        ns.batch_commit_tables(_declares([f"a{i}" for i in range(300)]))
    assert len(helper_spawns) == MARKER_HELPERS
    theirs = other.describe_table({"id": ["t", "a150"]}).location
    assert _table_dirs(ns) == {theirs.rstrip("/").rsplit("/", 1)[-1]}, "only the other process's table"
    assert ns.files.exists(theirs + "/.lance-reserved")
    assert ns.list_tables({"id": ["t"]}).tables == ["a150"]


def test_a_marker_the_helper_cannot_write_withdraws_the_whole_batch(ns, helper_spawns, monkeypatch):
    """The manifest commit succeeded, a marker did not: every entry is withdrawn and
    every marker and directory the helper made is removed."""
    from lance_ns.impls.dir import layout

    monkeypatch.setattr(layout.random, "getrandbits", lambda bits: 0)  # locations known in advance
    blocked = ns.default_location(["t"], "b7")
    with open(blocked, "w") as f:  # a file where the table's directory would go
        f.write("in the way")
    before_version = ns.manifest.version
    with pytest.raises(Exception) as info:
        ns.batch_commit_tables(_declares([f"b{i}" for i in range(20)]))
    assert "marker" in str(info.value) and len(helper_spawns) == MARKER_HELPERS
    assert ns.list_tables({"id": ["t"]}).tables == []
    assert lance_ns.connect("dir", {"root": ns.root}).list_tables({"id": ["t"]}).tables == []
    assert ns.manifest.version > before_version  # committed, then withdrawn
    assert _table_dirs(ns) == set() and open(blocked).read() == "in the way"


def test_a_name_too_long_for_the_disk_in_a_bulk_is_invalid_input_and_leaves_nothing(ns, helper_spawns):
    """255 characters is a valid name, but a nested table's directory adds a prefix: the
    helper's ENAMETOOLONG comes back as the caller's error (13), not a server error."""
    from lance_namespace import LanceNamespaceError

    with pytest.raises(LanceNamespaceError) as info:
        ns.batch_commit_tables(_declares(["fine0", "fine1", "n" * 255]))
    assert info.value.code == 13, info.value
    assert len(helper_spawns) == MARKER_HELPERS
    assert ns.list_tables({"id": ["t"]}).tables == [] and _table_dirs(ns) == set()
