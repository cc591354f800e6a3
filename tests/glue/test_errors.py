"""Retries and failure codes over real HTTP: a tiny local endpoint answering
every request with one fixed Glue (awsJson1_1) error, counting requests, so
botocore's own retry machinery runs as it would against AWS."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import lance_ns
from lance_ns.errors import InvalidInputError

from .conftest import code_of


class _Failing(ThreadingHTTPServer):
    def __init__(self, status, error_type):
        self.status, self.error_type, self.requests = status, error_type, 0
        super().__init__(("127.0.0.1", 0), _Handler)


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.requests += 1
        body = json.dumps({"__type": self.server.error_type, "message": "injected"}).encode()
        self.send_response(self.server.status)
        self.send_header("Content-Type", "application/x-amz-json-1.1")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def failing():
    servers = []

    def start(status, error_type):
        server = _Failing(status, error_type)
        threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
        servers.append(server)
        return server

    yield start
    for s in servers:
        s.shutdown()
        s.server_close()


def _connect(endpoint, **extra):
    props = {"endpoint": endpoint, "region": "us-east-1", "access_key_id": "k", "secret_access_key": "s", "catalog_id": "1"}
    return lance_ns.connect("glue", {**props, **extra})


@pytest.mark.parametrize(
    "status,error,code,retried",
    [(400, "ThrottlingException", 17, True), (500, "InternalServiceException", 17, True),
     (503, "ServiceUnavailableException", 17, True), (400, "AccessDeniedException", 16, False),
     (400, "InvalidInputException", 13, False)],
)  # fmt: skip
def test_errors_after_botocore_retries(failing, status, error, code, retried):
    server = failing(status, error)
    ns = _connect(f"http://127.0.0.1:{server.server_address[1]}", max_attempts="2")
    assert code_of(ns.list_namespaces, {"id": []}) == code
    assert server.requests == (2 if retried else 1)


def test_adaptive_retry_mode(failing):
    server = failing(400, "ThrottlingException")
    ns = _connect(f"http://127.0.0.1:{server.server_address[1]}", retry_mode="adaptive", max_attempts="2")
    assert code_of(ns.describe_namespace, {"id": ["db"]}) == 17
    assert server.requests == 2


def test_unreachable_endpoint_is_service_unavailable():
    with socket.socket() as s:  # a port with nobody listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ns = _connect(f"http://127.0.0.1:{port}", max_attempts="1")
    assert code_of(ns.list_tables, {"id": ["db"]}) == 17


@pytest.mark.parametrize(
    "extra",
    [{"retry_mode": "sometimes"}, {"max_attempts": "0"}, {"access_key_id": "only-half", "secret_access_key": ""},
     {"assume_role_arn": "arn:aws:iam::1:role/r", "assume_role_timeout_sec": "60"}],
)  # fmt: skip
def test_bad_configuration_is_invalid_input(extra):
    with pytest.raises(InvalidInputError):
        _connect("http://127.0.0.1:9", **extra)


def test_no_region_anywhere_is_invalid_input(monkeypatch, tmp_path):
    for var in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    with pytest.raises(InvalidInputError):
        lance_ns.connect("glue", {"access_key_id": "k", "secret_access_key": "s"})
