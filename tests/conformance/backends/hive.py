"""hive2 and hive3 against a real Hive Metastore 2.3.10 (tests/servers/hms.py).

One metastore per test process, shared with tests/hive.  hive2's databases
are root-level namespaces; hive3 runs in degraded mode (HMS 2.3 has no
catalog API), its suite namespaces are databases of the catalog ``hive``.
"""

from contextlib import contextmanager

import lance_ns

from . import Backend, Ctx, declared_caps

ENVIRONMENT = ("data", "detail", "ns_properties", "table_properties", "register",)


def _start(impl, parent):
    @contextmanager
    def start(tmp):
        from tests.servers.hms import shared_metastore

        hms = shared_metastore()
        # one client (and connection pool) for the whole suite, as an application would hold
        ns = lance_ns.connect(impl, {"uri": hms.uri, "root": str(tmp / "tables"), "client.socket-timeout-ms": "30000"})
        try:
            yield Ctx(connect=lambda: ns, parent=parent, caps=declared_caps(ns, *ENVIRONMENT), scratch=str(tmp / "scratch"))
        finally:
            ns.close()

    return start


BACKENDS = [
    Backend("hive2", _start("hive2", [])),
    Backend("hive3", _start("hive3", ["hive"])),
]
