"""The conformance scenario: one ordered list of checks that both
``tests/conformance`` (one pytest test per check and backend) and
``lance-ns check`` run.

The scenario runs inside one uniquely named namespace that the runner
creates and removes; later checks may rely on the state earlier ones built
(``after`` names the check a later one needs).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..errors import ERRORS
from . import checks_managed
from .model import NS, Call, Check, Fn, Http, Skipped
from . import verify as V
from .checks_catalog_ops import checks as catalog_ops_checks
from .checks_data import data_checks
from .checks_table_ops import table_ops_checks
from .checks_vending import VENDING_CHECKS


# -- the scenario -----------------------------------------------------------------

_NS_PROPS = {"owner": "lance-ns-check"}


def _nsid(*more: str) -> list[str]:
    return [NS, *more]


def _paging_checks(kind: str, op: str, field_name: str, create_op: str, container: str) -> list[Check]:
    """A listing of three items in ``container``, whole and in pages of two."""
    items = ("p1", "p2", "p3")
    setup = (Call("CreateNamespace", {"id": _nsid(container)}),) + tuple(
        Call(create_op, {"id": _nsid(container, name)}) for name in items
    )
    first = Call(
        op, {"id": _nsid(container), "limit": 2}, verify=V.page(field_name, 2, True),
        save={"token": "page_token", "page1": field_name},
    )
    rest = Call(
        op, {"id": _nsid(container), "limit": 2, "page_token": "{token}"}, verify=V.page(field_name, 1, False, items)
    )
    everything = Call(op, {"id": _nsid(container)}, verify=V.exactly(field_name, *items))
    return [
        Check(f"{kind}.list", op, f"lists every {kind[:-1]} of a namespace", (everything,), setup=setup),
        Check(
            f"{kind}.list.paging",
            op,
            "limit=2 gives 2 items and a page_token; the token gives the third item, no token, no repeats",
            (first, rest),
        ),
    ]


def arrow_stream() -> bytes:
    import pyarrow as pa

    from ..datasets import table_to_ipc_stream

    return table_to_ipc_stream(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": ["a", "b", "c"]}))


def _error_bodies(run: "Any") -> str | None:
    bad = [e for e in run.errors if e["code"] is None]
    if not run.errors:
        raise Skipped("no error responses were observed")
    return None if not bad else f"{len(bad)} error responses without an integer code, e.g. {_show(bad)}"


def _error_statuses(run: "Any") -> str | None:
    bad = [e for e in run.errors if e["code"] in ERRORS and ERRORS[e["code"]].http_status != e["status"]]
    if not run.errors:
        raise Skipped("no error responses were observed")
    return None if not bad else f"{len(bad)} error responses whose HTTP status does not match the code: {_show(bad)}"


def _show(errors: list[dict]) -> str:
    return "; ".join(f"{e['method']} {e['path']} -> {e['status']} code={e['code']}" for e in errors[:3])


#: checks that use a namespace level below the scenario's namespace; a flat
#: catalog (one level of databases: Hive 2, Glue) skips them
_NESTED = frozenset(
    {
        "table.declare.missing_namespace",
        "tables.list.missing_namespace",
        "tables.list",
        "tables.list.paging",
    }
)


def _needs_nesting(check: Check) -> Check:
    if check.name.startswith(("namespace.", "namespaces.")) or check.name in _NESTED:
        return replace(check, needs=check.needs | {"nested"})
    return check


def scenario() -> list[Check]:
    """The ordered scenario.  Later checks may rely on the state earlier ones built."""

    checks = _scenario()
    checks += catalog_ops_checks()
    checks += table_ops_checks()
    return [_needs_nesting(c) for c in checks]


def _scenario() -> list[Check]:
    missing = _nsid("missing_ns")  # names start with a letter: some catalogs (SeaweedFS) insist
    missing_table = _nsid("missing_table")
    checks = [
        # -- namespaces
        Check(
            "namespace.create",
            "CreateNamespace",
            "creates a child namespace with properties",
            (Call("CreateNamespace", {"id": _nsid("a"), "properties": _NS_PROPS}),),
        ),
        Check("namespace.exists", "NamespaceExists", "an existing namespace exists", (Call("NamespaceExists", {"id": _nsid("a")}),)),
        Check(
            "namespace.describe",
            "DescribeNamespace",
            "returns the properties given at creation",
            (Call("DescribeNamespace", {"id": _nsid("a")}, verify=V.props_include(_NS_PROPS)),),
        ),
        Check(
            "namespace.create.duplicate",
            "CreateNamespace",
            "mode=Create on an existing namespace -> code 2 NamespaceAlreadyExists",
            (Call("CreateNamespace", {"id": _nsid("a"), "mode": "Create"}, expect=2),),
        ),
        Check(
            "namespace.create.exist_ok",
            "CreateNamespace",
            "mode=ExistOk on an existing namespace succeeds and keeps its properties",
            (
                Call("CreateNamespace", {"id": _nsid("a"), "mode": "ExistOk", "properties": {"other": "x"}}),
                Call("DescribeNamespace", {"id": _nsid("a")}, verify=V.props_include(_NS_PROPS)),
            ),
        ),
        Check(
            "namespace.create.overwrite",
            "CreateNamespace",
            "mode=Overwrite on an existing (empty) namespace replaces its properties",
            (
                Call("CreateNamespace", {"id": _nsid("a"), "mode": "Overwrite", "properties": {"new": "1"}}),
                Call("DescribeNamespace", {"id": _nsid("a")}, verify=V.props_exclude("owner")),
            ),
        ),
        Check(
            "namespace.create.missing_parent",
            "CreateNamespace",
            "a namespace under a missing parent -> code 1 NamespaceNotFound",
            (Call("CreateNamespace", {"id": _nsid("missing_ns", "child")}, expect=1),),
        ),
        Check(
            "namespace.create.invalid_name",
            "CreateNamespace",
            "names with '/', '\\', control characters or '..' -> code 13 InvalidInput",
            (
                Call("CreateNamespace", {"id": _nsid("bad/name")}, expect=13, raw=True),
                Call("CreateNamespace", {"id": _nsid("..")}, expect=13, raw=True),
                Call("CreateNamespace", {"id": _nsid("bad\\name")}, expect=13, raw=True),
                Call("CreateNamespace", {"id": _nsid("bad\x07name")}, expect=13, raw=True),
            ),
        ),
        Check("namespace.describe.missing", "DescribeNamespace", "a missing namespace -> code 1", (Call("DescribeNamespace", {"id": missing}, expect=1),)),
        Check("namespace.exists.missing", "NamespaceExists", "a missing namespace -> code 1", (Call("NamespaceExists", {"id": missing}, expect=1),)),
        Check("namespaces.list.missing", "ListNamespaces", "children of a missing namespace -> code 1", (Call("ListNamespaces", {"id": missing}, expect=1),)),
        *_paging_checks("namespaces", "ListNamespaces", "namespaces", "CreateNamespace", "pg"),
        Check(
            "namespace.drop.missing",
            "DropNamespace",
            "mode=Fail on a missing namespace -> code 1",
            (Call("DropNamespace", {"id": missing, "mode": "Fail"}, expect=1),),
            unless=frozenset({"drop_missing_ok"}),
        ),
        Check(
            "namespace.drop.skip_missing",
            "DropNamespace",
            "mode=Skip on a missing namespace succeeds",
            (Call("DropNamespace", {"id": missing, "mode": "Skip"}),),
        ),
        Check(
            "namespace.drop.not_empty",
            "DropNamespace",
            "behavior=Restrict on a non-empty namespace -> code 3 NamespaceNotEmpty, nothing dropped",
            (
                Call("DropNamespace", {"id": _nsid("ne"), "behavior": "Restrict"}, expect=3),
                Call("NamespaceExists", {"id": _nsid("ne", "child")}),
            ),
            setup=(Call("CreateNamespace", {"id": _nsid("ne")}), Call("CreateNamespace", {"id": _nsid("ne", "child")})),
        ),
        Check(
            "namespace.drop",
            "DropNamespace",
            "drops an empty namespace; it no longer exists",
            (Call("DropNamespace", {"id": _nsid("a")}), Call("NamespaceExists", {"id": _nsid("a")}, expect=1)),
        ),
        # -- tables (metadata)
        Check(
            "table.declare",
            "DeclareTable",
            "declares a table and returns its location",
            (Call("DeclareTable", {"id": _nsid("t1")}, verify=V.has_location, save={"t1_loc": "location"}),),
        ),
        Check(
            "table.describe",
            "DescribeTable",
            "describes a declared table at the declared location",
            (Call("DescribeTable", {"id": _nsid("t1")}, verify=V.same_location("t1_loc")),),
        ),
        Check(
            "table.declare.properties",
            "DeclareTable",
            "properties given at declaration are described",
            (
                Call("DeclareTable", {"id": _nsid("tprops"), "properties": {"team": "ml"}}),
                Call("DescribeTable", {"id": _nsid("tprops")}, verify=V.props_include({"team": "ml"})),
            ),
        ),
        Check("table.exists", "TableExists", "a declared table exists", (Call("TableExists", {"id": _nsid("t1")}),)),
        Check(
            "table.declare.duplicate",
            "DeclareTable",
            "declaring an existing table -> code 5 TableAlreadyExists",
            (Call("DeclareTable", {"id": _nsid("t1")}, expect=5),),
        ),
        Check(
            "table.declare.missing_namespace",
            "DeclareTable",
            "a table in a missing namespace -> code 1",
            (Call("DeclareTable", {"id": _nsid("missing_ns", "t")}, expect=1),),
        ),
        Check(
            "table.declare.invalid_name",
            "DeclareTable",
            "table names with '/', '\\' or '..' -> code 13",
            (
                Call("DeclareTable", {"id": _nsid("bad/t")}, expect=13, raw=True),
                Call("DeclareTable", {"id": _nsid("..")}, expect=13, raw=True),
                Call("DeclareTable", {"id": _nsid("bad\\t")}, expect=13, raw=True),
            ),
        ),
        Check("table.describe.missing", "DescribeTable", "a missing table -> code 4 TableNotFound", (Call("DescribeTable", {"id": missing_table}, expect=4),)),
        Check("table.exists.missing", "TableExists", "a missing table -> code 4", (Call("TableExists", {"id": missing_table}, expect=4),)),
        Check(
            "tables.list.missing_namespace",
            "ListTables",
            "tables of a missing namespace -> code 1 (not an empty list)",
            (Call("ListTables", {"id": missing}, expect=1),),
        ),
        *_paging_checks("tables", "ListTables", "tables", "DeclareTable", "tp"),
        Check(
            "table.drop",
            "DropTable",
            "drops a table; it no longer exists; dropping again -> code 4",
            (
                Call("DropTable", {"id": _nsid("t1")}),
                Call("TableExists", {"id": _nsid("t1")}, expect=4),
                Call("DropTable", {"id": _nsid("t1")}, expect=4),
            ),
        ),
        Check("table.deregister.missing", "DeregisterTable", "a missing table -> code 4", (Call("DeregisterTable", {"id": missing_table}, expect=4),)),
        # -- tables with data
        Check(
            "table.create",
            "CreateTable",
            "creates a table from an Arrow IPC stream (or pylance writes one through DeclareTable)",
            (Call("CreateTable", {"id": _nsid("data"), "mode": "Create"}, arrow=True, verify=V.has_location),),
            needs=frozenset({"data"}),
        ),
        Check(
            "table.versions",
            "ListTableVersions",
            "a table with data lists at least one version",
            (Call("ListTableVersions", {"id": _nsid("data")}, verify=V.versions_listed),),
            needs=frozenset({"data"}),
            optional=True,
            after="table.create",
        ),
        Check(
            "table.exists.version",
            "TableExists",
            "version=1 of a table with data exists; version=99 -> code 11 VersionNotFound",
            (
                Call("TableExists", {"id": _nsid("data"), "version": 1}),
                Call("TableExists", {"id": _nsid("data"), "version": 99}, expect=11),
            ),
            needs=frozenset({"data"}),
            after="table.create",
        ),
        Check(
            "table.describe.detail",
            "DescribeTable",
            "load_detailed_metadata=True at version=1 returns that version and the schema",
            (
                Call(
                    "DescribeTable",
                    {"id": _nsid("data"), "version": 1, "load_detailed_metadata": True},
                    verify=V.detail(1),
                ),
            ),
            needs=frozenset({"data"}),
            after="table.create",
        ),
        Check(
            "tables.list.include_declared",
            "ListTables",
            "include_declared=False lists the table with data, not the declared-only one",
            (
                Call("ListTables", {"id": [NS], "include_declared": False}, verify=V.lists_not("data", "declared_only")),
                Call("ListTables", {"id": [NS], "include_declared": True}, verify=V.lists("data", "declared_only")),
            ),
            setup=(Call("DeclareTable", {"id": _nsid("declared_only")}),),
            needs=frozenset({"data"}),
            after="table.create",
        ),
        Check(
            "table.describe.declared",
            "DescribeTable",
            "check_declared=True tells a declared-only table (is_only_declared) from one with data; "
            "with_table_uri=True returns its URI",
            (
                Call("DescribeTable", {"id": _nsid("declared_only"), "check_declared": True},
                     verify=V.field("is_only_declared", True)),
                Call("DescribeTable", {"id": _nsid("data"), "check_declared": True, "with_table_uri": True},
                     verify=V.all_of(V.field("is_only_declared", False), V.present("table_uri"))),
            ),
            needs=frozenset({"data"}),
            after="tables.list.include_declared",
        ),
        Check(
            "table.count",
            "CountTableRows",
            "predicate and version are honoured: 'id > 1' at version 1 counts 2 of 3 rows",
            (Call("CountTableRows", {"id": _nsid("data"), "predicate": "id > 1", "version": 1}, verify=V.field("count", 2)),),
            needs=frozenset({"data"}),
            optional=True,
            after="table.create",
        ),
        Check(
            "table.tags",
            "CreateTableTag",
            "a tag created at version 1 resolves to it (GetTableTagVersion, DescribeTable tag=), is listed, moved, deleted",
            (
                Call("CreateTableTag", {"id": _nsid("data"), "tag": "first", "version": 1}),
                Call("GetTableTagVersion", {"id": _nsid("data"), "tag": "first"}, verify=V.field("version", 1)),
                Call("DescribeTable", {"id": _nsid("data"), "tag": "first"}, verify=V.field("version", 1)),
                Call("ListTableTags", {"id": _nsid("data"), "limit": 10}, verify=V.has_key("tags", "first")),
                Call("UpdateTableTag", {"id": _nsid("data"), "tag": "first", "version": 1}),
                Call("DeleteTableTag", {"id": _nsid("data"), "tag": "first"}),
                Call("GetTableTagVersion", {"id": _nsid("data"), "tag": "first"}, expect=(8, 4)),
            ),
            needs=frozenset({"data"}),
            optional=True,
            after="table.create",
        ),
        Check(
            "table.version.describe",
            "DescribeTableVersion",
            "version 1 is described; ListTableVersions honours limit and descending",
            (
                Call("DescribeTableVersion", {"id": _nsid("data"), "version": 1}),
                Call("ListTableVersions", {"id": _nsid("data"), "limit": 1, "descending": True}, verify=V.at_most("versions", 1)),
            ),
            needs=frozenset({"data"}),
            optional=True,
            after="table.create",
        ),
        Check(
            "table.deregister",
            "DeregisterTable",
            "deregisters a table (its data stays); it no longer exists",
            (
                Call("DescribeTable", {"id": _nsid("data")}, save={"data_loc": "location"}),
                Call("DeregisterTable", {"id": _nsid("data")}),
                Call("TableExists", {"id": _nsid("data")}, expect=4),
            ),
            needs=frozenset({"data"}),
        ),
        Check(
            "table.register",
            "RegisterTable",
            "registers the deregistered table's location under a new name, with the properties given",
            (
                Call("RegisterTable", {"id": _nsid("reg"), "location": "{data_loc}", "properties": {"origin": "check"}}),
                Call("DescribeTable", {"id": _nsid("reg")},
                     verify=V.all_of(V.same_location("data_loc"), V.props_include({"origin": "check"}))),
            ),
            needs=frozenset({"data"}),
        ),
        Check(
            "table.register.duplicate",
            "RegisterTable",
            "mode=Create on an existing table -> code 5",
            (Call("RegisterTable", {"id": _nsid("reg"), "location": "{data_loc}", "mode": "Create"}, expect=5),),
            needs=frozenset({"data"}),
            after="table.register",
        ),
        Check(
            "table.register.overwrite",
            "RegisterTable",
            "mode=Overwrite on an existing table succeeds",
            (Call("RegisterTable", {"id": _nsid("reg"), "location": "{data_loc}", "mode": "Overwrite"}),),
            needs=frozenset({"data"}),
            after="table.register",
        ),
        # -- raw protocol (REST servers)
        Check(
            "http.malformed_arrow",
            "CreateTable",
            "a body that is not Arrow IPC -> HTTP 400, code 13",
            (Http("POST", "/v1/table/{ns}$bad_arrow/create", 400, 13, b"this is not an Arrow IPC stream", "application/vnd.apache.arrow.stream"),),
            needs=frozenset({"http"}),
        ),
        Check(
            "http.malformed_json",
            "CreateNamespace",
            "a body that is not JSON -> HTTP 400, code 13",
            (Http("POST", "/v1/namespace/{ns}$bad_json/create", 400, 13, b"{not json", "application/json"),),
            needs=frozenset({"http"}),
        ),
        Check(
            "http.unknown_mode",
            "CreateNamespace",
            "an unknown mode -> HTTP 400, code 13 (never silently ignored)",
            (Http("POST", "/v1/namespace/{ns}$bad_mode/create", 400, 13, b'{"mode":"Bogus"}', "application/json"),),
            needs=frozenset({"http"}),
        ),
        Check(
            "http.empty_component",
            "DescribeNamespace",
            "an id with an empty component (a$$b) -> HTTP 400, code 13",
            (Http("POST", "/v1/namespace/{ns}$$x/describe", 400, 13, b"{}", "application/json"),),
            needs=frozenset({"http"}),
        ),
        Check(
            "http.unauthenticated",
            "DescribeNamespace",
            "a request without credentials -> HTTP 401, code 16",
            (Http("POST", "/v1/namespace/{ns}/describe", 401, 16, b"{}", "application/json"),),
            needs=frozenset({"http", "auth"}),
        ),
        # -- cascade last: it removes what the scenario built
        Check(
            "namespace.drop.cascade",
            "DropNamespace",
            "behavior=Cascade drops a namespace holding a child namespace and a table",
            (
                Call("DropNamespace", {"id": _nsid("cz"), "behavior": "Cascade"}),
                Call("NamespaceExists", {"id": _nsid("cz")}, expect=1),
                Call("TableExists", {"id": _nsid("cz", "t")}, expect=(1, 4)),
            ),
            needs=frozenset({"cascade"}),
            setup=(
                Call("CreateNamespace", {"id": _nsid("cz")}),
                Call("CreateNamespace", {"id": _nsid("cz", "child")}),
                Call("DeclareTable", {"id": _nsid("cz", "t")}),
            ),
        ),
        Check(
            "protocol.error_code",
            "*",
            "every error response carries an integer code",
            (Fn(_error_bodies),),
            needs=frozenset({"http"}),
        ),
        Check(
            "protocol.error_status",
            "*",
            "every error response's HTTP status matches its code (404 not found, 409 conflict, 400 invalid...)",
            (Fn(_error_statuses),),
            needs=frozenset({"http"}),
        ),
    ]

    checks += data_checks()
    checks += checks_managed.checks()
    return checks


CHECKS: list[Check] = scenario() + VENDING_CHECKS


