"""The Lance REST protocol, shared by the REST client (:mod:`lance_ns.impls.rest`),
the server (:mod:`lance_ns.server`) and the conformance checker.

* ``openapi.yaml``: the OpenAPI document (a copy of the published
  ``lance-namespace-rest.yaml``), shipped as package data and served at
  ``/openapi.yaml``;
* :mod:`.routes`: the route table derived from it, one route per operation
  of :data:`lance_ns.base.OPERATIONS` (the import fails if the two drift apart),
  and how query parameters are written and read.

It needs PyYAML only (the ``rest`` and ``server`` extras), never the server's
dependencies.
"""

from __future__ import annotations

from .routes import CONTEXT_HEADERS, ROUTES, Param, Route, openapi_document, openapi_text

__all__ = ["CONTEXT_HEADERS", "ROUTES", "Param", "Route", "openapi_document", "openapi_text"]
