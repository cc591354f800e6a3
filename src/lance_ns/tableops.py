"""The table operations beyond reading and writing rows, for any namespace,
through pylance: schema evolution, schema and field metadata, statistics,
branches, query plans and transactions.

:class:`TableOperations` is a collaborator the namespace holds
(``ns.table_ops``): it opens a table's dataset through the namespace's
:class:`~lance_ns.dataops.DataOperations` (on the request's branch) and calls
one hook of the namespace, ``schema_changed(table_id, ds)``, which a catalog
that keeps a copy of the schema in its table object (Unity's ``columns``)
implements.

What a *transaction* is here: every Lance commit writes one transaction file
(``_transactions/``) with a UUID; the responses that carry a
``transaction_id`` name that UUID, and DescribeTransaction finds it by the id
``<table id...>, <uuid>``.  A committed Lance transaction never changes, so
AlterTransaction has nothing to alter (Unsupported, with that reason).
"""

from __future__ import annotations

from typing import Any

from lance_namespace import (
    AlterTableAddColumnsResponse,
    AlterTableAlterColumnsResponse,
    AlterTableBackfillColumnsResponse,
    AlterTableDropColumnsResponse,
    AlterTransactionResponse,
    CreateTableBranchResponse,
    DeleteTableBranchResponse,
    DescribeTransactionResponse,
    GetTableStatsResponse,
    ListTableBranchesResponse,
    UpdateFieldMetadataResponse,
    UpdateTableSchemaMetadataResponse,
)
from lance_namespace_urllib3_client.models import (
    AlterTransactionSetProperty,
    AlterTransactionSetStatus,
    BranchContents,
    FragmentStats,
    FragmentSummary,
)

from . import detail, datasets
from .dataops import scan_arguments
from .detail import json_to_arrow_type
from .errors import (
    ConcurrentModificationError,
    InvalidInputError,
    InvalidTableStateError,
    TableBranchAlreadyExistsError,
    TableBranchNotFoundError,
    TransactionNotFoundError,
    UnsupportedOperationError,
)
from .identifiers import name_problem
from .modes import SetPropertyMode, TransactionStatus, UnsetPropertyMode

#: field metadata key holding a computed column's SQL expression (its binding),
#: written by AlterTableAddColumns ``computed`` and read by AlterTableBackfillColumns
COMPUTED_BINDING_KEY = "lance-ns:computed"
#: a fragment with fewer rows than Lance's compaction target is "small" (uncompacted):
#: ``lance.optimize``'s default ``target_rows_per_fragment``
COMPACTION_TARGET_ROWS = 1024 * 1024
MAIN_BRANCH = "main"

_NO_UDF = (
    "virtual (UDF) columns run a pickled Python function inside a Docker image (Geneva's job "
    "runner); Lance has no way to run them, so lance-ns cannot"
)
NO_VIEWS = (
    "Lance has no materialized views: a view's source query and UDTF are an opaque client format "
    "(Geneva's) that only its job runner executes, so lance-ns can neither create nor refresh one"
)
_IMMUTABLE = "a Lance transaction is written once, when it commits, and never changes"


def split_field_path(path: str) -> list[str]:
    """A Lance field path -> its segments: dots separate, a backtick-quoted
    segment keeps literal dots, a doubled backtick inside it is one backtick."""
    segments, current, quoted, i = [], [], False, 0
    while i < len(path):
        c = path[i]
        if quoted:
            if c == "`" and path[i + 1 : i + 2] == "`":
                current.append("`")
                i += 1
            elif c == "`":
                quoted = False
            else:
                current.append(c)
        elif c == "`":
            quoted = True
        elif c == ".":
            segments.append("".join(current))
            current = []
        else:
            current.append(c)
        i += 1
    segments.append("".join(current))
    if quoted or any(s == "" for s in segments):
        raise InvalidInputError(f"invalid field path {path!r}")
    return segments


def _field_at(schema, path: str):
    """The Arrow field at a Lance field path (structs nest; code 13 when absent)."""
    import pyarrow as pa

    fields = list(schema)
    field = None
    for segment in split_field_path(path):
        field = next((f for f in fields if f.name == segment), None)
        if field is None:
            raise InvalidInputError(f"the table has no field {path!r}")
        t = field.type
        while pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
            t = t.value_type
        fields = list(t) if pa.types.is_struct(t) else []
    return field


def _metadata_of(field) -> dict[str, str]:
    return {k.decode(): v.decode() for k, v in (field.metadata or {}).items()}


def _transaction_id(ds) -> str | None:
    """The UUID of the transaction that made ``ds``'s version (None if Lance kept none)."""
    try:
        tx = ds.read_transaction(ds.version)
    except Exception:  # noqa: BLE001 - an old table without transaction files: no id to give
        return None
    return tx.uuid if tx is not None else None


def _summary(lengths: list[int]) -> FragmentSummary:
    """min/max/mean and nearest-rank percentiles of fragment lengths (zeros when none)."""
    if not lengths:
        return FragmentSummary(min=0, max=0, mean=0, p25=0, p50=0, p75=0, p99=0)
    s = sorted(lengths)

    def pct(p: int) -> int:
        return s[min(len(s) - 1, max(0, -(-p * len(s) // 100) - 1))]

    return FragmentSummary(min=s[0], max=s[-1], mean=sum(s) // len(s), p25=pct(25), p50=pct(50), p75=pct(75), p99=pct(99))


class TableOperations:
    """Schema evolution, metadata, stats, branches, query plans and transactions
    of the namespace ``ns``, on the tables ``data`` opens."""

    def __init__(self, ns, data):
        self.ns = ns
        self.data = data

    def _evolved(self, request, ds) -> None:
        if not getattr(request, "branch", None):  # the catalog's copy is of the main branch
            self.ns.schema_changed(request.id, ds)

    # -- schema evolution -------------------------------------------------------------
    def alter_table_add_columns(self, request):
        """New columns from SQL expressions over existing rows (evaluated once), or
        ``computed`` columns: added all-null (a metadata-only commit) with the
        expression kept as their binding in field metadata, filled by
        AlterTableBackfillColumns.  One request is one Lance commit."""
        if not request.new_columns:
            raise InvalidInputError("new_columns must name at least one column")
        ds, location = self.data.dataset(request)
        names = [e.name for e in request.new_columns]
        taken = sorted({n for n in names if names.count(n) > 1} | (set(names) & set(ds.schema.names)))
        if taken:
            raise InvalidInputError(f"columns {taken} already exist or are named twice")
        for e in request.new_columns:
            if e.virtual_column is not None:
                raise UnsupportedOperationError(f"column {e.name!r}: {_NO_UDF}")
            if (e.expression is None) == (e.computed is None):
                raise InvalidInputError(f"column {e.name!r} needs exactly one of expression or computed")
        expressions = {e.name: e.expression for e in request.new_columns if e.expression is not None}
        if expressions and len(expressions) != len(names):
            raise InvalidInputError(
                "expression columns and computed columns are two kinds of Lance commit: send them in separate requests"
            )
        with datasets.translated(location):
            if expressions:
                ds.add_columns(expressions)
            else:
                ds.add_columns(self._computed_schema(ds, request.new_columns))
        self._evolved(request, ds)
        return AlterTableAddColumnsResponse(version=ds.version)

    @staticmethod
    def _computed_schema(ds, entries):
        """All-null fields typed by their expressions (a scan of no rows infers them)."""
        import pyarrow as pa

        fields = []
        for e in entries:
            try:
                typed = ds.scanner(columns={e.name: e.computed}, limit=0).projected_schema
            except Exception as exc:  # noqa: BLE001 - the expression is the caller's input
                raise InvalidInputError(f"computed column {e.name!r}: {str(exc).splitlines()[0]}") from None
            fields.append(pa.field(e.name, typed.field(e.name).type, metadata={COMPUTED_BINDING_KEY: e.computed}))
        return pa.schema(fields)

    def alter_table_alter_columns(self, request):
        """Rename, nullability and type casts, as Lance's ``alter_columns`` allows
        (same-kind casts; a nullable column becomes non-nullable only without nulls)."""
        if not request.alterations:
            raise InvalidInputError("alterations must name at least one column")
        changes = []
        for e in request.alterations:
            if e.virtual_column is not None:
                raise UnsupportedOperationError(f"column {e.path!r}: {_NO_UDF}")
            change: dict[str, Any] = {"path": e.path}
            if e.rename is not None:
                problem = name_problem(e.rename)
                if problem or "." in e.rename:
                    raise InvalidInputError(f"cannot rename {e.path!r} to {e.rename!r}: {problem or 'a name has no dots'}")
                change["name"] = e.rename
            if e.nullable is not None:
                change["nullable"] = e.nullable
            if e.data_type is not None:
                change["data_type"] = json_to_arrow_type(e.data_type)
            if len(change) == 1:
                raise InvalidInputError(f"alteration of {e.path!r} changes nothing (give rename, nullable or data_type)")
            changes.append(change)
        ds, location = self.data.dataset(request)
        for change in changes:
            _field_at(ds.schema, change["path"])
        with datasets.translated(location):
            ds.alter_columns(*changes)
        self._evolved(request, ds)
        return AlterTableAlterColumnsResponse(version=ds.version)

    def alter_table_drop_columns(self, request):
        if not request.columns:
            raise InvalidInputError("columns must name at least one column")
        ds, location = self.data.dataset(request)
        for path in request.columns:
            _field_at(ds.schema, path)
        with datasets.translated(location):
            ds.drop_columns(list(request.columns))
        self._evolved(request, ds)
        return AlterTableDropColumnsResponse(version=ds.version, transaction_id=_transaction_id(ds))

    def alter_table_backfill_columns(self, request):
        """Fill a computed column from its binding (see AlterTableAddColumns), as
        one Lance update of the rows ``where`` selects; synchronous, so the job id
        is the transaction's id and DescribeTransaction answers it Succeeded.

        The sizing fields (concurrency, checkpoints, task size, fragments, commit
        granularity) tune a distributed job runner; one Lance update needs none
        of them, so they are checked (>= 1) and otherwise unused.  ``cluster`` and
        ``manifest`` choose where and with what environment such a runner runs:
        there is none here (code 0)."""
        for name in ("cluster", "manifest"):
            if getattr(request, name):
                raise UnsupportedOperationError(f"{name}: lance-ns runs backfills itself, with no job runner to choose")
        for name in ("concurrency", "intra_applier_concurrency", "min_checkpoint_size", "max_checkpoint_size",
                     "task_size", "num_frags", "checkpoint_size", "commit_granularity",
                     "batch_checkpoint_flush_interval_seconds"):
            value = getattr(request, name)
            if value is not None and value <= 0:
                raise InvalidInputError(f"{name} must be positive, got {value}")
        ds, location = self.data.dataset(request)
        if request.read_version is not None and request.read_version != ds.version:
            raise ConcurrentModificationError(
                f"read_version {request.read_version} is not the table's latest version {ds.version}"
            )
        binding = _metadata_of(_field_at(ds.schema, request.column)).get(COMPUTED_BINDING_KEY)
        if binding is None:
            raise InvalidInputError(f"column {request.column!r} is not a computed column (no binding to backfill from)")
        with datasets.translated(location):
            ds.update({request.column: binding}, where=request.where or None)
        return AlterTableBackfillColumnsResponse(job_id=_transaction_id(ds) or f"version-{ds.version}")

    # -- metadata ---------------------------------------------------------------------
    def update_table_schema_metadata(self, request):
        """Replace the schema metadata with the pairs (one commit; an empty map
        clears it), as the protocol's operation says; answers the result."""
        if request.metadata is None:
            raise InvalidInputError("metadata is required (an empty map clears the schema metadata)")
        ds, location = self.data.dataset(request)
        with datasets.translated(location):
            result = ds.update_schema_metadata(dict(request.metadata), replace=True)
        return UpdateTableSchemaMetadataResponse(metadata=dict(result), transaction_id=_transaction_id(ds))

    def update_field_metadata(self, request):
        """Every entry (merge, or ``replace``; a null value deletes a key) applied
        in order, then committed at once: one Lance commit for the request."""
        if not request.updates:
            raise InvalidInputError("updates must hold at least one field")
        ds, location = self.data.dataset(request)
        result: dict[str, dict[str, str]] = {}
        for entry in request.updates:
            current = result.get(entry.path)
            if current is None:
                current = _metadata_of(_field_at(ds.schema, entry.path))
            merged = {} if entry.replace else dict(current)
            for key, value in entry.metadata.items():
                if value is None:
                    merged.pop(key, None)
                else:
                    merged[key] = value
            result[entry.path] = merged
        with datasets.translated(location):
            ds.update_field_metadata(result, replace=True)
        return UpdateFieldMetadataResponse(version=ds.version, fields=result)

    # -- statistics ---------------------------------------------------------------------
    def get_table_stats(self, request):
        """Rows, data file bytes, indices and the fragment-length distribution
        (live rows per fragment; "small" = under Lance's compaction target)."""
        ds, location = self.data.dataset(request)
        with datasets.translated(location):
            fragments = ds.get_fragments()
            lengths = [f.count_rows() for f in fragments]
            total_bytes = sum(int(df.file_size_bytes or 0) for f in fragments for df in f.metadata.files)
            num_indices = len(ds.describe_indices())
        return GetTableStatsResponse(
            total_bytes=total_bytes,
            num_rows=sum(lengths),
            num_indices=num_indices,
            fragment_stats=FragmentStats(
                num_fragments=len(fragments),
                num_small_fragments=sum(1 for n in lengths if n < COMPACTION_TARGET_ROWS),
                lengths=_summary(lengths),
            ),
        )

    # -- branches -------------------------------------------------------------------------
    def create_table_branch(self, request):
        """A branch from the latest (or ``from_version``) version of main or of ``from_branch``."""
        problem = name_problem(request.name)
        if problem or request.name == MAIN_BRANCH:
            raise InvalidInputError(f"invalid branch name {request.name!r}: {problem or 'main is the default branch'}")
        ds, location = self.data.dataset(request)
        with datasets.translated(location):
            branches = ds.branches.list()
        if request.name in branches:
            raise TableBranchAlreadyExistsError(f"branch {request.name!r} already exists")
        source = request.from_branch if request.from_branch not in (None, MAIN_BRANCH) else None
        if source is not None and source not in branches:
            raise TableBranchNotFoundError(f"branch {source!r} does not exist")
        # the source must exist at that version before Lance copies anything
        detail.checkout(ds, location, request.from_version, branch=source)
        try:
            with datasets.translated(location):
                ds.create_branch(request.name, (source, request.from_version))
        except Exception:
            if request.name in ds.branches.list():  # a racing create won
                raise TableBranchAlreadyExistsError(f"branch {request.name!r} already exists") from None
            raise
        return CreateTableBranchResponse()

    def list_table_branches(self, request):
        branches, token = self.data.named_page(request, lambda ds: ds.branches.list(), lambda b: BranchContents(
            parent_branch=b.get("parent_branch"),
            parent_version=int(b["parent_version"]),
            create_at=int(b["create_at"]),
            manifest_size=int(b.get("manifest_size") or 0),
            metadata=dict(b.get("metadata") or {}) or None,
        ))
        return ListTableBranchesResponse(branches=branches, page_token=token)

    def delete_table_branch(self, request):
        ds, location = self.data.dataset(request)
        with datasets.translated(location):
            if request.name not in ds.branches.list():
                raise TableBranchNotFoundError(f"branch {request.name!r} does not exist")
            ds.branches.delete(request.name)
        return DeleteTableBranchResponse()

    # -- query plans -------------------------------------------------------------------------
    def explain_table_query_plan(self, request) -> str:
        """The physical plan pylance's scanner would run for ``query``."""
        query = request.query
        if query.id and list(query.id) != list(request.id or []):
            raise InvalidInputError("query.id names another table than id")
        if query.branch and request.branch and query.branch != request.branch:
            raise InvalidInputError("query.branch and branch differ")
        scan = query.model_copy(update={"id": request.id, "branch": request.branch or query.branch})
        ds, location = self.data.dataset(scan, scan.version)
        with datasets.translated(location):
            return ds.scanner(**scan_arguments(ds, scan)).explain_plan(bool(request.verbose))

    def analyze_table_query_plan(self, request) -> str:
        """The plan run once, with its metrics (rows, bytes, time per operator)."""
        ds, location = self.data.dataset(request, request.version)
        with datasets.translated(location):
            return ds.scanner(**scan_arguments(ds, request)).analyze_plan()

    # -- transactions -------------------------------------------------------------------------
    def describe_transaction(self, request):
        """``id`` is the table's id followed by a transaction UUID (the
        ``transaction_id`` of a response, or any commit's); searched newest first
        on the main branch."""
        status, props = self._committed_transaction(request.id)
        return DescribeTransactionResponse(status=status, properties=props)

    def alter_transaction(self, request):
        """Lance writes a transaction once, when it commits, and never changes it: an
        action that asks for what the transaction already is (its status, a property
        it holds with that value, a property it lacks unset with Skip) succeeds, any
        other fails with code 19 and nothing applied (the spec: all actions or none)."""
        if not request.actions:
            raise InvalidInputError("actions must hold at least one action")
        status, props = self._committed_transaction(request.id)
        for i, action in enumerate(request.actions):
            given = [a for a in (action.set_status_action, action.set_property_action, action.unset_property_action)
                     if a is not None]
            if len(given) != 1:
                raise InvalidInputError(f"action {i} must hold exactly one of set_status_action, "
                                        "set_property_action, unset_property_action")
            change = self._transaction_change(given[0], status, props)
            if change:
                raise InvalidTableStateError(f"action {i}: {change}; {_IMMUTABLE}")
        return AlterTransactionResponse(status=status, properties=props)

    @staticmethod
    def _transaction_change(action, status: str, props: dict[str, str]) -> str | None:
        """What ``action`` would change in a committed transaction (None: nothing)."""
        if isinstance(action, AlterTransactionSetStatus):
            wanted = TransactionStatus.parse(action.status)
            return None if wanted is TransactionStatus.SUCCEEDED else f"the transaction is {status}, not {action.status}"
        if not action.key:
            raise InvalidInputError("a property action needs a key")
        if isinstance(action, AlterTransactionSetProperty):
            mode = SetPropertyMode.parse(action.mode, SetPropertyMode.OVERWRITE)
            if action.key in props and mode is SetPropertyMode.FAIL:
                return f"property {action.key!r} exists (mode Fail)"
            if action.key in props and (mode is SetPropertyMode.SKIP or props[action.key] == action.value):
                return None
            return f"property {action.key!r} would be set to {action.value!r}"
        mode = UnsetPropertyMode.parse(action.mode, UnsetPropertyMode.SKIP)
        if action.key in props:
            return f"property {action.key!r} would be removed"
        return f"property {action.key!r} does not exist (mode Fail)" if mode is UnsetPropertyMode.FAIL else None

    def _committed_transaction(self, ident) -> tuple[str, dict[str, str]]:
        """The status and properties of the transaction ``ident`` names (the table's id,
        then the transaction's UUID), searched newest first on the main branch."""
        ident = list(ident or [])
        if len(ident) < 2:
            raise InvalidInputError("a transaction id is the table's id followed by the transaction's UUID")
        table_id, wanted = ident[:-1], ident[-1]
        location, opts = self.data.where(table_id)
        ds = detail.open_dataset(location, opts)
        with datasets.translated(location):
            for version in range(ds.version, 0, -1):
                try:
                    tx = ds.read_transaction(version)
                except Exception:  # noqa: BLE001 - a version cleaned up by Lance: nothing to match
                    continue
                if tx is not None and tx.uuid == wanted:
                    props = {str(k): str(v) for k, v in (tx.transaction_properties or {}).items()}
                    props.update(version=str(version), read_version=str(tx.read_version),
                                 operation=type(tx.operation).__name__)
                    return "Succeeded", props
        raise TransactionNotFoundError(f"no transaction {wanted!r} in table {table_id!r}")

