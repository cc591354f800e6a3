"""Unity Catalog against the in-process contract-validated server
(tests/servers/unity.py), once per error convention: ``unity`` speaks Unity
>= 0.4 (``*_NOT_FOUND``, 400 ``*_ALREADY_EXISTS``), ``unity-legacy`` Unity
<= 0.3 (``NOT_FOUND``, 409 ``ALREADY_EXISTS``).  The suite's namespaces are
schemas of the catalog ``lance_ci``; table data goes to a local root.  On
exit the server must have seen no request or response outside the contract.
"""

from contextlib import contextmanager

import lance_ns
from tests.servers.unity import unity_server

from . import Backend, Ctx, declared_caps

CATALOG = "lance_ci"


def _backend(name: str, legacy: bool) -> Backend:
    @contextmanager
    def start(tmp):
        with unity_server(legacy_errors=legacy, auth_token="ci-token", catalogs=(CATALOG,)) as unity:
            props = {"endpoint": unity.endpoint, "auth_token": "ci-token", "root": str(tmp / "root"), "retry_backoff_ms": "1"}
            ns = lance_ns.connect("unity", props)
            yield Ctx(
                connect=lambda: ns,
                parent=[CATALOG],
                caps=declared_caps(ns, "data", "detail", "ns_properties", "table_properties", "register"),
                scratch=str(tmp / "scratch"),
            )
            ns.close()
            unity.server.check()

    return Backend(name, start)


BACKENDS = [_backend("unity", legacy=False), _backend("unity-legacy", legacy=True)]
