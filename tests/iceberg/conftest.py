"""Fixtures: the real SeaweedFS (once per session) and a raw HTTP view of it."""

from __future__ import annotations

import uuid

import httpx
import pytest

import lance_ns

from ..conformance.backends.iceberg import client_properties
from ..servers.seaweedfs import seaweedfs_server


@pytest.fixture(scope="session")
def seaweed():
    with seaweedfs_server() as server:
        yield server


@pytest.fixture
def client(seaweed):
    return lance_ns.connect("iceberg", client_properties(seaweed))


@pytest.fixture(scope="session")
def raw(seaweed):
    """httpx straight to the Iceberg REST API of the warehouse (no lance-ns)."""
    tok = httpx.post(
        f"{seaweed.iceberg_url}/v1/oauth/tokens",
        data={"grant_type": "client_credentials", "client_id": seaweed.access_key, "client_secret": seaweed.secret_key},
    ).json()["access_token"]
    with httpx.Client(
        base_url=f"{seaweed.iceberg_url}/v1/{seaweed.warehouse}", headers={"Authorization": f"Bearer {tok}"}
    ) as http:
        yield http


@pytest.fixture
def ns(client, seaweed):
    """A fresh namespace [warehouse, tXXXX], removed afterwards (tables too)."""
    nid = [seaweed.warehouse, f"i{uuid.uuid4().hex[:10]}"]
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
