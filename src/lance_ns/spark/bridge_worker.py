"""The Python half of the JVM bridge (``bridge/LanceProvider.java``).

Spark's JVM starts ``python -m lance_ns.spark.bridge_worker`` once per
concurrently running read task and keeps it for the JVM's lifetime; it
answers requests on stdin with replies on stdout (framing in
``bridge/Workers.java``):

``schema``   the Spark schema of a table (options as for the ``lance`` source)
``filters``  which Spark filters become Lance SQL, and that SQL
``plan``     the partitions of a batch read: fragment groups at one version
``read``     one partition, as an Arrow IPC stream in exactly the Arrow types
             Spark's ``ArrowColumnVector`` expects, then a trailer

Errors reply ``{"error": {"type", "code", "message"}}`` with the
:mod:`lance_ns.errors` class and code, or, during a scan, in the trailer.
"""

from __future__ import annotations

import datetime
import json
import os
import struct
import sys
from typing import Any, BinaryIO

import pyarrow as pa

from .errors import error


def _error(exc: BaseException) -> dict[str, Any]:
    """The reply for ``exc``: pylance's plain exceptions become the
    lance_ns error with the closest code (a missing dataset: TableNotFound)."""
    from ..tables import translate

    err = translate(exc)
    return {"error": {"type": type(err).__name__, "code": int(err.code), "message": str(err)}}


def _frame(out: BinaryIO, payload: dict[str, Any]) -> None:
    body = json.dumps(payload).encode()
    out.write(struct.pack(">i", len(body)))
    out.write(body)


# ------------------------------------------------------------------ requests


def schema(request: dict) -> dict:
    from .datasource import LanceDataSource

    return {"schema": LanceDataSource(request["options"]).schema().json()}


def _value(v: Any) -> Any:
    if isinstance(v, dict) and "date" in v:
        return datetime.date.fromisoformat(v["date"])
    if isinstance(v, list):
        return tuple(_value(x) for x in v)
    return v


def _filter_sql(node: dict) -> str:
    """Lance SQL for one encoded filter; raises filters.Untranslatable."""
    from pyspark.sql import datasource as ds

    from . import filters

    kind = node["type"]
    if kind in ("And", "Or"):
        return f"({_filter_sql(node['left'])}) {kind.upper()} ({_filter_sql(node['right'])})"
    if kind == "Not":  # NOT of unknown is unknown in both Spark and Lance SQL
        return f"NOT ({_filter_sql(node['child'])})"
    cls = getattr(ds, kind, None)
    if cls is None or not isinstance(cls, type) or not issubclass(cls, ds.Filter):
        raise filters.Untranslatable(kind)
    attribute = tuple(node["attribute"])  # the column's name parts, as Spark parsed them
    if "value" in node:
        return filters.to_sql(cls(attribute, _value(node["value"])))
    return filters.to_sql(cls(attribute))


def filter_sql(request: dict) -> dict:
    from . import filters

    pushed, parts = [], []
    for i, node in enumerate(request["filters"]):
        try:
            parts.append(_filter_sql(node))
            pushed.append(i)
        except filters.Untranslatable:
            pass
    return {"sql": filters.conjunction(parts), "pushed": pushed}


def plan(request: dict) -> dict:
    from pyspark.sql.types import StructType

    from . import filters
    from .datasource import _fragment_groups, _int_opt, _opt, _projected, _width, snapshot_version
    from .table import resolve

    options = request["options"]
    ref, _ = resolve(options)
    version = snapshot_version(ref, options)
    fields = [f.name for f in StructType.fromJson(json.loads(request["schema"])).fields]
    sql = filters.conjunction([p for p in (_opt(options, "filter"), request.get("filter")) if p])
    ds = ref.open(version)
    fragments = ds.get_fragments()
    groups = _fragment_groups([f.fragment_id for f in fragments], _int_opt(options, "fragmentsPerPartition", 1))
    base = {
        "uri": ref.uri,
        "storage_options": ref.storage_options,
        "version": version,
        "schema": request["schema"],
        "columns": fields,
        "filter": sql,
        "batch_size": _int_opt(options, "batchSize"),
    }
    rows = sum(_live_rows(f) for f in fragments)
    return {
        "partitions": [json.dumps({**base, "fragments": g.value}) for g in groups],
        # for Spark's planning (broadcast joins): the rows and bytes read, before filters
        "rows": rows,
        "bytes": rows * (sum(_width(f.type) for f in _projected(ds.schema, fields)) or 1),
    }


def _live_rows(fragment) -> int:
    """A fragment's rows less its deleted ones, from the manifest alone."""
    meta = fragment.metadata
    deleted = meta.deletion_file.num_deleted_rows if meta.deletion_file is not None else 0
    return meta.physical_rows - (deleted or 0)


def read(request: dict, out: BinaryIO) -> None:
    """Reply, then the partition's Arrow stream, then a trailer."""
    from pyspark.sql.types import StructType

    from .datasource import _ScanSpec
    from .schema import arrow_target
    from .table import TableRef

    p = json.loads(request["partition"])
    ref = TableRef(p["uri"], p["storage_options"] or {})
    target = arrow_target(StructType.fromJson(json.loads(p["schema"])))
    spec = _ScanSpec(ref, p["version"], p["columns"], target, p["filter"], p["batch_size"])
    ds = ref.open(p["version"])  # fails here, before the stream, for a missing version
    _frame(out, {"ok": True})
    writer = pa.ipc.new_stream(out, target)
    trailer: dict[str, Any] = {}
    try:
        if p["columns"]:
            for batch in spec.scan(p["fragments"], ds):
                writer.write_batch(batch)
        else:  # count(*) and the like: row counts, no data
            trailer["rows"] = sum(ds.get_fragment(i).count_rows(p["filter"]) for i in p["fragments"])
    except Exception as exc:  # noqa: BLE001 - reported to the JVM task in the trailer
        trailer = _error(exc)
    writer.close()
    _frame(out, trailer)


HANDLERS = {"schema": schema, "filters": filter_sql, "plan": plan}


def serve(inp: BinaryIO, out: BinaryIO) -> None:
    while True:
        header = inp.read(4)
        if len(header) < 4:
            return  # the JVM closed our stdin: it is gone or done with us
        (length,) = struct.unpack(">i", header)
        request = json.loads(inp.read(length))
        op = request.get("op")
        try:
            if op == "read":
                read(request, out)
            elif op in HANDLERS:
                _frame(out, HANDLERS[op](request))
            else:
                raise error("InvalidInputError", f"unknown op {op!r}")
        except Exception as exc:  # noqa: BLE001 - every failure is a reply
            _frame(out, _error(exc))
        out.flush()


def main() -> None:
    # The protocol owns fd 1; anything else printed goes to stderr.
    out = os.fdopen(os.dup(1), "wb", buffering=1 << 16)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    serve(os.fdopen(0, "rb", buffering=1 << 16), out)


if __name__ == "__main__":
    main()
