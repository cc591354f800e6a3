"""The Lance REST server: an ASGI app over any ``lance_namespace.LanceNamespace``.

One generic handler serves every route of :data:`routes.ROUTES`: it turns
the path, query string and body into the operation's request model, runs it
through the :mod:`.pipeline` (authorization, the backend call on a bounded
thread pool so the event loop keeps serving, secrets, audit), and renders the
result the way the protocol says (JSON, a bare count or string, or an Arrow
IPC file).  :mod:`.asgi` wraps every request (metrics, log line, panics).  Every failure becomes the JSON
``ErrorResponse`` with an integer ``code`` and the status from the one error
table in :mod:`lance_ns.errors`.
"""

from __future__ import annotations

import asyncio
import functools
import json
import urllib.parse
from collections.abc import Iterable, Mapping  # not typing's: faster isinstance checks
from typing import Any

import anyio
from lance_namespace import LanceNamespace
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route as StarletteRoute

from .. import datasets
from ..base import BY_OP_ID, Operation
from ..errors import InvalidInputError, LanceNamespaceError, UnsupportedOperationError
from ..identifiers import REST_DELIMITER, names_same_object, split_id
from ..protocol import routes as R
from . import auth as A
from . import ui
from .asgi import OPERATION, PRINCIPAL, Answer, BodyTimeout, Outer, error_response, json_bytes, json_error
from .metrics import Metrics
from .pipeline import Pipeline
from .settings import DEFAULT_MAX_BODY_BYTES, DEFAULT_THREADS, ServerSettings  # noqa: F401 - re-exported

#: the deepest nesting of arrays/objects accepted in a JSON body (requests need 3)
MAX_JSON_DEPTH = 32

#: (context key, lower-case header name as bytes) for lance-ns context entries sent as headers
_CONTEXT_HEADERS = tuple((key, header.lower().encode()) for key, header in R.CONTEXT_HEADERS.items())
_ARROW_FILE_TYPE = R.ARROW_FILE.encode()

#: whether a task can take back a cancellation (Python 3.11+), as _Deadlines needs
_UNCANCEL = hasattr(asyncio.Task, "uncancel")

class _Deadlines:
    """The body timeout of every request of one event loop, kept by one timer: a task
    still reading its body after its deadline is cancelled.  A timer per request
    (``asyncio.timeout``) costs as much as the rest of reading a small body; this costs
    a dict entry, and a deadline is met at most a quarter of the timeout late."""

    def __init__(self, loop: asyncio.AbstractEventLoop, seconds: float):
        self.loop, self.seconds = loop, seconds
        self.period = min(max(seconds / 4, 0.01), 1.0)
        self.pending: dict[asyncio.Task, float] = {}
        self._cancelled: set[asyncio.Task] = set()
        self._timer: asyncio.TimerHandle | None = None

    def start(self, task: asyncio.Task) -> None:
        self.pending[task] = self.loop.time() + self.seconds
        if self._timer is None:
            self._timer = self.loop.call_later(self.period, self._sweep)

    def expired(self, task: asyncio.Task) -> bool:
        """Whether ``task`` was cancelled by its deadline (then the cancellation is taken back)."""
        if task not in self._cancelled:
            return False
        self._cancelled.discard(task)
        task.uncancel()
        return True

    def _sweep(self) -> None:
        now = self.loop.time()
        for task, deadline in list(self.pending.items()):
            if deadline <= now:
                del self.pending[task]
                self._cancelled.add(task)
                task.cancel()
        self._timer = self.loop.call_later(self.period, self._sweep) if self.pending else None


@functools.lru_cache(maxsize=1024)
def _parse_query(raw: bytes) -> dict[str, list[str]]:
    """A query string's parameters (shared between requests: read, never change it)."""
    parsed: dict[str, list[str]] = {}
    for key, value in urllib.parse.parse_qsl(raw.decode("latin-1"), keep_blank_values=True):
        parsed.setdefault(key, []).append(value)
    return parsed


class _Incoming:
    """What the handler reads of a request, straight from the ASGI scope (Starlette's
    Request would build header and query objects the handler does not need)."""

    __slots__ = ("scope", "receive", "_headers")

    def __init__(self, scope, receive):
        self.scope, self.receive = scope, receive
        self._headers: dict[bytes, bytes] | None = None

    def header(self, name: bytes) -> str | None:
        """A header's value (``name`` in lower case), None when absent."""
        if self._headers is None:
            self._headers = dict(self.scope["headers"])
        value = self._headers.get(name)
        return None if value is None else value.decode("latin-1")

    @property
    def query(self) -> dict[str, list[str]]:
        raw = self.scope.get("query_string") or b""
        return _parse_query(raw) if raw else _NO_QUERY

    def query_value(self, name: str) -> str | None:
        values = self.query.get(name)
        return values[-1] if values else None

    @property
    def media_type(self) -> str:
        return (self.header(b"content-type") or "").split(";", 1)[0].strip().lower()


_NO_QUERY: dict[str, list[str]] = {}


def _check_arrow_stream(data: bytes, allow_empty: bool, max_decoded_bytes: int | None) -> None:
    """Refuse a body that is not a valid Arrow IPC stream Lance can store, before any
    backend (ours or not) sees it: the same checks as the Python API's."""
    if not data:
        if allow_empty:
            return
        raise InvalidInputError("request body must be an Arrow IPC stream, got an empty body")
    datasets.ipc_to_table(data, max_decoded_bytes, file_format=False)


def _check_json(value: Any) -> None:
    """Refuse JSON nested deeper than MAX_JSON_DEPTH or holding a lone surrogate
    (``"\\ud800"``), which no backend can store and no response can encode."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                raise InvalidInputError("request body holds a string that is not valid Unicode text") from None
            continue
        if isinstance(item, (dict, list)):
            if depth > MAX_JSON_DEPTH:
                raise InvalidInputError(f"request body is nested deeper than {MAX_JSON_DEPTH} levels")
            children = item.items() if isinstance(item, dict) else ((None, v) for v in item)
            for key, child in children:
                stack.append((child, depth + 1))
                if key is not None:
                    stack.append((key, depth + 1))


#: bodies up to this size, and this many requests, are remembered as built (NamespaceApp._known)
_KNOWN_BODY_BYTES = 1024
_KNOWN_REQUESTS = 4096


class NamespaceApp:
    """Holds the backend and settings; builds the app: :class:`~.asgi.Outer` around
    the protocol's fast path and Starlette's routes (the rest, and the UI)."""

    def __init__(self, namespace: LanceNamespace, settings: ServerSettings | None = None, **options: Any):
        self.settings = settings = ServerSettings.of(settings, **options)
        self.namespace = namespace
        #: every operation runs through it, the UI's too
        self.pipeline = Pipeline(namespace, settings)
        self.ui = settings.ui  # the catalog browser at /ui/ (server.ui)
        #: Prometheus metrics (/metrics), None when turned off (``--no-metrics``)
        self.metrics = Metrics() if settings.metrics else None
        self.log_requests = settings.log_requests
        self.max_body_bytes = int(settings.max_body_bytes)
        #: decoded Arrow bodies are bounded too (a few KB of zstd can decode to GBs)
        self.max_decoded_bytes = int(settings.max_decoded_bytes or self.max_body_bytes)
        self.body_timeout = float(settings.body_timeout)
        self.fast = _FastRoutes(R.ROUTES.values())
        #: the requests of inline reads as built and checked, by their bytes: a client asks
        #: the same describe again and again (bounded: cleared when full)
        self._known: dict[tuple, Any] = {}
        self._deadlines: _Deadlines | None = None  # body reads under way (their timeout)

    @property
    def threads(self) -> int:
        return self.pipeline.threads

    # -- the request ------------------------------------------------------------------
    async def _body(self, request: _Incoming) -> bytes:
        declared = request.header(b"content-length")
        if declared and declared.isdigit() and int(declared) > self.max_body_bytes:
            raise datasets.DataTooLarge(f"request body exceeds the limit of {self.max_body_bytes} bytes")
        # uvicorn has no body timeout: a client trickling bytes would hold a connection forever
        if not _UNCANCEL:  # Python 3.10: anyio's cancel scope
            try:
                with anyio.fail_after(self.body_timeout):
                    return await self._read_body(request)
            except TimeoutError:
                raise BodyTimeout(f"request body not received within {self.body_timeout:g} s") from None
        loop = asyncio.get_running_loop()
        deadlines = self._deadlines
        if deadlines is None or deadlines.loop is not loop:  # one per loop (a test client may start several)
            deadlines = self._deadlines = _Deadlines(loop, self.body_timeout)
        task = asyncio.current_task()
        deadlines.start(task)
        try:
            return await self._read_body(request)
        except asyncio.CancelledError:
            if not deadlines.expired(task):
                raise
            raise BodyTimeout(f"request body not received within {self.body_timeout:g} s") from None
        finally:
            deadlines.pending.pop(task, None)

    async def _read_body(self, request: _Incoming) -> bytes:
        chunks, size, more = [], 0, True
        while more:
            message = await request.receive()
            if message["type"] == "http.disconnect":
                raise InvalidInputError("the client disconnected before sending the whole body")
            chunk = message.get("body", b"")
            more = message.get("more_body", False)
            size += len(chunk)
            if size > self.max_body_bytes:
                raise datasets.DataTooLarge(f"request body exceeds the limit of {self.max_body_bytes} bytes")
            chunks.append(chunk)
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    def authenticates_itself(self, path: str) -> bool:
        """Paths that check credentials themselves: the UI accepts its sign-in cookie too."""
        return self.ui and (path == ui.PREFIX or path.startswith(ui.PREFIX + "/"))

    # -- request -> model ---------------------------------------------------------
    async def _json_body(self, request: _Incoming) -> dict:
        return self._json_fields(request, await self._body(request))

    def _json_fields(self, request: _Incoming, data: bytes) -> dict:
        if not data.strip():
            return {}
        media = request.media_type
        if media and media != R.JSON and not media.endswith("+json"):
            raise InvalidInputError(f"expected Content-Type {R.JSON}, got {media!r}")
        try:
            body = json.loads(data)
        except (ValueError, UnicodeDecodeError) as e:
            raise InvalidInputError(f"request body is not valid JSON: {e}") from None
        except RecursionError:
            raise InvalidInputError(f"request body is nested deeper than {MAX_JSON_DEPTH} levels") from None
        if not isinstance(body, dict):
            raise InvalidInputError("request body must be a JSON object")
        # only an escape can make a lone surrogate, only that many brackets a deep nesting
        if b"\\u" in data or data.count(b"[") + data.count(b"{") > MAX_JSON_DEPTH:
            _check_json(body)
        return body

    async def _arrow_body(self, request: _Incoming, op: Operation) -> bytes:
        data = await self._body(request)
        media = request.media_type
        if data and media not in (R.ARROW_STREAM, "application/octet-stream", ""):
            raise InvalidInputError(f"expected Content-Type {R.ARROW_STREAM}, got {media!r}")
        # CreateTable with an empty body means "create an empty table" to some
        # clients; the backend decides, but never sees a non-Arrow body.
        await self.pipeline.run(_check_arrow_stream, data, op.op_id == "CreateTable", self.max_decoded_bytes)
        return data

    @staticmethod
    def _context_from_headers(request: _Incoming, fields: dict) -> None:
        """lance-ns context entries sent as headers (``x-lance-ns-purge``) back into the context."""
        for key, header in _CONTEXT_HEADERS:
            value = request.header(header)
            if value is not None:
                context = fields.get("context")
                fields["context"] = {**(context if isinstance(context, dict) else {}), key: value}

    async def _current(self, request: _Incoming, route: R.Route) -> Answer:
        op = route.op
        query = request.query
        delimiter = request.query_value("delimiter") or REST_DELIMITER
        fields: dict[str, Any] = {}
        data = known = None
        if route.body == "json":
            raw = await self._body(request)
            if op.method in self.pipeline.inline_methods and len(raw) <= _KNOWN_BODY_BYTES:
                known = (op.method, request.scope["path"], request.scope.get("query_string"), raw,
                         *(request.header(h) for _, h in _CONTEXT_HEADERS))
                req = self._known.get(known)
                if req is not None:  # this very request was built and checked before
                    return await self._call(route, req, None, request.scope)
            fields = self._json_fields(request, raw)
            if route.body_field:  # the body is the field's value itself (a bare map)
                fields = {route.body_field: fields}
        elif route.body == "arrow":
            data = await self._arrow_body(request, op)
        if route.has_id:
            path_id = split_id(request.scope["path_params"]["id"], delimiter)
            body_id = fields.get("id")
            if body_id is not None and not names_same_object(body_id, path_id, delimiter):
                raise InvalidInputError(f"body id {body_id!r} names another object than the path id {path_id!r}")
            fields["id"] = path_id
        for p in route.path_params:
            fields[p.name] = request.scope["path_params"][p.name]
        if query:
            for p in route.query_params:
                values = query.get(p.name)
                if values:
                    fields[p.name] = R.parse_query_value(p, values)
        self._context_from_headers(request, fields)
        req = self.pipeline.model(op, fields)
        answer = await self._call(route, req, data, request.scope)
        if known is not None and answer.status < 400:  # answered: its checks passed
            if len(self._known) >= _KNOWN_REQUESTS:
                self._known.clear()
            self._known[known] = req
        return answer

    async def _seed(self, request: _Incoming, op: Operation) -> Answer:
        """The seed spec's ``POST /<OperationId>``: the JSON body is the request.

        Data operations take the Arrow IPC stream as the body instead; their
        request fields then travel as query parameters (``id`` as a string
        joined by ``delimiter``), as on the current routes.
        """
        route = R.ROUTES[op.method]
        data = None
        if op.has_data and request.media_type in (R.ARROW_STREAM, "application/octet-stream"):
            data = await self._arrow_body(request, op)
            fields: dict[str, Any] = {}
            delimiter = request.query_value("delimiter") or REST_DELIMITER
            if request.query_value("id") is not None:
                fields["id"] = split_id(request.query_value("id"), delimiter)
            for p in route.query_params:
                values = request.query.get(p.name)
                if values:
                    fields[p.name] = R.parse_query_value(p, values)
        else:
            fields = await self._json_body(request)
            if op.has_data:  # no Arrow body: only CreateTable may go without data
                data = b""
                _check_arrow_stream(data, op.op_id == "CreateTable", self.max_decoded_bytes)
        self._context_from_headers(request, fields)
        return await self._call(route, self.pipeline.model(op, fields), data, request.scope)

    # -- model -> backend -> response -------------------------------------------------
    async def _call(self, route: R.Route, req: Any, data: bytes | None, scope: dict) -> Answer:
        """Run the operation through the pipeline for the request of ``scope`` (its
        principal; the backend's time is left there) and render its answer."""
        result = await self.pipeline.call(scope.get(PRINCIPAL, A.ANONYMOUS), route, req, data, scope)
        if route.response == "arrow":
            payload = result if isinstance(result, (bytes, bytearray)) else getattr(result, "data", None)
            if isinstance(payload, str):
                payload = payload.encode("latin-1")
            return Answer(bytes(payload or b""), route.status, _ARROW_FILE_TYPE)
        if route.response == "count":
            count = result if isinstance(result, int) else getattr(result, "count", None)
            if count is None and isinstance(result, Mapping):
                count = result.get("count")
            return Answer(json_bytes(int(count or 0)), route.status)
        if route.response == "text":
            return Answer(json_bytes(result if isinstance(result, str) else str(result)), route.status)
        if route.response_field:  # the response body is that field's value (a bare map)
            result = getattr(result, route.response_field, None) or {}
        return Answer(json_bytes(result), route.status)

    # -- endpoints -------------------------------------------------------------------
    def _endpoint(self, route: R.Route):
        async def endpoint(request: Request) -> Answer:
            request.scope[OPERATION] = route.op.op_id
            return await self._current(_Incoming(request.scope, request.receive), route)

        endpoint.__name__ = route.op.op_id
        return endpoint

    def _seed_endpoint(self, op: Operation):
        async def endpoint(request: Request) -> Answer:
            request.scope[OPERATION] = op.op_id
            return await self._seed(_Incoming(request.scope, request.receive), op)

        endpoint.__name__ = f"seed_{op.op_id}"
        return endpoint

    async def health(self, request: Request) -> Response:
        request.scope[OPERATION] = "health"
        return JSONResponse({"status": "ok"})

    async def metrics_endpoint(self, request: Request) -> Response:
        """Prometheus text format; behind the same authentication as the API when
        the server has any (any authenticated principal may read it)."""
        request.scope[OPERATION] = "metrics"
        body, media_type = self.metrics.exposition()
        return Response(body, media_type=media_type)

    async def openapi_json(self, request: Request) -> Response:
        return JSONResponse(R.openapi_document())

    async def openapi_yaml(self, request: Request) -> Response:
        return PlainTextResponse(R.openapi_text(), media_type="application/yaml")

    def build(self) -> Starlette:
        table = []
        for route in sorted(R.ROUTES.values(), key=_match_order):
            # ``{id:path}`` also matches ids with a raw or decoded '/' (clients that
            # do not encode it), so they reach the id check and get a 400, not a 404.
            path = route.path.replace("{id}", "{id:path}")
            table.append(StarletteRoute(path, self._endpoint(route), methods=[route.method]))
        for op_id, op in BY_OP_ID.items():
            table.append(StarletteRoute(f"/{op_id}", self._seed_endpoint(op), methods=["POST"]))
        table += [
            StarletteRoute("/health", self.health, methods=["GET"]),
            StarletteRoute("/openapi.json", self.openapi_json, methods=["GET"]),
            StarletteRoute("/openapi.yaml", self.openapi_yaml, methods=["GET"]),
        ]
        if self.metrics is not None:
            table.append(StarletteRoute("/metrics", self.metrics_endpoint, methods=["GET"]))
        if self.ui:
            table.append(ui.mount(self))

        async def on_namespace_error(request: Request, exc: Exception) -> Response:
            return error_response(exc, request.method, request.url.path)

        async def on_http_error(request: Request, exc: Exception) -> Response:
            assert isinstance(exc, HTTPException)
            err = (UnsupportedOperationError if exc.status_code in (404, 405) else InvalidInputError)(
                f"{request.method} {request.url.path}: {exc.detail}"
            )
            return json_error(err, request.url.path, status=exc.status_code)

        async def on_unexpected(request: Request, exc: Exception) -> Response:
            return error_response(exc, request.method, request.url.path)

        app = Starlette(
            routes=table,
            exception_handlers={
                LanceNamespaceError: on_namespace_error,
                HTTPException: on_http_error,
                Exception: on_unexpected,
            },
        )
        app.state.namespace_app = self
        return Outer(app, self)

    async def serve_route(self, scope, receive, route: R.Route, path_id: str | None) -> Answer:
        """The answer to a request :class:`_FastRoutes` matched, as Starlette's route would
        give it (same handler, same error answers) without its routing and middleware;
        :class:`~.asgi.Outer` counts, logs and sends it (and answers a panic)."""
        if path_id is not None:
            scope["path_params"] = {"id": path_id}
        try:
            return await self._current(_Incoming(scope, receive), route)
        except Exception as exc:
            return error_response(exc, scope["method"], scope["path"])


class _FastRoutes:
    """The protocol's routes as a dict, so that a request finds its handler with one
    lookup instead of trying Starlette's route patterns in turn.

    Holds the routes whose only path parameter is the id, as the fourth path segment
    (``/v1/table/{id}/describe``), and the literal ones.  Anything else (an id holding
    a raw ``/``, a wrong method, the seed spec's ``POST /<OperationId>``, the UI) is not
    matched here and goes through Starlette's routes, which answer it as before.
    """

    def __init__(self, routes: Iterable[R.Route]):
        self.literal: dict[tuple[str, str], R.Route] = {}
        #: (method, collection, the path after the id or None) -> route
        self.by_id: dict[tuple[str, str, str | None], R.Route] = {}
        for route in routes:
            parts = route.path.split("/", 4)
            if not route.has_id:
                self.literal[(route.method, route.path)] = route
            elif len(parts) >= 4 and parts[1] == "v1" and parts[3] == "{id}" and "{" not in "".join(parts[4:]):
                self.by_id[(route.method, parts[2], parts[4] if len(parts) == 5 else None)] = route

    def match(self, method: str, path: str) -> tuple[R.Route | None, str | None]:
        """The route and the raw id of a request, or ``(None, None)``."""
        route = self.literal.get((method, path))
        if route is not None:
            return route, None
        parts = path.split("/", 4)
        if len(parts) < 4 or parts[1] != "v1":
            return None, None
        route = self.by_id.get((method, parts[2], parts[4] if len(parts) == 5 else None))
        return (route, parts[3]) if route is not None else (None, None)


def _match_order(route: R.Route) -> tuple:
    """Literal paths first (/v1/table/batch-commit never reaches {id}); then the
    longest suffix after {id}, so /v1/namespace/{id}/table/list is tried before
    /v1/namespace/{id}/list would swallow ``x/table`` as an id."""
    if not route.has_id:
        return (0, 0)
    return (1, -route.path.split("{id}", 1)[1].count("/"))


def create_app(namespace: LanceNamespace, settings: ServerSettings | None = None, **options: Any):
    """The ASGI app serving ``namespace`` over the Lance REST protocol (and, unless
    ``ui=False``, the catalog browser at ``/ui/``): ``settings``, or the defaults, with
    ``options`` changed (any field of :class:`~.settings.ServerSettings`, and ``limits``)."""
    return NamespaceApp(namespace, settings, **options).build()
