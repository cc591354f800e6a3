"""The one router of the protocol: a request's route and path parameters, found by dict
lookups instead of trying route patterns in turn.

It knows every route of :data:`lance_ns.protocol.routes.ROUTES` and the seed spec's
``POST /<OperationId>``.  A path that is the protocol's but that no route of it answers
is refused here (:class:`~lance_ns.errors.NoRouteError`, 404, or
:class:`~lance_ns.errors.MethodNotAllowedError`, 405, both code 0); any other path
(``/health``, the OpenAPI documents, ``/metrics``, the UI) is not the protocol's and
:meth:`Router.match` answers None for it.

An id may hold a raw ``/`` (a client that does not encode it): the route is then the one
whose fixed tail ends the path, the longest tail first (``/v1/namespace/{id}/table/list``
before ``/v1/namespace/{id}/list``), and the id is what lies between, so that it reaches
the id check and gets its 400 rather than a 404.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from ..errors import MethodNotAllowedError, NoRouteError
from ..protocol import routes as R

#: the first segment of every protocol path of the current spec
_PREFIX = "v1"
#: matches of recent paths kept (Router._recent)
_RECENT_PATHS = 4096


class Match(NamedTuple):
    route: R.Route
    #: the path's parameters: the raw ``id`` (when the route has one) and the route's others
    path_params: dict[str, str] | None
    #: the seed spec's ``POST /<OperationId>``: the JSON body is the request itself
    seed: bool = False


class _Tail(NamedTuple):
    """The part of a route's path after ``{id}``, as segments (``{name}`` matches any one)."""

    segments: tuple[str, ...]
    routes: dict[str, R.Route]  # HTTP method -> route


class Router:
    def __init__(self, routes: Iterable[R.Route], seeds: Iterable[tuple[str, R.Route]] = ()):
        #: (method, path) -> match, for the paths without parameters (and the seed paths)
        self._literal: dict[tuple[str, str], Match] = {}
        #: path -> its methods, to tell a wrong method (405) from no route (404)
        self._literal_methods: dict[str, set[str]] = {}
        #: (method, collection, the path after a one-segment id, or None) -> route: the common case
        self._by_id: dict[tuple[str, str, str | None], R.Route] = {}
        #: collection -> the tails of its routes with an id, the longest first
        self._tails: dict[str, list[_Tail]] = {}
        for route in routes:
            if not route.has_id:
                self._add_literal(route.method, route.path, Match(route, None))
                continue
            before, after = route.path.split("{id}", 1)
            collection = before.strip("/").split("/")[-1]
            segments = tuple(s for s in after.split("/") if s)
            if "{" not in after:
                self._by_id[(route.method, collection, "/".join(segments) or None)] = route
            tails = self._tails.setdefault(collection, [])
            tail = next((t for t in tails if t.segments == segments), None)
            if tail is None:
                tail = _Tail(segments, {})
                tails.append(tail)
            tail.routes[route.method] = route
        for tails in self._tails.values():
            tails.sort(key=lambda t: -len(t.segments))
        for op_id, route in seeds:
            self._add_literal("POST", f"/{op_id}", Match(route, None, seed=True))
        #: (method, path) -> match of the paths asked lately: a client asks the same few tables
        #: again and again (bounded: cleared when full).  Matches are shared: read, never change one.
        self._recent: dict[tuple[str, str], Match] = {}

    def _add_literal(self, method: str, path: str, match: Match) -> None:
        self._literal[(method, path)] = match
        self._literal_methods.setdefault(path, set()).add(method)

    def match(self, method: str, path: str) -> Match | None:
        """The route of a request; None for a path that is not the protocol's.  Raises
        NoRouteError or MethodNotAllowedError for a protocol path no route answers."""
        key = (method, path)
        found = self._literal.get(key) or self._recent.get(key)
        if found is None:
            found = self._find(method, path)
            if found is not None:
                if len(self._recent) >= _RECENT_PATHS:
                    self._recent.clear()
                self._recent[key] = found
        return found

    def _find(self, method: str, path: str) -> Match | None:
        parts = path.split("/", 4)
        if len(parts) < 3 or parts[1] != _PREFIX:
            if path in self._literal_methods:  # a seed path asked with GET
                raise MethodNotAllowedError(f"{method} {path}: Method Not Allowed")
            return None
        if len(parts) >= 4:  # /v1/<collection>/<id>[/<rest>]: one dict lookup
            route = self._by_id.get((method, parts[2], parts[4] if len(parts) == 5 else None))
            if route is not None:
                return Match(route, {"id": parts[3]})
        return self._match_tail(method, path, parts[2])

    def _match_tail(self, method: str, path: str, collection: str) -> Match:
        """An id holding ``/``, a route with another path parameter, or no route at all."""
        if path in self._literal_methods:
            raise MethodNotAllowedError(f"{method} {path}: Method Not Allowed")
        segments = path.split("/")[3:]  # after /v1/<collection>/
        for tail in self._tails.get(collection, ()):
            n = len(tail.segments)
            if len(segments) <= n:
                continue  # the id needs a segment of its own (it may be empty)
            params = _tail_params(tail.segments, segments[len(segments) - n:])
            if params is None:
                continue
            route = tail.routes.get(method)
            if route is None:
                raise MethodNotAllowedError(f"{method} {path}: Method Not Allowed")
            params["id"] = "/".join(segments[: len(segments) - n])
            return Match(route, params)
        raise NoRouteError(f"{method} {path}: Not Found")


def _tail_params(pattern: tuple[str, ...], segments: list[str]) -> dict[str, str] | None:
    """The parameters of ``segments`` matched against ``pattern``, or None when they differ."""
    params: dict[str, str] = {}
    for want, got in zip(pattern, segments):
        if want.startswith("{"):
            if not got:
                return None
            params[want[1:-1]] = got
        elif want != got:
            return None
    return params
