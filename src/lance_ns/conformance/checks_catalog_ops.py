"""Conformance checks of the catalog-state operations: RenameTable and ListAllTables.

Every request field of both is sent by some check here (see
tests/conformance/test_field_coverage.py).  The checks run at the end of the
scenario, in the run's namespace, on tables of their own.

ListAllTables answers full string ids (``$``-joined) from the namespace ``id``
(default: the root).  Over REST the route carries no id, so the listing starts
at the server's root and may hold tables of other users: the checks judge
only the ids ending in their own names and the paging rules.
"""

from __future__ import annotations

from .model import NS, Call, Check

_DELIMITER = "$"


def _ids_ending(*names: str, absent: tuple[str, ...] = ()):
    """The listing holds an id ending in ``$<name>`` for each name, none for ``absent``."""

    def verify(resp: dict, vars: dict) -> str | None:
        got = resp.get("tables") or []
        missing = [n for n in names if not any(t.endswith(_DELIMITER + n) for t in got)]
        extra = [n for n in absent if any(t.endswith(_DELIMITER + n) for t in got)]
        if missing:
            return f"{missing!r} not listed (got {got[:20]!r})"
        return f"{extra!r} listed although it should not be" if extra else None

    return verify


def _first_page(n: int):
    def verify(resp: dict, vars: dict) -> str | None:
        got = resp.get("tables") or []
        if len(got) != n:
            return f"limit={n} gave {len(got)} ids {got!r}"
        if got != sorted(got):
            return f"ids not sorted: {got!r}"
        return None if resp.get("page_token") else "no page_token although more tables exist"

    return verify


def _next_page(resp: dict, vars: dict) -> str | None:
    first, got = vars.get("all_page1") or [], resp.get("tables") or []
    repeated = sorted(set(first) & set(got))
    if repeated:
        return f"page 2 repeats {repeated!r}"
    if got and first and got[0] <= first[-1]:
        return f"page 2 starts at {got[0]!r}, not after page 1's last {first[-1]!r}"
    return None if got else "page 2 is empty although page 1 had a page_token"


def _location_is(var: str):
    def verify(resp: dict, vars: dict) -> str | None:
        norm = lambda s: (s or "").removeprefix("file://").rstrip("/")  # noqa: E731
        want, got = vars.get(var), resp.get("location")
        return None if norm(got) == norm(want) else f"location {got!r}, expected the original {want!r}"

    return verify


def _with_property(key: str, value: str):
    def verify(resp: dict, vars: dict) -> str | None:
        got = (resp.get("properties") or {}).get(key)
        return None if got == value else f"property {key!r} is {got!r}, expected {value!r}"

    return verify


def _count(n: int):
    def verify(resp: dict, vars: dict) -> str | None:
        got = resp.get("count", resp.get("value"))
        return None if got == n else f"count is {got!r}, expected {n}"

    return verify


def checks() -> list[Check]:
    nested = frozenset({"nested"})
    data = frozenset({"data"})
    return [
        # -- RenameTable
        Check(
            "table.rename",
            "RenameTable",
            "renames a table: the old id is gone (code 4), the new one has its location and properties",
            (
                Call("DescribeTable", {"id": [NS, "rn_a"]}, save={"rn_loc": "location"}),
                Call("RenameTable", {"id": [NS, "rn_a"], "new_table_name": "rn_b"}),
                Call("TableExists", {"id": [NS, "rn_a"]}, expect=4),
                Call("DescribeTable", {"id": [NS, "rn_b"]},
                     verify=lambda r, v: _location_is("rn_loc")(r, v) or _with_property("k", "v")(r, v)),
            ),
            setup=(Call("DeclareTable", {"id": [NS, "rn_a"], "properties": {"k": "v"}}),),
        ),
        Check(
            "table.rename.same_namespace",
            "RenameTable",
            "new_namespace_id naming the table's own namespace renames it in place",
            (
                Call("RenameTable", {"id": [NS, "rn_b"], "new_table_name": "rn_c", "new_namespace_id": [NS]}),
                Call("TableExists", {"id": [NS, "rn_c"]}),
                Call("TableExists", {"id": [NS, "rn_b"]}, expect=4),
            ),
            after="table.rename",
        ),
        Check(
            "table.rename.namespace",
            "RenameTable",
            "new_namespace_id moves the table into another namespace, keeping its location",
            (
                Call("RenameTable", {"id": [NS, "rn_c"], "new_table_name": "rn_d", "new_namespace_id": [NS, "rn_ns"]}),
                Call("TableExists", {"id": [NS, "rn_c"]}, expect=4),
                Call("DescribeTable", {"id": [NS, "rn_ns", "rn_d"]}, verify=_location_is("rn_loc")),
            ),
            setup=(Call("CreateNamespace", {"id": [NS, "rn_ns"]}),),
            needs=nested,
            after="table.rename.same_namespace",
        ),
        Check(
            "table.rename.missing",
            "RenameTable",
            "renaming a missing table -> code 4 TableNotFound",
            (Call("RenameTable", {"id": [NS, "missing_table"], "new_table_name": "rn_never"}, expect=4),
             Call("TableExists", {"id": [NS, "rn_never"]}, expect=4)),
        ),
        Check(
            "table.rename.target_exists",
            "RenameTable",
            "renaming onto an existing table -> code 5 TableAlreadyExists; both tables stay as they were",
            (
                Call("DescribeTable", {"id": [NS, "rx_b"]}, save={"rx_b_loc": "location"}),
                Call("RenameTable", {"id": [NS, "rx_a"], "new_table_name": "rx_b"}, expect=5),
                Call("TableExists", {"id": [NS, "rx_a"]}),
                Call("DescribeTable", {"id": [NS, "rx_b"]}, verify=_location_is("rx_b_loc")),
            ),
            setup=(Call("DeclareTable", {"id": [NS, "rx_a"]}), Call("DeclareTable", {"id": [NS, "rx_b"]})),
        ),
        Check(
            "table.rename.missing_namespace",
            "RenameTable",
            "new_namespace_id naming a missing namespace -> code 1; the table keeps its name",
            (
                Call("RenameTable", {"id": [NS, "rx_a"], "new_table_name": "rx_c",
                                     "new_namespace_id": [NS, "missing_ns"]}, expect=1),
                Call("TableExists", {"id": [NS, "rx_a"]}),
            ),
            needs=nested,
            after="table.rename.target_exists",
        ),
        Check(
            "table.rename.invalid_name",
            "RenameTable",
            "a new_table_name with '/' or '..' -> code 13; the table keeps its name",
            (
                Call("RenameTable", {"id": [NS, "rx_a"], "new_table_name": "bad/name"}, expect=13, raw=True),
                Call("RenameTable", {"id": [NS, "rx_a"], "new_table_name": ".."}, expect=13, raw=True),
                Call("TableExists", {"id": [NS, "rx_a"]}),
            ),
            after="table.rename.target_exists",
        ),
        Check(
            "table.rename.data",
            "RenameTable",
            "a table with data keeps its rows and versions under the new name",
            (
                Call("RenameTable", {"id": [NS, "rn_data"], "new_table_name": "rn_data2"}),
                Call("CountTableRows", {"id": [NS, "rn_data2"]}, verify=_count(3)),
                Call("TableExists", {"id": [NS, "rn_data2"], "version": 1}),
            ),
            setup=(Call("CreateTable", {"id": [NS, "rn_data"], "mode": "Create"}, arrow=True),),
            needs=data,
        ),
        # -- ListAllTables
        Check(
            "tables.list_all",
            "ListAllTables",
            "lists every table below a namespace as full string ids, nested namespaces included",
            (Call("ListAllTables", {"id": [NS]}, verify=_ids_ending("la_1", "la_2", "la_3")),),
            setup=(
                Call("DeclareTable", {"id": [NS, "la_1"]}),
                Call("DeclareTable", {"id": [NS, "la_2"]}),
                Call("DeclareTable", {"id": [NS, "la_3"]}),
            ),
        ),
        Check(
            "tables.list_all.nested",
            "ListAllTables",
            "tables of child namespaces are listed with their whole id",
            (Call("ListAllTables", {"id": [NS]}, verify=_ids_ending("la_ns" + _DELIMITER + "la_4")),),
            setup=(Call("CreateNamespace", {"id": [NS, "la_ns"]}), Call("DeclareTable", {"id": [NS, "la_ns", "la_4"]})),
            needs=nested,
        ),
        Check(
            "tables.list_all.paging",
            "ListAllTables",
            "limit=2 gives 2 sorted ids and a page_token; the token continues after them, no repeats",
            (
                Call("ListAllTables", {"id": [NS], "limit": 2}, verify=_first_page(2),
                     save={"all_token": "page_token", "all_page1": "tables"}),
                Call("ListAllTables", {"id": [NS], "page_token": "{all_token}"}, verify=_next_page),
            ),
            after="tables.list_all",
        ),
        Check(
            "tables.list_all.include_declared",
            "ListAllTables",
            "include_declared=False lists the table with data, not the declared-only ones",
            (
                Call("ListAllTables", {"id": [NS], "include_declared": False},
                     verify=_ids_ending("rn_data2", absent=("la_1",))),
                Call("ListAllTables", {"id": [NS], "include_declared": True}, verify=_ids_ending("rn_data2", "la_1")),
            ),
            needs=data,
            after="table.rename.data",
        ),
    ]
