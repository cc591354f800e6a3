"""Expose a namespace's tables to Spark SQL as temporary views.

There is no Python catalog hook in Spark (``spark.sql.catalog.*`` needs a JVM
class), so each table becomes ``CREATE TEMPORARY VIEW ... USING lance
OPTIONS (...)``: such views keep their options and support ``SELECT``,
joins, ``INSERT INTO`` and ``INSERT OVERWRITE``; every query sees the
table's latest version.
"""

from __future__ import annotations

from typing import Callable, Mapping

from .options import SourceOptions
from .resolve import cached_namespace


def _sql_string(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _list_tables(ns, ns_id: list[str], recursive: bool) -> list[list[str]]:
    from lance_namespace import ListNamespacesRequest, ListTablesRequest

    found, token = [], None
    while True:
        resp = ns.list_tables(ListTablesRequest(id=ns_id, page_token=token))
        found.extend(ns_id + [t] for t in resp.tables)
        token = resp.page_token
        if not token:
            break
    if recursive:
        token = None
        while True:
            resp = ns.list_namespaces(ListNamespacesRequest(id=ns_id, page_token=token))
            for child in resp.namespaces:
                found.extend(_list_tables(ns, ns_id + [child], True))
            token = resp.page_token
            if not token:
                break
    return sorted(found)


def register_views(
    spark,
    options: Mapping[str, str],
    namespace: str | list[str] | None = None,
    *,
    recursive: bool = False,
    view_name: Callable[[list[str]], str] | None = None,
) -> dict[str, list[str]]:
    """Create a temporary view for every table of ``namespace``.

    ``options`` configure the namespace (``{"impl": "dir", "dir.root": ...}``)
    and may carry read options.  Views are named by ``view_name(rel_id)``,
    default: the identifier relative to ``namespace`` joined by ``_``.
    Returns view name -> table identifier.
    """
    from ..identifiers import parse_id
    from .datasource import register

    parsed = SourceOptions.parse(options)
    if parsed.ns_config is None:
        raise ValueError("register_views needs a namespace: give 'impl' (or 'namespace') in options")
    delimiter = parsed.delimiter
    ns_id = parse_id(namespace, delimiter)
    ns = cached_namespace(parsed.ns_config)
    jvm = register(spark)
    name_of = view_name or (lambda rel: "_".join(rel))
    views = {}
    for table_id in _list_tables(ns, ns_id, recursive):
        name = name_of(table_id[len(ns_id) :])
        opts = {k: v for k, v in dict(options).items() if k not in ("table", "path")}
        opts["table"] = delimiter.join(table_id)
        opts["delimiter"] = delimiter
        # a view is one table object for many queries: each query reads the
        # latest version (readLatest, same meaning on both read paths).  The
        # Python source's planned read is also reused by Spark across queries,
        # so there Spark applies the filters (see LanceReader for the Spark
        # 4.3 caching); the JVM path plans every query and may push them.
        opts.setdefault("readLatest", "true")
        if not jvm:
            opts["pushFilters"] = "false"
        rendered = ", ".join(f"{_sql_string(k)} {_sql_string(str(v))}" for k, v in opts.items())
        spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW `{name.replace('`', '``')}` USING lance OPTIONS ({rendered})")
        views[name] = table_id
    return views
