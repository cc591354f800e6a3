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
the driver commits them in one transaction (Append, Overwrite, or with
``replaceWhere`` an Update that also deletes the matching rows; the version
read at planning is the ``read_version``); ``abort`` deletes the files of
a failed job, including those of tasks that finish after it (see
:mod:`.jobfiles`), and undoes a table declaration it made.  A staged job (the
catalog's CTAS and RTAS, option ``stage``) commits nothing: its driver hands
the commit over (:class:`StagedCommit`) and the catalog makes it
(:func:`commit_staged`) when Spark commits the staged table (:mod:`.staging`).
"""

from __future__ import annotations

import base64
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
from .jobfiles import JobFiles, delete_data_files, delete_files, open_session
from .options import SourceOptions
from .planning import (
    ScanSpec,
    conform,
    fragment_groups,
    groups_of,
    snapshot_version,
    table_schema,
)
from .schema import arrow_target, spark_schema, vector_columns
from .resolve import TableRef, latest_version, resolve

#: transaction properties written with every commit of this source
WRITER_KEY = "lance-ns.writer"
STREAM_KEY = "lance-ns.spark.stream-id"
BATCH_KEY = "lance-ns.spark.batch-id"


# --------------------------------------------------------------------- reading


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


def _partitions(groups: list[list[int]]) -> list[InputPartition]:
    return [InputPartition(g) for g in groups]


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

    def __init__(self, spec: ScanSpec, per_partition: int, push: bool, latest: bool):
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
        groups = _partitions(fragment_groups(ds, self.per_partition))
        if self.latest:
            # slots, filled with the fragments of the version current at read time
            return [InputPartition({"slot": i, "of": max(len(groups), 1)}) for i in range(max(len(groups), 1))]
        return groups

    def read(self, partition):
        if not self.latest:
            return self.spec.scan(partition.value or [])
        ds = self.spec.ref.open()
        spec = ScanSpec(**{**self.spec.__dict__, "version": ds.version})
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
    #: the version whose rows this write replaces (``replaceVersion``)
    replaces: int | None = None
    #: the Lance SQL predicate of the rows this write replaces (``replaceWhere``)
    replace_where: str | None = None

    @property
    def new_schema(self) -> bool:
        """Whether the write brings its own schema: a plain overwrite does;
        appends and replacements write the table's (keeping its field ids)."""
        return self.overwrite and self.replaces is None and self.replace_where is None

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
            mode="overwrite" if self.new_schema else "append",
            storage_options=self.ref.storage_options or None,
            **kwargs,
        )
        message = LanceCommitMessage([json.dumps(f.to_json()) for f in frags])
        if self.job is not None and not self.job.record(message.data_files()):
            return LanceCommitMessage([])  # the job failed while this task wrote
        return message

    def commit(self, messages, read_version: int | None, properties: dict[str, str], first_version: bool = False):
        """One Lance commit of the job's fragments.  ``first_version``: the table's version 1,
        committed only if no other writer made one (no retry onto theirs: Lance would rebase
        this Overwrite onto their version and their rows would be gone)."""
        import lance
        from lance.fragment import FragmentMetadata

        frags = [FragmentMetadata.from_json(j) for m in messages if m is not None for j in m.fragments]
        exclusive = {"max_retries": 0, "enable_v2_manifest_paths": True} if first_version else {}
        deletions: list[str] = []  # deletion files written here, in no version if the commit fails
        try:
            if self.replaces is not None:
                op, read_version = self._replacement(frags), self.replaces
            elif self.replace_where is not None and read_version is not None:
                op = self._deletion(frags, read_version, deletions)
            elif self.overwrite or read_version is None:
                op = lance.LanceOperation.Overwrite(self.target, frags)
            else:
                op = lance.LanceOperation.Append(frags)
            tx = lance.Transaction(read_version=read_version or 0, operation=op, transaction_properties=properties)
            return lance.LanceDataset.commit(self.ref.uri, tx, storage_options=self.ref.storage_options or None,
                                             **self.ref.commit_options(), **exclusive)
        except BaseException:
            if deletions:
                delete_files(open_session(self.ref.uri, self.ref.storage_options), deletions)
            raise

    def _replacement(self, frags):
        """The commit replacing every row of version ``replaces`` with
        ``frags``: refused with code 14 if a later version exists; an Update
        removing that version's fragments, so Lance's own conflict check
        also refuses a rewrite or delete committed in the moment between."""
        import lance

        latest = self.ref.open()
        if latest.version != self.replaces:
            raise error(
                "ConcurrentModificationError",
                f"table {self.ref.uri} changed while this statement ran (it read version {self.replaces}, "
                f"version {latest.version} is now the latest; code 14): nothing was written, run it again",
            )
        removed = [f.fragment_id for f in latest.get_fragments()]
        return lance.LanceOperation.Update(removed_fragment_ids=removed, new_fragments=frags)

    def _deletion(self, frags, read_version: int, written: list[str]):
        """The commit deleting the rows ``replace_where`` matches at
        ``read_version`` and adding ``frags``: one Update, so no version
        has the deletion without the new rows.  Each fragment with a match
        gets a new deletion file (its path goes to ``written``), one left
        empty is removed.  Lance's conflict check refuses it (its
        CommitConflictError, as for an append) if a concurrent commit deleted
        from, rewrote or replaced those fragments; rows a concurrent append
        added are kept, as if appended after."""
        import lance

        removed, updated = [], []
        for fragment in self.ref.open(read_version).get_fragments():
            after = fragment.delete(self.replace_where)
            if after is None:
                removed.append(fragment.fragment_id)
            elif after.deletion_file != fragment.metadata.deletion_file:
                written.append(after.deletion_file.path(fragment.fragment_id))
                updated.append(after)
        return lance.LanceOperation.Update(removed_fragment_ids=removed, updated_fragments=updated, new_fragments=frags)

    def delete_files(self, messages) -> None:
        """Delete the data files of uncommitted fragments (best effort per file)."""
        paths = _data_files(messages)
        if paths:
            delete_data_files(open_session(self.ref.uri, self.ref.storage_options), paths)


def _write_target(spec: _WriteSpec, schema: StructType, properties: dict[str, str]) -> tuple[pa.Schema, int | None]:
    """The Arrow schema fragments are written with, and the version read (a
    replacement writes the table's schema at the version it replaces; a
    ``replaceWhere`` predicate is checked against that version; a new schema
    has the vector columns ``properties`` name)."""
    ref, replaces = spec.ref, spec.replaces
    incoming = vector_columns(arrow_target(schema), properties)
    version = latest_version(ref) if replaces is None else replaces
    if version is None or spec.new_schema:
        return incoming, version
    if spec.replace_where is not None:
        _check_predicate(ref, version, spec.replace_where)
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


def _check_predicate(ref: TableRef, version: int, predicate: str) -> None:
    """Refuse (code 13) a predicate Lance cannot evaluate on the table
    before any task writes: planning the scan parses and binds it."""
    from ..datasets import translated

    with translated(ref.uri):
        ref.open(version).scanner(filter=predicate, columns=[], with_row_id=True).explain_plan()


def _castable(src: pa.DataType, dst: pa.DataType) -> bool:
    try:
        pa.array([], src).cast(dst)
        return True
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return False


class LanceWriter(DataSourceArrowWriter):
    def __init__(self, spec: _WriteSpec, read_version: int | None, declared: bool, staged: bool = False):
        self.spec = spec
        self.read_version = read_version
        self.declared = declared
        self.staged = staged

    def write(self, iterator):
        return self.spec.write(iterator)

    def commit(self, messages):
        if self.staged:  # the catalog commits it with the table's entry (commit_staged); the records stay till then
            fragments = [j for m in messages if m is not None for j in m.fragments]
            self.spec.job.stage(StagedCommit(fragments, self.spec.target, self.read_version).to_json())
            return
        self.spec.commit(messages, self.read_version, {WRITER_KEY: "spark"})
        self.spec.job.finish()

    def abort(self, messages):
        self.spec.job.abort(_data_files(messages))
        if self.declared:
            undeclare(self.spec.ref)


@dataclass(frozen=True)
class StagedCommit:
    """The commit a staged job hands over (:meth:`.JobFiles.stage`): its fragments
    (FragmentMetadata JSON), the schema they were written with, the version it read."""

    fragments: list[str]
    schema: pa.Schema
    read_version: int | None

    def to_json(self) -> str:
        schema = base64.b64encode(self.schema.serialize().to_pybytes()).decode()
        return json.dumps({"fragments": self.fragments, "schema": schema, "read_version": self.read_version})

    @classmethod
    def from_json(cls, text: str) -> StagedCommit:
        handed = json.loads(text)
        schema = pa.ipc.read_schema(pa.py_buffer(base64.b64decode(handed["schema"])))
        return cls(handed["fragments"], schema, handed["read_version"])


def commit_staged(ref: TableRef, staged: StagedCommit, first_version: bool = False):
    """Make a staged job's commit: one Overwrite of the table at ``ref`` with the job's
    rows and schema (``first_version``: the table's first, see :meth:`_WriteSpec.commit`)."""
    spec = _WriteSpec(ref=ref, target=staged.schema, overwrite=True)
    read_version = None if first_version else staged.read_version
    return spec.commit([LanceCommitMessage(staged.fragments)], read_version, {WRITER_KEY: "spark"}, first_version)


def undeclare(ref: TableRef) -> None:
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

    def __init__(self, spec: ScanSpec, per_partition: int, starting: str | None, ignore_changes: bool):
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
            for p in _partitions(groups_of(new_ids, self.per_partition))
        ]

    def read(self, partition):
        spec = ScanSpec(**{**self.spec.__dict__, "version": partition.value["version"]})
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
    """Options: see the module docstring and :mod:`lance_ns.spark.resolve`."""

    @classmethod
    def name(cls):
        return "lance"

    @property
    def opts(self) -> SourceOptions:
        """The options, parsed once per source object (Spark re-creates it
        in every worker that needs it)."""
        parsed = self.__dict__.get("_opts")
        if parsed is None:
            parsed = self.__dict__["_opts"] = SourceOptions.parse(self.options)
        return parsed

    def _ref(self, create: bool = False):
        return resolve(self.opts, create=create)

    def schema(self):
        ref, _ = self._ref()
        return spark_schema(table_schema(ref, self.opts, snapshot_version(ref, self.opts)))

    def _scan_spec(self, ref: TableRef, version: int, schema: StructType) -> ScanSpec:
        return ScanSpec(
            ref=ref,
            version=version,
            columns=[f.name for f in schema.fields],
            target=arrow_target(schema),
            filter=self.opts.filter,
            batch_size=self.opts.batch_size,
        )

    def reader(self, schema):
        ref, _ = self._ref()
        spec = self._scan_spec(ref, snapshot_version(ref, self.opts), schema)
        return LanceReader(
            spec, self.opts.fragments_per_partition, push=self.opts.push_filters is True, latest=self.opts.read_latest
        )

    def _write_spec(self, schema: StructType, overwrite: bool):
        replaces, where = self.opts.replace_version, self.opts.replace_where
        if (replaces is not None or where is not None) and not overwrite:
            raise error("InvalidInputError", "options 'replaceVersion' and 'replaceWhere' need an overwrite")
        if replaces is not None and where is not None:
            raise error("InvalidInputError", "give either 'replaceVersion' or 'replaceWhere', not both")
        staged = self.opts.stage is not None
        # a staged job's table is declared by no write (a staged create's, by the catalog's commit)
        ref, declared = self._ref(create=replaces is None and not staged)
        spec = _WriteSpec(
            ref=ref,
            target=None,  # set below: which schema depends on the kind of write
            overwrite=overwrite or staged,  # a staged job writes a new table's rows: its schema too
            max_rows_per_file=self.opts.max_rows_per_file,
            data_storage_version=self.opts.data_storage_version,
            replaces=replaces,
            replace_where=where,
        )
        target, version = _write_target(spec, schema, self.opts.table_properties)
        return replace(spec, target=target), version, declared

    def writer(self, schema, overwrite):
        spec, version, declared = self._write_spec(schema, overwrite)
        stage = self.opts.stage
        job = JobFiles(spec.ref.uri, spec.ref.storage_options, **({"job_id": stage} if stage else {}))
        return LanceWriter(replace(spec, job=job), version, declared, staged=stage is not None)

    def streamReader(self, schema):
        ref, _ = self._ref()
        spec = self._scan_spec(ref, ref.open().version, schema)
        return LanceStreamReader(
            spec, self.opts.fragments_per_partition, self.opts.starting_version, self.opts.ignore_changes
        )

    def streamWriter(self, schema, overwrite):
        if not self.opts.stream_id:
            raise error(
                "InvalidInputError",
                "the lance streaming sink needs option 'streamId' (or 'checkpointLocation') "
                "to recognise replayed batches",
            )
        spec, _, declared = self._write_spec(schema, overwrite)
        return LanceStreamWriter(spec, self.opts.stream_id, declared)


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


def register(spark, *, warn: bool = True) -> bool:
    """Register the ``lance`` format with ``spark`` (idempotent).

    Returns True when ``lance`` is the JVM bridge (its jar is on the
    session's classpath, see :mod:`.jar`), False when it is this Python
    source.  ``lance_python`` is always this Python source.  A session
    without the jar gets a warning (once per process) naming the settings
    that give it the JVM read path, unless ``LANCE_NS_SPARK_BRIDGE=0``.
    """
    if not _python_source_registered(spark, LancePythonDataSource.name()):
        spark.dataSource.register(LancePythonDataSource)
    try:
        spark.dataSource.register(LanceDataSource)
    except Exception as exc:  # noqa: BLE001 - pyspark raises AnalysisException
        if "DATA_SOURCE_ALREADY_EXISTS" not in str(exc):
            raise
        # a JVM source named lance exists: the bridge; its workers default to this Python,
        # unless this is a Spark Connect client: the server's JVM is not ours to point at
        # our interpreter (its spark.pyspark.python / PYSPARK_PYTHON decide)
        if not type(spark).__module__.startswith("pyspark.sql.connect."):
            spark._jvm.lancens.spark.LanceProvider.useDriverPython(sys.executable)
        return True
    if warn:
        _warn_python_path()
    return False


def _python_source_registered(spark, name: str) -> bool:
    """Whether the session already has the Python data source ``name``: the
    ``pyspark_lance_ns`` module registers ``lance_python`` statically in any
    session whose Python has lance-ns, and registering it again makes Spark
    log that it replaced a statically registered source.  A session without
    a JVM here (a Spark Connect client) cannot ask: it registers (its server
    logs the replacement, the client sees nothing)."""
    jsession = getattr(spark, "_jsparkSession", None)
    if jsession is None:
        return False
    return bool(jsession.sessionState().dataSourceManager().dataSourceExists(name))


_warned_python_path = False


def _warn_python_path() -> None:
    global _warned_python_path
    from . import jar

    if _warned_python_path or not jar.enabled():
        return
    _warned_python_path = True
    import warnings

    try:
        path = jar.jar_path()
    except (OSError, RuntimeError):
        path = None
    from .settings import ARROW_FLAGS

    where = repr(path) if path else ("the path `python -m lance_ns.spark.jar` prints (the jar built with the "
                                      "package for this Spark minor, or a JDK's javac to build one)")
    warnings.warn(
        "lance: this SparkSession has no lance-ns jar, so format('lance') reads and writes through the "
        "Python data source, which is several times slower than the JVM path, and no lance SQL catalog "
        f"can be configured. Start the session with spark.jars={where} (spark-submit --jars), "
        f"spark.driver.extraJavaOptions and spark.executor.extraJavaOptions={ARROW_FLAGS!r}: "
        "`python -m lance_ns.spark.bridge` prints every setting (spark-submit arguments, or "
        "spark-defaults.conf lines with --defaults), or use lance_ns.spark.build_session(), which "
        "sets them. LANCE_NS_SPARK_BRIDGE=0 silences this warning.",
        stacklevel=3,
    )


_freeze_imports()
