"""Iceberg REST backend: our client (impl ``iceberg``) against a REAL server,
SeaweedFS ``weed mini`` (its Iceberg REST catalog and its S3), started once per
test session by tests/services/seaweedfs.py.

The suite's namespaces live in the warehouse (the table bucket), and tables
at ``s3://<warehouse>/<namespace>/<table>`` -- root ``s3://`` makes the spec's
default location ``{root}/{warehouse}/{namespace}/{table}`` exactly that, the
one place SeaweedFS lets S3 clients write inside a table bucket -- so pylance
writes and reads the data through the namespace on SeaweedFS's S3.

SeaweedFS's departures from the Iceberg REST spec (duplicate CreateTable
answers 200, ListTables of a missing namespace answers [], unfiltered
ListNamespaces includes nested namespaces, CreateNamespace needs no parent,
DropNamespace ignores nested children) are all covered by the shared
algorithm checking existence first.  One departure no client can undo is an
expected (strict) failure below: DeregisterTable deletes the data.
tests/iceberg/test_seaweedfs_departures.py shows each departure on the raw
server and our client's spec behaviour next to it.
"""

from contextlib import contextmanager

import lance_ns

from ...services.seaweedfs import seaweedfs_server
from . import Backend, Ctx, declared_caps, facts


def client_properties(server) -> dict[str, str]:
    props = {
        "endpoint": server.iceberg_url,
        "credential": server.credential,
        "root": "s3://",
    }
    props.update({f"storage.{k}": v for k, v in server.storage_options().items()})
    return props


#: rounds of the concurrent-appends races against SeaweedFS's Iceberg catalog: the reference
#: server runs the suite's 20 on the same commit path (directly and through our server); a
#: round here costs ~3.5 s
SEAWEED_APPEND_ROUNDS = 8


@contextmanager
def _start(tmp):
    with seaweedfs_server() as server:
        props = client_properties(server)
        yield Ctx(
            connect=lambda: lance_ns.connect("iceberg", props),
            spawn=("iceberg", props),
            append_rounds=SEAWEED_APPEND_ROUNDS,
            parent=[server.warehouse],
            caps=declared_caps(
                lance_ns.connect("iceberg", props), "nested", "data", "detail", "ns_properties", "table_properties",
                "register",
            ),
            storage_options=server.storage_options(),
        )


#: where SeaweedFS departs from the Iceberg REST spec in a way no client can undo
DEPARTURES = {
    "test_deregister_keeps_data_and_register_brings_it_back": (
        "SeaweedFS deletes a table's files on DELETE .../tables/{t}?purgeRequested=false "
        "(the spec keeps them), so deregistered Lance data is gone"
    ),
    # these re-register a deregistered table's data under another name
    "test_dropping_a_registered_table_keeps_its_data": "SeaweedFS deletes a table's files on deregister (above)",
    "test_purge_drops_the_data_of_a_registered_table": "SeaweedFS deletes a table's files on deregister (above)",
    "scenario:table.register": "SeaweedFS deletes a table's files on deregister (above)",
    "scenario:table_ops.branch.create": (
        "SeaweedFS's table bucket refuses S3 writes under <table>/tree/, where Lance keeps branches "
        "(403 AccessDenied: code 15)"
    ),
}

_DUPLICATE_CREATE = (
    "SeaweedFS answers 200 to a CreateTable/CreateNamespace racing one of the same name (design.md: "
    "duplicate creates succeed), so racing declares can both win; our client checks existence first, "
    "which settles only requests that do not overlap"
)
#: races SeaweedFS's Iceberg REST catalog settles only sometimes (see test_concurrency.py)
RACE_LIMITS = {
    "test_create_namespace_race": _DUPLICATE_CREATE,
    "test_create_namespace_exist_ok_race_all_succeed": _DUPLICATE_CREATE,
    "test_declare_table_race": _DUPLICATE_CREATE,
    "test_create_table_race": _DUPLICATE_CREATE,
    "test_create_declared_table_race": _DUPLICATE_CREATE,
    "test_create_and_drop_of_one_table": _DUPLICATE_CREATE,
    "test_rename_into_one_name_race": (
        "SeaweedFS answers 200 to a table rename racing another onto the same name (its duplicate check "
        "and the rename are not one step), so two renames can both win; our client checks the name first, "
        "which settles only requests that do not overlap"
    ),
    "test_rename_table_race": (
        "SeaweedFS answers 200 to a rename of a table that a racing rename already moved, so several "
        "renames of one table can succeed"
    ),
    "test_drop_table_race": (
        "SeaweedFS answers success to a DropTable of a table a racing drop already removed, "
        "so several racing drops can succeed"
    ),
    "test_declare_into_namespace_being_dropped": (
        "SeaweedFS's DropNamespace does not refuse a namespace that gained a table after our emptiness check"
    ),
}

# SeaweedFS deletes a dropped table's files itself, a registered table's too (the spec leaves data to
# the client): the dataset written outside lance-ns does not survive its DropTable
DEPARTURES["test_a_location_is_answered_in_one_spelling"] = (
    "SeaweedFS deletes a table's files on deregister, so the data to register again is gone"
)
DEPARTURES["test_a_dataset_registered_at_a_location_we_would_choose_survives_drops"] = (
    "SeaweedFS deletes a dropped table's files itself, also a registered table's"
)

# the same departure seen by the race: the deregistered table's data is gone, every register answers 13
DEPARTURES["test_register_table_race"] = DEPARTURES["test_deregister_keeps_data_and_register_brings_it_back"]


# -- iceberg-ref: Apache Iceberg's reference REST server (tests/services/iceberg_rest.py) ----------------
#
# The server the Iceberg project tests its clients with (RESTCatalogServer, JDBC catalog on SQLite in
# strict mode, a local warehouse through HadoopFileIO): none of SeaweedFS's departures above (a
# duplicate create answers 409, a missing namespace 404, the unfiltered namespace listing only
# top-level ones, a deregistered table keeps its files, a rename keeps the data readable, branches
# write under <table>/tree/), so no departure is declared for it; its own departures are shown on the
# raw server in tests/iceberg/test_reference_server.py.  Two races its JDBC catalog does not settle
# are skipped (REF_RACE_LIMITS).  It names no prefix in its config and ignores the warehouse: every
# warehouse name reaches its one catalog; the suite uses ``REF_WAREHOUSE``.  Tables live on local
# disk under the test's ``root``.

REF_WAREHOUSE = "ref"


def ref_client_properties(server, root) -> dict[str, str]:
    return {"endpoint": server.url, "root": str(root)}


@contextmanager
def _start_ref(tmp):
    from ...services.iceberg_rest import iceberg_rest_server

    with iceberg_rest_server() as server:
        props = ref_client_properties(server, tmp / "tables")
        yield Ctx(
            connect=lambda: lance_ns.connect("iceberg", props),
            spawn=("iceberg", props),
            parent=[REF_WAREHOUSE],
            caps=declared_caps(
                lance_ns.connect("iceberg", props), "nested", "data", "detail", "ns_properties", "table_properties",
                "register",
            ),
            scratch=str(tmp / "scratch"),
        )


#: where the reference server departs from the Iceberg REST spec in a way no client can undo (none found)
REF_DEPARTURES: dict[str, str] = {}

_REF_NAMESPACE_INSERT = (
    "the reference server's JDBC catalog checks that a namespace is new and inserts it in two statements; "
    "a racing duplicate fails SQLite's primary key and is answered 500 UncheckedSQLException (code 18), not "
    "409 AlreadyExists (its table creates map that error to 409; namespace creates do not). One create still "
    "wins (seen in ~2 of 30 raw races of 6)"
)
#: races the reference server settles only sometimes (see test_concurrency.py)
REF_RACE_LIMITS = {
    "test_create_namespace_race": _REF_NAMESPACE_INSERT,
    "test_create_namespace_exist_ok_race_all_succeed": _REF_NAMESPACE_INSERT,
    "test_declare_into_namespace_being_dropped": (
        "the reference server's JDBC catalog drops a namespace in separate statements (table listing, then "
        "DELETE of its properties row) and checks a new table's namespace apart from inserting it, and a JDBC "
        "namespace exists while any table lies in it: declares racing a drop can all succeed together with "
        "the drop, leaving the namespace alive with their tables (seen in 1 of 15 rounds)"
    ),
}

FACTS = facts("catalog data detail drop_missing_ok managed nested ns_properties ours register spawn table_properties")

BACKENDS = [Backend("iceberg", _start, FACTS, race_limits=RACE_LIMITS, departures=DEPARTURES),
            Backend("iceberg-ref", _start_ref, FACTS, race_limits=REF_RACE_LIMITS, departures=REF_DEPARTURES)]
