"""The Lance REST server: an ASGI app over any ``lance_namespace.LanceNamespace``.

One router (:mod:`.router`) finds every route of :data:`routes.ROUTES` and one
generic handler serves them: it turns
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
from collections.abc import Mapping  # not typing's: faster isinstance checks
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
from ..errors import InvalidInputError, PayloadTooLargeError, RequestTimeoutError, transport_refusal
from ..identifiers import REST_DELIMITER, names_same_object, split_id
from ..protocol import routes as R
from . import auth as A
from . import ui
from .asgi import OPERATION, PRINCIPAL, Answer, Outer, error_response, json_bytes
from .metrics import Metrics
from .pipeline import ANSWERED_INLINE, Pipeline, keepable
from .router import Match, Router
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


class _Resumed:
    """A coroutine already run up to its first wait (on ``waiting_on``), awaited from there on
    as if it had been awaited from the start."""

    __slots__ = ("coroutine", "waiting_on")

    def __init__(self, coroutine, waiting_on):
        self.coroutine, self.waiting_on = coroutine, waiting_on

    def __await__(self):
        coroutine, waiting_on = self.coroutine, self.waiting_on
        while True:
            try:
                yield waiting_on
            except BaseException as thrown:  # a cancellation, passed on to the coroutine
                resume, value = coroutine.throw, thrown
            else:
                resume, value = coroutine.send, None
            try:
                waiting_on = resume(value)
            except StopIteration as done:
                return done.value


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


def _check_arrow_stream(data: bytes, allow_empty: bool, max_decoded_bytes: int | None):
    """The table of a body that is a valid Arrow IPC stream Lance can store (None: an empty
    body where one is allowed), refused before any backend (ours or not) sees it: the same
    checks as the Python API's."""
    if not data:
        if allow_empty:
            return None
        raise InvalidInputError("request body must be an Arrow IPC stream, got an empty body")
    return datasets.ipc_to_table(data, max_decoded_bytes, file_format=False)


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
#: answers up to this size are kept (a describe is ~0.5 KiB, a page of 100 names ~3 KiB): at
#: most 64 MiB held whatever the pages clients ask for
_KEPT_ANSWER_BYTES = 16 * 1024


class _Known:
    """An inline read asked before, by one principal: its request as built and checked, and
    its last answer with the backend's stamp it was answered under (None: not kept)."""

    __slots__ = ("req", "principal", "stamp", "answer")

    def __init__(self, req: Any, principal: A.Principal, stamp: Any, answer: Answer | None):
        self.req, self.principal, self.stamp, self.answer = req, principal, stamp, answer


class NamespaceApp:
    """Holds the backend and settings; builds the app: :class:`~.asgi.Outer` around
    the protocol's routes (:attr:`router`, answered by :meth:`serve_route`) and
    Starlette's (the other paths, and the UI)."""

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
        #: every protocol route and the seed spec's POST /<OperationId>: the one router
        self.router = Router(R.ROUTES.values(), ((op_id, R.ROUTES[op.method]) for op_id, op in BY_OP_ID.items()))
        #: inline reads asked before, by their bytes and principal (a client asks the same
        #: describe again and again): the request as built, the answer while it holds
        #: (:meth:`_known_read`; bounded: cleared when full)
        self._known: dict[tuple, _Known] = {}
        self._deadlines: _Deadlines | None = None  # body reads under way (their timeout)

    @property
    def threads(self) -> int:
        return self.pipeline.threads

    # -- the request ------------------------------------------------------------------
    async def _body(self, request: _Incoming) -> bytes:
        declared = request.header(b"content-length")
        if declared and declared.isdigit() and int(declared) > self.max_body_bytes:
            raise PayloadTooLargeError(f"request body exceeds the limit of {self.max_body_bytes} bytes")
        # A small body almost always arrived with the headers: its first message is then at
        # hand without waiting, and needs no deadline.  Only a wait is bounded (uvicorn has no
        # body timeout: a client trickling bytes would hold a connection forever).
        pending = request.receive()
        try:
            waiting_on = pending.send(None)
        except StopIteration as received:
            message = received.value
        else:
            message = await self._within_body_timeout(_Resumed(pending, waiting_on))
        chunk = self._body_chunk(message, 0)
        if not message.get("more_body", False):
            return chunk
        return await self._within_body_timeout(self._read_body(request, [chunk]))

    async def _within_body_timeout(self, reading):
        """Await ``reading`` (the rest of a body) for at most the body timeout (408 after it)."""
        if not _UNCANCEL:  # Python 3.10: anyio's cancel scope
            try:
                with anyio.fail_after(self.body_timeout):
                    return await reading
            except TimeoutError:
                raise RequestTimeoutError(f"request body not received within {self.body_timeout:g} s") from None
        loop = asyncio.get_running_loop()
        deadlines = self._deadlines
        if deadlines is None or deadlines.loop is not loop:  # one per loop (a test client may start several)
            deadlines = self._deadlines = _Deadlines(loop, self.body_timeout)
        task = asyncio.current_task()
        deadlines.start(task)
        try:
            return await reading
        except asyncio.CancelledError:
            if not deadlines.expired(task):
                raise
            raise RequestTimeoutError(f"request body not received within {self.body_timeout:g} s") from None
        finally:
            deadlines.pending.pop(task, None)

    def _body_chunk(self, message: dict, size: int) -> bytes:
        """A body message's bytes, refused once the body would pass the limit (``size``: read so far)."""
        if message["type"] == "http.disconnect":
            raise InvalidInputError("the client disconnected before sending the whole body")
        chunk = message.get("body", b"")
        if size + len(chunk) > self.max_body_bytes:
            raise PayloadTooLargeError(f"request body exceeds the limit of {self.max_body_bytes} bytes")
        return chunk

    async def _read_body(self, request: _Incoming, chunks: list[bytes]) -> bytes:
        """The rest of a body whose first ``chunks`` were read."""
        size, more = sum(map(len, chunks)), True
        while more:
            message = await request.receive()
            chunk = self._body_chunk(message, size)
            more = message.get("more_body", False)
            size += len(chunk)
            chunks.append(chunk)
        return b"".join(chunks)

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

    async def _arrow_body(self, request: _Incoming, op: Operation):
        data = await self._body(request)
        media = request.media_type
        if data and media not in (R.ARROW_STREAM, "application/octet-stream", ""):
            raise InvalidInputError(f"expected Content-Type {R.ARROW_STREAM}, got {media!r}")
        # CreateTable with an empty body means "create an empty table" to some
        # clients; the backend decides, but never sees a non-Arrow body.
        table = await self.pipeline.run(_check_arrow_stream, data, op.op_id == "CreateTable", self.max_decoded_bytes)
        # our backends take the table decoded here (decoded once); any other gets the bytes
        return table if table is not None and self.pipeline.ours else data

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
        fields: dict[str, Any] = {}
        data = known = None
        raw = await self._body(request) if route.body == "json" else b""
        if route.body != "arrow" and op.method in self.pipeline.inline_methods and len(raw) <= _KNOWN_BODY_BYTES:
            principal = request.scope.get(PRINCIPAL, A.ANONYMOUS)
            known = (op.method, request.scope["path"], request.scope.get("query_string"), raw,
                     *[request.header(h) for _, h in _CONTEXT_HEADERS], id(principal))
            seen = self._known.get(known)
            if seen is not None and seen.principal is principal:  # built and checked before
                stamp = self.pipeline.answers_stamp(op.method, seen.req)
                if stamp is not None and stamp == seen.stamp:
                    self.pipeline.label_mount(seen.req, request.scope)  # (for the metrics)
                    return seen.answer  # what the backend reads is as it was: so is the answer
                return await self._known_read(route, seen.req, known, stamp, request.scope)
        if route.body == "json":
            fields = self._json_fields(request, raw)
            if route.body_field:  # the body is the field's value itself (a bare map)
                fields = {route.body_field: fields}
        elif route.body == "arrow":
            data = await self._arrow_body(request, op)
        query = request.query
        delimiter = request.query_value("delimiter") or REST_DELIMITER
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
        if known is not None:
            return await self._known_read(route, req, known, self.pipeline.answers_stamp(op.method, req), request.scope)
        return self._render(route, await self._run(route, req, data, request.scope))

    async def _known_read(self, route: R.Route, req: Any, known: tuple, stamp: Any, scope: dict) -> Answer:
        """An inline read answered, and remembered: its request, and its answer too when the
        backend answered it from memory and its stamp (``stamp``, read just before the call)
        is the same after it.  A change landing during the call changes the stamp, so an
        answer is never kept under a stamp older than what it read."""
        result = await self._run(route, req, None, scope)
        answer = self._render(route, result)
        if stamp is not None and not (scope.get(ANSWERED_INLINE) and keepable(result)
                                      and len(answer.body) <= _KEPT_ANSWER_BYTES
                                      and self.pipeline.answers_stamp(route.op.method, req) == stamp):
            stamp = None
        if len(self._known) >= _KNOWN_REQUESTS:
            self._known.clear()
        self._known[known] = _Known(req, scope.get(PRINCIPAL, A.ANONYMOUS), stamp,
                                    answer if stamp is not None else None)
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
        return self._render(route, await self._run(route, self.pipeline.model(op, fields), data, request.scope))

    # -- model -> backend -> response -------------------------------------------------
    def _run(self, route: R.Route, req: Any, data: bytes | None, scope: dict):
        """The operation run through the pipeline for the request of ``scope`` (its principal;
        the backend's time is left there): its result, awaited."""
        return self.pipeline.call(scope.get(PRINCIPAL, A.ANONYMOUS), route, req, data, scope)

    @staticmethod
    def _render(route: R.Route, result: Any) -> Answer:
        """An operation's result as the protocol answers it."""
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

    # -- the other paths (Starlette's) ----------------------------------------------------
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
        """The ASGI app: :class:`~.asgi.Outer` in front of everything, the protocol's routes
        answered through :attr:`router`, Starlette for the other paths."""
        table = [
            StarletteRoute("/health", self.health, methods=["GET"]),
            StarletteRoute("/openapi.json", self.openapi_json, methods=["GET"]),
            StarletteRoute("/openapi.yaml", self.openapi_yaml, methods=["GET"]),
        ]
        if self.metrics is not None:
            table.append(StarletteRoute("/metrics", self.metrics_endpoint, methods=["GET"]))
        if self.ui:
            table.append(ui.mount(self))

        async def on_error(request: Request, exc: Exception) -> Response:
            # the one error answer (asgi.error_response), also for what Starlette raised
            return error_response(_as_protocol_error(request, exc), request.method, request.url.path)

        app = Starlette(routes=table, exception_handlers={Exception: on_error, HTTPException: on_error})
        app.state.namespace_app = self
        return Outer(app, self)

    async def serve_route(self, scope, receive, match: Match) -> Answer:
        """The answer to a request the router matched (:class:`~.asgi.Outer` counts, logs and
        sends it, and answers what it raised)."""
        if match.path_params is not None:
            scope["path_params"] = match.path_params
        incoming = _Incoming(scope, receive)
        if match.seed:
            return await self._seed(incoming, match.route.op)
        return await self._current(incoming, match.route)


def _as_protocol_error(request: Request, exc: Exception) -> Exception:
    """Starlette's own refusals as the protocol's errors, whose statuses the error table decides."""
    if isinstance(exc, HTTPException):
        return transport_refusal(exc.status_code, f"{request.method} {request.url.path}: {exc.detail}")
    return exc


def create_app(namespace: LanceNamespace, settings: ServerSettings | None = None, **options: Any):
    """The ASGI app serving ``namespace`` over the Lance REST protocol (and, unless
    ``ui=False``, the catalog browser at ``/ui/``): ``settings``, or the defaults, with
    ``options`` changed (any field of :class:`~.settings.ServerSettings`, and ``limits``)."""
    return NamespaceApp(namespace, settings, **options).build()
