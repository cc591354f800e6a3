"""The Python half of the Spark SQL catalog ``lancens.spark.LanceCatalog``
(``bridge/LanceCatalog.java``): the catalog's calls, answered by the bridge
worker's ``catalog`` op through the lance-ns namespace its properties name.

    spark.sql.catalog.lake        lancens.spark.LanceCatalog
    spark.sql.catalog.lake.impl   dir            (any lance-ns impl alias or module:Class)
    spark.sql.catalog.lake.root   /data/lake     (the impl's properties, no prefix)
    # or: spark.sql.catalog.lake.config = <a named configuration>

Every call takes the catalog's properties (``catalog``); :func:`catalog_config`
turns them into a lance-ns connection, cached per configuration and process
(:func:`.table.cached_namespace`), so the catalog and the tables it hands out
(whose reads and writes resolve the same configuration) share it.  Failures
are lance_ns errors; the JVM maps their codes to Spark's exceptions and keeps
the code in the message.
"""

from __future__ import annotations

import datetime
import json
from typing import Any, Mapping

import pyarrow as pa

from .errors import error
from .options import prefixed_config
from .resolve import cached_namespace

#: catalog properties that are not the namespace's (Spark's and ours)
CONFIG_KEY = "config"
IMPL_KEY = "impl"
#: table properties Spark reserves and shows in DESCRIBE TABLE EXTENDED
PROVIDER = "lance"


def catalog_config(properties: Mapping[str, str]) -> dict[str, str]:
    """The flat namespace config of a catalog's properties: ``config=<named
    configuration>``, or ``impl`` with the impl's properties written without
    its prefix (``root``, ``uri``, ``storage.*``), as named configurations
    write them."""
    props = {str(k): str(v) for k, v in properties.items()}
    named = props.pop(CONFIG_KEY, None)
    if named:
        from .options import _named_config

        config = _named_config(named)
        if props.get(IMPL_KEY) not in (None, config["impl"]):
            raise error("InvalidInputError", f"catalog sets both config={named!r} and a different impl")
        props.pop(IMPL_KEY, None)
        return {**config, **prefixed_config(config["impl"], props)}
    impl = props.pop(IMPL_KEY, None)
    if not impl:
        raise error(
            "InvalidInputError",
            "a lance catalog needs spark.sql.catalog.<name>.impl (dir, rest, hive, glue, ...) "
            "or spark.sql.catalog.<name>.config (a named configuration)",
        )
    return prefixed_config(impl, props)


def _ns(catalog: Mapping[str, str]):
    return cached_namespace(catalog_config(catalog))


def _request(method: str, **fields: Any):
    from ..base import OPERATIONS

    return OPERATIONS[method].request(**fields)


def _all(ns, method: str, items: str, parent: list[str]) -> list[str]:
    from ..walk import every_page

    return every_page(ns, method, items, parent)


# ------------------------------------------------------------------ namespaces


def list_namespaces(catalog, namespace: list[str]) -> dict:
    ns = _ns(catalog)
    if namespace:
        ns.describe_namespace(_request("describe_namespace", id=namespace))  # NoSuchNamespace, not []
    return {"namespaces": [namespace + [n] for n in _all(ns, "list_namespaces", "namespaces", namespace)]}


def namespace_metadata(catalog, namespace: list[str]) -> dict:
    resp = _ns(catalog).describe_namespace(_request("describe_namespace", id=namespace))
    return {"properties": dict(resp.properties or {})}


def create_namespace(catalog, namespace: list[str], properties: Mapping[str, str]) -> dict:
    _ns(catalog).create_namespace(_request("create_namespace", id=namespace, properties=dict(properties) or None))
    return {}


def drop_namespace(catalog, namespace: list[str], cascade: bool) -> dict:
    """Spark's DROP NAMESPACE: without CASCADE a non-empty namespace is
    refused (code 3, Spark's NonEmptyNamespaceException); with it, every
    table and namespace below is dropped, by the backend's own Cascade where
    it has one, else one by one (each table with the namespace's drop
    semantics: data it does not own is kept)."""
    from ..errors import NamespaceNotFoundError, UnsupportedOperationError

    ns = _ns(catalog)
    try:
        if not cascade:
            ns.drop_namespace(_request("drop_namespace", id=namespace, behavior="Restrict"))
            return {"dropped": True}
        try:
            ns.drop_namespace(_request("drop_namespace", id=namespace, behavior="Cascade"))
        except UnsupportedOperationError:
            from ..walk import drop_tree

            drop_tree(ns, namespace)
    except NamespaceNotFoundError:
        return {"dropped": False}
    return {"dropped": True}


# ---------------------------------------------------------------------- tables


def list_tables(catalog, namespace: list[str]) -> dict:
    ns = _ns(catalog)
    ns.describe_namespace(_request("describe_namespace", id=namespace))  # NoSuchNamespace, not []
    return {"tables": _all(ns, "list_tables", "tables", namespace)}


def _delimiter(table_id: list[str]) -> str:
    """A delimiter no part of the identifier contains (the read and write
    path take the identifier as one string)."""
    for d in (".", "/", "\x1f"):
        if not any(d in part for part in table_id):
            return d
    raise error("InvalidInputError", f"table identifier {table_id} cannot be addressed")


def table_options(catalog, table_id: list[str], version: int | None = None) -> dict[str, str]:
    """The ``lance`` source options that address the table: the read and
    write paths resolve it through the same namespace configuration."""
    d = _delimiter(table_id)
    options = {**catalog_config(catalog), "table": d.join(table_id), "delimiter": d}
    if version is not None:
        options["version"] = str(version)
    return options


def _version_at(ds, timestamp_us: int) -> int:
    """The table's version current at ``timestamp_us`` (Spark's TIMESTAMP AS OF)."""
    at = datetime.datetime.fromtimestamp(timestamp_us / 1e6, tz=datetime.timezone.utc)
    found = None
    for v in ds.versions():
        ts = v["timestamp"]
        ts = ts if ts.tzinfo else ts.replace(tzinfo=datetime.timezone.utc)
        if ts <= at and (found is None or v["version"] > found):
            found = v["version"]
    if found is None:
        raise error("TableVersionNotFoundError", f"the table has no version at or before {at.isoformat()}")
    return found


def load_table(catalog, table: list[str], version: str | None = None, timestamp: int | None = None) -> dict:
    """What ``loadTable`` needs: the Spark schema (at ``version`` or at the
    version current at ``timestamp``, microseconds), the options reads and
    writes use, and the properties DESCRIBE TABLE EXTENDED shows.  Without a
    time travel nothing is pinned: each query plans at the latest version."""
    from .schema import spark_schema
    from .resolve import resolve

    from ..datasets import translated

    options = table_options(catalog, table)
    ref, _ = resolve(options)
    resp = _ns(catalog).describe_table(_request("describe_table", id=table))
    with translated(ref.uri):
        ds = ref.open()
        pinned = None
        if version is not None:
            pinned = int(version) if version.isdigit() else ds.tags.get_version(version)  # a tag's name
        elif timestamp is not None:
            pinned = _version_at(ds, timestamp)
    if pinned is not None:
        try:
            ds = ds.checkout_version(pinned)
        except (ValueError, OSError) as exc:  # the table exists: its version does not
            raise error("TableVersionNotFoundError", f"table {table} has no version {pinned}") from exc
    properties = {"provider": PROVIDER, "location": ref.uri, **(resp.properties or {})}
    properties["lance.version"] = str(ds.version)
    return {
        "schema": spark_schema(ds.schema).json(),
        "options": table_options(catalog, table, pinned),
        "properties": properties,
    }


def create_table(catalog, table: list[str], schema: str, properties: Mapping[str, str]) -> dict:
    """CREATE TABLE: an empty Lance table of the Spark schema, created through
    the namespace (CreateTable) with the TBLPROPERTIES as table properties."""
    from pyspark.sql.types import StructType

    from .schema import arrow_target, vector_columns

    target = vector_columns(arrow_target(StructType.fromJson(json.loads(schema))), properties)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, target) as writer:
        writer.write_table(target.empty_table())
    props = entry_properties(properties)
    _ns(catalog).create_table(_request("create_table", id=table, properties=props or None), sink.getvalue().to_pybytes())
    return load_table(catalog, table)


#: table properties Spark sets itself, which the namespace's entry does not keep
SPARK_RESERVED = ("provider", "location", "owner")


def entry_properties(properties: Mapping[str, str]) -> dict[str, str]:
    """The TBLPROPERTIES a table's entry keeps."""
    return {k: v for k, v in properties.items() if k not in SPARK_RESERVED}


# ---------------------------------------------------------- staged CTAS / RTAS


def stage_table(catalog, table: list[str], schema: str, properties: Mapping[str, str], mode: str) -> dict:
    """stageCreate / stageReplace / stageCreateOrReplace (``mode`` create, replace,
    create_or_replace): see :mod:`.staging`."""
    from . import staging

    return staging.stage(_ns(catalog), table, entry_properties(properties), staging.Mode(mode),
                         table_options(catalog, table))


def commit_staged(catalog, table: list[str], stage: dict) -> dict:
    """commitStagedChanges of a staged table: its job's commit made, the table's entry with it."""
    from . import staging

    staging.commit(_ns(catalog), staging.Stage.of(stage), table_options(catalog, table))
    return {}


def abort_staged(catalog, table: list[str], stage: dict) -> dict:
    """abortStagedChanges of a staged table: its job's files deleted, nothing in the namespace."""
    from . import staging

    staging.abort(staging.Stage.of(stage))
    return {}


def drop_table(catalog, table: list[str], purge: bool) -> dict:
    """DROP TABLE [PURGE]: the namespace's drop (it deletes data at the
    locations it owns); PURGE also deletes the data of a registered table."""
    from ..catalog.entry import PURGE_CONTEXT_KEY
    from ..errors import TableNotFoundError

    context = {PURGE_CONTEXT_KEY: "true"} if purge else None
    try:
        _ns(catalog).drop_table(_request("drop_table", id=table, context=context))
    except TableNotFoundError:
        return {"dropped": False}
    return {"dropped": True}


def rename_table(catalog, table: list[str], to: list[str]) -> dict:
    _ns(catalog).rename_table(_request("rename_table", id=table, new_table_name=to[-1], new_namespace_id=to[:-1]))
    return {}


#: Spark's JSON type names -> the SQL type an added column is cast to
_SQL_TYPES = {
    "boolean": "BOOLEAN", "byte": "TINYINT", "short": "SMALLINT", "integer": "INT", "long": "BIGINT",
    "float": "FLOAT", "double": "DOUBLE", "string": "STRING", "binary": "BINARY", "date": "DATE",
}


def alter_table(catalog, table: list[str], changes: list[dict]) -> dict:
    """ALTER TABLE: ADD COLUMN (a new all-null column of its type), DROP
    COLUMN, RENAME COLUMN, through the namespace's AlterTable* operations."""
    ns = _ns(catalog)
    for change in changes:
        kind = change["type"]
        if kind == "add":
            spark_type = json.loads(change["dataType"])  # DataType.json(): "integer", or an object
            sql_type = _SQL_TYPES.get(spark_type) if isinstance(spark_type, str) else None
            if sql_type is None:
                raise error("InvalidInputError", f"ADD COLUMN of type {change['dataType']} is not supported")
            entry = {"name": change["name"], "expression": f"CAST(NULL AS {sql_type})"}
            ns.alter_table_add_columns(_request("alter_table_add_columns", id=table, new_columns=[entry]))
        elif kind == "drop":
            ns.alter_table_drop_columns(_request("alter_table_drop_columns", id=table, columns=[change["name"]]))
        elif kind == "rename":
            entry = {"path": change["name"], "rename": change["newName"]}
            ns.alter_table_alter_columns(_request("alter_table_alter_columns", id=table, alterations=[entry]))
        else:
            raise error("UnsupportedOperationError", f"ALTER TABLE {kind} is not supported by the lance catalog")
    return load_table(catalog, table)


def delete_where(catalog, table: list[str], predicate: str) -> dict:
    """DELETE FROM ... WHERE, as one Lance delete (DeleteFromTable)."""
    _ns(catalog).delete_from_table(_request("delete_from_table", id=table, predicate=predicate))
    return {}


def statement(catalog, command: str, table: list[str], args: dict) -> dict:
    """A statement of the SQL extension (OPTIMIZE, VACUUM, CREATE INDEX, ...; :mod:`.commands`):
    its result columns (Spark DDL) and rows."""
    from . import commands

    return commands.run(_ns(catalog), command, table, args)


def search_schema(catalog, kind: str, table: list[str], args: dict) -> dict:
    """The result columns of a search table function (:mod:`.search`), its arguments checked
    against the table at the version searched."""
    from . import search
    from .resolve import resolve

    from ..datasets import translated

    ref, _ = resolve(table_options(catalog, table))
    with translated(ref.uri):
        ds = ref.open(args.get("version"))
    return {"schema": search.result_schema(ds, kind, args).json()}


CALLS = {
    f.__name__: f
    for f in (
        list_namespaces, namespace_metadata, create_namespace, drop_namespace, list_tables, load_table,
        create_table, drop_table, rename_table, alter_table, delete_where, statement, search_schema,
        stage_table, commit_staged, abort_staged,
    )
}


def call(request: dict) -> dict:
    """The worker's ``catalog`` op: ``{"call", "catalog", "args"}``."""
    fn = CALLS.get(request.get("call"))
    if fn is None:
        raise error("InvalidInputError", f"unknown catalog call {request.get('call')!r}")
    return fn(request["catalog"], **request.get("args", {}))
