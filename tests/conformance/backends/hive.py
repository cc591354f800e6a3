"""hive2 and hive3 against a real Hive Metastore 2.3.10 (tests/services/hms.py), and
hive3 against a real Hive Metastore 3.1.3 (tests/services/hms3.py): ``hive3-hms3``.

One metastore of each per test process, shared with tests/hive.  hive2's databases
are root-level namespaces; on 2.3 hive3 runs in degraded mode (no catalog API), its
suite namespaces are databases of the catalog ``hive``.  On 3.1 the catalog API is
on: the suite's namespaces are databases of a catalog made for the suite
(``HMS3_CATALOG``), so every call names a catalog other than the default one.
"""

from contextlib import contextmanager

import pytest

import lance_ns

from . import Backend, Ctx, declared_caps, facts

ENVIRONMENT = ("data", "detail", "ns_properties", "table_properties", "register",)

#: rounds of the concurrent-appends races where hive3 on the same metastore already runs the
#: suite's 20 (directly and through our server): hive2 is the same commit path under a
#: root-level id (a round costs ~2 s: the metastore's lock calls), HMS 3.1's lock manager
#: costs ~4.5 s a round
SECOND_SERVER_APPEND_ROUNDS = {"hive2": 6, "hive3-hms3": 8}


def _start(impl, parent):
    @contextmanager
    def start(tmp):
        from tests.services.hms import shared_metastore

        hms = shared_metastore()
        # one client (and connection pool) for the whole suite, as an application would hold
        props = {"uri": hms.uri, "root": str(tmp / "tables"), "client.socket-timeout-ms": "30000"}
        ns = lance_ns.connect(impl, props)
        try:
            yield Ctx(connect=lambda: ns, parent=parent, caps=declared_caps(ns, *ENVIRONMENT), scratch=str(tmp / "scratch"),
                      spawn=(impl, props), append_rounds=SECOND_SERVER_APPEND_ROUNDS.get(impl))
        finally:
            ns.close()

    return start


_DROPS = (
    "Hive Metastore 2.3's drop_table/drop_database check and delete in separate steps: racing drops of "
    "one table or database can all succeed (or fail with a NullPointerException, code 18); no "
    "conditional drop exists in its Thrift API"
)
#: races the metastore itself does not settle (see docs/reliability.md).  The create races, the
#: creates racing drops and the declares into a database being dropped settle (one winner in 10
#: rounds of each, hive2 and hive3) since a losing create_table can no longer delete the winner's
#: table directory (lance_ns.impls.hive.namespace._make_local_directory).
RACE_LIMITS = {
    "test_drop_namespace_race": _DROPS,
    "test_drop_table_race": _DROPS,
}

HMS3_CATALOG = "lance_ci"
#: what every hive backend shows (hive2's namespaces are also at the root: no catalog level)
FACTS = "cascade catalog data detail managed ns_properties ours register spawn table_properties"


@contextmanager
def _start_hms3(tmp):
    from tests.services.hms3 import shared_hms3

    hms = shared_hms3()
    props = {"uri": hms.uri, "root": str(tmp / "tables"), "client.socket-timeout-ms": "30000"}
    ns = lance_ns.connect("hive3", props)
    try:
        assert ns.has_catalogs, "a Hive 3 metastore without the catalog API"
        ns.create_namespace({"id": [HMS3_CATALOG], "mode": "ExistOk"})
        yield Ctx(connect=lambda: ns, parent=[HMS3_CATALOG], caps=declared_caps(ns, *ENVIRONMENT),
                  scratch=str(tmp / "scratch"), spawn=("hive3", props),
                  append_rounds=SECOND_SERVER_APPEND_ROUNDS["hive3-hms3"])
        ns.drop_namespace({"id": [HMS3_CATALOG], "mode": "Skip", "behavior": "Cascade"})
    finally:
        ns.close()


_HMS3_DROPS = (
    "Hive Metastore 3.1's drop_table/drop_database read the object and delete it in one metastore "
    "transaction that does not exclude a racing one (read committed): racing drops of one table or "
    "database can each find it and each succeed (2-3 winners of 6 in 10 rounds here), a loser of a "
    "database drop may also fail with a NullPointerException (code 18); no conditional drop exists in "
    "its Thrift API"
)
#: races Hive Metastore 3.1 does not settle (measured with LANCE_NS_RACE_ROUNDS=10; the create
#: races, renames and declares into a database being dropped all had one winner there)
HMS3_RACE_LIMITS = {
    "test_drop_namespace_race": _HMS3_DROPS,
    "test_drop_table_race": _HMS3_DROPS,
}

BACKENDS = [
    Backend("hive2", _start("hive2", []), facts(f"at_root {FACTS}"), race_limits=RACE_LIMITS),
    Backend("hive3", _start("hive3", ["hive"]), facts(FACTS), race_limits=RACE_LIMITS),
    # slow: its jars come from Maven Central (mvn) on first use; `make test-fast` runs without it
    Backend("hive3-hms3", _start_hms3, facts(FACTS), marks=(pytest.mark.slow,), race_limits=HMS3_RACE_LIMITS),
]
