"""lance_ns.walk: the one client-side tree walk (CLI ``namespace drop --walk``,
test cleanup, ``lance-ns check``'s cleanup)."""

from __future__ import annotations

import pytest
from lance_namespace import LanceNamespaceError

import lance_ns
from lance_ns.walk import drop_tree, every_page, tree


@pytest.fixture
def ns(tmp_path):
    ns = lance_ns.connect("dir", {"root": str(tmp_path)})
    for n in (["a"], ["a", "b"], ["a", "b", "c"], ["a", "d"]):
        ns.create_namespace({"id": n})
    for t in (["a", "t1"], ["a", "b", "t2"], ["a", "b", "c", "t3"]):
        ns.declare_table({"id": t})
    return ns


def test_tree_lists_children_deepest_first_and_every_table(ns):
    found = tree(ns, ["a"])
    assert found.namespaces == [["a", "b", "c"], ["a", "b"], ["a", "d"]]
    assert sorted(found.tables) == [["a", "b", "c", "t3"], ["a", "b", "t2"], ["a", "t1"]]


def test_every_page_follows_page_tokens(tmp_path):
    ns = lance_ns.connect("dir", {"root": str(tmp_path)})
    ns.create_namespace({"id": ["p"]})
    names = [f"t{i:03d}" for i in range(7)]
    for n in names:
        ns.declare_table({"id": ["p", n]})

    pages = []
    real = ns.list_tables

    def small_pages(request):
        request.limit = 2
        resp = real(request)
        pages.append(resp.tables)
        return resp

    ns.list_tables = small_pages
    assert every_page(ns, "list_tables", "tables", ["p"]) == names
    assert len(pages) == 4


def test_drop_tree_removes_everything_and_counts(ns):
    steps = []
    found = drop_tree(ns, ["a"], advance=lambda: steps.append(1))
    assert len(steps) == len(found.tables) + len(found.namespaces) + 1 == 7
    assert ns.list_namespaces({"id": []}).namespaces == []


def test_drop_tree_of_a_missing_namespace(ns):
    with pytest.raises(LanceNamespaceError) as info:
        drop_tree(ns, ["absent"])
    assert int(info.value.code) == 1
    drop_tree(ns, ["absent"], best_effort=True)  # cleanup never raises
    assert ns.list_namespaces({"id": []}).namespaces == ["a"]
