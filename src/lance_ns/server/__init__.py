"""Serve any Lance namespace over the Lance REST protocol.

>>> import lance_ns
>>> from lance_ns.server import create_app, run_server_in_thread
>>> handle = run_server_in_thread(lance_ns.connect("dir", {"root": "/tmp/lake"}))
>>> handle.url            # 'http://127.0.0.1:54321'
>>> handle.stop()

From a shell: ``python -m lance_ns.server --impl dir --prop root=/tmp/lake --port 2333``
(:mod:`.command`: the same flags and code path as ``lance-ns serve``).

Names are imported lazily, so importing this package needs none of the
server's dependencies (starlette, uvicorn).  The route table and the OpenAPI
document are :mod:`lance_ns.protocol`'s (shared with the REST client).
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "DEFAULT_BODY_TIMEOUT": ".settings",
    "DEFAULT_MAX_BODY_BYTES": ".settings",
    "ServerSettings": ".settings",
    "NamespaceApp": ".app",
    "create_app": ".app",
    "ROUTES": "..protocol.routes",
    "Route": "..protocol.routes",
    "openapi_document": "..protocol.routes",
    "ServerHandle": ".running",
    "run_server_in_thread": ".running",
    "serve": ".running",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module, __name__), name)
