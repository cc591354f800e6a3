"""Unity Catalog: against the REAL Unity Catalog OSS server where one can be had, and against the
contract-validated double (tests/services/unity.py) for what no real server shows.

``unity-oss`` runs the newest release, 0.6.0, and ``unity-oss-0.4`` 0.4.1, the last release that
took a column's ``type_json`` without ``name``/``nullable``/``metadata`` (tests/services/unity_oss.py:
jars from Maven Central by mvn, one JVM per version and test process).  Where Maven refuses the
server (the development machines' Maven Central serves no ``unitycatalog-server`` at all) their
tests skip with Maven's answer; ``LANCE_NS_UNITY_OSS_CLASSPATH_<version>`` points them at a server
class path obtained otherwise (built from the release's tagged source with ``sbt server/package``,
whose ``server/target/classpath`` is that class path).  The suite's namespaces are schemas of the
catalog ``lance_ci``, made through the API; table data goes to a local root.

``unity`` and ``unity-legacy`` run the double, once per error convention: Unity >= 0.4
(``*_NOT_FOUND``, 400 ``*_ALREADY_EXISTS``) and Unity <= 0.3 (``NOT_FOUND``, 409
``ALREADY_EXISTS``, which no server from Maven Central speaks), each in a process of its own
(its contract checks take no time from the racing clients).  On exit the double must have
seen no request or response outside the published contract.
"""

from contextlib import contextmanager

import httpx
import pytest

import lance_ns
from tests.services.unity import PREFIX, unity_server_process

from . import Backend, Ctx, declared_caps, facts

CATALOG = "lance_ci"
#: what the unity backend shows, on the double and on the real server alike (no Cascade: see docs/backends.md)
FACTS = facts("catalog data detail managed ns_properties ours register spawn table_properties")
ENVIRONMENT = ("data", "detail", "ns_properties", "table_properties", "register")


#: rounds of the concurrent-appends races on the legacy-error double: the same server and commit
#: path as ``unity``'s (which runs dir's 20), answering other error codes
LEGACY_APPEND_ROUNDS = 6


def _double(name: str, legacy: bool) -> Backend:
    @contextmanager
    def start(tmp):
        with unity_server_process(legacy_errors=legacy, auth_token="ci-token", catalogs=(CATALOG,)) as unity:
            props = {"endpoint": unity.endpoint, "auth_token": "ci-token", "root": str(tmp / "root"), "retry_backoff_ms": "1"}
            ns = lance_ns.connect("unity", props)
            yield Ctx(
                append_rounds=LEGACY_APPEND_ROUNDS if legacy else None,
                connect=lambda: ns,
                spawn=("unity", props),
                parent=[CATALOG],
                caps=declared_caps(ns, *ENVIRONMENT),
                scratch=str(tmp / "scratch"),
            )
            ns.close()
            unity.server.check()

    return Backend(name, start, FACTS)


def real_server(version: str):
    """The shared real server of ``version`` with the catalog ``lance_ci``; skips where Maven refuses it."""
    from tests.services.unity_oss import MavenRefused, shared_unity_oss

    try:
        server = shared_unity_oss(version)
    except MavenRefused as e:
        pytest.skip(str(e))
    r = httpx.post(f"{server.endpoint}{PREFIX}/catalogs", json={"name": CATALOG, "comment": "lance-ns tests"})
    if r.status_code != 200 and "ALREADY_EXISTS" not in r.text:
        r.raise_for_status()
    return server


def _real(name: str, version: str) -> Backend:
    @contextmanager
    def start(tmp):
        server = real_server(version)
        props = {"endpoint": server.endpoint, "root": str(tmp / "root"), "retry_backoff_ms": "1"}
        ns = lance_ns.connect("unity", props)
        try:
            yield Ctx(
                connect=lambda: ns,
                spawn=("unity", props),
                parent=[CATALOG],
                caps=declared_caps(ns, *ENVIRONMENT),
                scratch=str(tmp / "scratch"),
            )
        finally:
            ns.close()

    return Backend(name, start, FACTS, race_limits=RACE_LIMITS, departures=DEPARTURES)


#: where the real server departs from the Lance spec in a way no client can undo (test name -> reason):
#: none outside the races below
DEPARTURES: dict[str, str] = {}

_DUPLICATES = (
    "Unity Catalog OSS (0.4.1 and 0.6.0, H2 through Hibernate) checks that a name is free and inserts the "
    "schema or table in separate steps, with no unique constraint on names: racing creates of one name can "
    "all answer 200 and leave duplicate rows, after which every GET of that name answers 500 'Query did not "
    "return a unique result' (or the create itself does); no client can undo or detect that"
)
_DELETES = (
    "racing DELETEs of one schema or table on Unity Catalog OSS: the losers get 500 INTERNAL 'Row was updated "
    "or deleted by another transaction' (Hibernate's optimistic lock) instead of 404 *_NOT_FOUND, and a 500 is "
    "no answer a client may read as 'already gone'"
)
#: races the real server settles only sometimes (test_concurrency.py); each failed in runs here
RACE_LIMITS = {
    "test_create_namespace_race": _DUPLICATES,
    "test_declare_table_race": _DUPLICATES,
    "test_create_table_race": _DUPLICATES,
    "test_register_table_race": _DUPLICATES,
    "test_create_and_drop_of_one_table": _DUPLICATES + "; " + _DELETES,
    # Unity has no rename: lance-ns creates the new entry and deletes the old one
    "test_rename_table_race": "a rename is a create and a delete on Unity: " + _DELETES,
    "test_rename_into_one_name_race": "a rename is a create and a delete on Unity: " + _DUPLICATES,
    "test_drop_namespace_race": _DELETES,
    "test_drop_table_race": _DELETES,
    "test_declare_into_namespace_being_dropped": (
        "Unity Catalog OSS's DELETE /schemas checks for tables and deletes the schema in separate steps: a "
        "table created after the check is left in a dropped schema (the create answered 200)"
    ),
}

BACKENDS = [
    _double("unity", legacy=False),
    _double("unity-legacy", legacy=True),
    _real("unity-oss", "0.6.0"),
    _real("unity-oss-0.4", "0.4.1"),
]
