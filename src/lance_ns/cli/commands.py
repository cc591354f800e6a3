"""The namespace and table subcommands: one small handler each.

A handler takes the parsed arguments and the :class:`Output` and returns the
exit code; errors propagate as ``lance_namespace`` exceptions and become exit
codes in one place (:func:`lance_ns.cli.app.exit_code`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Callable

from lance_namespace import (
    CreateNamespaceRequest,
    DeclareTableRequest,
    DeregisterTableRequest,
    DescribeNamespaceRequest,
    DescribeTableRequest,
    DropNamespaceRequest,
    DropTableRequest,
    ListNamespacesRequest,
    ListTablesRequest,
    ListTableVersionsRequest,
    NamespaceExistsRequest,
    RegisterTableRequest,
    TableExistsRequest,
)

from ..errors import InvalidInputError, LanceNamespaceError, NamespaceNotFoundError, TableNotFoundError
from ..identifiers import parse_id, to_string
from .connection import open_namespace, parse_pairs
from .exitcodes import exit_code
from .output import Output, dump

#: CLI spelling -> the spec's mode value
CREATE_MODES = {"create": "Create", "exist-ok": "ExistOk", "overwrite": "Overwrite"}
REGISTER_MODES = {"create": "Create", "overwrite": "Overwrite"}


# -- identifiers ---------------------------------------------------------------------


def ident(args: argparse.Namespace, table: bool = False) -> list[str]:
    """The id from ``ID`` (split at --delimiter) or from repeated ``--part``."""
    if args.id is not None and args.part:
        raise InvalidInputError("give the identifier either as ID or as --part NAME ..., not both")
    parts = parse_id(list(args.part)) if args.part else parse_id(args.id or "", args.delimiter)
    if table and not parts:
        raise InvalidInputError("a table identifier is required (e.g. db.events)")
    return parts


def shown(parts: list[str], args: argparse.Namespace) -> str:
    return to_string(parts, args.delimiter) or "(root)"


# -- listing helpers -------------------------------------------------------------------


def listing(call: Callable, make, field: str, args: argparse.Namespace, **fields) -> tuple[list, str | None]:
    """One page with --limit/--page-token, else every page."""
    if args.limit is not None or args.page_token:
        resp = call(make(limit=args.limit, page_token=args.page_token, **fields))
        return list(getattr(resp, field) or []), resp.page_token or None
    items: list = []
    token, seen = None, set()
    while True:
        resp = call(make(page_token=token, **fields))
        items.extend(getattr(resp, field) or [])
        token = resp.page_token or None
        if not token or token in seen:  # a repeated token would loop forever
            return items, None
        seen.add(token)


def _more(out: Output, token: str | None) -> None:
    if token:
        out.message(f"more: --page-token {token}")


# -- namespaces -------------------------------------------------------------------------


def _list_children(args, out: Output, method: str, model, field: str, column: str) -> int:
    """``namespace list`` and ``table list``: child names of one namespace, every page."""
    ns = open_namespace(args)
    parent = ident(args)
    names, token = listing(getattr(ns, method), model, field, args, id=parent)

    def human():
        out.table((column, "id"), [(n, to_string(parent + [n], args.delimiter)) for n in names])
        _more(out, token)

    out.emit({field: names, "page_token": token}, human)
    return 0


def namespace_list(args, out: Output) -> int:
    return _list_children(args, out, "list_namespaces", ListNamespacesRequest, "namespaces", "namespace")


def namespace_describe(args, out: Output) -> int:
    ns = open_namespace(args)
    parts = ident(args)
    resp = ns.describe_namespace(DescribeNamespaceRequest(id=parts))
    data = dump(resp)
    out.emit(data, lambda: out.mapping(data.get("properties") or {}, title=f"namespace {shown(parts, args)}"))
    return 0


def namespace_create(args, out: Output) -> int:
    ns = open_namespace(args)
    parts = ident(args)
    req = CreateNamespaceRequest(id=parts, mode=CREATE_MODES[args.mode], properties=parse_pairs(args.property, "--property") or None)
    data = dump(ns.create_namespace(req))
    out.emit(data, lambda: out.message(f"created namespace {shown(parts, args)}"))
    return 0


def namespace_drop(args, out: Output) -> int:
    ns = open_namespace(args)
    parts = ident(args)
    mode = "Skip" if args.skip_missing else "Fail"
    if args.walk:
        return _drop_walking(ns, parts, mode, args, out)
    req = DropNamespaceRequest(id=parts, mode=mode, behavior="Cascade" if args.cascade else "Restrict")
    with out.status(f"dropping namespace {shown(parts, args)}"):
        data = dump(ns.drop_namespace(req))
    out.emit(data, lambda: out.message(f"dropped namespace {shown(parts, args)}"))
    return 0


def _tree(ns, parts: list[str]) -> tuple[list[list[str]], list[list[str]]]:
    """Every namespace (deepest first) and table below ``parts``."""
    namespaces, tables = [], []
    for name in _all(ns.list_tables, ListTablesRequest, "tables", parts):
        tables.append(parts + [name])
    for child in _all(ns.list_namespaces, ListNamespacesRequest, "namespaces", parts):
        sub_ns, sub_tables = _tree(ns, parts + [child])
        namespaces += sub_ns + [parts + [child]]
        tables += sub_tables
    return namespaces, tables


def _all(call, make, field, parts):
    args = argparse.Namespace(limit=None, page_token=None)
    return listing(call, make, field, args, id=parts)[0]


def _drop_walking(ns, parts: list[str], mode: str, args, out: Output) -> int:
    """Client-side cascade: drop every table and child namespace, with progress.

    For servers that do not honour behavior=Cascade.  Not atomic: a failure
    part-way leaves what was not dropped yet, and says so.
    """
    try:
        ns.namespace_exists(NamespaceExistsRequest(id=parts))
    except NamespaceNotFoundError:
        if mode == "Skip":
            out.emit({}, lambda: out.message(f"namespace {shown(parts, args)} does not exist"))
            return 0
        raise
    with out.status(f"listing {shown(parts, args)}"):
        namespaces, tables = _tree(ns, parts)
    with out.progress(f"dropping {shown(parts, args)}", len(tables) + len(namespaces) + 1) as advance:
        for table_id in tables:
            ns.drop_table(DropTableRequest(id=table_id))
            advance()
        for child in namespaces:
            ns.drop_namespace(DropNamespaceRequest(id=child))
            advance()
        ns.drop_namespace(DropNamespaceRequest(id=parts))
        advance()
    result = {"dropped_tables": [to_string(t, args.delimiter) for t in tables],
              "dropped_namespaces": [to_string(n, args.delimiter) for n in namespaces + [parts]]}
    out.emit(result, lambda: out.message(
        f"dropped namespace {shown(parts, args)} ({len(tables)} tables, {len(namespaces)} child namespaces)"))
    return 0


def namespace_exists(args, out: Output) -> int:
    ns = open_namespace(args)
    parts = ident(args)
    try:
        ns.namespace_exists(NamespaceExistsRequest(id=parts))
    except NamespaceNotFoundError:
        out.emit({"exists": False}, lambda: out.message(f"namespace {shown(parts, args)} does not exist"))
        return _not_found_exit()
    out.emit({"exists": True}, lambda: out.message(f"namespace {shown(parts, args)} exists"))
    return 0


def _not_found_exit() -> int:
    return exit_code(NamespaceNotFoundError(""))


# -- tables -------------------------------------------------------------------------------


def table_list(args, out: Output) -> int:
    return _list_children(args, out, "list_tables", ListTablesRequest, "tables", "table")


def table_describe(args, out: Output) -> int:
    ns = open_namespace(args)
    parts = ident(args, table=True)
    req = DescribeTableRequest(id=parts, version=args.version, load_detailed_metadata=args.detail or None)
    data = dump(ns.describe_table(req))
    out.emit(data, lambda: out.mapping(data, title=f"table {shown(parts, args)}"))
    return 0


def table_declare(args, out: Output) -> int:
    ns = open_namespace(args)
    parts = ident(args, table=True)
    req = DeclareTableRequest(id=parts, location=args.location, properties=parse_pairs(args.property, "--property") or None)
    data = dump(ns.declare_table(req))
    out.emit(data, lambda: out.message(f"declared table {shown(parts, args)} at {data.get('location')}"))
    return 0


def table_register(args, out: Output) -> int:
    ns = open_namespace(args)
    parts = ident(args, table=True)
    req = RegisterTableRequest(
        id=parts, location=args.location, mode=REGISTER_MODES[args.mode],
        properties=parse_pairs(args.property, "--property") or None,
    )
    data = dump(ns.register_table(req))
    out.emit(data, lambda: out.message(f"registered table {shown(parts, args)} at {data.get('location')}"))
    return 0


def lance_tables_in(directory: str, suffix: str) -> list[tuple[str, Path]]:
    """(table name, path) of every Lance table directly inside ``directory``."""
    root = Path(directory)
    if not root.is_dir():
        raise InvalidInputError(f"{directory!r} is not a directory")
    found = []
    for child in sorted(root.iterdir()):
        if child.is_dir() and (child / "_versions").is_dir():
            name = child.name[: -len(suffix)] if suffix and child.name.endswith(suffix) else child.name
            found.append((name, child.resolve()))
    return found


def table_register_many(args, out: Output) -> int:
    """Register every Lance table of a directory: progress, one result per table."""
    ns = open_namespace(args)
    parent = ident(args)
    tables = lance_tables_in(args.directory, args.suffix)
    results, first_error = [], None
    with out.progress(f"registering {len(tables)} tables", len(tables)) as advance:
        for name, path in tables:
            req = RegisterTableRequest(id=parent + [name], location=str(path), mode=REGISTER_MODES[args.mode])
            try:
                ns.register_table(req)
                results.append({"table": name, "location": str(path), "status": "registered"})
            except LanceNamespaceError as e:
                first_error = first_error or e
                results.append({"table": name, "location": str(path), "status": "failed", "error": str(e), "code": int(e.code)})
            advance()

    def human():
        out.table(("table", "location", "status"), [(r["table"], r["location"], r.get("error") and f"failed: {r['error']}" or r["status"]) for r in results])
        ok = sum(r["status"] == "registered" for r in results)
        out.message(f"{ok} of {len(results)} tables registered in {shown(parent, args)}")

    out.emit({"results": results}, human)
    return 0 if first_error is None else exit_code(first_error)


def table_deregister(args, out: Output) -> int:
    ns = open_namespace(args)
    parts = ident(args, table=True)
    data = dump(ns.deregister_table(DeregisterTableRequest(id=parts)))
    out.emit(data, lambda: out.message(f"deregistered table {shown(parts, args)} (data kept at {data.get('location')})"))
    return 0


def table_drop(args, out: Output) -> int:
    ns = open_namespace(args)
    parts = ident(args, table=True)
    try:
        data = dump(ns.drop_table(DropTableRequest(id=parts)))
    except TableNotFoundError:
        if not args.skip_missing:
            raise
        out.emit({}, lambda: out.message(f"table {shown(parts, args)} does not exist"))
        return 0
    out.emit(data, lambda: out.message(f"dropped table {shown(parts, args)}"))
    return 0


def table_exists(args, out: Output) -> int:
    ns = open_namespace(args)
    parts = ident(args, table=True)
    try:
        ns.table_exists(TableExistsRequest(id=parts))
    except (TableNotFoundError, NamespaceNotFoundError):
        out.emit({"exists": False}, lambda: out.message(f"table {shown(parts, args)} does not exist"))
        return _not_found_exit()
    out.emit({"exists": True}, lambda: out.message(f"table {shown(parts, args)} exists"))
    return 0


def table_versions(args, out: Output) -> int:
    ns = open_namespace(args)
    parts = ident(args, table=True)
    versions, token = listing(
        ns.list_table_versions, ListTableVersionsRequest, "versions", args, id=parts, descending=args.descending or None
    )
    rows = [dump(v) for v in versions]

    def human():
        out.table(("version", "timestamp_millis", "manifest_path"), [(r.get("version"), r.get("timestamp_millis"), r.get("manifest_path")) for r in rows])
        _more(out, token)

    out.emit({"versions": rows, "page_token": token}, human)
    return 0
