"""DirectoryNamespace behaviour beyond the shared conformance suite: the
places where pylance's implementation falls short, locations, markers."""

from __future__ import annotations

import os

import lance
import pytest

import lance_ns

from .conftest import code, sample, write


def snapshot(path):
    return sorted(os.path.relpath(os.path.join(p, f), path) for p, _, fs in os.walk(path) for f in fs)


@pytest.mark.parametrize("bad", ["", "a/b", "a\\b", "..", "a$b", "x\x00"], ids=repr)
def test_bad_names_are_invalid_input_and_write_nothing(ns, root, bad):
    ns.create_namespace({"id": ["ok"]})
    before = snapshot(root)
    assert code(ns.declare_table, {"id": [bad]}) == 13
    assert code(ns.declare_table, {"id": ["ok", bad]}) == 13
    assert code(ns.create_namespace, {"id": [bad]}) == 13
    assert code(ns.create_table, {"id": [bad]}, b"") == 13
    assert snapshot(root) == before


def test_missing_namespace_is_not_found_everywhere(ns):
    for op in (ns.list_tables, ns.list_namespaces, ns.describe_namespace, ns.namespace_exists):
        assert code(op, {"id": ["nope"]}) == 1
    assert code(ns.declare_table, {"id": ["nope", "t"]}) == 1
    assert code(ns.describe_table, {"id": ["nope", "t"]}) == 4  # as in every catalog: the table does not exist


def test_create_namespace_modes(ns):
    ns.create_namespace({"id": ["a"], "properties": {"v": "1"}})
    assert code(ns.create_namespace, {"id": ["a"], "properties": {"v": "2"}}) == 2
    assert ns.create_namespace({"id": ["a"], "mode": "ExistOk", "properties": {"v": "2"}}).properties == {"v": "1"}
    ns.create_namespace({"id": ["a"], "mode": "Overwrite", "properties": {"v": "3"}})
    assert ns.describe_namespace({"id": ["a"]}).properties == {"v": "3"}
    ns.declare_table({"id": ["a", "t"]})
    assert code(ns.create_namespace, {"id": ["a"], "mode": "Overwrite"}) == 3  # would lose a table
    assert code(ns.create_namespace, {"id": ["a"], "mode": "Sometimes"}) == 13


def test_names_are_unique_across_tables_and_namespaces(ns):
    ns.declare_table({"id": ["x"]})
    assert code(ns.create_namespace, {"id": ["x"]}) == 2
    ns.create_namespace({"id": ["y"]})
    assert code(ns.declare_table, {"id": ["y"]}) == 5


def test_drop_namespace_skip_and_cascade_remove_data(ns, root):
    ns.drop_namespace({"id": ["ghost"], "mode": "Skip"})
    assert code(ns.drop_namespace, {"id": ["ghost"]}) == 1
    ns.create_namespace({"id": ["a"]})
    ns.create_namespace({"id": ["a", "b"]})
    write(ns, ["a", "b", "t"])
    location = ns.describe_table({"id": ["a", "b", "t"]}).location
    assert os.path.isdir(location)
    assert code(ns.drop_namespace, {"id": ["a"], "behavior": "Restrict"}) == 3
    ns.drop_namespace({"id": ["a"], "behavior": "Cascade"})
    assert not os.path.exists(location)
    assert ns.list_namespaces({"id": []}).namespaces == []
    assert code(ns.drop_namespace, {"id": []}) == 13


def test_drop_table_removes_data_and_name_can_be_reused(ns):
    write(ns, ["t"])
    location = ns.describe_table({"id": ["t"]}).location
    ns.drop_table({"id": ["t"]})
    assert not os.path.exists(location)
    assert ns.list_tables({"id": []}).tables == []
    write(ns, ["t"], sample(2))
    assert lance.dataset(namespace_client=ns, table_id=["t"]).count_rows() == 2


def test_register_accepts_what_describe_and_deregister_return(ns, root):
    ns.create_namespace({"id": ["a"]})
    write(ns, ["a", "t"])
    location = ns.deregister_table({"id": ["a", "t"]}).location
    assert code(ns.describe_table, {"id": ["a", "t"]}) == 4
    ns.register_table({"id": ["a", "t"], "location": location})  # absolute, inside root
    relative = os.path.relpath(location, root)
    # a second id for the same location would alias the table: refused
    assert code(ns.register_table, {"id": ["a", "t2"], "location": relative}) == 13
    assert code(ns.register_table, {"id": ["a", "t"], "location": location}) == 5
    ns.register_table({"id": ["a", "t"], "location": relative, "mode": "Overwrite"})  # relative to root
    assert ns.describe_table({"id": ["a", "t"]}).location == location
    assert lance.dataset(namespace_client=ns, table_id=["a", "t"]).count_rows() == 10


def test_locations_outside_root_need_permission(ns, tmp_path):
    outside = str(tmp_path / "elsewhere.lance")
    lance.write_dataset(sample(3), outside)
    for loc in (outside, "../elsewhere.lance"):
        assert code(ns.register_table, {"id": ["t"], "location": loc}) == 13
        assert code(ns.declare_table, {"id": ["t"], "location": loc}) == 13
    assert ns.list_tables({"id": []}).tables == []
    ext = lance_ns.connect("dir", {"root": str(tmp_path / "root"), "allow_external_locations": "true"})
    ext.register_table({"id": ["t"], "location": outside})
    assert ext.describe_table({"id": ["t"]}).location == outside
    assert lance.dataset(namespace_client=ext, table_id=["t"]).count_rows() == 3


def test_deregister_root_table_then_register_brings_it_back(ns, root):
    write(ns, ["t"])
    ns.deregister_table({"id": ["t"]})
    assert ns.list_tables({"id": []}).tables == []
    assert code(ns.declare_table, {"id": ["t"]}) == 5  # its directory still holds the data
    ns.register_table({"id": ["t"], "location": "t.lance"})
    assert ns.list_tables({"id": []}).tables == ["t"]
    assert not (root / "t.lance" / ".lance-deregistered").exists()


def test_declared_tables(ns, root):
    ns.declare_table({"id": ["d"], "properties": {"team": "ml"}})
    assert (root / "d.lance" / ".lance-reserved").read_bytes() == b""  # the spec names the file, not its content
    d = ns.describe_table({"id": ["d"], "check_declared": True})
    assert d.is_only_declared is True and d.properties == {"team": "ml"}
    assert ns.list_tables({"id": []}).tables == ["d"]
    assert ns.list_tables({"id": [], "include_declared": False}).tables == []
    lance.write_dataset(sample(2), namespace_client=ns, table_id=["d"], mode="append")
    assert ns.describe_table({"id": ["d"], "check_declared": True}).is_only_declared is False
    assert ns.list_tables({"id": [], "include_declared": False}).tables == ["d"]


def test_single_level_declare_is_exclusive(tmp_path):
    ns = lance_ns.connect("dir", {"root": str(tmp_path), "manifest_enabled": "false"})
    ns.declare_table({"id": ["t"]})
    assert code(ns.declare_table, {"id": ["t"]}) == 5
    assert code(ns.declare_table, {"id": ["a", "t"]}) == 1
    assert ns.list_namespaces({"id": []}).namespaces == []


def test_relative_root_and_file_uri(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rel = lance_ns.connect("dir", {"root": "./lake"})
    rel.declare_table({"id": ["t"]})
    uri = lance_ns.connect("dir", {"root": f"file://{tmp_path}/lake"})
    assert uri.describe_table({"id": ["t"]}).location == str(tmp_path / "lake" / "t.lance")


def test_paging_a_large_root(ns):
    names = [f"t{i:03d}" for i in range(120)]
    for n in names:
        ns.declare_table({"id": [n]})
    out, token = [], None
    while True:
        page = ns.list_tables({"id": [], "limit": 25, "page_token": token})
        out += page.tables
        token = page.page_token
        if not token:
            break
    assert out == names


def test_other_clients_see_changes(tmp_path):
    a = lance_ns.connect("dir", {"root": str(tmp_path)})
    b = lance_ns.connect("dir", {"root": str(tmp_path)})
    a.create_namespace({"id": ["n"]})
    assert b.list_namespaces({"id": []}).namespaces == ["n"]
    b.declare_table({"id": ["n", "t"]})
    assert a.list_tables({"id": ["n"]}).tables == ["t"]
    a.drop_table({"id": ["n", "t"]})
    assert code(b.describe_table, {"id": ["n", "t"]}) == 4


def test_directories_holding_registered_tables_are_not_tables(ns, root):
    lance.write_dataset(sample(2), str(root / "sub" / "x.lance"))
    assert ns.list_tables({"id": []}).tables == ["sub"]  # a bare directory, as the seed spec says
    ns.register_table({"id": ["x"], "location": "sub/x.lance"})
    assert ns.list_tables({"id": []}).tables == ["x"]
    assert lance.dataset(namespace_client=ns, table_id=["x"]).count_rows() == 2
