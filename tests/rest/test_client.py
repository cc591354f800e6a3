"""Our REST client (impl ``rest``): wire format, errors, retries, headers, TLS."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import time

import pytest
from lance_namespace import (
    ListNamespacesRequest,
    NamespaceAlreadyExistsError,
    ServiceUnavailableError,
    TableNotFoundError,
    UnauthenticatedError,
)
from starlette.applications import Starlette
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.routing import Route

import lance_ns
from lance_ns.errors import InternalError, InvalidInputError, ThrottlingError
from lance_ns.server import run_server_in_thread


def code(fn, *args):
    with pytest.raises(Exception) as info:
        fn(*args)
    return int(info.value.code)


class Recorder:
    """A scripted peer: answers each request from ``script`` and records it."""

    def __init__(self, *script):
        self.script = list(script)
        self.requests = []

    def app(self):
        async def any_route(request):
            self.requests.append(
                {
                    "method": request.method,
                    "path": request.url.path,
                    "query": list(request.query_params.multi_items()),
                    "headers": dict(request.headers),
                    "body": await request.body(),
                }
            )
            step = self.script.pop(0) if len(self.script) > 1 else self.script[0]
            if isinstance(step, (int, float)) and not isinstance(step, bool) and step < 100:
                await asyncio.sleep(step)  # a slow answer
                return JSONResponse({"namespaces": []})
            status, body = step
            if isinstance(body, str):
                return PlainTextResponse(body, status_code=status)
            return JSONResponse(body, status_code=status, headers={"retry-after": "0"} if status == 429 else None)

        return Starlette(routes=[Route("/{path:path}", any_route, methods=["GET", "POST"])])


@pytest.fixture
def peer():
    handles = []

    def start(*script):
        rec = Recorder(*script)
        h = run_server_in_thread(rec.app())
        handles.append(h)
        return rec, h.url

    yield start
    for h in handles:
        h.stop()


def connect(url, **props):
    return lance_ns.connect("rest", {"uri": url, "retry_backoff_ms": 1, **props})


# -- wire format ---------------------------------------------------------------------


def test_requests_follow_the_route_table(peer):
    rec, url = peer((200, {"namespaces": ["x"], "page_token": "x"}))
    ns = connect(url, delimiter=".")
    resp = ns.list_namespaces({"id": ["a", "b"], "limit": 5, "page_token": "p"})
    assert resp.namespaces == ["x"] and resp.page_token == "x"
    r = rec.requests[-1]
    assert (r["method"], r["path"]) == ("GET", "/v1/namespace/a.b/list")
    assert sorted(r["query"]) == [("delimiter", "."), ("limit", "5"), ("page_token", "p")]
    ns.describe_table({"id": ["a", "t"], "with_table_uri": True, "version": 3})
    r = rec.requests[-1]
    assert r["path"] == "/v1/table/a.t/describe" and ("with_table_uri", "true") in r["query"]
    assert b'"version":3' in r["body"] and b"with_table_uri" not in r["body"]
    ns.list_namespaces(ListNamespacesRequest(id=[]))
    assert rec.requests[-1]["path"] == "/v1/namespace/./list"  # root = the delimiter
    with pytest.raises(InvalidInputError):
        connect(url, delimiter="/")


def test_root_and_default_delimiter(peer):
    rec, url = peer((200, {"namespaces": []}))
    connect(url).list_namespaces({})
    assert rec.requests[-1]["path"] == "/v1/namespace/$/list" and rec.requests[-1]["query"] == []


def test_arrow_body_and_query_params(peer):
    rec, url = peer((200, {"version": 2}))
    ns = connect(url)
    ns.merge_insert_into_table({"id": ["a", "t"], "on": ["k1", "k2"], "when_matched_update_all": True}, b"ARROW")
    r = rec.requests[-1]
    assert r["path"] == "/v1/table/a$t/merge_insert" and r["body"] == b"ARROW"
    assert r["headers"]["content-type"] == "application/vnd.apache.arrow.stream"
    assert [v for k, v in r["query"] if k == "on"] == ["k1", "k2"]
    ns.create_table({"id": ["a", "t"], "mode": "Create", "properties": {"k": "v"}}, b"DATA")
    r = rec.requests[-1]
    assert ("properties", '{"k":"v"}') in r["query"] and ("mode", "Create") in r["query"]


def test_headers_auth_and_context(peer):
    rec, url = peer((200, {}))
    ns = connect(url, **{"header.X-Team": "ml", "auth_token": "tok", "api_key": "k"})
    ns.describe_namespace({"id": ["a"], "context": {"header.X-Request-Id": "r1", "other": "x"}})
    h = rec.requests[-1]["headers"]
    assert h["x-team"] == "ml" and h["authorization"] == "Bearer tok" and h["x-api-key"] == "k"
    assert h["x-request-id"] == "r1" and b"context" not in rec.requests[-1]["body"]
    assert "tok" not in repr(ns) and "tok" not in ns.namespace_id()


# -- errors ------------------------------------------------------------------------------


def test_error_code_wins_over_status(peer):
    rec, url = peer((409, {"code": 2, "error": "exists"}))
    with pytest.raises(NamespaceAlreadyExistsError, match="exists"):
        connect(url).create_namespace({"id": ["a"]})


@pytest.mark.parametrize(
    "status,body,exc",
    [
        (404, "not found", TableNotFoundError),
        (400, {"message": "bad"}, InvalidInputError),
        (401, {"error": "who", "code": "16"}, UnauthenticatedError),  # a non-integer code is not trusted
        (502, "bad gateway", InternalError),
    ],
)
def test_error_without_integer_code_maps_by_status(peer, status, body, exc):
    rec, url = peer((status, body))
    with pytest.raises(exc):
        connect(url, max_retries=0).describe_table({"id": ["a", "t"]})


# -- retries -------------------------------------------------------------------------------


def test_429_and_503_are_retried_even_for_writes(peer):
    rec, url = peer((503, {"code": 17, "error": "busy"}), (429, {"code": 21, "error": "slow"}), (200, {}))
    connect(url, max_retries=3).create_namespace({"id": ["a"]})
    assert len(rec.requests) == 3


def test_retries_are_bounded(peer):
    rec, url = peer((429, {"code": 21, "error": "slow down"}))
    with pytest.raises(ThrottlingError):
        connect(url, max_retries=2).create_namespace({"id": ["a"]})
    assert len(rec.requests) == 3


def test_read_timeouts_retry_reads_but_never_writes(peer):
    rec, url = peer(0.6)
    ns = connect(url, read_timeout=200, max_retries=2)
    with pytest.raises(ServiceUnavailableError):
        ns.list_namespaces({"id": []})
    assert len(rec.requests) == 3
    rec.requests.clear()
    with pytest.raises(ServiceUnavailableError, match="may have been applied"):
        ns.create_namespace({"id": ["a"]})
    assert len(rec.requests) == 1  # the write may have reached the server: not repeated


def test_connection_refused_is_retried_with_backoff_then_unavailable():
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ns = lance_ns.connect(
        "rest", {"uri": f"http://127.0.0.1:{port}", "max_retries": 3, "retry_backoff_ms": 40, "connect_timeout": 500}
    )
    start = time.perf_counter()
    with pytest.raises(ServiceUnavailableError) as info:
        ns.create_namespace({"id": ["a"]})
    assert info.value.code == 17
    assert time.perf_counter() - start < 5


# -- against our real server -------------------------------------------------------------------


def test_client_against_our_server_with_auth(backend):
    with run_server_in_thread(backend, auth_token="t0k") as srv:
        assert code(lance_ns.connect("rest", {"uri": srv.url, "max_retries": 0}).list_namespaces, {"id": []}) == 16
        ns = lance_ns.connect("rest", {"uri": srv.url, "auth_token": "t0k"})
        ns.create_namespace({"id": ["a"]})
        assert ns.list_namespaces({"id": []}).namespaces == ["a"]
        other = lance_ns.connect("rest", {"uri": srv.url, "header.Authorization": "Bearer t0k", "delimiter": "::"})
        assert other.list_namespaces({}).namespaces == ["a"]


# -- TLS ---------------------------------------------------------------------------------------


def _self_signed(d, name):
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
         "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
         "-keyout", str(d / f"{name}-key.pem"), "-out", str(d / f"{name}.pem")],
        check=True, capture_output=True,
    )  # fmt: skip
    return d / f"{name}.pem", d / f"{name}-key.pem"


@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    return _self_signed(tmp_path_factory.mktemp("tls"), "server")


def test_mutual_tls_client_certificate(backend, certificate, tmp_path):
    import ssl

    cert, key = certificate
    client_cert, client_key = _self_signed(tmp_path, "client")
    opts = {"ssl_certfile": str(cert), "ssl_keyfile": str(key), "ssl_ca_certs": str(client_cert),
            "ssl_cert_reqs": ssl.CERT_REQUIRED}  # fmt: skip
    with run_server_in_thread(backend, uvicorn_options=opts) as srv:
        url = srv.url.replace("http://", "https://")
        with pytest.raises(ServiceUnavailableError):
            lance_ns.connect("rest", {"uri": url, "tls.ssl_ca_cert": str(cert), "max_retries": 0}).list_namespaces({})
        ns = lance_ns.connect(
            "rest",
            {"uri": url, "tls.ssl_ca_cert": str(cert), "tls.cert_file": str(client_cert), "tls.key_file": str(client_key)},
        )
        assert ns.list_namespaces({}).namespaces == []


def test_tls_verification(backend, certificate):
    cert, key = certificate
    opts = {"ssl_certfile": str(cert), "ssl_keyfile": str(key)}
    with run_server_in_thread(backend, uvicorn_options=opts) as srv:
        url = srv.url.replace("http://", "https://")
        with pytest.raises(ServiceUnavailableError):
            lance_ns.connect("rest", {"uri": url, "max_retries": 0}).list_namespaces({})
        ok = lance_ns.connect("rest", {"uri": url, "tls.ssl_ca_cert": str(cert)})
        assert ok.list_namespaces({}).namespaces == []
        insecure = lance_ns.connect("rest", {"uri": url, "tls.verify": "false"})
        assert insecure.list_namespaces({}).namespaces == []


def test_clients_with_the_default_trust_share_one_ssl_context(monkeypatch):
    """A CA bundle is loaded once per process, not once per client (~40 ms of CPU each): a
    REST or Unity client made after the first builds no SSL context, and trusts what httpx's
    own default would (SSL_CERT_FILE or SSL_CERT_DIR when set, else certifi's bundle)."""
    import ssl

    import httpx

    from lance_ns import tls

    first = lance_ns.connect("rest", {"uri": "http://127.0.0.1:1"})
    built = []
    real = ssl.create_default_context
    monkeypatch.setattr(ssl, "create_default_context", lambda *a, **k: built.append((a, k)) or real(*a, **k))
    clients = [lance_ns.connect("rest", {"uri": "https://127.0.0.1:1"}), lance_ns.connect("unity", {"endpoint": "http://127.0.0.1:1"})]
    assert built == [], built
    trusted = {c["serialNumber"] for c in tls.default_context().get_ca_certs()}
    monkeypatch.undo()
    assert trusted == {c["serialNumber"] for c in httpx.create_ssl_context().get_ca_certs()}
    for c in [first, *clients]:
        c.close()
