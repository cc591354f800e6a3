"""The data operations of the spec, for any namespace, through pylance.

:class:`DataOperations` is a collaborator the namespace holds (``ns.data_ops``),
not a base class: it asks the namespace only for DescribeTable (a table's
location and storage options), DeclareTable and DeregisterTable, its
``limits`` and ``storage_options``, and, for CreateTable on a catalog that keeps
a dropped table's marker, ``unused_default_location``.  So the directory
namespace and every catalog backend share one implementation, and the
namespace's own wrapper (request normalisation, the error boundary) stays the
one entry point: the namespace's operations delegate here.
"""

from __future__ import annotations

import json
import re
from datetime import timedelta

from lance_namespace import (
    CountTableRowsResponse,
    CreateTableIndexResponse,
    CreateTableResponse,
    CreateTableScalarIndexResponse,
    CreateTableTagResponse,
    DeclareTableRequest,
    DeleteFromTableResponse,
    DeleteTableTagResponse,
    DeregisterTableRequest,
    DescribeTableIndexStatsResponse,
    DescribeTableRequest,
    DescribeTableVersionResponse,
    DropTableIndexResponse,
    GetTableTagVersionResponse,
    InsertIntoTableResponse,
    ListTableIndicesResponse,
    ListTableTagsResponse,
    ListTableVersionsResponse,
    MergeInsertIntoTableResponse,
    QueryTableResponse,
    RestoreTableResponse,
    UpdateTableResponse,
    UpdateTableTagResponse,
)
from lance_namespace_urllib3_client.models import IndexContent, TableVersion, TagContents

from . import detail, storage, datasets
from .errors import (
    ConcurrentModificationError,
    InvalidInputError,
    LanceNamespaceError,
    NamespaceNotFoundError,
    TableAlreadyExistsError,
    TableIndexAlreadyExistsError,
    TableIndexNotFoundError,
    TableNotFoundError,
    TableTagAlreadyExistsError,
    TableTagNotFoundError,
    TableVersionNotFoundError,
    UnsupportedOperationError,
)
from .identifiers import split_table_id
from .modes import WriteMode
from .paging import paginate

_VECTOR_INDEXES = {"IVF_FLAT", "IVF_PQ", "IVF_SQ", "IVF_HNSW_PQ", "IVF_HNSW_SQ", "IVF_HNSW_FLAT", "IVF_RQ"}
_SCALAR_INDEXES = {"BTREE", "BITMAP", "LABEL_LIST", "INVERTED", "FTS", "NGRAM", "ZONEMAP", "BLOOMFILTER"}


#: CreateTableIndex request field -> pylance's create_index keyword (every build parameter is passed on)
_VECTOR_PARAMS = {"num_partitions": "num_partitions", "num_sub_vectors": "num_sub_vectors", "num_bits": "num_bits",
                  "sample_rate": "sample_rate", "max_iterations": "max_iters",
                  "target_partition_size": "target_partition_size", "m": "m", "ef_construction": "ef_construction"}
#: the full-text (INVERTED) index options, named alike in the request and in pylance
_FTS_PARAMS = {k: k for k in ("with_position", "base_tokenizer", "language", "max_token_length", "lower_case", "stem",
                              "remove_stop_words", "ascii_folding")}


def _given(request, names: dict[str, str]) -> dict:
    """The request's options that were given, under pylance's keywords."""
    return {kw: getattr(request, f) for f, kw in names.items() if getattr(request, f, None) is not None}


def lance_write(data, target, mode: str, opts: dict | None = None):
    """``lance.write_dataset`` to a location, or to an open dataset (its branch)."""
    import lance

    return lance.write_dataset(data, target, mode=mode, storage_options=opts or None)


class _Taken(Exception):
    """Another writer committed the table's first version before us."""


#: version 1's manifest under Lance's v2 and v1 manifest naming
_FIRST_MANIFESTS = (f"{(1 << 64) - 2}.manifest", "1.manifest")


def _withdraw_first_version(location: str, opts: dict, fragments) -> None:
    """Remove the first version we committed: its manifest (the table is gone), then its data."""
    for name in _FIRST_MANIFESTS:
        storage.delete_location(storage.join(location, "_versions", name), opts)
    storage.remove_data_files(location, opts, fragments)


_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")
_UNIT_SECONDS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}


def _duration(text: str) -> timedelta:
    """A duration as the spec writes it ("30s", "5m", "1h30m", "500ms")."""
    parts = _DURATION.findall(text.strip())
    if not parts or "".join(n + u for n, u in parts) != text.strip():
        raise InvalidInputError(f"timeout {text!r} is not a duration such as '30s' or '5m'")
    return timedelta(seconds=sum(float(n) * _UNIT_SECONDS[u] for n, u in parts))


def _full_text_query(fts):
    """A QueryTable full-text query -> pylance's: a string, or a structured match or phrase query."""
    if fts.string_query is not None:
        sq = fts.string_query
        return {"query": sq.query, "columns": sq.columns} if sq.columns else sq.query
    query = fts.structured_query.query if fts.structured_query is not None else None
    clause = query and (query.phrase or query.match)
    if clause is None:
        raise UnsupportedOperationError("only string, match and phrase full-text queries are supported")
    if not clause.column:
        raise UnsupportedOperationError("a structured full-text query needs its column here")
    from lance.query import FullTextOperator, MatchQuery, PhraseQuery

    if query.phrase is not None:
        return PhraseQuery(clause.terms, clause.column, slop=clause.slop or 0)
    options = {k: getattr(clause, k) for k in ("boost", "fuzziness", "max_expansions", "prefix_length")
               if getattr(clause, k) is not None}
    if clause.operator:
        try:
            options["operator"] = FullTextOperator(clause.operator.upper())
        except ValueError:
            raise InvalidInputError(f"unknown full-text operator {clause.operator!r}") from None
    return MatchQuery(clause.terms, clause.column, **options)


def version_page(versions: list[dict], request) -> tuple[list[dict], str | None]:
    """One page of a ListTableVersions answer (dicts with ``version``), ascending or
    ``descending``: keyset paging on zero-padded keys, which sort like the versions."""
    by_key = {f"{(1 << 62) - v['version'] if request.descending else v['version']:020d}": v for v in versions}
    page, token = paginate(sorted(by_key), request.limit, request.page_token)
    return [by_key[k] for k in page], token


def scan_arguments(ds, request) -> dict:
    """pylance scanner arguments of a query (QueryTable, and the plans of
    Explain/AnalyzeTableQueryPlan, whose requests carry the same fields)."""
    columns = None
    if request.columns is not None:
        if request.columns.column_aliases:
            columns = dict(request.columns.column_aliases)
        elif request.columns.column_names:
            columns = list(request.columns.column_names)
    kwargs = dict(columns=columns, filter=request.filter or None, prefilter=request.prefilter,
                  with_row_id=request.with_row_id, offset=request.offset, fast_search=request.fast_search)
    vector = request.vector.single_vector if request.vector is not None else None
    if request.vector is not None and request.vector.multi_vector:
        vector = request.vector.multi_vector
    if vector:
        nearest = {"column": request.vector_column or first_vector_column(ds), "q": vector, "k": request.k}
        for src, dst in (("distance_type", "metric"), ("nprobes", "nprobes"), ("refine_factor", "refine_factor"),
                         ("ef", "ef"), ("minimum_nprobes", "minimum_nprobes"),
                         ("maximum_nprobes", "maximum_nprobes")):
            value = getattr(request, src, None)
            if value is not None:
                nearest[dst] = value
        if request.bypass_vector_index:
            nearest["use_index"] = False
        if request.lower_bound is not None or request.upper_bound is not None:
            nearest["distance_range"] = (request.lower_bound, request.upper_bound)
        kwargs["nearest"] = nearest
    else:
        kwargs["limit"] = request.k or None
    if request.full_text_query is not None:
        kwargs["full_text_query"] = _full_text_query(request.full_text_query)
    return {k: v for k, v in kwargs.items() if v is not None}



def first_vector_column(ds) -> str:
    """The column a vector search uses when none is named: the table's first vector column."""
    import pyarrow as pa

    for field in ds.schema:
        if pa.types.is_fixed_size_list(field.type) or (
            pa.types.is_list(field.type) and pa.types.is_fixed_size_list(field.type.value_type)
        ):
            return field.name
    raise InvalidInputError("the table has no vector column; give vector_column")


class DataOperations:
    """CreateTable, InsertInto..., indices, versions and tags of the namespace
    ``ns``.  Every operation with a ``branch`` field reads or writes that branch
    of the table (pylance's branches: ``<location>/tree/<branch>``).

    ``request_data`` of the data operations is Arrow IPC bytes, or the table the REST
    server's pipeline already decoded and checked from them (decoded once)."""

    def __init__(self, ns):
        self.ns = ns

    # -- helpers ------------------------------------------------------------------
    def where(self, table_id, **describe) -> tuple[str, dict]:
        location, opts, _ = self._described(table_id, **describe)
        return location, opts

    def _described(self, table_id, **describe):
        """(location, storage options, DescribeTableResponse) of a table."""
        resp = self.ns.describe(DescribeTableRequest(id=table_id, vend_credentials=False, **describe))
        opts = dict(self.ns.storage_options)
        opts.update(resp.storage_options or {})
        if not resp.location:
            raise TableNotFoundError(f"table {table_id!r} has no location")
        return resp.location, opts, resp

    def dataset(self, request, version: int | None = None, tag: str | None = None):
        """The table of ``request.id`` on the request's branch (main when none), at ``version`` or ``tag``."""
        location, opts, resp = self._described(request.id)
        branch = getattr(request, "branch", None)
        if resp.managed_versioning:
            if branch:
                raise UnsupportedOperationError("branches of implementation-managed tables are not supported")
            return self._managed_dataset(request.id, location, opts, version, tag), location
        return detail.open_dataset(location, opts, version, tag, branch=branch), location

    # An implementation-managed table is opened and written through this namespace
    # (pylance's namespace client): reads resolve the namespace's published versions,
    # commits go through CreateTableVersion.  Opening it by its location instead would
    # read, and commit on top of, whatever storage holds.
    def _managed_dataset(self, table_id, location: str, opts: dict, version=None, tag=None):
        import lance

        with datasets.translated(location):
            ds = lance.dataset(namespace_client=self.ns, table_id=list(table_id), version=version,
                               storage_options=opts or None)
        return detail.checkout(ds, location, None, tag)

    def _write(self, data, location: str, opts: dict, mode: str, table_id=None, managed: bool = False):
        import lance

        with datasets.translated(location):
            if managed:
                return lance.write_dataset(data, namespace_client=self.ns, table_id=list(table_id), mode=mode,
                                           storage_options=opts or None)
            return lance_write(data, location, mode, opts)

    def _first_version(self, data, location: str, opts: dict):
        """Commit version 1 of a table, or raise :class:`_Taken` if another writer did.

        ``write_dataset(mode="create")`` is not exclusive: Lance rebases a racing
        create onto the winner's version as an Overwrite, so several writers are
        told they created the table and all but the last lose their rows.  Here
        the data files are written first (uniquely named) and version 1 is
        committed without retries: the version file is created only if absent
        (local disk and S3 alike), so exactly one writer commits it.  A loser
        removes only its own data files.
        """
        import lance
        from lance.dataset import LanceDataset, LanceOperation

        fragments = []
        try:
            fragments = lance.fragment.write_fragments(data, location, mode="create", storage_options=opts or None)
            # the same manifest naming as write_dataset's default
            ds = LanceDataset.commit(location, LanceOperation.Overwrite(data.schema, fragments),
                                     storage_options=opts or None, enable_v2_manifest_paths=True, max_retries=0)
            return ds, fragments
        except Exception as e:
            if storage.is_unreachable(e):  # nothing can have been written, nor be asked again
                raise storage.unreachable_error(e, location) from e
            if storage.lance_version(location, opts) is None:
                raise datasets.translate(e, location) from e  # no winner: a genuine failure
            storage.remove_data_files(location, opts, fragments)
            raise _Taken(location) from e

    def undo_declaration(self, table_id, location: str, opts: dict, storage_reachable: bool = True) -> None:
        """Remove our own declaration after our first write failed -- unless a
        table exists there by now: then it is someone else's and stays.  When the
        storage could not be reached, nothing was written there: the catalog entry
        goes, and storage is not asked again."""
        if storage_reachable and storage.lance_version(location, opts) is not None:
            return
        self.ns.deregister(DeregisterTableRequest(id=table_id))
        if storage_reachable:
            storage.delete_location(location, opts)

    def _existing(self, table_id):
        try:
            return self.ns.describe(DescribeTableRequest(id=table_id, check_declared=True, vend_credentials=False))
        except TableNotFoundError:
            return None

    # -- create / insert / merge / update / delete ----------------------------------
    def create_table(self, request, request_data):
        """Exactly one CreateTable of a name wins.  The catalog's declaration is
        atomic (one winner), and so is the first commit (see _first_version),
        which settles a declared table being created by several clients.  A
        loser answers TableAlreadyExists (5) and never undoes what is not its own."""
        data = datasets.ipc_to_table(request_data, self.ns.limits.max_decoded_bytes)
        mode = WriteMode.parse(request.mode, WriteMode.CREATE)
        if mode is WriteMode.APPEND:
            raise InvalidInputError("CreateTable mode must be Create, ExistOk or Overwrite")
        overrides = request.storage_options or {}  # the spec: passed to Lance for this create's writes
        existing, declared_here = self._existing(request.id), False
        if existing is None:
            try:
                declared = self.ns.declare(DeclareTableRequest(
                    id=request.id, location=self._creation_location(request.id),
                    # the location is the namespace's choice even when it is a fresh sibling: owned
                    properties={storage.OWNED_KEY: "true", **(request.properties or {})}, vend_credentials=False))
                declared_here = True
                location, managed = declared.location, bool(declared.managed_versioning)
                opts = {**self.ns.storage_options, **(declared.storage_options or {}), **overrides}
            except TableAlreadyExistsError:  # another client declared it since we looked
                existing = self._existing(request.id)
                if existing is None:
                    raise
        if existing is not None:
            location, opts = existing.location, {**self.ns.storage_options, **(existing.storage_options or {}), **overrides}
            managed = bool(existing.managed_versioning)
            if not existing.is_only_declared:
                return self._create_over_existing(mode, request.id, data, location, opts, managed)
        if managed:
            return self._create_managed(mode, request.id, data, location, opts, declared_here)
        try:
            ds, fragments = self._first_version(data, location, opts)
        except _Taken:  # another client created the declared table first
            return self._create_over_existing(mode, request.id, data, location, opts)
        except Exception as e:
            if not self._still_declared(request.id, location):
                # a DropTable won while we wrote (and deleted what we were writing)
                raise ConcurrentModificationError(f"table {request.id!r} was dropped while being created") from e
            if declared_here:
                self.undo_declaration(request.id, location, opts, storage_reachable=e.code != 17
                                       if isinstance(e, LanceNamespaceError) else True)
            raise
        if not self._still_declared(request.id, location):
            # A DropTable won while we wrote: our version must not outlive it (only
            # our own files go).  Whether the table was ever visible with our data
            # is unknown, so this is no acknowledged create: a conflict.
            _withdraw_first_version(location, opts, fragments)
            raise ConcurrentModificationError(f"table {request.id!r} was dropped while being created")
        return CreateTableResponse(location=location, version=ds.version, storage_options=opts or None)

    def _creation_location(self, table_id) -> str | None:
        """Where CreateTable puts a new table: the default location (None), or, on a
        catalog whose default location still holds a dropped table's files (its
        ``.lance-dropped`` marker), a fresh sibling of it, so a late writer of the
        dropped table cannot land in the new one.  Checked here, where the data is
        written anyway; DeclareTable itself makes no storage call."""
        if not self.ns.keeps_dropped_marker:
            return None
        ns, name = split_table_id(table_id)
        default = self.ns.default_location(ns, name)
        chosen = self.ns.unused_default_location(default)
        return None if chosen == default else chosen

    def _still_declared(self, table_id, location: str) -> bool:
        """Whether the table is still the one we are creating (same location)."""
        try:
            return self.ns.describe(DescribeTableRequest(id=table_id, vend_credentials=False)).location == location
        except (TableNotFoundError, NamespaceNotFoundError):
            return False

    def _create_over_existing(self, mode: WriteMode, table_id, data, location: str, opts: dict,
                              managed: bool = False):
        """CreateTable of a table that has data: Create loses, ExistOk keeps it, Overwrite replaces it."""
        if mode is WriteMode.CREATE:
            raise TableAlreadyExistsError(f"table {table_id!r} already exists")
        if mode is WriteMode.EXIST_OK:
            ds = self._managed_dataset(table_id, location, opts) if managed else detail.open_dataset(location, opts)
        else:
            ds = self._write(data, location, opts, "overwrite", table_id, managed)
        return CreateTableResponse(location=location, version=ds.version, storage_options=opts or None)

    def _create_managed(self, mode: WriteMode, table_id, data, location: str, opts: dict, declared_here: bool):
        """The first version of an implementation-managed table, committed through the
        namespace: of racing creators the namespace grants version 1 once; the others
        then find the table created."""
        try:
            ds = self._write(data, location, opts, "append", table_id, managed=True)
        except ConcurrentModificationError:
            existing = self._existing(table_id)
            if existing is not None and not existing.is_only_declared:
                return self._create_over_existing(mode, table_id, data, location, opts, True)
            raise
        except Exception:
            if declared_here and self._still_declared(table_id, location):
                existing = self._existing(table_id)
                if existing is not None and existing.is_only_declared:
                    self.ns.deregister(DeregisterTableRequest(id=table_id))
            raise
        return CreateTableResponse(location=location, version=ds.version, storage_options=opts or None)

    def insert_into_table(self, request, request_data):
        data = datasets.ipc_to_table(request_data, self.ns.limits.max_decoded_bytes)
        mode = WriteMode.parse(request.mode, WriteMode.APPEND)
        if mode not in (WriteMode.APPEND, WriteMode.OVERWRITE):
            raise InvalidInputError("InsertIntoTable mode must be Append or Overwrite")
        if request.branch:  # a branch exists only on a table with data: no first version to settle
            ds, location = self.dataset(request)
            with datasets.translated(location):
                ds = lance_write(data, ds, mode.value)
            return InsertIntoTableResponse(num_inserted_rows=data.num_rows, version=ds.version)
        location, opts, resp = self._described(request.id, check_declared=True)
        if resp.managed_versioning:  # the namespace grants its first version, like every other
            ds = self._write(data, location, opts, mode.value, request.id, managed=True)
            return InsertIntoTableResponse(num_inserted_rows=data.num_rows, version=ds.version)
        if resp.is_only_declared:
            # the first insert into a declared table creates it, as pylance's append
            # does; when another insert created it first, ours is an ordinary write
            try:
                ds, _ = self._first_version(data, location, opts)
                return InsertIntoTableResponse(num_inserted_rows=data.num_rows, version=ds.version)
            except _Taken:
                pass
        ds = self._write(data, location, opts, mode.value)
        return InsertIntoTableResponse(num_inserted_rows=data.num_rows, version=ds.version)

    def merge_insert_into_table(self, request, request_data):
        data = datasets.ipc_to_table(request_data, self.ns.limits.max_decoded_bytes)
        if request.timeout:
            _duration(request.timeout)  # refused before anything is written
        if not request.on:
            raise InvalidInputError("MergeInsertIntoTable needs 'on' columns")
        ds, location = self.dataset(request)
        with datasets.translated(location):
            builder = ds.merge_insert(list(request.on))
            if request.when_matched_update_all:
                builder = builder.when_matched_update_all(request.when_matched_update_all_filt or None)
            if request.when_not_matched_insert_all:
                builder = builder.when_not_matched_insert_all()
            if request.when_not_matched_by_source_delete:
                builder = builder.when_not_matched_by_source_delete(
                    request.when_not_matched_by_source_delete_filt or None
                )
            if request.use_index is not None:
                builder = builder.use_index(request.use_index)
            if request.timeout:
                builder = builder.retry_timeout(_duration(request.timeout))
            stats = builder.execute(data)
        return MergeInsertIntoTableResponse(
            num_updated_rows=int(stats.get("num_updated_rows", 0)),
            num_inserted_rows=int(stats.get("num_inserted_rows", 0)),
            num_deleted_rows=int(stats.get("num_deleted_rows", 0)),
            version=ds.version,
        )

    def update_table(self, request):
        if not request.updates:
            raise InvalidInputError("UpdateTable needs at least one [column, expression] pair")
        if request.properties:  # refused before any row changes, never silently dropped
            raise UnsupportedOperationError("UpdateTable cannot store table properties in this namespace")
        ds, location = self.dataset(request)
        with datasets.translated(location):
            result = ds.update({col: expr for col, expr in request.updates}, where=request.predicate or None)
        return UpdateTableResponse(updated_rows=int(result.get("num_rows_updated", 0)), version=ds.version)

    def delete_from_table(self, request):
        if not request.predicate:
            raise InvalidInputError("DeleteFromTable needs a predicate")
        ds, location = self.dataset(request)
        with datasets.translated(location):
            ds.delete(request.predicate)
        return DeleteFromTableResponse(version=ds.version)

    def count_table_rows(self, request):
        ds, location = self.dataset(request, request.version)
        with datasets.translated(location):
            return CountTableRowsResponse(count=ds.count_rows(filter=request.predicate or None))

    def query_table(self, request):
        ds, location = self.dataset(request, request.version)
        with datasets.translated(location):
            result = ds.to_table(**scan_arguments(ds, request))
        return QueryTableResponse(data=datasets.table_to_ipc_file(result))


    # -- indices ---------------------------------------------------------------------------
    def create_table_index(self, request):
        self._create_index(request)
        return CreateTableIndexResponse()

    def create_table_scalar_index(self, request):
        self._create_index(request, scalar_only=True)
        return CreateTableScalarIndexResponse()

    def _create_index(self, request, scalar_only: bool = False) -> None:
        ds, location = self.dataset(request)
        kind = (request.index_type or "").upper()
        name = request.name or f"{request.column}_idx"
        if any(i.name == name for i in ds.describe_indices()):
            raise TableIndexAlreadyExistsError(f"index {name!r} already exists")
        with datasets.translated(location):
            if kind in _SCALAR_INDEXES or kind == "SCALAR":
                params = _given(request, _FTS_PARAMS) if kind in ("INVERTED", "FTS") else {}
                ds.create_scalar_index(request.column, "BTREE" if kind == "SCALAR" else kind, name=name, **params)
            elif kind in _VECTOR_INDEXES and not scalar_only:
                params = _given(request, _VECTOR_PARAMS)
                if request.distance_type:
                    params["metric"] = request.distance_type
                ds.create_index(request.column, kind, name=name, **params)
            else:
                raise InvalidInputError(f"unsupported index type {request.index_type!r}")

    def list_table_indices(self, request):
        ds, location = self.dataset(request, request.version)
        with datasets.translated(location):
            described = sorted(ds.describe_indices(), key=lambda d: d.name)
            listed = {i["name"]: i for i in ds.list_indices()}
        names = [d.name for d in described]
        page, token = paginate(names, request.limit, request.page_token)
        by_name = {d.name: d for d in described}
        out = []
        for name in page:
            d, info = by_name[name], listed.get(name, {})
            out.append(
                IndexContent(
                    index_name=name,
                    index_uuid=str(info.get("uuid", "")),
                    columns=list(d.field_names),
                    status="Ready",
                    index_type=str(info.get("type", "")) or None,
                    type_url=d.type_url,
                    num_indexed_rows=int(d.num_rows_indexed),
                    size_bytes=int(d.total_size_bytes or 0),
                    num_segments=len(d.segments) if hasattr(d, "segments") else None,
                    index_details=json.dumps(d.details, default=str) if getattr(d, "details", None) else None,
                )
            )
        return ListTableIndicesResponse(indexes=out, page_token=token)

    def _require_index(self, ds, name: str | None) -> str:
        if not name:
            raise InvalidInputError("index_name is required")
        if not any(i.name == name for i in ds.describe_indices()):
            raise TableIndexNotFoundError(f"index {name!r} does not exist")
        return name

    def drop_table_index(self, request):
        ds, location = self.dataset(request)
        name = self._require_index(ds, request.index_name)
        with datasets.translated(location):
            ds.drop_index(name)
        return DropTableIndexResponse()

    def describe_table_index_stats(self, request):
        ds, location = self.dataset(request, request.version)
        name = self._require_index(ds, request.index_name)
        with datasets.translated(location):
            stats = ds.stats.index_stats(name)
        metric = None
        for idx in stats.get("indices", []):
            metric = metric or idx.get("metric_type")
        return DescribeTableIndexStatsResponse(
            index_type=str(stats.get("index_type")),
            distance_type=metric,
            num_indexed_rows=int(stats.get("num_indexed_rows", 0)),
            num_unindexed_rows=int(stats.get("num_unindexed_rows", 0)),
            num_indices=int(stats.get("num_indices", 0)),
        )

    # -- versions -------------------------------------------------------------------------
    @staticmethod
    def _version_model(v: dict) -> TableVersion:
        ts = v.get("timestamp")
        return TableVersion(
            version=int(v["version"]),
            manifest_path=f"_versions/{v['version']}.manifest",
            timestamp_millis=int(ts.timestamp() * 1000) if ts is not None else None,
            metadata={str(k): str(val) for k, val in (v.get("metadata") or {}).items()},
        )

    def list_table_versions(self, request):
        ds, location = self.dataset(request)
        with datasets.translated(location):
            versions = ds.versions()
        page, token = version_page(versions, request)
        return ListTableVersionsResponse(versions=[self._version_model(v) for v in page], page_token=token)

    def describe_table_version(self, request):
        ds, location = self.dataset(request)
        with datasets.translated(location):
            versions = ds.versions()
        wanted = request.version if request.version is not None else ds.version
        for v in versions:
            if v["version"] == wanted:
                return DescribeTableVersionResponse(version=self._version_model(v))
        raise TableVersionNotFoundError(f"version {wanted} does not exist")

    def restore_table(self, request):
        ds, location = self.dataset(request, request.version)
        with datasets.translated(location):
            ds.restore()
        return RestoreTableResponse()

    def named_page(self, request, read, build) -> tuple[dict, str | None]:
        """A page of a table's named references (tags, branches): ``read(ds)`` gives
        name -> pylance's dict, ``build`` makes each the response's model."""
        ds, location = self.dataset(request)
        with datasets.translated(location):
            named = read(ds)
        page, token = paginate(sorted(named), request.limit, request.page_token)
        return {name: build(named[name]) for name in page}, token

    # -- tags ---------------------------------------------------------------------------------
    def list_table_tags(self, request):
        tags, token = self.named_page(request, lambda ds: ds.tags.list(), lambda t: TagContents(
            version=int(t["version"]), branch=t.get("branch"), manifestSize=int(t.get("manifest_size") or 0)))
        return ListTableTagsResponse(tags=tags, page_token=token)

    def _tags(self, request, must_exist: bool | None):
        ds, location = self.dataset(request)
        if not request.tag:
            raise InvalidInputError("tag is required")
        with datasets.translated(location):
            exists = request.tag in ds.tags.list()
        if must_exist and not exists:
            raise TableTagNotFoundError(f"tag {request.tag!r} does not exist")
        if must_exist is False and exists:
            raise TableTagAlreadyExistsError(f"tag {request.tag!r} already exists")
        return ds, location

    def _check_version(self, ds, version: int) -> None:
        if not any(v["version"] == version for v in ds.versions()):
            raise TableVersionNotFoundError(f"version {version} does not exist")

    def create_table_tag(self, request):
        ds, location = self._tags(request, must_exist=False)
        self._check_version(ds, request.version)
        with datasets.translated(location):
            ds.tags.create(request.tag, request.version)
        return CreateTableTagResponse()

    def delete_table_tag(self, request):
        ds, location = self._tags(request, must_exist=True)
        with datasets.translated(location):
            ds.tags.delete(request.tag)
        return DeleteTableTagResponse()

    def update_table_tag(self, request):
        ds, location = self._tags(request, must_exist=True)
        self._check_version(ds, request.version)
        with datasets.translated(location):
            ds.tags.update(request.tag, request.version)
        return UpdateTableTagResponse()

    def get_table_tag_version(self, request):
        ds, location = self._tags(request, must_exist=True)
        with datasets.translated(location):
            return GetTableTagVersionResponse(version=int(ds.tags.get_version(request.tag)))
