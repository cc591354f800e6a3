"""The namespace and table subcommands: one small handler each.

A handler takes the parsed arguments and the :class:`Output` and returns the
exit code; errors propagate as ``lance_namespace`` exceptions and become exit
codes in one place (:func:`lance_ns.cli.app.run`).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Callable

import pyarrow as pa
from lance_namespace import (
    CountTableRowsRequest,
    CreateNamespaceRequest,
    CreateTableRequest,
    CreateTableTagRequest,
    DeclareTableRequest,
    DeleteTableTagRequest,
    DeregisterTableRequest,
    DescribeNamespaceRequest,
    DescribeTableRequest,
    DescribeTableVersionRequest,
    DropNamespaceRequest,
    DropTableRequest,
    ListNamespacesRequest,
    ListTableBranchesRequest,
    ListTablesRequest,
    ListTableTagsRequest,
    ListTableVersionsRequest,
    NamespaceExistsRequest,
    QueryTableRequest,
    RegisterTableRequest,
    RenameTableRequest,
    RestoreTableRequest,
    TableExistsRequest,
)
from lance_namespace_urllib3_client.models import QueryTableRequestColumns, QueryTableRequestVector

from .. import datasets, walk
from ..gc_pause import gc_paused, long_lived_frozen
from ..errors import (
    InvalidInputError,
    InvalidTableStateError,
    LanceNamespaceError,
    NamespaceNotFoundError,
    TableNotFoundError,
    UnsupportedOperationError,
)
from ..identifiers import parse_id, to_string
from ..modes import CreateMode, RegisterMode
from .connection import open_namespace, parse_pairs
from .exitcodes import Declined, exit_code
from ..readable import dump, size, when
from .output import Output, schema_tree


def spec_mode(mode_class, value: Any) -> str | None:
    """Any spelling the API accepts (``exist-ok``, ``exist_ok``, ``ExistOk``) -> the spec's ``ExistOk``."""
    if value is None:
        return None
    return mode_class.parse(value).name.title().replace("_", "")


# -- identifiers ---------------------------------------------------------------------


def ident(args: Any, table: bool = False) -> list[str]:
    """The id from ``ID`` (split at --delimiter) or from repeated ``--part``."""
    if args.id is not None and args.part:
        raise InvalidInputError("give the identifier either as ID or as --part NAME ..., not both")
    parts = parse_id(list(args.part)) if args.part else parse_id(args.id or "", args.delimiter)
    if table and not parts:
        raise InvalidInputError("a table identifier is required (e.g. db.events)")
    return parts


def shown(parts: list[str], args: Any) -> str:
    return to_string(parts, args.delimiter) or "(root)"


# -- listing helpers -------------------------------------------------------------------


def listing(call: Callable, make, field: str, args: Any, **fields) -> tuple[list, str | None]:
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


def every_entry(call: Callable, make, field: str, **fields) -> dict:
    """Every entry of a listing that answers a map per page (tags, branches), merged."""
    entries: dict = {}
    token, seen = None, set()
    while True:
        resp = call(make(page_token=token, **fields))
        entries.update({name: dump(v) for name, v in (getattr(resp, field) or {}).items()})
        token = resp.page_token or None
        if not token or token in seen:  # a repeated token would loop forever
            return entries
        seen.add(token)


def _more(out: Output, token: str | None) -> None:
    if token:
        out.message(f"more: --page-token {token}")


def confirm(args, out: Output, action: str) -> None:
    """Ask before deleting data or cascading; ``--yes`` answers for scripts.

    Without a terminal to ask on and without ``--yes`` the command refuses
    (exit 2) rather than deleting unasked: a script must say so explicitly.
    """
    if getattr(args, "yes", False):
        return
    if not out.interactive:
        raise InvalidInputError(f"{action}: not confirmed; pass --yes to run it without a terminal")
    import click

    if not click.confirm(f"{action}?", default=False, err=True):
        raise Declined(f"{action}: declined, nothing dropped")


# -- namespaces -------------------------------------------------------------------------


def _list_children(args, out: Output, method: str, model, field: str, column: str) -> int:
    """``namespace list`` and ``table list``: child names of one namespace, every page."""
    ns = open_namespace(args, out)
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
    ns = open_namespace(args, out)
    parts = ident(args)
    resp = ns.describe_namespace(DescribeNamespaceRequest(id=parts))
    data = dump(resp)
    out.emit(data, lambda: out.mapping(data.get("properties") or {}, title=f"namespace {shown(parts, args)}"))
    return 0


def namespace_create(args, out: Output) -> int:
    ns = open_namespace(args, out)
    parts = ident(args)
    req = CreateNamespaceRequest(id=parts, mode=spec_mode(CreateMode, args.mode), properties=parse_pairs(args.property, "--property") or None)
    data = dump(ns.create_namespace(req))
    out.emit(data, lambda: out.message(f"created namespace {shown(parts, args)}"))
    return 0


def namespace_drop(args, out: Output) -> int:
    ns = open_namespace(args, out)
    parts = ident(args)
    mode = "Skip" if args.skip_missing else "Fail"
    if args.walk or args.cascade:
        confirm(args, out, f"drop namespace {shown(parts, args)} and everything in it")
    if args.walk:
        return _drop_walking(ns, parts, mode, args, out)
    req = DropNamespaceRequest(id=parts, mode=mode, behavior="Cascade" if args.cascade else "Restrict")
    with out.status(f"dropping namespace {shown(parts, args)}"):
        data = dump(ns.drop_namespace(req))
    out.emit(data, lambda: out.message(f"dropped namespace {shown(parts, args)}"))
    return 0


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
        found = walk.tree(ns, parts)
    namespaces, tables = found.namespaces, found.tables
    with out.progress(f"dropping {shown(parts, args)}", len(tables) + len(namespaces) + 1) as advance:
        walk.drop_tree(ns, parts, found, advance=advance)
    result = {"dropped_tables": [to_string(t, args.delimiter) for t in tables],
              "dropped_namespaces": [to_string(n, args.delimiter) for n in namespaces + [parts]]}
    out.emit(result, lambda: out.message(
        f"dropped namespace {shown(parts, args)} ({len(tables)} tables, {len(namespaces)} child namespaces)"))
    return 0


def namespace_exists(args, out: Output) -> int:
    ns = open_namespace(args, out)
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


def _optional(call, *a, **kw):
    """A call made only to enrich a human summary: None where the backend does not
    support it (or, like pylance's own namespaces, refuses its request form)."""
    try:
        return call(*a, **kw)
    except Exception:  # noqa: BLE001 - the field is left out, the command still answers
        return None


def _describe(ns, parts: list[str], version: int | None, detail: bool = True):
    """DescribeTable with version, schema and stats where the table has data."""
    if detail or version is not None:
        try:
            return ns.describe_table(DescribeTableRequest(id=parts, version=version, load_detailed_metadata=True))
        except (InvalidTableStateError, UnsupportedOperationError):
            if version is not None:
                raise
    return ns.describe_table(DescribeTableRequest(id=parts, check_declared=True))


def table_describe(args, out: Output) -> int:
    ns = open_namespace(args, out)
    parts = ident(args, table=True)
    resp = _describe(ns, parts, args.version)
    data = dump(resp)

    def human():
        summary = {"table": shown(parts, args), "location": data.get("location")}
        if resp.version is not None:
            summary["version"] = resp.version
            counted = _optional(ns.count_table_rows, CountTableRowsRequest(id=parts, version=resp.version))
            summary["rows"] = counted if isinstance(counted, int) else getattr(counted, "count", None)
            described = _optional(ns.describe_table_version, DescribeTableVersionRequest(id=parts, version=resp.version))
            v = getattr(described, "version", None)
            if v is not None:
                summary["size"] = size((v.metadata or {}).get("total_files_size"))
                summary["committed"] = when(v.timestamp_millis)
            if resp.stats is not None:
                summary["fragments"] = resp.stats.num_fragments
                summary["deleted rows"] = resp.stats.num_deleted_rows
        elif resp.is_only_declared:
            summary["state"] = "declared (no data yet)"
        for key, value in sorted((data.get("properties") or {}).items()):
            summary[f"property {key}"] = value
        for key, value in sorted((data.get("storage_options") or {}).items()):
            summary[f"storage {key}"] = value
        out.mapping({k: v for k, v in summary.items() if v is not None}, title=f"table {shown(parts, args)}")
        if data.get("schema"):
            out.tree(schema_tree(data["schema"], "schema"))

    out.emit(data, human)
    return 0


def table_schema(args, out: Output) -> int:
    ns = open_namespace(args, out)
    parts = ident(args, table=True)
    schema = dump(ns.describe_table(DescribeTableRequest(id=parts, version=args.version, load_detailed_metadata=True))).get("schema")
    if not schema:
        raise UnsupportedOperationError(f"the namespace reported no schema for table {shown(parts, args)}")
    out.emit(schema, lambda: out.tree(schema_tree(schema, f"table {shown(parts, args)}")))
    return 0


def table_head(args, out: Output) -> int:
    ns = open_namespace(args, out)
    parts = ident(args, table=True)
    if args.rows < 0:
        raise InvalidInputError("the number of rows must be 0 or more")
    columns = [c for c in (args.columns or "").split(",") if c] or None
    req = QueryTableRequest(
        id=parts, k=args.rows, version=args.version, vector=QueryTableRequestVector(),
        columns=QueryTableRequestColumns(column_names=columns) if columns else None,
    )
    resp = ns.query_table(req)
    data = datasets.ipc_to_table(resp.data if hasattr(resp, "data") else resp)
    rows = data.slice(0, args.rows).to_pylist()
    out.emit(rows, lambda: out.table(data.column_names, ([_cell(r[c]) for c in data.column_names] for r in rows)),
             mask=False)
    return 0


def _cell(value: Any) -> str:
    text = "" if value is None else str(value)
    return text if len(text) <= 80 else text[:77] + "..."


#: --format -> pyarrow reader; the file suffix picks one when --format is not given
def _read_parquet(path: str) -> pa.Table:
    import pyarrow.parquet as pq

    return pq.read_table(path)


def _read_csv(path: str) -> pa.Table:
    import pyarrow.csv as pcsv

    return pcsv.read_csv(path)


def _read_json(path: str) -> pa.Table:
    import pyarrow.json as pjson

    return pjson.read_json(path)  # newline-delimited JSON objects


READERS = {"parquet": _read_parquet, "csv": _read_csv, "json": _read_json}
SUFFIXES = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".json": "json", ".jsonl": "json", ".ndjson": "json"}


def read_file(path: str, fmt: str | None) -> pa.Table:
    fmt = fmt or SUFFIXES.get(Path(path).suffix.lower())
    if fmt is None:
        raise InvalidInputError(f"cannot tell the format of {path!r} from its name; pass --format parquet, csv or json")
    if not Path(path).is_file():
        raise InvalidInputError(f"{path!r} is not a file")
    try:
        return READERS[fmt](path)
    except (pa.ArrowInvalid, OSError) as e:
        raise InvalidInputError(f"cannot read {path!r} as {fmt}: {e}") from None


def table_create(args, out: Output) -> int:
    ns = open_namespace(args, out)
    parts = ident(args, table=True)
    data = read_file(str(args.source), args.format)
    req = CreateTableRequest(id=parts, mode=spec_mode(CreateMode, args.mode),
                             properties=parse_pairs(args.property, "--property") or None)
    with out.status(f"writing {data.num_rows} rows to {shown(parts, args)}"):
        resp = dump(ns.create_table(req, datasets.table_to_ipc_stream(data)))
    out.emit(resp, lambda: out.message(
        f"created table {shown(parts, args)} ({data.num_rows} rows, {data.num_columns} columns) at {resp.get('location')}"))
    return 0


def table_restore(args, out: Output) -> int:
    ns = open_namespace(args, out)
    parts = ident(args, table=True)
    data = dump(ns.restore_table(RestoreTableRequest(id=parts, version=args.to_version)))
    out.emit(data, lambda: out.message(
        f"restored table {shown(parts, args)} to version {args.to_version} (as a new version; history kept)"))
    return 0


def tags_list(args, out: Output) -> int:
    ns = open_namespace(args, out)
    parts = ident(args, table=True)
    tags = every_entry(ns.list_table_tags, ListTableTagsRequest, "tags", id=parts)
    out.emit({"tags": tags}, lambda: out.table(("tag", "version"), [(k, tags[k].get("version")) for k in sorted(tags)]))
    return 0


def tags_create(args, out: Output) -> int:
    ns = open_namespace(args, out)
    parts = ident(args, table=True)
    version = args.tag_version
    if version is None:
        version = ns.describe_table(DescribeTableRequest(id=parts, load_detailed_metadata=True)).version
    data = dump(ns.create_table_tag(CreateTableTagRequest(id=parts, tag=args.tag, version=version)))
    out.emit(data, lambda: out.message(f"tagged version {version} of {shown(parts, args)} as {args.tag!r}"))
    return 0


def tags_delete(args, out: Output) -> int:
    ns = open_namespace(args, out)
    parts = ident(args, table=True)
    data = dump(ns.delete_table_tag(DeleteTableTagRequest(id=parts, tag=args.tag)))
    out.emit(data, lambda: out.message(f"deleted tag {args.tag!r} of {shown(parts, args)}"))
    return 0


def table_declare(args, out: Output) -> int:
    ns = open_namespace(args, out)
    if args.source:
        return _declare_from(ns, args, out)
    parts = ident(args, table=True)
    req = DeclareTableRequest(id=parts, location=args.location, properties=parse_pairs(args.property, "--property") or None)
    data = dump(ns.declare_table(req))
    out.emit(data, lambda: out.message(f"declared table {shown(parts, args)} at {data.get('location')}"))
    return 0


def declarations(path: str, parent: list[str], delimiter: str) -> list[dict]:
    """DeclareTable requests from a file, one table a line: its id (split at the
    delimiter, under ``parent``) or a JSON object with ``id`` (a list, or a string so
    split), and optionally ``location`` and ``properties``.  Blank lines and lines
    starting with ``#`` are skipped."""
    requests = []
    for number, line in enumerate(Path(path).read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        try:
            item = json.loads(line) if line.startswith("{") else {"id": line}
        except ValueError as e:
            raise InvalidInputError(f"{path}:{number}: not a JSON object: {e}") from None
        raw = item.get("id")
        table_id = raw if isinstance(raw, list) else parse_id(str(raw or ""), delimiter)
        if not table_id or set(item) - {"id", "location", "properties"}:
            raise InvalidInputError(f"{path}:{number}: give an id, and only location and properties beside it")
        requests.append({"id": parent + list(table_id), "location": item.get("location"),
                         "properties": item.get("properties")})
    return requests


def _declare_from(ns, args, out: Output) -> int:
    """Declare every table a file lists, ``--batch`` tables per BatchCommitTables (each
    batch all or none: one catalog commit where the backend has one)."""
    with gc_paused():  # a million requests built in a row
        requests = declarations(args.source, ident(args), args.delimiter)
    declared, began = 0, time.monotonic()
    with long_lived_frozen() as settle, out.progress(f"declaring {len(requests)} tables", len(requests)) as advance:
        settle()
        for start in range(0, len(requests), args.batch):
            chunk = requests[start:start + args.batch]
            try:
                ns.batch_commit_tables({"operations": [{"declare_table": r} for r in chunk]})
            except LanceNamespaceError as e:  # the usual error answer, saying how far it got
                raise type(e)(f"{declared} tables declared; none of the batch of {len(chunk)} from table "
                              f"{start + 1} on: {e}") from e
            declared += len(chunk)
            for _ in chunk:
                advance()
            settle()  # what is alive now is the file's requests and the namespace's index
    seconds = time.monotonic() - began
    out.emit({"declared": declared, "seconds": round(seconds, 3)},
             lambda: out.message(f"declared {declared} tables in {seconds:.1f} s ({declared / max(seconds, 1e-9):,.0f}/s)"))
    return 0


def table_register(args, out: Output) -> int:
    ns = open_namespace(args, out)
    parts = ident(args, table=True)
    req = RegisterTableRequest(
        id=parts, location=args.location, mode=spec_mode(RegisterMode, args.mode),
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
    ns = open_namespace(args, out)
    parent = ident(args)
    tables = lance_tables_in(args.directory, args.suffix)
    results, first_error = [], None
    with out.progress(f"registering {len(tables)} tables", len(tables)) as advance:
        for name, path in tables:
            req = RegisterTableRequest(id=parent + [name], location=str(path), mode=spec_mode(RegisterMode, args.mode))
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
    ns = open_namespace(args, out)
    parts = ident(args, table=True)
    data = dump(ns.deregister_table(DeregisterTableRequest(id=parts)))
    out.emit(data, lambda: out.message(f"deregistered table {shown(parts, args)} (data kept at {data.get('location')})"))
    return 0


def table_adopt(args, out: Output) -> int:
    ns = open_namespace(args, out)
    parts = ident(args, table=True)
    if not callable(getattr(ns, "adopt_table", None)):
        raise UnsupportedOperationError(
            f"{type(ns).__name__} cannot record owners: adopt runs against the backend itself (not over REST), "
            "with the options a server of it is started with")
    confirm(args, out, f"make lance-ns the owner of table {shown(parts, args)}'s data (a drop then deletes it)")
    changed = ns.adopt_table(parts)
    out.emit({"id": parts, "owned": True, "changed": changed}, lambda: out.message(
        f"table {shown(parts, args)}: its data is lance-ns's now (a drop deletes it)" if changed else
        f"table {shown(parts, args)}: already recorded as lance-ns's"))
    return 0


#: how ``table drop --purge`` reaches the namespace: DropTableRequest has no
#: properties field, so the request's context carries it (the REST client sends
#: context entries as headers, the spec's Context mapping)
PURGE_CONTEXT = {"purge": "true"}


def table_drop(args, out: Output) -> int:
    ns = open_namespace(args, out)
    parts = ident(args, table=True)
    what = "and delete its data, even outside the namespace" if args.purge else "and its data"
    confirm(args, out, f"drop table {shown(parts, args)} {what}")
    try:
        data = dump(ns.drop_table(DropTableRequest(id=parts, context=dict(PURGE_CONTEXT) if args.purge else None)))
    except TableNotFoundError:
        if not args.skip_missing:
            raise
        out.emit({}, lambda: out.message(f"table {shown(parts, args)} does not exist"))
        return 0
    out.emit(data, lambda: out.message(f"dropped table {shown(parts, args)}"))
    return 0


def table_rename(args, out: Output) -> int:
    ns = open_namespace(args, out)
    parts = ident(args, table=True)
    target = parse_id(args.to_namespace, args.delimiter) if args.to_namespace is not None else None
    data = dump(ns.rename_table(RenameTableRequest(id=parts, new_table_name=args.new_name, new_namespace_id=target)))
    new_parts = (parts[:-1] if target is None else target) + [args.new_name]
    out.emit({**data, "id": new_parts}, lambda: out.message(
        f"renamed table {shown(parts, args)} to {shown(new_parts, args)} (its data stays where it is)"))
    return 0


def table_list_all(args, out: Output) -> int:
    ns = open_namespace(args, out)
    parts = ident(args)
    ids, token = listing(ns.list_all_tables, ListTablesRequest, "tables", args, id=parts or None)

    def human():
        out.table(("id",), [(i,) for i in ids])
        _more(out, token)

    out.emit({"tables": ids, "page_token": token}, human)
    return 0


def table_branches(args, out: Output) -> int:
    ns = open_namespace(args, out)
    parts = ident(args, table=True)
    branches = every_entry(ns.list_table_branches, ListTableBranchesRequest, "branches", id=parts)
    out.emit({"branches": branches}, lambda: out.table(
        ("branch", "parent branch", "parent version"),
        [(k, branches[k].get("parentBranch"), branches[k].get("parentVersion")) for k in sorted(branches)]))
    return 0


def table_exists(args, out: Output) -> int:
    ns = open_namespace(args, out)
    parts = ident(args, table=True)
    try:
        ns.table_exists(TableExistsRequest(id=parts))
    except (TableNotFoundError, NamespaceNotFoundError):
        out.emit({"exists": False}, lambda: out.message(f"table {shown(parts, args)} does not exist"))
        return _not_found_exit()
    out.emit({"exists": True}, lambda: out.message(f"table {shown(parts, args)} exists"))
    return 0


def table_versions(args, out: Output) -> int:
    ns = open_namespace(args, out)
    parts = ident(args, table=True)
    versions, token = listing(
        ns.list_table_versions, ListTableVersionsRequest, "versions", args, id=parts, descending=args.descending or None
    )
    rows = [dump(v) for v in versions]

    def human():
        out.table(("version", "committed", "rows", "size", "manifest_path"), [
            (r.get("version"), when(r.get("timestamp_millis")), (r.get("metadata") or {}).get("total_rows"),
             size((r.get("metadata") or {}).get("total_files_size")), r.get("manifest_path"))
            for r in rows])
        _more(out, token)

    out.emit({"versions": rows, "page_token": token}, human)
    return 0
