"""The Spark 4 Python data source ``lance``.

    lance_ns.spark.register(spark)
    df = (spark.read.format("lance")
          .option("impl", "dir").option("dir.root", "/lake")
          .load("db.events"))
    df.write.format("lance").mode("append").option("impl", "dir") \\
        .option("dir.root", "/lake").save("db.events")

Spark runs every method here in Python worker processes, on the driver for
planning and commits and on executors for ``read``/``write``; the objects are
pickled between them.  lance is not fork-safe, so they hold only URIs,
versions, fragment ids, schemas and options, and open datasets inside the
method that needs them.

Reads: one partition per fragment group (``fragmentsPerPartition``, default
1), Arrow batches cast to exactly the schema Spark expects, Spark filters
pushed down as Lance SQL (``pushFilters=true``; see :class:`LanceReader` for
why it is opt-in) or a Lance SQL ``filter`` option, ``columns`` / a user
schema to read some columns, ``version`` / ``tag`` for time travel.  Writes: every task writes fragments,
the driver commits them in one transaction (Append or Overwrite, with the
version read at planning as ``read_version``); ``abort`` deletes the files of
a failed job, including those of tasks that finish after it (see
:mod:`.jobfiles`), and undoes a table declaration it made.
"""

from __future__ import annotations

import gc
import itertools
import json
import os
import sys
from dataclasses import dataclass, field, replace
from typing import Iterator

import pyarrow as pa
from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    DataSourceStreamArrowWriter,
    DataSourceStreamReader,
    InputPartition,
    WriterCommitMessage,
)
from pyspark.sql.types import StructType

from . import filters as _filters
from .errors import error
from .jobfiles import JobFiles, delete_data_files, open_session
from .schema import arrow_target, spark_schema
from .table import TableRef, latest_version, resolve

#: transaction properties written with every commit of this source
WRITER_KEY = "lance-ns.writer"
STREAM_KEY = "lance-ns.spark.stream-id"
BATCH_KEY = "lance-ns.spark.batch-id"


def _opt(options, key: str, default: str | None = None) -> str | None:
    value = options.get(key)
    return default if value is None or value == "" else str(value)


def _int_opt(options, key: str, default: int | None = None) -> int | None:
    value = _opt(options, key)
    if value is None:
        return default
    try:
        return int(value)
    except ValueError:
        raise error("InvalidInputError", f"option {key!r} must be an integer, got {value!r}") from None


def _bool_opt(options, key: str, default: bool = False) -> bool:
    value = _opt(options, key)
    if value is None:
        return default
    if value.lower() not in ("true", "false"):
        raise error("InvalidInputError", f"option {key!r} must be true or false, got {value!r}")
    return value.lower() == "true"


def _columns_opt(options) -> list[str] | None:
    value = _opt(options, "columns")
    if value is None:
        return None
    cols = [c.strip() for c in value.split(",") if c.strip()]
    if not cols:
        raise error("InvalidInputError", "option 'columns' names no column")
    return cols


def snapshot_version(ref: TableRef, options) -> int:
    """The version a read uses: ``version``, ``tag`` or the latest."""
    version, tag = _opt(options, "version"), _opt(options, "tag")
    if version is not None and tag is not None:
        raise error("InvalidInputError", "give either 'version' or 'tag', not both")
    if tag is not None:
        return ref.open().tags.get_version(tag)
    if version is not None:
        return _int_opt(options, "version")
    return ref.open().version


# --------------------------------------------------------------------- reading


@dataclass
class _ScanSpec:
    """Everything a task needs to scan: picklable, no lance objects."""

    ref: TableRef
    version: int
    columns: list[str]
    target: pa.Schema  # exactly the Arrow schema Spark expects
    filter: str | None = None
    batch_size: int | None = None

    def scan(self, fragment_ids: list[int], ds=None) -> Iterator[pa.RecordBatch]:
        """Batches of the fragments (``ds``: the dataset at ``version``, if open)."""
        if not fragment_ids:
            return
        ds = ds if ds is not None else self.ref.open(self.version)
        fragments = [ds.get_fragment(i) for i in fragment_ids]
        scanner = ds.scanner(
            columns=self.columns,
            filter=self.filter,
            fragments=fragments,
            batch_size=self.batch_size or batch_rows(_projected(ds.schema, self.columns)),
            scan_in_order=True,
        )
        for batch in scanner.to_batches():
            if batch.num_rows:
                yield conform(batch, self.target)


#: bytes a read batch aims at, and its bounds in rows (see :func:`batch_rows`)
BATCH_BYTES = 16 << 20
MIN_BATCH_ROWS, MAX_BATCH_ROWS = 1024, 256 * 1024


def batch_rows(schema: pa.Schema) -> int:
    """Rows per read batch: about :data:`BATCH_BYTES` of ``schema``'s rows.

    Spark turns every batch from a Python source back into rows on the JVM,
    and its cost per batch is high: with lance's default 8k-row batches a
    one-column aggregate spent ~0.3 s per million rows more than with
    256k-row ones (measured on local[2]).  Wide rows get fewer rows per batch
    so memory stays bounded.
    """
    width = sum(_width(f.type) for f in schema) or 8
    return max(MIN_BATCH_ROWS, min(MAX_BATCH_ROWS, BATCH_BYTES // width))


def _width(t: pa.DataType) -> int:
    """A rough byte width of one value (variable-size values guessed at 32)."""
    if pa.types.is_fixed_size_list(t):
        return t.list_size * _width(t.value_type)
    if pa.types.is_struct(t):
        return sum(_width(t.field(i).type) for i in range(t.num_fields))
    try:
        return max(t.bit_width // 8, 1)
    except ValueError:  # no fixed width: strings, binaries, lists, maps
        return 32


def _projected(schema: pa.Schema, columns: list[str]) -> pa.Schema:
    # the table's own types (fixed-size lists keep their size, unlike Spark's)
    return pa.schema([schema.field(c) for c in columns if schema.get_field_index(c) >= 0])


def conform(batch: pa.RecordBatch, target: pa.Schema) -> pa.RecordBatch:
    """``batch`` with the field order, types and nullability of ``target``."""
    if batch.schema.equals(target):
        return batch
    arrays = []
    for f in target:
        col = batch.column(f.name)
        arrays.append(col if col.type == f.type else col.cast(f.type))
    return pa.RecordBatch.from_arrays(arrays, schema=target)


def aligned(batch: pa.RecordBatch) -> pa.RecordBatch:
    """``batch`` with every buffer aligned for its values (16 bytes for
    decimals, 8 otherwise).

    Spark's Arrow stream hands the worker buffers at 8-byte boundaries and
    sometimes odd ones; lance (arrow-rs) panics on a buffer misaligned for
    its type (e.g. decimal128 at 8 mod 16), so such batches are copied once.
    """
    for col in batch.columns:
        align = 16 if "decimal" in str(col.type) else 8
        if any(buf is not None and buf.address % align for buf in col.buffers()):
            return batch.copy_to(pa.default_cpu_memory_manager())
    return batch


def _fragment_groups(fragment_ids: list[int], per_partition: int) -> list[InputPartition]:
    ids = sorted(fragment_ids)
    return [InputPartition(ids[i : i + per_partition]) for i in range(0, len(ids), per_partition)]


class LanceReader(DataSourceReader):
    """Batch reads.

    Spark 4.3 caches the planned read (reader and partitions) on the
    relation, and re-plans only for scans that push filters: a DataFrame or
    view queried once with a filter and then without would reuse the
    filtered reader and silently drop rows.  So pushed filters are taken only
    with ``pushFilters=true`` (safe when every query builds its own
    DataFrame, e.g. ``spark.read...load(...).filter(...)``); otherwise Spark
    filters.  With ``readLatest=true`` (used by SQL views) tasks read the
    latest version at run time, so a reused plan still sees new commits.
    """

    def __init__(self, spec: _ScanSpec, per_partition: int, push: bool, latest: bool):
        self.spec = spec
        self.per_partition = per_partition
        self.push = push
        self.latest = latest
        self.user_filter = spec.filter

    def pushFilters(self, filters):
        if not self.push:
            return iter(filters)
        pushed, rest = _filters.split(filters)
        self.spec.filter = _filters.conjunction(([self.user_filter] if self.user_filter else []) + pushed)
        return iter(rest)

    def partitions(self):
        ds = self.spec.ref.open(self.spec.version)
        groups = _fragment_groups([f.fragment_id for f in ds.get_fragments()], self.per_partition)
        if self.latest:
            # slots, filled with the fragments of the version current at read time
            return [InputPartition({"slot": i, "of": max(len(groups), 1)}) for i in range(max(len(groups), 1))]
        return groups

    def read(self, partition):
        if not self.latest:
            return self.spec.scan(partition.value or [])
        ds = self.spec.ref.open()
        spec = _ScanSpec(**{**self.spec.__dict__, "version": ds.version})
        ids = sorted(f.fragment_id for f in ds.get_fragments())
        return spec.scan(ids[partition.value["slot"] :: partition.value["of"]])


# --------------------------------------------------------------------- writing


@dataclass
class LanceCommitMessage(WriterCommitMessage):
    fragments: list[str] = field(default_factory=list)  # FragmentMetadata JSON

    def data_files(self) -> list[str]:
        return [f["path"] for frag in self.fragments for f in json.loads(frag)["files"]]


def _data_files(messages) -> list[str]:
    """The data files of a job's commit messages (None for tasks that sent none)."""
    return [p for m in messages if m is not None for p in m.data_files()]


@dataclass
class _WriteSpec:
    ref: TableRef
    target: pa.Schema  # the table's schema (append) or the new schema (overwrite)
    overwrite: bool
    max_rows_per_file: int | None = None
    data_storage_version: str | None = None
    job: JobFiles | None = None  # batch jobs: where tasks record their files

    def write(self, batches: Iterator[pa.RecordBatch]) -> LanceCommitMessage:
        from lance.fragment import write_fragments

        first = next(batches, None)
        if first is None:
            return LanceCommitMessage([])
        stream = (aligned(conform(b, self.target)) for b in itertools.chain([first], batches))
        reader = pa.RecordBatchReader.from_batches(self.target, stream)
        kwargs = {}
        if self.max_rows_per_file:
            kwargs["max_rows_per_file"] = self.max_rows_per_file
        if self.data_storage_version:
            kwargs["data_storage_version"] = self.data_storage_version
        frags = write_fragments(
            reader,
            self.ref.uri,
            schema=self.target,
            mode="overwrite" if self.overwrite else "append",
            storage_options=self.ref.storage_options or None,
            **kwargs,
        )
        message = LanceCommitMessage([json.dumps(f.to_json()) for f in frags])
        if self.job is not None and not self.job.record(message.data_files()):
            return LanceCommitMessage([])  # the job failed while this task wrote
        return message

    def commit(self, messages, read_version: int | None, properties: dict[str, str]):
        import lance
        from lance.fragment import FragmentMetadata

        frags = [FragmentMetadata.from_json(j) for m in messages if m is not None for j in m.fragments]
        if self.overwrite or read_version is None:
            op = lance.LanceOperation.Overwrite(self.target, frags)
        else:
            op = lance.LanceOperation.Append(frags)
        tx = lance.Transaction(read_version=read_version or 0, operation=op, transaction_properties=properties)
        return lance.LanceDataset.commit(self.ref.uri, tx, storage_options=self.ref.storage_options or None)

    def delete_files(self, messages) -> None:
        """Delete the data files of uncommitted fragments (best effort per file)."""
        paths = _data_files(messages)
        if paths:
            delete_data_files(open_session(self.ref.uri, self.ref.storage_options), paths)


def _write_target(ref: TableRef, schema: StructType, overwrite: bool) -> tuple[pa.Schema, int | None]:
    """The Arrow schema fragments are written with, and the version read."""
    incoming = arrow_target(schema)
    version = latest_version(ref)
    if version is None or overwrite:
        return incoming, version
    table = ref.open(version).schema
    if sorted(table.names) != sorted(incoming.names):
        raise error(
            "TableSchemaValidationError",
            f"cannot append columns {incoming.names} to table {ref.uri} with columns {table.names}",
        )
    for f in incoming:
        want = table.field(f.name).type
        if f.type != want and not _castable(f.type, want):
            raise error("TableSchemaValidationError", f"column {f.name!r}: cannot append {f.type} to {want}")
    return table, version


def _castable(src: pa.DataType, dst: pa.DataType) -> bool:
    try:
        pa.array([], src).cast(dst)
        return True
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return False


class LanceWriter(DataSourceArrowWriter):
    def __init__(self, spec: _WriteSpec, read_version: int | None, declared: bool):
        self.spec = spec
        self.read_version = read_version
        self.declared = declared

    def write(self, iterator):
        return self.spec.write(iterator)

    def commit(self, messages):
        self.spec.commit(messages, self.read_version, {WRITER_KEY: "spark"})
        self.spec.job.finish()

    def abort(self, messages):
        self.spec.job.abort(_data_files(messages))
        if self.declared:
            _undeclare(self.spec.ref)


def _undeclare(ref: TableRef) -> None:
    """Drop a table this job declared and never committed."""
    from lance_namespace import DropTableRequest

    ns = ref.namespace()
    if ns is not None and latest_version(ref) is None:
        try:
            ns.drop_table(DropTableRequest(id=ref.table_id))
        except Exception:  # noqa: BLE001 - the job's own error is the one to report
            pass


# ------------------------------------------------------------------- streaming


class LanceStreamReader(DataSourceStreamReader):
    """Offsets are table versions; each micro-batch reads the fragments added
    between two versions.  Commits that rewrite or delete rows (overwrite,
    delete, compaction) fail the query unless ``ignoreChanges`` is true, in
    which case only their new fragments are read."""

    def __init__(self, spec: _ScanSpec, per_partition: int, starting: str | None, ignore_changes: bool):
        self.spec = spec
        self.per_partition = per_partition
        self.starting = starting
        self.ignore_changes = ignore_changes

    def initialOffset(self):
        if self.starting is None or self.starting == "earliest":
            return {"version": 0}
        if self.starting == "latest":
            return {"version": self.spec.ref.open().version}
        try:
            return {"version": int(self.starting)}
        except ValueError:
            raise error(
                "InvalidInputError", f"startingVersion must be earliest, latest or a version, not {self.starting!r}"
            )

    def latestOffset(self, start=None, limit=None):
        return {"version": self.spec.ref.open().version}

    def partitions(self, start, end):
        v0, v1 = int(start["version"]), int(end["version"])
        if v1 <= v0:
            return []
        ds = self.spec.ref.open(v1)
        new_ids = [f.fragment_id for f in ds.get_fragments()]
        if v0 > 0:
            old = {f.fragment_id: f.metadata.deletion_file for f in ds.checkout_version(v0).get_fragments()}
            now = {f.fragment_id: f.metadata.deletion_file for f in ds.get_fragments()}
            changed = [i for i, d in old.items() if i not in now or now[i] != d]
            if changed and not self.ignore_changes:
                raise error(
                    "InvalidTableStateError",
                    f"table {self.spec.ref.uri} changed existing rows between versions {v0} and {v1} "
                    "(overwrite, delete or compaction); set ignoreChanges=true to read only new fragments",
                )
            new_ids = [i for i in new_ids if i not in old]
        return [
            InputPartition({"version": v1, "fragments": p.value})
            for p in _fragment_groups(new_ids, self.per_partition)
        ]

    def read(self, partition):
        spec = _ScanSpec(**{**self.spec.__dict__, "version": partition.value["version"]})
        return spec.scan(partition.value["fragments"])

    def commit(self, end):
        pass


class LanceStreamWriter(DataSourceStreamArrowWriter):
    """Exactly-once sink: each micro-batch is one commit carrying the stream
    id and batch id in its transaction properties; a replayed batch (same
    stream id, batch id not above the last committed one) is not committed
    again and its files are deleted."""

    def __init__(self, spec: _WriteSpec, stream_id: str, declared: bool):
        self.spec = spec
        self.stream_id = stream_id
        self.declared = declared

    def write(self, iterator):
        return self.spec.write(iterator)

    def commit(self, messages, batchId):
        version = latest_version(self.spec.ref)
        if version is not None and last_batch_id(self.spec.ref, self.stream_id) >= batchId:
            self.spec.delete_files(messages)
            return
        props = {WRITER_KEY: "spark-streaming", STREAM_KEY: self.stream_id, BATCH_KEY: str(batchId)}
        self.spec.commit(messages, version, props)

    def abort(self, messages, batchId):
        self.spec.delete_files(messages)


def last_batch_id(ref: TableRef, stream_id: str, max_versions: int = 10_000) -> int:
    """The highest batch id committed by ``stream_id`` (-1 if none): the newest
    commit carrying the stream id, searched from the latest version down."""
    ds = ref.open()
    for version in range(ds.version, max(ds.version - max_versions, 0), -1):
        tx = ds.read_transaction(version)
        props = (tx.transaction_properties or {}) if tx is not None else {}
        if props.get(STREAM_KEY) == stream_id:
            return int(props[BATCH_KEY])
    return -1


# ------------------------------------------------------------------ the source


class LanceDataSource(DataSource):
    """Options: see the module docstring and :mod:`lance_ns.spark.table`."""

    @classmethod
    def name(cls):
        return "lance"

    def _ref(self, create: bool = False):
        return resolve(self.options, create=create)

    def schema(self):
        ref, _ = self._ref()
        version = snapshot_version(ref, self.options)
        table = ref.open(version).schema
        columns = _columns_opt(self.options)
        if columns:
            missing = [c for c in columns if c not in table.names]
            if missing:
                raise error("InvalidInputError", f"columns {missing} not in table {ref.uri} ({table.names})")
            table = pa.schema([table.field(c) for c in columns])
        return spark_schema(table)

    def _scan_spec(self, ref: TableRef, version: int, schema: StructType) -> _ScanSpec:
        return _ScanSpec(
            ref=ref,
            version=version,
            columns=[f.name for f in schema.fields],
            target=arrow_target(schema),
            filter=_opt(self.options, "filter"),
            batch_size=_int_opt(self.options, "batchSize"),
        )

    def reader(self, schema):
        ref, _ = self._ref()
        spec = self._scan_spec(ref, snapshot_version(ref, self.options), schema)
        return LanceReader(
            spec,
            _int_opt(self.options, "fragmentsPerPartition", 1),
            push=_bool_opt(self.options, "pushFilters"),
            latest=_bool_opt(self.options, "readLatest") and _opt(self.options, "version") is None
            and _opt(self.options, "tag") is None,
        )

    def _write_spec(self, schema: StructType, overwrite: bool):
        ref, declared = self._ref(create=True)
        target, version = _write_target(ref, schema, overwrite)
        spec = _WriteSpec(
            ref=ref,
            target=target,
            overwrite=overwrite,
            max_rows_per_file=_int_opt(self.options, "maxRowsPerFile"),
            data_storage_version=_opt(self.options, "dataStorageVersion"),
        )
        return spec, version, declared

    def writer(self, schema, overwrite):
        spec, version, declared = self._write_spec(schema, overwrite)
        spec = replace(spec, job=JobFiles(spec.ref.uri, spec.ref.storage_options))
        return LanceWriter(spec, version, declared)

    def streamReader(self, schema):
        ref, _ = self._ref()
        spec = self._scan_spec(ref, ref.open().version, schema)
        return LanceStreamReader(
            spec,
            _int_opt(self.options, "fragmentsPerPartition", 1),
            _opt(self.options, "startingVersion"),
            _bool_opt(self.options, "ignoreChanges"),
        )

    def streamWriter(self, schema, overwrite):
        stream_id = _opt(self.options, "streamId") or _opt(self.options, "checkpointLocation")
        if not stream_id:
            raise error(
                "InvalidInputError",
                "the lance streaming sink needs option 'streamId' (or 'checkpointLocation') "
                "to recognise replayed batches",
            )
        spec, _, declared = self._write_spec(schema, overwrite)
        return LanceStreamWriter(spec, stream_id, declared)


def _in_spark_worker() -> bool:
    return os.environ.get("SPARK_PYTHON_RUNTIME") == "PYTHON_WORKER" or "pyspark.daemon" in sys.modules


def _freeze_imports() -> None:
    """In a Spark Python worker: import lance now and exempt everything
    imported so far from garbage collection.

    A reused worker runs ``gc.collect()`` after every task; the namespace
    client models imported with ``lance_ns`` make that a ~0.1 s full-heap
    walk per task, on the cores Spark's JVM needs at that moment (measured:
    a one-column aggregate of 1M rows took ~0.2 s longer).  Module-level
    objects live as long as the process anyway.
    """
    if _in_spark_worker():
        import lance  # noqa: F401 - every worker method needs it

        gc.freeze()


class LancePythonDataSource(LanceDataSource):
    """The same source under the name the JVM bridge delegates writes and
    streaming to (``lance_python``); also usable directly, e.g. to compare."""

    @classmethod
    def name(cls):
        return "lance_python"


def register(spark) -> bool:
    """Register the ``lance`` format with ``spark`` (idempotent).

    Returns True when ``lance`` is the JVM bridge (its jar is on the
    session's classpath, see :mod:`.bridge`), False when it is this Python
    source.  ``lance_python`` is always this Python source.
    """
    spark.dataSource.register(LancePythonDataSource)
    try:
        spark.dataSource.register(LanceDataSource)
    except Exception as exc:  # noqa: BLE001 - pyspark raises AnalysisException
        if "DATA_SOURCE_ALREADY_EXISTS" not in str(exc):
            raise
        # a JVM source named lance exists: the bridge; its workers default to this Python
        spark._jvm.lancens.spark.LanceProvider.useDriverPython(sys.executable)
        return True
    return False


_freeze_imports()
