"""The Unity Catalog servers tests/unity runs against, behind one test-side view.

``double``: the in-process server written from the published contract (tests/services/unity.py),
Unity >= 0.4's error convention; ``double-legacy``: the same with Unity <= 0.3's.  ``oss-0.6.0``
and ``oss-0.4.1``: the REAL Unity Catalog OSS server (tests/services/unity_oss.py, one JVM per
version and test process, shared with the conformance suite); where Maven refuses its jars those
tests skip with Maven's answer.

:class:`Target` reads what a server stores through the REST API itself, the same way on every
server; what only the double can do (fault injection, its request log, its page size, a bearer
token it checks, the <= 0.3 error convention) is ``Target.double`` and is used only by tests
parametrised onto the double, each saying why.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Iterator
from urllib.parse import quote, unquote, urlparse

import httpx
import pytest

from tests.services.unity import PREFIX, UnityServer, unity_server

DOUBLE, DOUBLE_LEGACY = "double", "double-legacy"
#: the real servers: newest release, and the last one taking a type_json without name/nullable/metadata
REAL = {"oss-0.6.0": "0.6.0", "oss-0.4.1": "0.4.1"}
EVERY_SERVER = [DOUBLE, *REAL]


@dataclass
class Target:
    kind: str
    endpoint: str  # base URL; clients append /api/2.1/unity-catalog
    http: httpx.Client
    double: UnityServer | None = None  # None on a real server
    #: catalogs that were there before this target was set up (another suite's, on a shared real server)
    foreign: frozenset[str] = field(default_factory=frozenset)

    @property
    def real(self) -> bool:
        return self.double is None

    def get(self, path: str, **params) -> dict:
        r = self.http.get(path, params=params)
        r.raise_for_status()
        return r.json()

    def post(self, path: str, body: dict) -> dict:
        r = self.http.post(path, json=body)
        r.raise_for_status()
        return r.json()

    def table(self, full_name: str) -> dict | None:
        """The table object as the server holds it (None if there is none)."""
        r = self.http.get(f"/tables/{quote(full_name, safe='')}")
        if r.status_code == 404:
            return None
        r.raise_for_status()
        return r.json()

    def location(self, full_name: str) -> str:
        """The stored location as a path where it is local (Unity stores ``/p`` as ``file:///p``, percent-encoded)."""
        location = self.table(full_name)["storage_location"]
        return unquote(urlparse(location).path) if location.startswith("file:") else location

    def _names(self, path: str, field_name: str, **params) -> list[str]:
        names, token = [], None
        page = 50 if field_name == "tables" else 1000  # the contract's caps
        while True:
            body = self.get(path, max_results=page, **params, **({"page_token": token} if token else {}))
            names += [item["name"] for item in body.get(field_name) or []]
            token = body.get("next_page_token")
            if not token:
                return sorted(names)

    def catalogs(self) -> list[str]:
        return [c for c in self._names("/catalogs", "catalogs") if c not in self.foreign]

    def schemas(self, catalog: str) -> list[str]:
        return self._names("/schemas", "schemas", catalog_name=catalog)

    def tables(self, catalog: str, schema: str) -> list[str]:
        return self._names("/tables", "tables", catalog_name=catalog, schema_name=schema)


@contextmanager
def unity_target(kind: str, catalogs=("main",), page_size: int = 4, auth_token: str | None = None) -> Iterator[Target]:
    """A server of ``kind`` holding ``catalogs`` (made through the API), for one test or module."""
    if kind in (DOUBLE, DOUBLE_LEGACY):
        with unity_server(legacy_errors=kind == DOUBLE_LEGACY, page_size=page_size, auth_token=auth_token, catalogs=catalogs) as u:
            headers = {"Authorization": f"Bearer {auth_token}"} if auth_token else {}
            with httpx.Client(base_url=u.endpoint + PREFIX, headers=headers) as http:
                yield Target(kind, u.endpoint, http, double=u.server)
            u.server.check()  # no request or response outside the contract
        return
    from tests.services.unity_oss import MavenRefused, shared_unity_oss

    try:
        server = shared_unity_oss(REAL[kind])
    except MavenRefused as e:
        pytest.skip(str(e))
    with httpx.Client(base_url=server.endpoint + PREFIX) as http:
        target = Target(kind, server.endpoint, http)
        target.foreign = frozenset(target._names("/catalogs", "catalogs")) - set(catalogs)
        for name in catalogs:  # leftovers of an interrupted run go first
            http.delete(f"/catalogs/{name}", params={"force": "true"})
            target.post("/catalogs", {"name": name})
        try:
            yield target
        finally:
            for name in target.catalogs():  # what this target made, and its tests made
                http.delete(f"/catalogs/{name}", params={"force": "true"})
