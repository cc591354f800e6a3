"""RestNamespace.raw_request / encode: the public, unvalidated way to send a
request (what ``lance-ns check`` uses to judge a server's own answers)."""

from __future__ import annotations

import pytest
from lance_namespace import LanceNamespaceError

import lance_ns
from lance_ns.errors import InvalidInputError
from lance_ns.server import run_server_in_thread
from lance_ns.protocol.routes import ROUTES


def test_a_name_the_client_refuses_reaches_the_server_raw(client, backend):
    with pytest.raises(InvalidInputError):  # the validated call never leaves the client
        client.create_namespace({"id": ["bad/name"]})
    path, params, content, headers = client.encode(ROUTES["create_namespace"], {"id": ["bad/name"]})
    assert path == "/v1/namespace/bad%2Fname/create"
    resp = client.raw_request("POST", path, params=params, content=content, headers=headers)
    assert resp.status == 400 and resp.code == 13
    assert isinstance(resp.error(), InvalidInputError)
    assert backend.list_namespaces({"id": []}).namespaces == []  # nothing written


def test_raw_request_reports_what_came_back(client):
    ok = client.raw_request("POST", "/v1/namespace/team/create", json={})
    assert ok.status == 200 and ok.error() is None and ok.code is None
    malformed = client.raw_request(
        "POST", "/v1/namespace/x/create", content=b"{not json", headers={"Content-Type": "application/json"}
    )
    assert malformed.status == 400 and malformed.code == 13
    missing = client.raw_request("POST", "/v1/namespace/absent/describe", json={})
    assert missing.status == 404 and missing.code == 1
    err = missing.error()
    assert isinstance(err, LanceNamespaceError) and int(err.code) == 1


def test_raw_request_sends_the_clients_credentials_unless_told_not_to(tmp_path):
    ns = lance_ns.connect("dir", {"root": str(tmp_path)})
    with run_server_in_thread(ns, auth_token="s3cret", log_requests=False) as server:
        with lance_ns.connect("rest", {"uri": server.url, "auth_token": "s3cret", "max_retries": "0"}) as client:
            assert client.raw_request("POST", "/v1/namespace/a/create", json={}).status == 200
            anonymous = client.raw_request("POST", "/v1/namespace/a/describe", json={}, headers={"Authorization": ""})
            assert anonymous.status == 401 and anonymous.code == 16
