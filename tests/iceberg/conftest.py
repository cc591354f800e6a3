"""Fixtures: the real Iceberg REST servers (once per session) and a raw HTTP view of them.

``catalog`` is SeaweedFS unless a test asks for another with
``@pytest.mark.parametrize("catalog", SERVERS, indirect=True)`` (SERVERS: SeaweedFS and
Apache Iceberg's reference server, tests/services/iceberg_rest.py); ``client``, ``raw``
and ``ns`` follow it.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

import httpx
import pytest

import lance_ns

from ..conformance.backends.iceberg import REF_WAREHOUSE, client_properties, ref_client_properties
from ..services.seaweedfs import seaweedfs_server

#: the servers a test parametrised over ``catalog`` runs on
SERVERS = ["seaweedfs", "iceberg-ref"]


@dataclass(frozen=True)
class Catalog:
    name: str
    props: dict[str, str]  # the client's (lance_ns.connect("iceberg", props))
    warehouse: str  # the identifier's first level
    raw: httpx.Client  # straight to the warehouse's REST API (base URL with its prefix)
    storage_options: dict[str, str] = field(default_factory=dict)  # of the table locations


@pytest.fixture(scope="session")
def seaweed():
    with seaweedfs_server() as server:
        yield server


@pytest.fixture(scope="session")
def seaweedfs_catalog(seaweed):
    tok = httpx.post(
        f"{seaweed.iceberg_url}/v1/oauth/tokens",
        data={"grant_type": "client_credentials", "client_id": seaweed.access_key, "client_secret": seaweed.secret_key},
    ).json()["access_token"]
    with httpx.Client(
        base_url=f"{seaweed.iceberg_url}/v1/{seaweed.warehouse}", headers={"Authorization": f"Bearer {tok}"}
    ) as http:
        yield Catalog("seaweedfs", client_properties(seaweed), seaweed.warehouse, http, seaweed.storage_options())


@pytest.fixture(scope="session")
def reference():
    from ..services.iceberg_rest import iceberg_rest_server

    with iceberg_rest_server() as server:
        yield server


@pytest.fixture(scope="session")
def iceberg_ref_catalog(reference, tmp_path_factory):
    """The reference server: no authentication, no prefix (its routes have none)."""
    root = tmp_path_factory.mktemp("iceberg-ref-tables")
    with httpx.Client(base_url=f"{reference.url}/v1") as http:
        yield Catalog("iceberg-ref", ref_client_properties(reference, root), REF_WAREHOUSE, http)


@pytest.fixture
def catalog(request) -> Catalog:
    name = getattr(request, "param", "seaweedfs")
    return request.getfixturevalue(f"{name.replace('-', '_')}_catalog")


@pytest.fixture
def client(catalog):
    return lance_ns.connect("iceberg", catalog.props)


@pytest.fixture
def raw(catalog):
    """httpx straight to the Iceberg REST API of the warehouse (no lance-ns)."""
    return catalog.raw


@pytest.fixture
def ns(client, catalog):
    """A fresh namespace [warehouse, tXXXX], removed afterwards (tables too)."""
    nid = [catalog.warehouse, f"i{uuid.uuid4().hex[:10]}"]
    client.create_namespace({"id": nid})
    yield nid
    _drop_tree(client, nid)


def _drop_tree(c, nid):
    try:
        for child in c.list_namespaces({"id": nid}).namespaces:
            _drop_tree(c, nid + [child])
        for t in c.list_tables({"id": nid}).tables:
            c.drop_table({"id": nid + [t]})
        c.drop_namespace({"id": nid})
    except Exception as e:  # cleanup must not hide the test's result
        print(f"cleanup of {nid} failed: {e!r}")
