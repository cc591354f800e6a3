"""The statements of the lance SQL extension (``bridge/LanceSqlExtensions.java``), run by
the bridge worker through the namespace the catalog's properties name.

Each statement is an operation of the namespace where the specification has one
(CreateTableIndex, DropTableIndex, the tag and branch operations, UpdateFieldMetadata), or
pylance on the table opened through the namespace, so that its commit goes through the
namespace as every write does (OPTIMIZE's compaction, VACUUM's cleanup, OPTIMIZE and
REFRESH INDEX); the listings read the table as pylance sees it.  The answers are rows with
lance-spark's result columns, so a user who switches connectors keeps their SQL.

``run`` answers ``{"schema": <Spark DDL>, "rows": [[...], ...]}``; bad input is a lance_ns
error with its code (13 for an unknown option, an index type that does not fit), raised
before anything is written.
"""

from __future__ import annotations

import datetime
from typing import Any, Callable

from .errors import error

#: SQL index method -> the index type of CreateTableIndex
INDEX_METHODS = {
    "btree": "BTREE", "bitmap": "BITMAP", "label_list": "LABEL_LIST", "fts": "INVERTED", "inverted": "INVERTED",
    "ngram": "NGRAM", "zonemap": "ZONEMAP", "bloomfilter": "BLOOMFILTER",
    "ivf_flat": "IVF_FLAT", "ivf_pq": "IVF_PQ", "ivf_sq": "IVF_SQ", "ivf_hnsw_pq": "IVF_HNSW_PQ",
    "ivf_hnsw_sq": "IVF_HNSW_SQ",
}
_VECTOR_OPTIONS = {"num_partitions": "num_partitions", "num_sub_vectors": "num_sub_vectors", "num_bits": "num_bits",
                   "sample_rate": "sample_rate", "max_iters": "max_iterations", "m": "m",
                   "ef_construction": "ef_construction", "distance_type": "distance_type",
                   "target_partition_size": "target_partition_size"}
_FTS_OPTIONS = {k: k for k in ("base_tokenizer", "language", "max_token_length", "lower_case", "stem",
                               "remove_stop_words", "ascii_folding", "with_position")}
#: WITH options accepted and left to Lance: how many pieces a build is split into (Lance decides)
_BUILD_HINTS = frozenset({"num_segments"})
#: the distance types lance-spark's SQL takes, as Lance names them
DISTANCE_TYPES = {"l2": "l2", "euclidean": "l2", "cosine": "cosine", "dot": "dot"}
_COMPACTION = ("target_rows_per_fragment", "max_rows_per_group", "max_bytes_per_file", "materialize_deletions",
               "materialize_deletions_threshold", "defer_index_remap", "num_threads", "batch_size",
               "max_source_fragments", "max_source_rows", "max_source_bytes")
_PRIMARY_KEY = "lance-schema:unenforced-primary-key"
ROW_ADDRESS = "_rowaddr"


def _request(method: str, **fields: Any):
    from ..base import OPERATIONS

    return OPERATIONS[method].request(**fields)


def _dataset(ns, table: list[str]):
    """The table as pylance opens it through the namespace: its commits go through the
    namespace (an implementation-managed table's versions are the namespace's)."""
    import lance

    from ..datasets import translated

    with translated(".".join(table)):
        return lance.dataset(namespace_client=ns, table_id=list(table))


def _options(options: dict[str, Any], accepted, what: str) -> dict[str, Any]:
    """``options`` with lower-cased names (lance-spark matches them so), refused with code 13
    when one is not among ``accepted``."""
    given = {str(k).lower(): v for k, v in (options or {}).items()}
    unknown = sorted(set(given) - set(accepted))
    if unknown:
        raise error("InvalidInputError", f"{what} takes no option {', '.join(unknown)} "
                                         f"(it takes {', '.join(sorted(accepted)) or 'none'})")
    return given


def _indexed_fragments(ds, name: str) -> int:
    for description in ds.describe_indices():
        if description.name == name:
            return len({f for segment in description.segments for f in segment.fragment_ids})
    return 0


def _segments(ds, name: str) -> int:
    return sum(len(d.segments) for d in ds.describe_indices() if d.name == name)


def _require_index(ds, name: str) -> None:
    if not any(d.name == name for d in ds.describe_indices()):
        raise error("TableIndexNotFoundError", f"the table has no index {name!r}")


# -- indexes --------------------------------------------------------------------------


def create_index(ns, table, name: str, method: str, columns: list[str], options: dict) -> tuple:
    kind = INDEX_METHODS.get(method.lower())
    if kind is None:
        hint = " (HNSW needs PQ or SQ: ivf_hnsw_pq, ivf_hnsw_sq)" if method.lower() == "ivf_hnsw_flat" else ""
        raise error("InvalidInputError", f"unknown index method {method!r}{hint}; the methods are "
                                         f"{', '.join(sorted(INDEX_METHODS))}")
    if len(columns) != 1:
        raise error("InvalidInputError", f"an index of method {method} takes exactly one column, not {len(columns)}")
    names = _VECTOR_OPTIONS if kind.startswith("IVF") else _FTS_OPTIONS if kind == "INVERTED" else {}
    given = _options(options, set(names) | _BUILD_HINTS, f"CREATE INDEX ... USING {method}")
    fields = {names[k]: v for k, v in given.items() if k in names}
    if "distance_type" in fields:
        distance = DISTANCE_TYPES.get(str(fields["distance_type"]).lower())
        if distance is None:
            raise error("InvalidInputError", f"distance_type must be one of {', '.join(DISTANCE_TYPES)}")
        fields["distance_type"] = distance
    ns.create_table_index(_request("create_table_index", id=table, column=columns[0], index_type=kind, name=name,
                                   **fields))
    return [[_indexed_fragments(_dataset(ns, table), name), name]]


def drop_index(ns, table, name: str) -> list:
    ns.drop_table_index(_request("drop_table_index", id=table, index_name=name))
    return [[name, "dropped"]]


def show_indexes(ns, table) -> list:
    ds = _dataset(ns, table)
    types = {i["name"]: str(i.get("type", "")).lower() for i in ds.list_indices()}
    rows = []
    for d in sorted(ds.describe_indices(), key=lambda d: d.name):
        stats = ds.stats.index_stats(d.name)
        rows.append([d.name, list(d.field_names), types.get(d.name) or str(stats.get("index_type", "")).lower(),
                     stats.get("num_indexed_fragments"), stats.get("num_indexed_rows"),
                     stats.get("num_unindexed_fragments"), stats.get("num_unindexed_rows")])
    return rows


def optimize_index(ns, table, name: str, options: dict) -> list:
    given = _options(options, {"num_indices_to_merge", "retrain"}, "OPTIMIZE INDEX")
    ds = _dataset(ns, table)
    _require_index(ds, name)
    before = _segments(ds, name)
    ds.optimize.optimize_indices(index_names=[name], **given)
    ds = _dataset(ns, table)
    return [[name, _indexed_fragments(ds, name), before, _segments(ds, name)]]


def refresh_index(ns, table, name: str, options: dict) -> list:
    """New data indexed into new segments, the existing ones left as they are."""
    _options(options, _BUILD_HINTS, "REFRESH INDEX")
    ds = _dataset(ns, table)
    _require_index(ds, name)
    covered, before = _indexed_fragments(ds, name), _segments(ds, name)
    unindexed = ds.stats.index_stats(name).get("num_unindexed_fragments") or 0
    if unindexed:  # nothing new: no version is committed
        ds.optimize.optimize_indices(index_names=[name], num_indices_to_merge=0)
        ds = _dataset(ns, table)
    return [[_indexed_fragments(ds, name) - covered, _segments(ds, name) - before, name]]


# -- table maintenance ----------------------------------------------------------------


def optimize(ns, table, options: dict) -> list:
    given = _options(options, set(_COMPACTION), "OPTIMIZE")
    metrics = _dataset(ns, table).optimize.compact_files(**given)
    return [[metrics.fragments_removed, metrics.fragments_added, metrics.files_removed, metrics.files_added]]


def vacuum(ns, table, options: dict) -> list:
    """Old versions removed, tagged ones kept (``error_if_tagged_old_versions`` false unless
    asked): ``before_version`` keeps the versions from it on, ``before_timestamp_millis`` those
    made since; without either, Lance's default (versions older than two weeks)."""
    given = _options(options, {"before_version", "before_timestamp_millis", "delete_unverified",
                               "error_if_tagged_old_versions"}, "VACUUM")
    ds = _dataset(ns, table)
    kwargs: dict[str, Any] = {"delete_unverified": bool(given.get("delete_unverified", False)),
                              "error_if_tagged_old_versions": bool(given.get("error_if_tagged_old_versions", False))}
    if "before_version" in given:
        kwargs["retain_versions"] = max(1, ds.latest_version - int(given["before_version"]) + 1)
        kwargs["older_than"] = datetime.timedelta(0)
    if "before_timestamp_millis" in given:
        at = datetime.datetime.fromtimestamp(int(given["before_timestamp_millis"]) / 1000, tz=datetime.timezone.utc)
        kwargs["older_than"] = max(datetime.timedelta(0), datetime.datetime.now(datetime.timezone.utc) - at)
    stats = ds.cleanup_old_versions(**kwargs)
    return [[stats.bytes_removed, stats.old_versions]]


def set_primary_key(ns, table, columns: list[str]) -> list:
    """The unenforced primary key, written once: each column's field metadata marks it and
    its 1-based position (Lance's own keys), through UpdateFieldMetadata."""
    if not columns or len(set(columns)) != len(columns):
        raise error("InvalidInputError", "SET UNENFORCED PRIMARY KEY needs distinct columns")
    ds = _dataset(ns, table)
    for field in ds.schema:
        if (field.metadata or {}).get(_PRIMARY_KEY.encode()):
            raise error("InvalidInputError", "the table has a primary key already (it is set once)")
    by_name = {f.name: f for f in ds.schema}
    for column in columns:
        field = by_name.get(column)
        if field is None:
            raise error("InvalidInputError", f"the table has no column {column!r}")
        if field.nullable:
            raise error("InvalidInputError", f"column {column!r} is nullable: a primary key column is NOT NULL")
    updates = [{"path": c, "metadata": {_PRIMARY_KEY: "true", f"{_PRIMARY_KEY}:position": str(i)}}
               for i, c in enumerate(columns, 1)]
    ns.update_field_metadata(_request("update_field_metadata", id=table, updates=updates))
    return [["OK", ",".join(columns)]]


# -- backfill: ADD|UPDATE COLUMNS ... FROM view -----------------------------------------


def _source_rows(source: str, schema: str, rows: list[str]) -> "pa.Table":
    """The view's rows (JSON lines, as Spark's toJSON writes them) in its columns' Arrow types."""
    import json

    import pyarrow as pa
    from pyspark.sql.types import StructType

    from .schema import arrow_target

    # nullable: rows the source does not name get no value (Lance's join fills them with null)
    target = pa.schema([f.with_nullable(f.name != ROW_ADDRESS)
                        for f in arrow_target(StructType.fromJson(json.loads(schema)))])
    records = [json.loads(r) for r in rows]
    arrays = []
    for field in target:
        values = [r.get(field.name) for r in records]
        if pa.types.is_timestamp(field.type) or pa.types.is_date(field.type):
            arrays.append(pa.array(values, pa.string()).cast(field.type))  # Spark writes them as ISO text
        elif pa.types.is_binary(field.type):
            import base64

            arrays.append(pa.array([None if v is None else base64.b64decode(v) for v in values], field.type))
        else:
            arrays.append(pa.array(values, field.type))
    data = pa.Table.from_arrays(arrays, schema=target)
    if data.column(ROW_ADDRESS).null_count:
        raise error("InvalidInputError", f"{source}'s _rowaddr has nulls: every row must name the row it fills")
    # Spark's BIGINT is Lance's unsigned row address
    return data.set_column(data.schema.get_field_index(ROW_ADDRESS), ROW_ADDRESS,
                           data.column(ROW_ADDRESS).cast(pa.uint64()))


def _per_fragment(ds, data, source: str):
    """(fragment, the source's rows of it) for each fragment of ``ds``."""
    import pyarrow.compute as pc

    fragment_of = pc.shift_right(data.column(ROW_ADDRESS), 32)
    known = {f.fragment_id for f in ds.get_fragments()}
    stray = sorted(set(fragment_of.to_pylist()) - known)
    if stray:
        raise error("InvalidInputError", f"{source} names rows of fragments {stray[:5]} the table does not have")
    for fragment in ds.get_fragments():
        yield fragment, data.filter(pc.equal(fragment_of, fragment.fragment_id))


def _commit(table, ds, operation) -> None:
    import lance

    from ..datasets import translated

    with translated(".".join(table)):
        lance.LanceDataset.commit(ds, operation, read_version=ds.version)


def add_columns(ns, table, columns: list[str], source: str, schema: str, rows: list[str]) -> list:
    """New columns, each row's value from the source's row of its address (null where the
    source has none), in one commit that rewrites no existing data file."""
    import lance
    import pyarrow as pa

    ds = _dataset(ns, table)
    taken = sorted(set(columns) & set(ds.schema.names))
    if taken:
        raise error("InvalidInputError", f"the table has columns {taken} already (UPDATE COLUMNS changes them)")
    data = _source_rows(source, schema, rows)
    merged, new_schema = [], None
    for fragment, part in _per_fragment(ds, data, source):
        if not part.num_rows:  # Lance's join takes no empty side: one row of an address no row has
            nobody = pa.array([(fragment.fragment_id << 32) | 0xFFFFFFFF], pa.uint64())
            part = pa.Table.from_arrays([nobody] + [pa.nulls(1, f.type) for f in part.schema][1:], schema=part.schema)
        metadata, new_schema = fragment.merge(part, left_on=ROW_ADDRESS)
        merged.append(metadata)
    _commit(table, ds, lance.LanceOperation.Merge(merged, new_schema))
    return []


def update_columns(ns, table, columns: list[str], source: str, schema: str, rows: list[str]) -> list:
    """Existing columns' values replaced where the source has the row's address (other rows
    keep theirs), in one commit."""
    import lance

    ds = _dataset(ns, table)
    missing = sorted(set(columns) - set(ds.schema.names))
    if missing:
        raise error("InvalidInputError", f"the table has no columns {missing} (ADD COLUMNS makes them)")
    data = _source_rows(source, schema, rows)
    # the fields whose values change: Lance drops them from the indexes that cover them
    field_ids = [f.id() for f in ds.lance_schema.fields() if f.name() in columns]
    updated = []
    for fragment, part in _per_fragment(ds, data, source):
        if part.num_rows:
            metadata, _ = fragment.update_columns(part, left_on=ROW_ADDRESS)
            updated.append(metadata)
    if updated:
        _commit(table, ds, lance.LanceOperation.Update(updated_fragments=updated, fields_modified=field_ids))
    return []


# -- tags and branches ----------------------------------------------------------------


def _as_of(ns, table, as_of: dict | None) -> tuple[int | None, str | None]:
    """(version, branch) of AS OF VERSION n | BRANCH b [VERSION n] | TAG t; the latest of main without."""
    as_of = as_of or {}
    if as_of.get("tag"):
        answer = ns.get_table_tag_version(_request("get_table_tag_version", id=table, tag=as_of["tag"]))
        return answer.version, None
    version = as_of.get("version")
    branch = as_of.get("branch")
    if version is None and branch is None:
        version = _dataset(ns, table).version
    return (int(version) if version is not None else None), branch


def create_tag(ns, table, name: str, if_not_exists: bool = False, as_of: dict | None = None) -> list:
    from ..errors import TableTagAlreadyExistsError

    version, branch = _as_of(ns, table, as_of)
    try:
        ns.create_table_tag(_request("create_table_tag", id=table, tag=name, version=version, branch=branch))
    except TableTagAlreadyExistsError:
        if not if_not_exists:
            raise
    return [[name]]


def drop_tag(ns, table, name: str, if_exists: bool = False) -> list:
    from ..errors import TableTagNotFoundError

    try:
        ns.delete_table_tag(_request("delete_table_tag", id=table, tag=name))
    except TableTagNotFoundError:
        if not if_exists:
            raise
    return [[name]]


def _epoch_seconds(value) -> int | None:
    if value is None:
        return None
    if isinstance(value, datetime.datetime):
        return int(value.timestamp())
    return int(value)


def show_tags(ns, table) -> list:
    tags = _dataset(ns, table).tags.list()
    return [[name, t.get("branch"), t["version"], _epoch_seconds(t.get("created_at")),
             _epoch_seconds(t.get("updated_at")), t.get("manifest_size")] for name, t in sorted(tags.items())]


def create_branch(ns, table, name: str, if_not_exists: bool = False, as_of: dict | None = None) -> list:
    from ..errors import TableBranchAlreadyExistsError

    version, branch = _as_of(ns, table, as_of)
    try:
        ns.create_table_branch(_request("create_table_branch", id=table, name=name, from_branch=branch,
                                        from_version=version))
    except TableBranchAlreadyExistsError:
        if not if_not_exists:
            raise
    return [[name]]


def drop_branch(ns, table, name: str, if_exists: bool = False) -> list:
    from ..errors import TableBranchNotFoundError

    try:
        ns.delete_table_branch(_request("delete_table_branch", id=table, name=name))
    except TableBranchNotFoundError:
        if not if_exists:
            raise
    return [[name]]


def show_branches(ns, table) -> list:
    branches = _dataset(ns, table).branches.list()
    return [[name, b.get("parent_branch"), b.get("parent_version"), _epoch_seconds(b.get("create_at", b.get("created_at"))),
             b.get("manifest_size")] for name, b in sorted(branches.items())]


#: statement -> (its result columns as Spark DDL, what runs it)
COMMANDS: dict[str, tuple[str, Callable[..., list]]] = {
    "create_index": ("fragments_indexed BIGINT, index_name STRING", create_index),
    "drop_index": ("index_name STRING, status STRING", drop_index),
    "show_indexes": ("name STRING, fields ARRAY<STRING>, index_type STRING, num_indexed_fragments BIGINT, "
                     "num_indexed_rows BIGINT, num_unindexed_fragments BIGINT, num_unindexed_rows BIGINT", show_indexes),
    "optimize_index": ("index_name STRING, fragments_indexed BIGINT, segments_before BIGINT, segments_after BIGINT",
                       optimize_index),
    "refresh_index": ("fragments_indexed BIGINT, segments_added BIGINT, index_name STRING", refresh_index),
    "optimize": ("fragments_removed BIGINT, fragments_added BIGINT, files_removed BIGINT, files_added BIGINT", optimize),
    "vacuum": ("bytes_removed BIGINT, old_versions BIGINT", vacuum),
    "set_primary_key": ("status STRING, primary_key_columns STRING", set_primary_key),
    "create_tag": ("name STRING", create_tag),
    "drop_tag": ("name STRING", drop_tag),
    "show_tags": ("name STRING, branch STRING, version BIGINT, created_at BIGINT, updated_at BIGINT, "
                  "manifest_size INT", show_tags),
    "create_branch": ("name STRING", create_branch),
    "drop_branch": ("name STRING", drop_branch),
    "show_branches": ("name STRING, parent_branch STRING, parent_version BIGINT, created_at BIGINT, manifest_size INT",
                      show_branches),
    "add_columns": ("", add_columns),
    "update_columns": ("", update_columns),
}


def run(ns, command: str, table: list[str], args: dict) -> dict:
    """One statement on ``table`` of ``ns``: ``{"schema": DDL, "rows": [...]}``."""
    found = COMMANDS.get(command)
    if found is None:
        raise error("InvalidInputError", f"unknown lance statement {command!r}")
    schema, fn = found
    return {"schema": schema, "rows": fn(ns, list(table), **args)}
