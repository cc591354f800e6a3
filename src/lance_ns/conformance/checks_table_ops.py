"""Scenario checks of the table operations over pylance (lance_ns.tableops):
schema evolution, schema/field metadata, stats, branches and the ``branch``
field of every data operation, query plans, transactions, and the
operations Lance has no way to do (answered Unsupported, code 0).

They run on one table, ``ops``, created by the first check; later checks
build on what earlier ones did (``after``).  Every operation here is
optional in the spec, so a server answering code 0 skips a check; the
suite (tests/conformance/test_table_ops.py) requires lance-ns's own
backends to pass them all.
"""

from __future__ import annotations

from .model import NS, Call, Check
from . import verify as V

OPS = [NS, "ops"]
DATA = frozenset({"data"})
#: a vector column computed from the rows (a fixed-size list, so nearest-neighbour queries work)
_VECTOR = "arrow_cast(make_array(CAST(id AS FLOAT), CAST(1.0 AS FLOAT)), 'FixedSizeList(2, Float32)')"


def _schema_has(*names: str, absent: tuple[str, ...] = (), types: dict[str, str] | None = None):
    """DescribeTable's schema holds ``names`` (with ``types``), and none of ``absent``."""

    def verify(resp: dict, vars: dict) -> str | None:
        fields = {f["name"]: f for f in (resp.get("schema") or {}).get("fields") or []}
        missing = [n for n in names if n not in fields]
        present = [n for n in absent if n in fields]
        wrong = {n: fields[n]["type"]["type"] for n, t in (types or {}).items()
                 if n in fields and fields[n]["type"]["type"] != t}
        if missing or present or wrong:
            return f"schema {sorted(fields)}: missing {missing}, still there {present}, wrong types {wrong}"
        return None

    return verify


def _field_metadata(name: str, expected: dict):
    def verify(resp: dict, vars: dict) -> str | None:
        fields = {f["name"]: f for f in (resp.get("schema") or {}).get("fields") or []}
        got = (fields.get(name) or {}).get("metadata") or {}
        return None if got == expected else f"field {name!r} metadata {got!r}, expected {expected!r}"

    return verify


def _stats(rows: int):
    def verify(resp: dict, vars: dict) -> str | None:
        frag = resp.get("fragment_stats") or {}
        lengths = frag.get("lengths") or {}
        if resp.get("num_rows") != rows:
            return f"num_rows {resp.get('num_rows')!r}, expected {rows}"
        if not resp.get("total_bytes") or not frag.get("num_fragments"):
            return f"no bytes or fragments in {resp!r}"
        if not (lengths.get("min", -1) <= lengths.get("p50", -1) <= lengths.get("max", -1)):
            return f"fragment lengths out of order: {lengths!r}"
        return None

    return verify


def _branches(*names: str, token: bool = False):
    def verify(resp: dict, vars: dict) -> str | None:
        got = sorted(resp.get("branches") or {})
        if got != sorted(names):
            return f"branches {got!r}, expected {sorted(names)!r}"
        if token != bool(resp.get("page_token")):
            return f"page_token {resp.get('page_token')!r} (expected {'one' if token else 'none'})"
        return None

    return verify


def _mentions(*words: str):
    def verify(resp: dict, vars: dict) -> str | None:
        value = resp.get("value", resp)
        text = value.decode() if isinstance(value, bytes) else str(value)
        missing = [w for w in words if w not in text]
        return f"plan lacks {missing}: {text[:200]!r}" if missing else None

    return verify


def _field_is_var(name: str, var: str):
    """The response's ``name`` equals a value saved earlier in the run."""

    def verify(resp: dict, vars: dict) -> str | None:
        want = vars.get(var)
        return None if resp.get(name) == want else f"{name} is {resp.get(name)!r}, expected {want!r}"

    return verify


def _indices(*present: str, absent: tuple[str, ...] = ()):
    def verify(resp: dict, vars: dict) -> str | None:
        got = [i.get("index_name") for i in resp.get("indexes") or []]
        wrong = [n for n in present if n not in got] + [n for n in absent if n in got]
        return f"indices {got!r}: expected {list(present)!r}, not {list(absent)!r}" if wrong else None

    return verify


def table_ops_checks() -> list[Check]:
    def check(name, op, expectation, steps, after="table_ops.create", extra_needs=(), **kw):
        return Check(f"table_ops.{name}", op, expectation, tuple(steps), needs=DATA | frozenset(extra_needs),
                     optional=True, after=after, **kw)

    describe = lambda verify: Call("DescribeTable", {"id": OPS, "load_detailed_metadata": True}, verify=verify)  # noqa: E731
    count = lambda n, **req: Call("CountTableRows", {"id": OPS, **req}, verify=V.field("count", n))  # noqa: E731
    dev = {"id": OPS, "branch": "dev"}
    return [
        check("create", "CreateTable", "the table the table-operation checks share",
              [Call("CreateTable", {"id": OPS}, arrow=True)], after=None),
        # -- schema evolution
        check("add_columns", "AlterTableAddColumns",
              "SQL expressions add columns over the existing rows (one new version); an existing name -> 13; "
              "a missing table -> 4",
              [Call("AlterTableAddColumns", {"id": OPS, "new_columns": [
                  {"name": "double", "expression": "id * 2"}, {"name": "vec", "expression": _VECTOR}]},
                  verify=V.field("version", 2)),
               describe(_schema_has("double", "vec", types={"double": "int64", "vec": "fixed_size_list"})),
               count(1, predicate="double = 4"),
               Call("AlterTableAddColumns", {"id": OPS, "new_columns": [{"name": "id", "expression": "1"}]}, expect=13),
               Call("AlterTableAddColumns", {"id": [NS, "missing_table"], "new_columns": [
                   {"name": "x", "expression": "1"}]}, expect=4)]),
        check("add_columns.virtual", "AlterTableAddColumns",
              "a virtual (UDF) column -> code 0: its UDF runs in a Docker image only Geneva's runner can start",
              [Call("AlterTableAddColumns", {"id": OPS, "new_columns": [{"name": "udf", "virtual_column": {
                  "input_columns": ["id"], "outputs": [{"column": "udf", "struct_field": "udf", "data_type": {"type": "int64"},
                                         "nullable": True}],
                  "image": "img", "udf": "AA==", "udf_name": "f", "udf_version": "1"}}]}, expect=0),
               describe(_schema_has("id", absent=("udf",)))]),
        check("backfill", "AlterTableBackfillColumns",
              "a computed column is added all-null, then backfilled from its binding where 'id > 1' "
              "(read_version = the latest; sizing hints accepted); cluster/manifest -> 0; a stale read_version -> 14; "
              "a column without a binding -> 13; the job id is a transaction DescribeTransaction finds",
              [Call("AlterTableAddColumns", {"id": OPS, "new_columns": [{"name": "plus", "computed": "id + 100"}]},
                    save={"plus_version": "version"}),
               count(0, predicate="plus IS NOT NULL"),
               Call("AlterTableBackfillColumns", {"id": OPS, "column": "plus", "cluster": "c1"}, expect=0),
               Call("AlterTableBackfillColumns", {"id": OPS, "column": "plus", "manifest": "{}"}, expect=0),
               Call("AlterTableBackfillColumns", {"id": OPS, "column": "plus", "read_version": 1}, expect=14),
               Call("AlterTableBackfillColumns", {"id": OPS, "column": "name"}, expect=13),
               Call("AlterTableBackfillColumns", {
                   "id": OPS, "column": "plus", "where": "id > 1", "read_version": "{plus_version}", "concurrency": 2,
                   "intra_applier_concurrency": 1, "min_checkpoint_size": 1, "max_checkpoint_size": 10,
                   "batch_checkpoint_flush_interval_seconds": 1.5, "task_size": 10, "num_frags": 1,
                   "checkpoint_size": 5, "commit_granularity": 1}, verify=V.present("job_id"), save={"job": "job_id"}),
               count(2, predicate="plus = id + 100"),
               Call("DescribeTransaction", {"id": [NS, "ops", "{job}"]}, verify=V.field("status", "Succeeded"))]),
        check("alter_columns", "AlterTableAlterColumns",
              "rename, nullability and a type cast (int64 -> int32) in one request; a missing column -> 13 or 12; "
              "a virtual column alteration -> 0",
              [Call("AlterTableAlterColumns", {"id": OPS, "alterations": [
                  {"path": "double", "rename": "twice", "nullable": True, "data_type": {"type": "int32"}}]},
                  verify=V.present("version")),
               describe(_schema_has("twice", absent=("double",), types={"twice": "int32"})),
               Call("AlterTableAlterColumns", {"id": OPS, "alterations": [{"path": "nope", "rename": "x"}]},
                    expect=(13, 12)),
               Call("AlterTableAlterColumns", {"id": OPS, "alterations": [
                   {"path": "twice", "virtual_column": {"image": "img"}}]}, expect=0)],
              after="table_ops.add_columns"),
        check("drop_columns", "AlterTableDropColumns",
              "drops a column (its transaction_id is described as Succeeded); a missing column -> 13 or 12",
              [Call("AlterTableDropColumns", {"id": OPS, "columns": ["twice"]},
                    verify=V.present("transaction_id"), save={"tx": "transaction_id"}),
               describe(_schema_has("id", absent=("twice",))),
               Call("DescribeTransaction", {"id": [NS, "ops", "{tx}"]},
                    verify=V.all_of(V.field("status", "Succeeded"), V.includes("properties", {"operation": "Project"}))),
               Call("AlterTableDropColumns", {"id": OPS, "columns": ["nope"]}, expect=(13, 12))],
              after="table_ops.alter_columns"),
        # -- metadata
        check("schema_metadata", "UpdateTableSchemaMetadata",
              "replaces the schema metadata with the pairs given and answers the result",
              [Call("UpdateTableSchemaMetadata", {"id": OPS, "metadata": {"owner": "ops"}}),
               Call("UpdateTableSchemaMetadata", {"id": OPS, "metadata": {"stage": "test"}},
                    verify=V.field("metadata", {"stage": "test"}))]),
        check("field_metadata", "UpdateFieldMetadata",
              "merges per field, replace=true replaces, a null value deletes a key; a missing field -> 13 or 12",
              [Call("UpdateFieldMetadata", {"id": OPS, "updates": [
                  {"path": "id", "metadata": {"unit": "count", "keep": "1"}},
                  {"path": "name", "metadata": {"a": "b"}, "replace": True}]},
                  verify=V.includes("fields", {"name": {"a": "b"}})),
               Call("UpdateFieldMetadata", {"id": OPS, "updates": [{"path": "id", "metadata": {"unit": None}}]},
                    verify=V.includes("fields", {"id": {"keep": "1"}})),
               describe(_field_metadata("id", {"keep": "1"})),
               Call("UpdateFieldMetadata", {"id": OPS, "updates": [{"path": "nope", "metadata": {"a": "b"}}]},
                    expect=(13, 12))]),
        check("stats", "GetTableStats", "rows, bytes and fragment lengths of the table; a missing table -> 4",
              [Call("GetTableStats", {"id": OPS}, verify=_stats(3)),
               Call("GetTableStats", {"id": [NS, "missing_table"]}, expect=4)]),
        # -- query plans
        check("explain", "ExplainTableQueryPlan", "the scan plan of a filtered query names the filter",
              [Call("ExplainTableQueryPlan", {"id": OPS, "verbose": True, "query": {
                  "k": 2, "filter": "id > 1", "vector": {}}}, verify=_mentions("id > "))]),
        check("analyze", "AnalyzeTableQueryPlan",
              "a nearest-neighbour query with every option runs and reports metrics; a full-text query too "
              "(after an INVERTED index)",
              [Call("AnalyzeTableQueryPlan", {
                  "id": OPS, "k": 2, "vector": {"single_vector": [1.0, 1.0]}, "vector_column": "vec",
                  "distance_type": "l2", "nprobes": 1, "minimum_nprobes": 1, "maximum_nprobes": 2, "ef": 10,
                  "refine_factor": 1, "bypass_vector_index": True, "lower_bound": 0.0, "upper_bound": 100.0,
                  "filter": "id > 0", "prefilter": True, "fast_search": False, "with_row_id": True, "offset": 0,
                  "columns": {"column_names": ["id", "name"]}, "version": 2}, verify=_mentions("metrics", "KNN")),
               Call("CreateTableScalarIndex", {"id": OPS, "column": "name", "index_type": "INVERTED", "name": "name_fts"}),
               Call("AnalyzeTableQueryPlan", {"id": OPS, "k": 2, "vector": {}, "full_text_query": {
                   "string_query": {"query": "a", "columns": ["name"]}}}, verify=_mentions("metrics"))],
              after="table_ops.add_columns"),
        # -- branches
        check("branch.create", "CreateTableBranch",
              "branches from main at a version and from another branch; a taken name -> 23, 'main' -> 13, "
              "a missing source branch -> 22, a missing version -> 11; listed in pages",
              [Call("CreateTableBranch", {"id": OPS, "name": "dev", "from_version": 1}),
               Call("CreateTableBranch", {"id": OPS, "name": "dev2", "from_branch": "dev"}),
               Call("CreateTableBranch", {"id": OPS, "name": "dev"}, expect=23),
               Call("CreateTableBranch", {"id": OPS, "name": "main"}, expect=13),
               Call("CreateTableBranch", {"id": OPS, "name": "x", "from_branch": "nope"}, expect=22),
               Call("CreateTableBranch", {"id": OPS, "name": "x", "from_version": 99}, expect=11),
               Call("ListTableBranches", {"id": OPS, "limit": 1}, verify=_branches("dev", token=True),
                    save={"btoken": "page_token"}),
               Call("ListTableBranches", {"id": OPS, "limit": 1, "page_token": "{btoken}"},
                    verify=_branches("dev2"))]),
        check("branch.delete", "DeleteTableBranch", "deletes a branch; deleting it again -> 22",
              [Call("DeleteTableBranch", {"id": OPS, "name": "dev2"}),
               Call("ListTableBranches", {"id": OPS}, verify=_branches("dev")),
               Call("DeleteTableBranch", {"id": OPS, "name": "dev2"}, expect=22)],
              after="table_ops.branch.create"),
        check("branch.writes", "InsertIntoTable",
              "insert, merge-insert, update and delete with branch=dev change dev only; reads of dev "
              "(count, describe, versions, query, plans, stats) see them, main keeps its 3 rows; a missing branch -> 22",
              [Call("MergeInsertIntoTable", {**dev, "on": ["id"], "when_matched_update_all": True,
                                             "when_not_matched_insert_all": True}, arrow=True),
               count(3, branch="dev"),
               Call("InsertIntoTable", {**dev, "mode": "Append"}, arrow=True),
               count(6, branch="dev"), count(3),
               Call("UpdateTable", {**dev, "updates": [["name", "'dev'"]], "predicate": "id = 1"}),
               count(2, branch="dev", predicate="name = 'dev'"),
               Call("DeleteFromTable", {**dev, "predicate": "id = 3"}),
               count(4, branch="dev"),
               count(0, predicate="name = 'dev'"),
               Call("DescribeTable", dev, verify=V.present("version"), save={"dev_version": "version"}),
               Call("ListTableVersions", dev, verify=V.present("versions")),
               Call("QueryTable", {**dev, "k": 10, "vector": {}, "version": "{dev_version}"}),
               Call("GetTableStats", dev, verify=V.field("num_rows", 4)),
               Call("ExplainTableQueryPlan", {**dev, "query": {"k": 1, "vector": {}}}, verify=_mentions("tree/dev")),
               Call("AnalyzeTableQueryPlan", {**dev, "k": 1, "vector": {}}, verify=_mentions("metrics")),
               Call("CountTableRows", {"id": OPS, "branch": "nope"}, expect=22)],
              after="table_ops.branch.create"),
        check("branch.version", "DescribeTableVersion", "a version of branch=dev is described",
              [Call("DescribeTableVersion", {**dev, "version": "{dev_version}"}, verify=V.present("version"))],
              after="table_ops.branch.writes"),
        check("branch.schema", "AlterTableAddColumns",
              "schema changes and metadata on branch=dev stay on dev",
              [Call("AlterTableAddColumns", {**dev, "new_columns": [{"name": "on_dev", "expression": "id + 1"}]}),
               Call("AlterTableAlterColumns", {**dev, "alterations": [{"path": "on_dev", "rename": "dev_col"}]}),
               Call("UpdateFieldMetadata", {**dev, "updates": [{"path": "dev_col", "metadata": {"k": "v"}}]}),
               Call("AlterTableAddColumns", {**dev, "new_columns": [{"name": "dev_plus", "computed": "id + 1"}]}),
               Call("AlterTableBackfillColumns", {**dev, "column": "dev_plus"}),
               Call("AlterTableDropColumns", {**dev, "columns": ["dev_col"]}),
               count(4, branch="dev", predicate="dev_plus = id + 1"),
               Call("DescribeTable", {**dev, "load_detailed_metadata": True},
                    verify=_schema_has("dev_plus", absent=("dev_col",))),
               describe(_schema_has("id", absent=("on_dev", "dev_col", "dev_plus")))],
              after="table_ops.branch.writes"),
        check("branch.schema_metadata", "UpdateTableSchemaMetadata",
              "schema metadata of branch=dev (not over REST: there the body is the bare map, without a branch)",
              [Call("UpdateTableSchemaMetadata", {**dev, "metadata": {"branch": "dev"}},
                    verify=V.field("metadata", {"branch": "dev"})),
               Call("UpdateTableSchemaMetadata", {"id": OPS, "metadata": {"stage": "test"}},
                    verify=V.field("metadata", {"stage": "test"}))],
              after="table_ops.branch.writes", extra_needs={"direct"}),
        check("branch.indices", "CreateTableScalarIndex",
              "indices created on branch=dev are listed, described and dropped there only",
              [Call("CreateTableScalarIndex", {**dev, "column": "id", "index_type": "BTREE", "name": "id_dev"}),
               Call("CreateTableIndex", {**dev, "column": "name", "index_type": "BITMAP", "name": "name_dev"}),
               Call("ListTableIndices", dev, verify=_indices("id_dev", "name_dev")),
               Call("ListTableIndices", {"id": OPS}, verify=_indices(absent=("id_dev", "name_dev"))),
               Call("DescribeTableIndexStats", {**dev, "index_name": "id_dev"}, verify=V.present("index_type")),
               Call("DropTableIndex", {**dev, "index_name": "id_dev"}),
               Call("DropTableIndex", {**dev, "index_name": "name_dev"})],
              after="table_ops.branch.writes"),
        check("branch.tags_restore", "CreateTableTag",
              "a tag of a dev version resolves to it; moved within dev; restoring dev to its first version "
              "leaves main alone",
              [Call("CreateTableTag", {**dev, "tag": "on_dev", "version": "{dev_version}"}),
               Call("GetTableTagVersion", {"id": OPS, "tag": "on_dev"}, verify=_field_is_var("version", "dev_version")),
               Call("UpdateTableTag", {**dev, "tag": "on_dev", "version": "{dev_version}"}),
               Call("DeleteTableTag", {"id": OPS, "tag": "on_dev"}),
               Call("RestoreTable", {**dev, "version": 1}),
               count(3, branch="dev"), count(3)],
              after="table_ops.branch.writes"),
        # -- transactions and what Lance cannot do
        check("transaction.missing", "DescribeTransaction",
              "an unknown transaction -> 10; a table id without a transaction -> 13; a missing table -> 4",
              [Call("DescribeTransaction", {"id": [NS, "ops", "00000000-0000-0000-0000-000000000000"]}, expect=10),
               Call("DescribeTransaction", {"id": ["solo"]}, expect=13),
               Call("DescribeTransaction", {"id": [NS, "missing_table", "tx"]}, expect=4)]),
        check("transaction.alter", "AlterTransaction",
              "a committed Lance transaction never changes: actions asking for what it is succeed "
              "(status Succeeded, a property it lacks unset with Skip); a change is 19 and applies none of "
              "the request's actions; a missing transaction is 10",
              [Call("AlterTransaction", {"id": [NS, "ops", "{tx}"], "actions": [
                  {"set_status_action": {"status": "succeeded"}},
                  {"unset_property_action": {"key": "no_such_key"}}]}, verify=V.field("status", "Succeeded")),
               Call("AlterTransaction", {"id": [NS, "ops", "{tx}"], "actions": [
                   {"set_property_action": {"key": "operation", "mode": "Skip", "value": "other"}},
                   {"set_status_action": {"status": "Failed"}}]}, expect=19),
               Call("AlterTransaction", {"id": [NS, "ops", "{tx}"], "actions": [
                   {"set_property_action": {"key": "reviewed", "value": "yes"}}]}, expect=19),
               Call("AlterTransaction", {"id": [NS, "ops", "{tx}"], "actions": [
                   {"unset_property_action": {"key": "no_such_key", "mode": "Fail"}}]}, expect=19),
               Call("AlterTransaction", {"id": [NS, "ops", "00000000-0000-0000-0000-000000000000"], "actions": [
                   {"set_status_action": {"status": "Succeeded"}}]}, expect=10),
               Call("DescribeTransaction", {"id": [NS, "ops", "{tx}"]}, verify=V.field("status", "Succeeded"))],
              after="table_ops.drop_columns"),
        check("materialized_view", "CreateMaterializedView",
              "code 0 for create and refresh: Lance has no materialized views",
              [Call("CreateMaterializedView", {"id": [NS, "mv"], "kind": "udtf", "source_query": "q",
                                               "output_schema": "AA==", "with_no_data": True, "auto_refresh": False,
                                               "udtf_spec": {"kind": "udtf", "udtf": "AA==", "udtf_sha": "0",
                                                             "udtf_name": "f", "udtf_version": "1"}}, expect=0),
               Call("RefreshMaterializedView", {"id": [NS, "mv"], "src_version": 1, "max_rows_per_fragment": 1,
                                                "concurrency": 1, "intra_applier_concurrency": 1, "source_task_size": 1,
                                                "cluster": "c", "output_limit": 1, "manifest": "{}"}, expect=0)],
              after=None),
    ]

