"""Locations, names and what a drop deletes, where the directory layout is
involved (the backend-independent rules are in the conformance suite)."""

from __future__ import annotations

import os

import lance
import pytest

import lance_ns

from .conftest import code, sample, write


@pytest.mark.parametrize("made_by", ["listing", "manifest"])
def test_an_id_never_reaches_another_table_through_the_suffix(ns, root, made_by):
    if made_by == "listing":  # a root table found by listing the directory (pylance's single-level layout)
        lance.write_dataset(sample(), str(root / "plain.lance"))
    else:
        write(ns, ["plain"])
    assert ns.list_tables({"id": []}).tables == ["plain"]
    for op in (ns.describe_table, ns.table_exists, ns.drop_table, ns.deregister_table):
        assert code(op, {"id": ["plain.lance"]}) == 4
    assert lance.dataset(namespace_client=ns, table_id=["plain"]).count_rows() == 10
    assert (root / "plain.lance").is_dir()


@pytest.mark.parametrize("inside", ["victim.lance", "victim.lance/_versions", "victim.lance/data", "victim.lance/x"])
def test_root_table_directories_are_nobody_elses_location(ns, root, inside):
    write(ns, ["victim"])
    ns.create_namespace({"id": ["a"]})
    for tid in (["alias"], ["a", "alias"]):
        assert code(ns.declare_table, {"id": tid, "location": inside}) == 13
    assert code(ns.register_table, {"id": ["a", "alias"], "location": "victim.lance"}) == 13
    assert ns.list_tables({"id": []}).tables == ["victim"]
    assert lance.dataset(namespace_client=ns, table_id=["victim"]).count_rows() == 10


def test_the_manifest_and_the_root_are_no_table_location(ns, root):
    ns.declare_table({"id": ["seed"]})  # the manifest exists
    for loc in ("__manifest", "__manifest/x", ".", str(root), str(root.parent)):
        assert code(ns.declare_table, {"id": ["t"], "location": loc}) == 13, loc
    assert ns.list_tables({"id": []}).tables == ["seed"]


def test_a_declared_table_location_is_taken_before_data_arrives(ns):
    ns.create_namespace({"id": ["a"]})
    ns.declare_table({"id": ["a", "first"], "location": "shared/t1"})
    assert code(ns.declare_table, {"id": ["a", "second"], "location": "shared/t1"}) == 13
    assert code(ns.declare_table, {"id": ["a", "second"], "location": "shared/t1/in"}) == 13
    assert code(ns.declare_table, {"id": ["a", "second"], "location": "shared"}) == 13
    ns.declare_table({"id": ["a", "second"], "location": "shared/t2"})  # a sibling is fine


@pytest.fixture
def external(tmp_path):
    """A root that accepts external locations, and a Lance table outside it."""
    ns = lance_ns.connect("dir", {"root": str(tmp_path / "root"), "allow_external_locations": "true"})
    outside = str(tmp_path / "source.lance")
    lance.write_dataset(sample(3), outside)
    return ns, outside


def test_dropping_an_external_table_keeps_its_data(external):
    ns, outside = external
    ns.register_table({"id": ["ext"], "location": outside})
    ns.drop_table({"id": ["ext"]})
    assert ns.list_tables({"id": []}).tables == []
    assert lance.dataset(outside).count_rows() == 3
    ns.register_table({"id": ["ext"], "location": outside})
    ns.drop_table({"id": ["ext"], "context": {"purge": "true"}})
    assert not os.path.exists(outside)


def test_cascade_keeps_external_data_and_drops_owned_data(external):
    ns, outside = external
    ns.create_namespace({"id": ["a"]})
    ns.register_table({"id": ["a", "ext"], "location": outside})
    write(ns, ["a", "own"])
    own = ns.describe_table({"id": ["a", "own"]}).location
    ns.drop_namespace({"id": ["a"], "behavior": "Cascade"})
    assert lance.dataset(outside).count_rows() == 3
    assert not os.path.exists(own)
    ns.create_namespace({"id": ["b"]})
    ns.register_table({"id": ["b", "ext"], "location": outside})
    ns.drop_namespace({"id": ["b"], "behavior": "Cascade", "context": {"purge": "true"}})
    assert not os.path.exists(outside)


def test_an_external_location_may_not_contain_the_root(tmp_path):
    ns = lance_ns.connect("dir", {"root": str(tmp_path / "lake" / "root"), "allow_external_locations": "true"})
    assert code(ns.declare_table, {"id": ["t"], "location": str(tmp_path / "lake")}) == 13
    assert code(ns.declare_table, {"id": ["t"], "location": str(tmp_path)}) == 13


def test_a_deregistered_root_table_can_be_registered_under_a_new_name(ns, root):
    write(ns, ["old"])
    ns.deregister_table({"id": ["old"]})
    ns.register_table({"id": ["new"], "location": "old.lance"})
    assert ns.list_tables({"id": []}).tables == ["new"]
    assert code(ns.declare_table, {"id": ["old"]}) == 5  # its directory holds new's data
    ns.drop_table({"id": ["new"]})  # registered under a name that is not its own: data kept
    assert lance.dataset(str(root / "old.lance")).count_rows() == 10
