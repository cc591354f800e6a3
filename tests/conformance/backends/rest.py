"""REST backends: our client (impl ``rest``) against a real server.

* ``rest-ours``: our client -> ``lance-ns serve`` (a process of its own, as users run
  it) -> our directory namespace, over real HTTP on 127.0.0.1.
* ``rest-pylance-client``: pylance's Rust ``RestNamespace`` -> ``lance-ns serve`` ->
  our directory namespace (the ecosystem's client drives the whole suite).
* ``rest-pylance-server``: our client -> pylance's Rust ``RestAdapter`` over
  pylance's own directory namespace; where that server departs from the spec
  the tests are expected failures (strict, so a fix upstream is noticed).
"""

import inspect
from contextlib import contextmanager

import lance.namespace
from lance_namespace import LanceNamespace

import lance_ns
from lance_ns.base import OPERATIONS, coerce_request
from lance_ns.errors import InvalidInputError
from tests.server.conftest import lance_ns_serve

from . import Backend, Ctx, declared_caps, facts
from .servers import serve_args

#: the served namespace's declared capabilities (its class: ours) plus this environment's
_ENVIRONMENT = ("nested", "data", "detail", "ns_properties", "table_properties", "register")


def serving_backend(root: str):
    """The namespace our server serves in tests: our directory namespace."""
    try:
        return lance_ns.connect("dir", {"root": root})
    except InvalidInputError:  # the dir impl is not importable yet
        return lance_ns.connect("memory", {"root": root})


def data_backend(root: str):
    """A served namespace with the data routes (CreateTable, Insert, Query...):
    ours when it implements them, else pylance's DirectoryNamespace."""
    ours = serving_backend(root)
    if "CreateTable" in getattr(ours, "supported_operations", lambda: [])():
        return ours
    return lance.namespace.DirectoryNamespace(root=root)


def _serve_dir(root, log):
    """``lance-ns serve`` over the directory namespace on ``root``, a process of its own."""
    return lance_ns_serve([*serve_args(str(root), {}), "--log-level", "warning"], log_file=log)


@contextmanager
def _ours(tmp):
    root = tmp / "rest-ours"
    root.mkdir()
    served = serving_backend(str(root))
    with _serve_dir(root, tmp / "rest-ours.log") as server:
        client = lance_ns.connect("rest", {"uri": server.url})
        try:
            yield Ctx(connect=lambda: client, caps=declared_caps(served, *_ENVIRONMENT), scratch=str(tmp / "scratch"),
                      spawn=("rest", {"uri": server.url}))
        finally:
            client.close()


class ModelsOnly(LanceNamespace):
    """Hands pylance's ``RestNamespace`` the models its Python wrapper needs.

    The suite passes plain dicts (as pylance's Rust core does); pylance's
    Python ``RestNamespace`` calls ``request.model_dump()``.  Everything on the
    wire is still pylance's Rust client.
    """

    def __init__(self, inner: LanceNamespace):
        self.inner = inner

    def namespace_id(self) -> str:
        return self.inner.namespace_id()


def _delegate(op):
    def method(self, request=None, *args):
        fn = getattr(self.inner, op.method)
        request = coerce_request(request, op.request)
        if _wants_dict(fn):  # the table-version methods of pylance's wrapper take and return dicts
            out = fn(request.to_dict(), *args)
            return op.response.from_dict(out) if isinstance(out, dict) and op.response else out
        return fn(request, *args)

    method.__name__ = op.method
    return method


def _wants_dict(fn) -> bool:
    try:
        return inspect.signature(fn).parameters["request"].annotation in (dict, "dict")
    except (KeyError, TypeError, ValueError):
        return False


for _op in OPERATIONS.values():
    setattr(ModelsOnly, _op.method, _delegate(_op))


@contextmanager
def _pylance_client(tmp):
    root = tmp / "rest-pylance-client"
    root.mkdir()
    served = serving_backend(str(root))
    with _serve_dir(root, tmp / "rest-pylance-client.log") as server:
        client = ModelsOnly(lance.namespace.RestNamespace(uri=server.url))
        yield Ctx(
            connect=lambda: client,
            caps=declared_caps(served, *_ENVIRONMENT),
            scratch=str(tmp / "scratch-client"),
            third_party=True,  # the client is pylance's (its Python wrapper lacks some operations)
        )


#: where pylance 14.0.2's RestAdapter (over its DirectoryNamespace) departs from the spec
PYLANCE_SERVER_DEPARTURES = {
    "test_namespace_lifecycle": "CreateNamespace ignores mode ExistOk: 409 NamespaceAlreadyExists",
    "test_drop_missing_namespace_modes": "DropNamespace ignores mode Skip: 404 for a missing namespace",
    "test_missing_namespace_is_not_found": "ListTables of a missing namespace answers 200 with []",
    "test_unknown_modes_are_invalid_input": "unknown mode/behavior values are accepted (not 400 code 13)",
    "test_root_cannot_be_created_or_dropped": "CreateNamespace of the root answers 409 code 2, not 400 code 13",
    "test_negative_limit_is_invalid": "a negative limit is accepted",
    "test_drop_namespace_restrict_and_cascade": "DropNamespace ignores behavior Cascade: 409 NamespaceNotEmpty",
    "test_detailed_metadata": "DescribeTable of a missing version answers 500 code 18, not 404 code 11",
    "test_deregister_keeps_data_and_register_brings_it_back": (
        "RegisterTable refuses absolute locations (only paths relative to the root), "
        "even the location DescribeTable returned"
    ),
    "test_describe_table_at_a_tag_is_the_tags_version": "DescribeTable ignores tag: version None",
    "test_table_exists_at_a_missing_version_is_version_not_found": "TableExists ignores version: 200 for version 99",
    "test_dropping_a_registered_table_keeps_its_data": "RegisterTable refuses absolute locations (above)",
    "test_cascade_drop_keeps_the_data_of_registered_tables": "RegisterTable refuses absolute locations (above)",
    "test_purge_drops_the_data_of_a_registered_table": "RegisterTable refuses absolute locations (above)",
    "test_a_dataset_registered_at_a_location_we_would_choose_survives_drops":
        "RegisterTable refuses absolute locations (above)",
    "test_a_location_is_answered_in_one_spelling": (
        "DeclareTable accepts only the location it chooses itself, a new one per declaration"
    ),
    # the shared scenario (test_scenario.py, lance-ns check) sends names unvalidated, so it sees more
    "scenario:namespace.create.exist_ok": "CreateNamespace ignores mode ExistOk: 409 NamespaceAlreadyExists",
    "scenario:namespace.create.overwrite": "CreateNamespace ignores mode Overwrite: 409 NamespaceAlreadyExists",
    "scenario:namespace.create.invalid_name": "a namespace named 'bad/name' is created",
    "scenario:namespaces.list.missing": "ListNamespaces of a missing namespace answers 200 with []",
    "scenario:namespace.drop.skip_missing": "DropNamespace ignores mode Skip: 404 for a missing namespace",
    "scenario:table.declare.missing_namespace": "DeclareTable in a missing namespace succeeds",
    "scenario:table.declare.invalid_name": "a table named 'bad/t' is declared",
    "scenario:tables.list.missing_namespace": "ListTables of a missing namespace answers 200",
    "scenario:table.exists.version": "TableExists ignores version: 200 for version 99",
    "scenario:table.register": "RegisterTable refuses absolute locations (above)",
    "scenario:http.malformed_arrow": "a body that is not Arrow IPC answers 500 code 18, not 400 code 13",
    "scenario:http.unknown_mode": "unknown mode values are accepted (not 400 code 13)",
    "scenario:http.empty_component": "an id with an empty component answers 404 code 1, not 400 code 13",
    "scenario:namespace.drop.cascade": "DropNamespace ignores behavior Cascade: 409 NamespaceNotEmpty",
    "scenario:table.tags": "DescribeTable ignores tag: version None",
    "scenario:data.index.ivf_pq.options": "CreateTableIndex ignores num_sub_vectors, num_bits, sample_rate, max_iterations "
    "(the index is built with 16 sub-vectors, 8 bits)",
    "scenario:data.index.stats": "DescribeTableIndexStats answers index_type 'N/A' for an IVF_PQ index",
    "scenario:data.index.invalid": "CreateTableIndex accepts num_sub_vectors=3 for 4-dimensional vectors (it ignores it)",
    "scenario:data.query.vector": "QueryTable accepts minimum_nprobes > maximum_nprobes",
    "scenario:data.insert.append": "a fast_search vector query answers no rows (expected the 2 nearest indexed rows)",
    "scenario:data.index.hnsw": "CreateTableIndex ignores m and ef_construction (built with 20 and 150)",
    "scenario:data.index.ivf_flat": "CreateTableIndex ignores target_partition_size",
    "scenario:data.query.fts.options": "a phrase query on an index without positions answers 500 code 18, not 400 code 13",
    "scenario:data.update.properties": "UpdateTable accepts properties and drops them (DescribeTable shows none)",
    "scenario:data.versions.paging": "ListTableVersions ignores limit: every version, no page_token",
    "scenario:data.tags.paging": "ListTableTags ignores limit: every tag, no page_token",
    "scenario:data.merge.bad_timeout": "MergeInsertIntoTable accepts a timeout that is no duration ('soon') and writes",
    "scenario:data.declare.location": "DeclareTable refuses absolute locations, even one it returned itself",
    "test_managed_mode_is_held_or_refused": (
        "a table declared with managed_versioning=true is created storage-managed (its managed mode is "
        "the connection's table_version_tracking_enabled, which keeps no history of its own)"
    ),
    # the table operations (checks_table_ops): pylance answers what it lacks with 500 code 18, not code 0
    "scenario:table_ops.add_columns": "adding an existing column answers 409 code 14, not 400 code 13",
    "scenario:table_ops.add_columns.virtual": "a virtual column answers 500 code 18 (expression required), not code 0",
    "scenario:table_ops.backfill": "computed columns are refused with 500 code 18 (expression required)",
    "scenario:table_ops.schema_metadata": "UpdateTableSchemaMetadata merges, though the operation replaces",
    "scenario:table_ops.field_metadata": "UpdateFieldMetadata answers 500 code 18 (not implemented), not code 0",
    "scenario:table_ops.branch.create": "a missing source branch answers 500 code 18, not 404 code 22",
    "scenario:table_ops.materialized_view": "CreateMaterializedView answers 500 code 18, not code 0",
    "scenario:versions.storage.delete": (
        "BatchDeleteTableVersions deletes the latest version's manifest too (the table falls back to an older "
        "version); lance-ns refuses that with code 13"),
    "scenario:versions.storage.batch_create": (
        "BatchCreateTableVersions answers 500 code 18 ('batch_create_table_versions not implemented'), not code 0"),
    "scenario:versions.batch_commit.four_kinds": (
        "BatchCommitTables answers 500 code 18 ('batch_commit_tables not implemented'), not code 0"),
    "scenario:versions.batch_commit.declares_whole": (
        "BatchCommitTables answers 500 code 18 ('batch_commit_tables not implemented'), not code 0"),
}

#: where pylance 14.0.2's Python RestNamespace wrapper departs (the Rust client behind it is fine)
#: optional operations pylance 14's RestNamespace wrapper does not offer (the interface's default)
PYLANCE_CLIENT_UNOFFERED = {
    "BatchCreateTableVersions": "RestNamespace has no batch_create_table_versions",
    "BatchCommitTables": "RestNamespace has no batch_commit_tables",
    "UpdateFieldMetadata": "RestNamespace has no update_field_metadata",
}

PYLANCE_CLIENT_DEPARTURES = {
    "scenario:managed.batch_create": "RestNamespace has no batch_create_table_versions (the interface's default: unsupported)",
    "scenario:managed.batch_commit": "RestNamespace has no batch_commit_tables (the interface's default: unsupported)",
    "scenario:table_ops.transaction.alter": (
        "RestNamespace.alter_transaction passes request.model_dump() (field names, not the protocol's "
        "setStatusAction/setPropertyAction/unsetPropertyAction) to the Rust client, so every action "
        "reaches the server empty: 400 code 13"
    ),
}


_NO_RENAME = "pylance 14's DirectoryNamespace has no RenameTable: 500 code 18 'rename_table not implemented'"
_ROOT_ONLY = "pylance 14's DirectoryNamespace ListAllTables lists the root's tables only, not nested namespaces"
PYLANCE_SERVER_DEPARTURES.update({
    "scenario:table.rename": _NO_RENAME,
    "scenario:table.rename.missing": _NO_RENAME,
    "scenario:table.rename.target_exists": _NO_RENAME,
    "scenario:table.rename.data": _NO_RENAME,
    "test_rename_table_race": _NO_RENAME,
    "test_rename_into_one_name_race": _NO_RENAME,
    "test_rename_moves_a_table_into_another_namespace": _NO_RENAME,
    "scenario:tables.list_all": _ROOT_ONLY,
    "scenario:tables.list_all.nested": _ROOT_ONLY,
})

_PYLANCE_RACES = (
    "pylance 14.0.2's RestAdapter over its DirectoryNamespace: racing requests on one name answer "
    "409 code 14 (its manifest's conflict) instead of 2/5, several drops of one table or namespace "
    "succeed, and a losing drop or create answers 500 code 18"
)
PYLANCE_SERVER_DEPARTURES["test_register_table_race"] = PYLANCE_SERVER_DEPARTURES[
    "test_deregister_keeps_data_and_register_brings_it_back"
]
#: the other races of test_concurrency.py: pylance's server settles none of them reliably
PYLANCE_SERVER_RACE_LIMITS = {
    name: _PYLANCE_RACES
    for name in (
        "test_create_namespace_race", "test_create_namespace_exist_ok_race_all_succeed", "test_drop_namespace_race",
        "test_declare_into_namespace_being_dropped", "test_declare_table_race", "test_create_table_race",
        "test_create_declared_table_race", "test_drop_table_race",
        "test_create_and_drop_of_one_table",
    )
}


@contextmanager
def _pylance_server(tmp):
    root = tmp / "rest-pylance"
    root.mkdir()
    adapter = lance.namespace.RestAdapter("dir", {"root": str(root)}, host="127.0.0.1", port=0)
    adapter.start()
    try:
        client = lance_ns.connect("rest", {"uri": f"http://127.0.0.1:{adapter.port}"})
        yield Ctx(
            connect=lambda: client,
            # pylance's DirectoryNamespace declares nothing: what the spec asks of it
            caps=frozenset({"cascade", *_ENVIRONMENT}),
            scratch=str(tmp / "scratch-pylance"),
            third_party=True,
        )
        client.close()
    finally:
        adapter.stop()


BACKENDS = [
    Backend("rest-ours", _ours, facts("at_root cascade data detail managed nested ns_properties ours register rest "
                                      "spawn table_properties")),
    # pylance's DirectoryNamespace declares nothing: what the spec asks of it (no managed tables of its own)
    Backend("rest-pylance-server", _pylance_server,
            facts("at_root cascade data detail nested ns_properties ours register rest table_properties third_party"),
            race_limits=PYLANCE_SERVER_RACE_LIMITS, departures=PYLANCE_SERVER_DEPARTURES),
    # pylance's client: not ours, so none of lance-ns's own request context (purge) and no raw protocol checks
    Backend("rest-pylance-client", _pylance_client,
            facts("at_root cascade data detail managed nested ns_properties register table_properties third_party"),
            departures=PYLANCE_CLIENT_DEPARTURES, unoffered=PYLANCE_CLIENT_UNOFFERED),
]
