"""A tiny in-process Iceberg REST *stub* -- NOT a catalog, and not what the
backend is verified against (that is the real SeaweedFS server).

It serves the config and OAuth2 token endpoints and whatever responses a
test scripts, and records every request, so tests can check what our client
puts on the wire (prefix, ``?warehouse=``, 0x1F-joined namespaces,
``purgeRequested=false``, bearer tokens) and how it maps statuses, token
expiry and 401s -- things a well-behaved real server cannot be made to do on
demand.  Standard library only; binds 127.0.0.1 on a free port.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

CLIENT_ID, CLIENT_SECRET = "stub-id", "stub-secret"


@dataclass
class Seen:
    method: str
    path: str  # raw, still percent-encoded
    query: dict[str, list[str]]
    auth: str | None
    body: bytes = b""
    if_none_match: str | None = None

    def json(self):
        return json.loads(self.body)


@dataclass
class Stub:
    url: str = ""
    config: dict = field(default_factory=lambda: {"defaults": {}, "overrides": {}})
    config_status: int = 200  # e.g. 404: the server knows no such warehouse
    expires_in: int | None = 3600
    require_auth: bool = True
    seen: list[Seen] = field(default_factory=list)
    #: (method, raw path) -> (status, json body | None, delay seconds)
    routes: dict[tuple[str, str], tuple[int, object, float]] = field(default_factory=dict)
    tokens_issued: int = 0
    valid_tokens: set[str] = field(default_factory=set)
    #: LoadTable answers carry an ETag (derived from the metadata location, as
    #: the reference and Gravitino servers do) and If-None-Match gets a 304
    etags: bool = False
    not_modified: int = 0  # 304 answers sent

    def route(self, method: str, path: str, status: int = 200, body: object = None, delay: float = 0.0) -> None:
        self.routes[(method, path)] = (status, body, delay)

    def revoke_tokens(self) -> None:
        self.valid_tokens.clear()

    def calls(self, method: str | None = None, prefix: str = "") -> list[Seen]:
        return [s for s in self.seen if (method is None or s.method == method) and s.path.startswith(prefix)]


def error(status: int, kind: str, message: str = "stub") -> dict:
    return {"error": {"message": message, "type": kind, "code": status}}


def table_response(location: str, properties: dict[str, str]) -> dict:
    """A minimal valid LoadTableResult (format v2) for a companion table."""
    return {
        "metadata-location": f"{location}/metadata/v1.metadata.json",
        "metadata": {
            "format-version": 2,
            "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
            "location": location,
            "last-sequence-number": 0,
            "last-updated-ms": 1700000000000,
            "last-column-id": 1,
            "current-schema-id": 0,
            "schemas": [{"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "dummy", "required": False, "type": "string"}]}],
            "default-spec-id": 0,
            "partition-specs": [{"spec-id": 0, "fields": []}],
            "last-partition-id": 999,
            "default-sort-order-id": 0,
            "sort-orders": [{"order-id": 0, "fields": []}],
            "properties": properties,
            "current-snapshot-id": -1,
            "snapshots": [],
            "snapshot-log": [],
            "metadata-log": [],
            "refs": {},
        },
        "config": {},
    }


def _handler(stub: Stub):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # quiet
            pass

        def _reply(self, status: int, body: object = None, etag: str | None = None) -> None:
            data = b"" if body is None else json.dumps(body).encode()
            self.send_response(status)
            if etag:
                self.send_header("ETag", etag)
            if data:
                self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _handle(self) -> None:
            parts = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            auth = self.headers.get("Authorization")
            conditional = self.headers.get("If-None-Match")
            stub.seen.append(Seen(self.command, parts.path, parse_qs(parts.query), auth, raw, conditional))
            if parts.path == "/v1/config":
                if stub.config_status != 200:
                    return self._reply(stub.config_status, error(stub.config_status, "NoSuchWarehouseException"))
                return self._reply(200, stub.config)
            if parts.path == "/v1/oauth/tokens":
                form = parse_qs(raw.decode())
                if form.get("client_id") != [CLIENT_ID] or form.get("client_secret") != [CLIENT_SECRET]:
                    return self._reply(401, {"error": "invalid_client"})
                stub.tokens_issued += 1
                token = f"tok-{stub.tokens_issued}"
                stub.valid_tokens.add(token)
                body = {"access_token": token, "token_type": "bearer"}
                if stub.expires_in is not None:
                    body["expires_in"] = stub.expires_in
                return self._reply(200, body)
            if stub.require_auth and (auth or "").removeprefix("Bearer ") not in stub.valid_tokens:
                return self._reply(401, error(401, "NotAuthorizedException", "bad token"))
            status, body, delay = stub.routes.get(
                (self.command, parts.path), (404, error(404, "NoSuchNamespaceException"), 0.0)
            )
            if delay:
                time.sleep(delay)
            if stub.etags and status == 200 and isinstance(body, dict) and "metadata-location" in body:
                etag = '"' + hashlib.sha256(body["metadata-location"].encode()).hexdigest() + '"'
                if conditional == etag:
                    stub.not_modified += 1
                    return self._reply(304, etag=etag)
                return self._reply(status, body, etag=etag)
            return self._reply(status, body)

        do_GET = do_POST = do_DELETE = do_HEAD = _handle

    return Handler


@contextmanager
def iceberg_stub():
    stub = Stub()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(stub))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    stub.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield stub
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
