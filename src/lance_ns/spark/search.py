"""``VECTOR_SEARCH`` and ``SEARCH``, the table functions of the lance SQL extension
(``bridge/LanceSqlExtensions.java``): their arguments, checked, run as the namespace's
QueryTable (so that they answer through ``lance-ns serve`` as directly), with
lance-spark's result columns.

* ``VECTOR_SEARCH(table, query_vector [, k])``, or by name: ``query_vector`` (one vector, or
  an array of them: then a ``query_index`` column comes first), ``vector_column``,
  ``num_results``/``limit``/``k`` (10), ``distance_type``, ``columns``, ``filter``,
  ``offset``, ``version``, ``nprobes``, ``ef``, ``refine_factor``, ``lower_bound``,
  ``upper_bound``, ``bypass_vector_index``, ``fast_search``, ``prefilter``,
  ``with_row_id``; rows carry ``_distance``.
* ``SEARCH(table, query [, k])``, or by name: ``query``/``search_query``,
  ``search_columns``, ``num_results``/``limit``/``k``, ``columns``, ``filter``, ``offset``,
  ``version``, ``with_row_id``; rows carry ``_score``.

Rows come as Lance ranks them; order by ``_distance`` / ``_score DESC`` in SQL.
"""

from __future__ import annotations

from typing import Any, Iterator

import pyarrow as pa

from ..dataops import first_vector_column
from ..datasets import ipc_to_table
from . import full_text
from .commands import DISTANCE_TYPES
from .errors import error

VECTOR, TEXT = "vector_search", "search"
_COMMON = {"table", "num_results", "limit", "k", "columns", "filter", "offset", "version", "with_row_id"}
ARGUMENTS = {
    VECTOR: _COMMON | {"query_vector", "vector_column", "distance_type", "nprobes", "ef", "refine_factor",
                       "lower_bound", "upper_bound", "bypass_vector_index", "fast_search", "prefilter"},
    TEXT: _COMMON | {"query", "search_query", "search_columns"},
}
#: the column a search adds (a float)
_SCORE = {VECTOR: "_distance", TEXT: "_score"}
_QUERY_INDEX = "query_index"


def _checked(kind: str, args: dict[str, Any]) -> dict[str, Any]:
    if kind not in ARGUMENTS:
        raise error("InvalidInputError", f"unknown search function {kind!r}")
    given = {str(k).lower(): v for k, v in args.items()}
    unknown = sorted(set(given) - ARGUMENTS[kind])
    if unknown:
        raise error("InvalidInputError", f"{kind.upper()} takes no argument {', '.join(unknown)}")
    k = next((given[n] for n in ("num_results", "limit", "k") if given.get(n) is not None), 10)
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise error("InvalidInputError", f"{kind.upper()}'s num_results must be a positive integer, got {k!r}")
    given["k"] = k
    if kind == VECTOR:
        vector = given.get("query_vector")
        if not isinstance(vector, list) or not vector:
            raise error("InvalidInputError", "VECTOR_SEARCH requires query_vector (an array of numbers, or of arrays)")
        batch = isinstance(vector[0], list)
        vectors = vector if batch else [vector]
        if any(not v or any(not isinstance(x, (int, float)) or isinstance(x, bool) for x in v) for v in vectors):
            raise error("InvalidInputError", "query_vector must hold numbers (or arrays of numbers)")
        if len({len(v) for v in vectors}) != 1:
            raise error("InvalidInputError", "every query vector of a batch must have one dimension")
        if batch and given.get("offset"):
            raise error("InvalidInputError", "VECTOR_SEARCH with a batch of query vectors takes no offset")
        given["vectors"], given["batch"] = [[float(x) for x in v] for v in vectors], batch
    else:
        query = given.get("query", given.get("search_query"))
        if not isinstance(query, str) or not query:
            raise error("InvalidInputError", "SEARCH requires query (a string)")
        given["query"] = query
    return given


def _columns(ds, given: dict, kind: str) -> list[str]:
    names = [f.name for f in ds.schema]
    wanted = given.get("columns")
    if wanted in (None, [], ["*"]):
        return names
    by_lower = {n.lower(): n for n in names}
    out = []
    for c in wanted:
        if c.lower() in (_SCORE[kind], "_rowid"):
            continue
        if c.lower() not in by_lower:
            raise error("InvalidInputError", f"Unknown column {c!r}")
        out.append(by_lower[c.lower()])
    return out


def result_schema(ds, kind: str, args: dict[str, Any]):
    """The Spark schema of a search's rows (``ds``: the table at the version searched)."""
    from pyspark.sql.types import FloatType, IntegerType, LongType, StructField, StructType

    from .schema import spark_schema

    given = _checked(kind, args)
    columns = _columns(ds, given, kind)
    if kind == VECTOR:
        column = given.get("vector_column") or first_vector_column(ds)
        if column not in ds.schema.names:
            raise error("InvalidInputError", f"Unknown column {column!r}")
        if given["batch"] and _QUERY_INDEX in ds.schema.names:
            raise error("InvalidInputError", f"the table has a column {_QUERY_INDEX}: a batch search cannot add it")
    elif not full_text.indexed_columns(ds):
        raise error("InvalidInputError", "SEARCH needs a full-text index on the table "
                                         "(ALTER TABLE ... CREATE INDEX name USING fts (column))")
    table = spark_schema(pa.schema([ds.schema.field(c) for c in columns]))
    fields = list(table.fields)
    fields.append(StructField(_SCORE[kind], FloatType(), True))
    if given.get("with_row_id") or "_rowid" in [c.lower() for c in given.get("columns") or []]:
        fields.append(StructField("_rowid", LongType(), True))
    if kind == VECTOR and given["batch"]:
        fields.insert(0, StructField(_QUERY_INDEX, IntegerType(), False))
    return StructType(fields)


def _request(kind: str, table: list[str], given: dict, columns: list[str], vector: list[float] | None):
    from ..base import OPERATIONS

    fields: dict[str, Any] = {"id": table, "k": given["k"], "columns": {"column_names": columns}}
    for name in ("filter", "offset", "version", "with_row_id"):
        if given.get(name) is not None:
            fields[name] = given[name]
    if kind == VECTOR:
        fields["vector"] = {"single_vector": vector}
        for name in ("vector_column", "distance_type", "nprobes", "ef", "refine_factor", "lower_bound",
                     "upper_bound", "bypass_vector_index", "fast_search", "prefilter"):
            if given.get(name) is not None:
                fields[name] = given[name]
        if fields.get("distance_type"):  # lance-spark's spellings (euclidean: l2); others as given, for Lance to judge
            given_type = str(fields["distance_type"]).lower()
            fields["distance_type"] = DISTANCE_TYPES.get(given_type, given_type)
    else:
        fields["vector"] = {}  # the protocol's QueryTable always carries one; empty: no vector search
        fields["full_text_query"] = {"string_query": {"query": given["query"],
                                                      **({"columns": given["search_columns"]}
                                                         if given.get("search_columns") else {})}}
    return OPERATIONS["query_table"].request(**fields)


def batches(ns, kind: str, table: list[str], args: dict[str, Any], target: pa.Schema) -> Iterator[pa.RecordBatch]:
    """The search's rows, through the namespace's QueryTable, in exactly ``target``'s types."""
    from .planning import conform

    given = _checked(kind, args)
    names = [f.name for f in target if f.name not in (_QUERY_INDEX, _SCORE[kind], "_rowid")]
    vectors = given["vectors"] if kind == VECTOR else [None]
    for index, vector in enumerate(vectors):
        answer = ns.query_table(_request(kind, table, given, names, vector))
        found = ipc_to_table(answer if isinstance(answer, (bytes, bytearray)) else answer.data)
        if kind == VECTOR and given["batch"]:
            found = found.add_column(0, _QUERY_INDEX, pa.array([index] * found.num_rows, pa.int32()))
        found = found.select([f.name for f in target])
        for batch in found.to_batches():
            if batch.num_rows:
                yield conform(batch, target)

