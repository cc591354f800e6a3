"""The Python half of the JVM bridge (``bridge/LanceProvider.java``).

Spark's JVM starts ``python -m lance_ns.spark.bridge_worker`` once per
concurrently running read task and keeps it for the JVM's lifetime; it
answers requests on stdin with replies on stdout (framing in
``bridge/Workers.java``):

``schema``   the Spark schema of a table (options as for the ``lance`` source)
             and the version it describes, which the JVM sends back with ``plan``
``filters``  which Spark filters become Lance SQL, and that SQL (none with
             ``pushFilters=false``)
``plan``     the partitions of a batch read: fragment groups at one version

Options are parsed by :class:`.options.SourceOptions`, as in the Python
source, so each option means the same on both read paths.
``stream``   a streaming read's offsets (table versions: ``initial``, ``latest``) and one
             micro-batch's ``partitions`` (the fragments added between two versions), by
             the Python source's own stream reader (``bridge/LanceStream.java``)
``read``     one partition, as an Arrow IPC stream in exactly the Arrow types
             Spark's ``ArrowColumnVector`` expects, then a trailer (a partition of a search
             table function: its rows, :mod:`.search`)
``catalog``  a call of the SQL catalog ``LanceCatalog`` (see :mod:`.catalog`), the SQL
             extension's statements and search schemas among them
``write_plan``    a write's plan on the driver: the Python source's writer for the options
                  and schema (the table declared if the write creates it), pickled; for a
                  streaming query (``stream``) its stream writer, planned once per query
``write``         one task's rows: the request, then an Arrow IPC stream of the rows;
                  the reply names the Lance fragments written (``bridge/LanceWrite.java``)
``write_commit``  the driver's one Lance commit of every task's fragments (a stream's: once
                  per micro-batch, with its ``epoch``, which a replayed batch repeats)
``write_abort``   the driver's clean-up of a failed job (the tasks' files, a declared table)
``write_discard`` a failed task's clean-up: the files of the fragments it wrote

Writes thus never start Spark's own Python workers: the plan, the tasks and the
commit are the same :class:`.datasource.LanceWriter` (a stream's:
:class:`.datasource.LanceStreamWriter`) calls the Python source makes, run in these
long-lived workers.

Errors reply ``{"error": {"type", "code", "message"}}`` with the
:mod:`lance_ns.errors` class and code, or, during a scan, in the trailer.
"""

from __future__ import annotations

import base64
import datetime
import json
import os
import struct
import sys
from typing import Any, BinaryIO

import pyarrow as pa
from pyspark import cloudpickle

from . import full_text
from .errors import error
from .options import SourceOptions
from .planning import (
    ScanSpec,
    fragment_groups,
    live_rows,
    projected_schema,
    snapshot_version,
    table_schema,
    value_width,
)
from .schema import spark_schema
from .resolve import TableRef, close_namespaces, resolve


def _error(exc: BaseException) -> dict[str, Any]:
    """The reply for ``exc``: pylance's plain exceptions become the
    lance_ns error with the closest code (a missing dataset: TableNotFound)."""
    from ..datasets import translate

    err = translate(exc)
    return {"error": {"type": type(err).__name__, "code": int(err.code), "message": str(err)}}


def _frame(out: BinaryIO, payload: dict[str, Any]) -> None:
    body = json.dumps(payload).encode()
    out.write(struct.pack(">i", len(body)))
    out.write(body)


# ------------------------------------------------------------------ requests


def schema(request: dict) -> dict:
    """The schema, and the version it was read at: the JVM sends that
    version back with the query's ``plan``, so a commit in between cannot
    make the two disagree.  With ``readLatest`` no version is pinned."""
    options = SourceOptions.parse(request["options"])
    ref, _ = resolve(options)
    version = snapshot_version(ref, options)
    return {
        "schema": spark_schema(table_schema(ref, options, version)).json(),
        "version": None if options.read_latest else version,
    }


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
    if SourceOptions.parse(request.get("options") or {}).push_filters is False:
        return {"sql": None, "pushed": []}
    for i, node in enumerate(request["filters"]):
        try:
            parts.append(_filter_sql(node))
            pushed.append(i)
        except filters.Untranslatable:
            pass
    return {"sql": filters.conjunction(parts), "pushed": pushed}


def plan(request: dict) -> dict:
    """Partitions at the version ``schema`` pinned (``version`` in the
    request), else at the version the options select now."""
    from pyspark.sql.types import StructType

    from . import filters

    options = SourceOptions.parse(request["options"])
    ref, _ = resolve(options)
    version = request.get("version")
    if version is None:
        version = snapshot_version(ref, options)
    fields = [f.name for f in StructType.fromJson(json.loads(request["schema"])).fields]
    sql = filters.conjunction([p for p in (options.filter, request.get("filter")) if p])
    ds = ref.open(version)
    rows = sum(live_rows(f) for f in ds.get_fragments())
    groups = fragment_groups(ds, options.fragments_per_partition)
    more = {}
    if request.get("full_text"):  # lance_match: the index answers for the whole table, in one partition
        full_text.check(ds, request["full_text"])
        more["full_text"] = request["full_text"]
        groups = [[f.fragment_id for f in ds.get_fragments()]]
    return {
        "partitions": [_partition(ref, version, request["schema"], fields, sql, options.batch_size, g, **more)
                       for g in groups],
        "version": version,
        # for Spark's planning (broadcast joins): the rows and bytes read, before filters
        "rows": rows,
        "bytes": rows * (sum(value_width(f.type) for f in projected_schema(ds.schema, fields)) or 1),
    }


def _partition(ref: TableRef, version: int, schema: str, columns: list[str], sql: str | None,
               batch_size: int | None, fragments: list[int], **more) -> str:
    """One partition as ``read`` takes it (opaque JSON to the JVM): of a batch read's plan or a
    micro-batch's."""
    return json.dumps({"uri": ref.uri, "storage_options": ref.storage_options, "version": version, "schema": schema,
                       "columns": columns, "filter": sql, "batch_size": batch_size, "fragments": fragments, **more})


def read(request: dict, out: BinaryIO) -> None:
    """Reply, then the partition's Arrow stream, then a trailer."""
    from pyspark.sql.types import StructType

    from .schema import arrow_target

    p = json.loads(request["partition"])
    target = arrow_target(StructType.fromJson(json.loads(p["schema"])))
    if "search" in p:
        return _read_search(p, target, out)
    ref = TableRef(p["uri"], p["storage_options"] or {})
    spec = ScanSpec(ref, p["version"], p["columns"], target, p["filter"], p["batch_size"], p.get("full_text"))
    ds = ref.open(p["version"])  # fails here, before the stream, for a missing version

    def scan(writer) -> dict[str, Any]:
        if p["columns"]:
            for batch in spec.scan(p["fragments"], ds):
                writer.write_batch(batch)
            return {}
        if spec.full_text:  # count(*) of what the full-text index finds
            return {"rows": full_text.count(ds, spec.full_text, p["filter"])}
        # count(*) and the like: row counts, no data
        return {"rows": sum(ds.get_fragment(i).count_rows(p["filter"]) for i in p["fragments"])}

    _stream(out, target, scan)


def stream(request: dict) -> dict:
    """A streaming read's offset or one micro-batch's partitions: the Python source's own
    :class:`.datasource.LanceStreamReader` (so ``startingVersion``, ``ignoreChanges`` and the
    rest mean the same on both paths), its partitions in the form ``read`` takes."""
    from pyspark.sql.types import StructType

    from .datasource import LanceDataSource

    reader = LanceDataSource(dict(request["options"])).streamReader(StructType.fromJson(json.loads(request["schema"])))
    call = request["call"]
    if call == "initial":
        return reader.initialOffset()
    if call == "latest":
        return reader.latestOffset()
    spec = reader.spec
    planned = reader.partitions({"version": request["start"]}, {"version": request["end"]})
    return {"partitions": [_partition(spec.ref, p.value["version"], request["schema"], spec.columns, spec.filter,
                                      spec.batch_size, p.value["fragments"]) for p in planned]}


def _read_search(p: dict, target: pa.Schema, out: BinaryIO) -> None:
    """A search table function's one partition (:mod:`.search`): QueryTable through the
    catalog's namespace, streamed as a scan's partition is."""
    from . import search
    from .catalog import _ns

    def rows(writer) -> dict[str, Any]:
        for batch in search.batches(_ns(p["catalog"]), p["search"], p["table"], p["args"], target):
            writer.write_batch(batch)
        return {}

    _stream(out, target, rows)


def _stream(out: BinaryIO, target: pa.Schema, write) -> None:
    """The reply, then ``write(writer)``'s Arrow stream, then a trailer: what ``write``
    answers, or the error it raised (reported to the JVM task there, mid-stream)."""
    _frame(out, {"ok": True})
    writer = pa.ipc.new_stream(out, target)
    try:
        trailer = write(writer)
    except Exception as exc:  # noqa: BLE001 - reported to the JVM task in the trailer
        trailer = _error(exc)
    writer.close()
    _frame(out, trailer)


# ------------------------------------------------------------------ writing
def write_plan(request: dict) -> dict:
    """The writer of a write (the Python source's, so every option means the same),
    pickled for the tasks and the commit: it carries the table, the schema the fragments
    are written with, the version read and the job's records; a stream's carries its
    stream id, by which each micro-batch's commit is recognised when replayed."""
    from pyspark.sql.types import StructType

    from .datasource import LanceDataSource

    schema = StructType.fromJson(json.loads(request["schema"]))
    source = LanceDataSource(dict(request["options"]))
    plan = source.streamWriter if request.get("stream") else source.writer
    writer = plan(schema, bool(request["overwrite"]))
    return {"writer": base64.b64encode(cloudpickle.dumps(writer)).decode()}


def _writer(request: dict):
    return cloudpickle.loads(base64.b64decode(request["writer"]))


def write(request: dict, reader: pa.RecordBatchStreamReader) -> dict:
    """One task's rows (the Arrow stream after the request), written as fragments.  The
    stream is read to its end whatever happens, so the worker stays in step with the JVM."""
    try:
        message = _writer(request).write(iter(reader))
    finally:
        for _ in reader:  # rows left unread by a failure
            pass
    return {"fragments": message.fragments}


def _messages(request: dict) -> list:
    from .datasource import LanceCommitMessage

    return [None if m is None else LanceCommitMessage(list(m)) for m in request["messages"]]


def _batch(request: dict) -> tuple:
    """The micro-batch (epoch) id a stream's commit and abort take after the messages; a
    batch write's take none."""
    return () if request.get("epoch") is None else (int(request["epoch"]),)


def write_commit(request: dict) -> dict:
    _writer(request).commit(_messages(request), *_batch(request))
    return {}


def write_abort(request: dict) -> dict:
    _writer(request).abort(_messages(request), *_batch(request))
    return {}


def write_discard(request: dict) -> dict:
    _writer(request).spec.delete_files(_messages(request))
    return {}


def catalog(request: dict) -> dict:
    from .catalog import call

    return call(request)


HANDLERS = {
    "schema": schema,
    "filters": filter_sql,
    "plan": plan,
    "stream": stream,
    "catalog": catalog,
    "write_plan": write_plan,
    "write_commit": write_commit,
    "write_abort": write_abort,
    "write_discard": write_discard,
}


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
            elif op == "write":
                try:
                    reader = pa.ipc.open_stream(inp)
                except Exception as exc:  # noqa: BLE001 - no stream to skip: out of step, so stop
                    _frame(out, _error(exc))
                    out.flush()
                    return
                _frame(out, write(request, reader))
            elif op in HANDLERS:
                _frame(out, HANDLERS[op](request))
            else:
                raise error("InvalidInputError", f"unknown op {op!r}")
        except Exception as exc:  # noqa: BLE001 - every failure is a reply
            _frame(out, _error(exc))
        out.flush()


def run(inp: BinaryIO, out: BinaryIO) -> None:
    """Serve until the JVM lets go, then close the namespace connections
    the requests opened (they are cached across requests, see ``table``)."""
    try:
        serve(inp, out)
    finally:
        close_namespaces()


def main() -> None:
    # The protocol owns fd 1; anything else printed goes to stderr.
    out = os.fdopen(os.dup(1), "wb", buffering=1 << 16)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    run(os.fdopen(0, "rb", buffering=1 << 16), out)


if __name__ == "__main__":
    main()
