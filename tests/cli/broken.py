"""Deliberately non-conforming backends and servers for the ``check`` tests."""

from __future__ import annotations

import contextlib
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


from lance_ns.errors import NamespaceNotFoundError
from lance_ns.impls.memory import MemoryNamespace


class IgnoresSkipNamespace(MemoryNamespace):
    """Fails DropNamespace mode=Skip of a missing namespace (a common departure)."""

    def drop_namespace(self, request):
        if self.get_namespace_entry(list(request.id or [])) is None:
            raise NamespaceNotFoundError(f"namespace {request.id!r} does not exist")
        return super().drop_namespace(request)


class _Handler(BaseHTTPRequestHandler):
    status = 200
    body = b""
    content_type = "text/plain"

    def _answer(self):
        length = int(self.headers.get("content-length") or 0)
        self.rfile.read(length)
        self.send_response(self.status)
        self.send_header("Content-Type", self.content_type)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    do_GET = do_POST = _answer

    def log_message(self, *args):  # keep test output clean
        pass


@contextlib.contextmanager
def http_server(status: int, body: bytes, content_type: str):
    """A tiny HTTP server on 127.0.0.1 answering every request the same way."""
    handler = type("H", (_Handler,), {"status": status, "body": body, "content_type": content_type})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)




class LeakyNamespace(MemoryNamespace):
    """Quotes its own configuration in an error, as careless backends do."""

    def __init__(self, **properties):
        super().__init__()
        self.leaked = properties

    def list_namespaces(self, request):
        from lance_ns.errors import ServiceUnavailableError

        raise ServiceUnavailableError(f"cannot reach the catalog with {self.leaked}")


class RecordingNamespace(MemoryNamespace):
    """Remembers the DropTable requests it was sent."""

    dropped: list = []

    def drop_table(self, request):
        type(self).dropped.append(request)
        return super().drop_table(request)
