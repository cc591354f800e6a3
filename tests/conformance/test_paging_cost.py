"""A page of ListTables costs the tables on it, not the namespace's every table, on
every catalog backend (issue 32, goal 5): the catalog's own service pages where it can.

A catalog stores Lance tables beside other engines' tables, so each listed table is
judged (``is_lance``) before it is listed.  Counting those judgements counts the table
objects a listing read from the catalog, the same way on every backend: the full listing
judges every table; a page of ``PAGE`` may judge ``PAGE + 1`` (the one after the page
says whether the listing goes on), and the page after it the same again.

How each backend gets there: Hive Metastore lists names cheaply and loads table objects
by name (``get_table_objects_by_name`` for the page only); Iceberg REST lists
identifiers and loads the page's tables; Unity Catalog pages tables itself in name
order; Glue cannot (below), but the pages after its first reuse the listing that page
read, so an enumeration in pages reads each table once there too.  The directory namespace pages its manifest index without
table objects (``tests/dir/test_scale.py`` counts its rows read); a ``rest-*`` backend
is a server in front of a backend measured here under its own name.
"""

from __future__ import annotations

import pytest

from lance_ns.catalog import CatalogNamespace

TABLES, PAGE = 12, 3

#: on catalog backends (not the directory, not a server in front of a backend: see above)
pytestmark = pytest.mark.needs("catalog")

#: backend -> why its pages cost the whole listing (strict xfail: the day it pages, say so)
WHOLE_LISTINGS = {
    "glue": "Glue's GetTables cannot start at a name and promises no order (moto returns one page in "
    "insertion order), so a sorted page needs every table object of the database",
}


def _tables_judged(scope, monkeypatch) -> tuple[list[str], list[str]]:
    """On a catalog backend (others skip): TABLES tables declared out of order, and the list
    the names of the table objects a listing judges from then on go to."""
    c = scope.client
    assert isinstance(c, CatalogNamespace) and not c.catalog_in_storage
    names = [f"p{i:03d}" for i in range(TABLES)]
    for table in reversed(names):  # created out of order: the pages are sorted by the namespace
        c.declare_table({"id": scope.child(table)})
    judged: list[str] = []
    judge = type(c).is_lance
    monkeypatch.setattr(type(c), "is_lance", lambda self, t: judged.append(t.name) or judge(self, t))
    return names, judged


def test_a_page_reads_only_the_tables_it_needs(scope, request, monkeypatch):
    name = request.node.callspec.params["backend"].name
    if name in WHOLE_LISTINGS:
        request.applymarker(pytest.mark.xfail(reason=WHOLE_LISTINGS[name], strict=True))
    c = scope.client
    names, judged = _tables_judged(scope, monkeypatch)

    assert c.list_tables({"id": scope.id}).tables == names
    assert len(judged) >= TABLES
    judged.clear()
    first = c.list_tables({"id": scope.id, "limit": PAGE})
    assert first.tables == names[:PAGE] and first.page_token
    assert len(judged) <= PAGE + 1, f"a first page of {PAGE} read {len(judged)} tables: {judged}"
    judged.clear()
    second = c.list_tables({"id": scope.id, "limit": PAGE, "page_token": first.page_token})
    assert second.tables == names[PAGE : 2 * PAGE] and second.page_token
    assert len(judged) <= PAGE + 1, f"the second page of {PAGE} read {len(judged)} tables: {judged}"
    rest = c.list_tables({"id": scope.id, "page_token": second.page_token})
    assert rest.tables == names[2 * PAGE :] and not rest.page_token


def test_an_enumeration_in_pages_reads_each_table_once(scope, request, monkeypatch):
    """Every page of a namespace, one after the other: each table is read about once
    (plus the one after each page), never the whole listing per page, on every catalog
    backend, Glue included (its continuation pages reuse its first page's listing)."""
    c = scope.client
    names, judged = _tables_judged(scope, monkeypatch)
    listed, token, pages = [], None, 0
    while True:
        page = c.list_tables({"id": scope.id, "limit": PAGE, "page_token": token})
        listed, token, pages = listed + page.tables, page.page_token, pages + 1
        if not token:
            break
    assert listed == names
    assert len(judged) <= TABLES + pages, f"{pages} pages of {PAGE} read {len(judged)} tables: {judged}"
