"""The Lance REST server: an ASGI app over any ``lance_namespace.LanceNamespace``.

One generic handler serves every route of :data:`routes.ROUTES`: it turns
the path, query string and body into the operation's request model, runs the
(blocking) backend call in a bounded thread pool so the event loop keeps
serving, and renders the result the way the protocol says (JSON, a bare
count or string, or an Arrow IPC file).  Every failure becomes the JSON
``ErrorResponse`` with an integer ``code`` and the status from the one error
table in :mod:`lance_ns.errors`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import hmac
import json
import logging
import time
import weakref
from collections.abc import Iterable, Mapping  # not typing's: faster isinstance checks
from typing import Any

import anyio
import pydantic_core
from lance_namespace import LanceNamespace
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route as StarletteRoute

from .. import tables, vending
from ..base import BY_OP_ID, NamespaceBase, Operation, check_request, coerce_request
from ..errors import (
    InternalError,
    InvalidInputError,
    LanceNamespaceError,
    PermissionDeniedError,
    ServiceUnavailableError,
    UnauthenticatedError,
    UnsupportedOperationError,
    code_of,
    error_body,
    http_status,
)
from ..identifiers import REST_DELIMITER, split_id
from ..limits import Limits
from ..modes import CreateMode, DropBehavior, DropMode, RegisterMode, WriteMode
from ..redact import RedactingFilter, is_secret_key, redact_text
from . import auth as A
from ..protocol import routes as R
from . import ui
from .metrics import Metrics
from .command import DEFAULT_BODY_TIMEOUT, DEFAULT_MAX_BODY_BYTES, DEFAULT_QUEUE_TIMEOUT, DEFAULT_THREADS

#: operations whose answers may carry vended storage credentials (lance_ns.vending)
_VENDING_METHODS = frozenset({"describe_table", "declare_table", "create_table"})

log = logging.getLogger("lance_ns.server")
log.addFilter(RedactingFilter())  # messages and tracebacks may quote a backend's secrets
#: one line per mutating call: who (the principal's name, never a token), what, on which id, outcome
audit = logging.getLogger("lance_ns.audit")
#: where the authenticated principal travels from the ASGI wrapper to the handler
PRINCIPAL = "lance_ns.principal"
#: the OperationId an endpoint serves, for the metrics' ``operation`` label
OPERATION = "lance_ns.operation"

#: the deepest nesting of arrays/objects accepted in a JSON body (requests need 3)
MAX_JSON_DEPTH = 32

#: (OperationId, field) -> the mode enum its value must parse as.  The server
#: refuses unknown modes itself so that no backend can silently ignore one.
MODE_FIELDS = {
    ("CreateNamespace", "mode"): CreateMode,
    ("DropNamespace", "mode"): DropMode,
    ("DropNamespace", "behavior"): DropBehavior,
    ("RegisterTable", "mode"): RegisterMode,
    ("CreateTable", "mode"): CreateMode,
    ("InsertIntoTable", "mode"): WriteMode,
}
#: modes an operation accepts when its enum is wider than the operation
MODE_SUBSETS = {("InsertIntoTable", "mode"): {WriteMode.APPEND, WriteMode.OVERWRITE}}
#: OperationId -> its (field, enum) pairs of MODE_FIELDS, looked up once per request
_MODES_BY_OP: dict[str, list[tuple[str, type]]] = {}
for (_op_id, _field), _enum in MODE_FIELDS.items():
    _MODES_BY_OP.setdefault(_op_id, []).append((_field, _enum))

#: asyncio.timeout (Python 3.11+), else None (anyio's fail_after then)
_ASYNCIO_TIMEOUT = getattr(asyncio, "timeout", None)

#: seconds a client answered 503 (every backend thread busy) is told to wait before retrying
RETRY_AFTER_SECONDS = 1


class _Busy(ServiceUnavailableError):
    """Every backend thread stayed busy for the whole queue timeout: code 17 (503) with Retry-After."""


class _BodyTimeout(InvalidInputError):
    """A body not received in time: code 13 (InvalidInput) with HTTP 408."""


def _json_error(exc: BaseException, path: str = "", status: int | None = None) -> JSONResponse:
    if status is None:
        # oversize bodies (raw or decoded) 413, stalled bodies 408: both code 13
        if isinstance(exc, tables.DataTooLarge):
            status = 413
        elif isinstance(exc, _BodyTimeout):
            status = 408
        else:
            status = http_status(exc)
    body = error_body(exc, instance=path or None)
    for field in ("error", "detail"):  # a backend's message may quote a secret
        body[field] = redact_text(body[field])
    headers = {"connection": "close"} if status in (408, 413) else None  # the rest of the body is not read
    if isinstance(exc, _Busy):
        headers = {"retry-after": str(RETRY_AFTER_SECONDS)}
    return JSONResponse(body, status_code=status, headers=headers)


def _json_bytes(result: Any) -> bytes:
    """A response model (or map, count, string) as the JSON body, serialised straight to
    bytes by pydantic-core (aliases, no nulls) without an intermediate dict."""
    return pydantic_core.to_json({} if result is None else result, by_alias=True, exclude_none=True)


class _JSONBytes(Response):
    media_type = R.JSON


def _check_arrow_stream(data: bytes, allow_empty: bool, max_decoded_bytes: int | None) -> None:
    """Refuse a body that is not a valid Arrow IPC stream Lance can store, before any
    backend (ours or not) sees it: the same checks as the Python API's."""
    if not data:
        if allow_empty:
            return
        raise InvalidInputError("request body must be an Arrow IPC stream, got an empty body")
    tables.ipc_to_table(data, max_decoded_bytes, file_format=False)


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


def _call_shielded(fn, *args):
    """Run a backend call; a Rust panic (a BaseException) becomes an InternalError."""
    try:
        return fn(*args)
    except Exception:
        raise
    except BaseException as e:
        if tables.is_panic(e):
            log.error("Lance panicked in %s: %s", getattr(fn, "__name__", fn), e)
            raise InternalError("the storage engine failed unexpectedly") from None
        raise


def _media_type(request: Request) -> str:
    return request.headers.get("content-type", "").split(";", 1)[0].strip().lower()


class NamespaceApp:
    """Holds the backend and settings; builds the Starlette app."""

    def __init__(
        self,
        namespace: LanceNamespace,
        *,
        auth_token: str | None = None,
        api_keys: Iterable[str] | None = None,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        threads: int | None = None,
        log_requests: bool = True,
        max_decoded_bytes: int | None = None,
        body_timeout: float = DEFAULT_BODY_TIMEOUT,
        limits: Limits | None = None,
        auth_file: str | None = None,
        ui: bool = True,
        queue_timeout: float = DEFAULT_QUEUE_TIMEOUT,
    ):
        self.namespace = namespace
        #: our namespaces check every request once themselves (lance_ns.base.normalising)
        self._checks_requests = isinstance(namespace, NamespaceBase)
        self.ui = ui  # the catalog browser at /ui/ (server.ui)
        self.auth_file = A.AuthFile(auth_file) if auth_file else None
        self.metrics = Metrics()
        self._tokens = [t.encode() for t in ([auth_token] if auth_token else [])]
        self._keys = [k.encode() for k in (api_keys or []) if k]
        self.max_body_bytes = int(max_body_bytes)
        #: decoded Arrow bodies are bounded too (a few KB of zstd can decode to GBs)
        self.max_decoded_bytes = int(max_decoded_bytes) if max_decoded_bytes else self.max_body_bytes
        self.body_timeout = float(body_timeout)
        self.limits = limits or Limits()
        #: backend calls running at once: the flag, else the size the backend asks for
        #: (``server_threads``: many for catalogs that wait on the network)
        self.threads = int(threads or getattr(namespace, "server_threads", None) or DEFAULT_THREADS)
        if self.threads < 1:
            raise InvalidInputError(f"threads must be at least 1, got {self.threads}")
        self.queue_timeout = float(queue_timeout)
        self.log_requests = log_requests
        # the backend's own threads: a blocking call (a slow catalog, object storage) never
        # runs on the event loop, and at most ``threads`` run at once
        self._pool = concurrent.futures.ThreadPoolExecutor(self.threads, thread_name_prefix="lance-ns-backend")
        weakref.finalize(self, self._pool.shutdown, wait=False)
        self._slots: asyncio.Semaphore | None = None  # free threads, on the loop that serves (a test
        self._slots_loop: asyncio.AbstractEventLoop | None = None  # client may start one per request)
        # the server's own credentials: never sent back in a response's storage_options
        own = getattr(namespace, "storage_options", None) or {}
        self._own_secrets = {str(v) for k, v in own.items() if is_secret_key(k) and v}

    # -- plumbing ---------------------------------------------------------------
    async def _run(self, fn, *args):
        """Run a blocking backend call on the pool.  With every thread busy a request
        waits at most ``queue_timeout`` seconds, then is answered 503 code 17 with
        Retry-After: an overloaded backend is told to the client, never queued forever."""
        loop = asyncio.get_running_loop()
        slots = self._slots
        if slots is None or self._slots_loop is not loop:  # an asyncio primitive serves one loop
            slots, self._slots_loop = asyncio.Semaphore(self.threads), loop
            self._slots = slots
        if slots.locked():
            try:
                await asyncio.wait_for(slots.acquire(), self.queue_timeout)
            except asyncio.TimeoutError:
                raise _Busy(f"all {self.threads} backend threads stayed busy for {self.queue_timeout:g} s; "
                            f"retry later") from None
        else:
            await slots.acquire()  # free: no waiting
        try:
            return await loop.run_in_executor(self._pool, _call_shielded, fn, *args)
        finally:
            slots.release()

    async def _body(self, request: Request) -> bytes:
        declared = request.headers.get("content-length")
        if declared and declared.isdigit() and int(declared) > self.max_body_bytes:
            raise tables.DataTooLarge(f"request body exceeds the limit of {self.max_body_bytes} bytes")
        try:
            # uvicorn has no body timeout: a client trickling bytes would hold a connection forever.
            # asyncio's own timeout (3.11+) is a timer handle; anyio's cancel scope costs several times more
            if _ASYNCIO_TIMEOUT is not None:
                async with _ASYNCIO_TIMEOUT(self.body_timeout):
                    return await self._read_body(request)
            with anyio.fail_after(self.body_timeout):
                return await self._read_body(request)
        except TimeoutError:
            raise _BodyTimeout(f"request body not received within {self.body_timeout:g} s") from None

    async def _read_body(self, request: Request) -> bytes:
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > self.max_body_bytes:
                raise tables.DataTooLarge(f"request body exceeds the limit of {self.max_body_bytes} bytes")
            chunks.append(chunk)
        return b"".join(chunks)

    @property
    def auth_required(self) -> bool:
        return bool(self._tokens or self._keys or self.auth_file)

    def authenticates_itself(self, path: str) -> bool:
        """Paths that check credentials themselves: the UI accepts its sign-in cookie too."""
        return self.ui and (path == ui.PREFIX or path.startswith(ui.PREFIX + "/"))

    def _authenticate(self, headers: Mapping[str, str]) -> A.Principal:
        """The caller: the all-powerful principal for ``--auth-token``/API keys, an auth
        file's principal for its token (as a bearer token or ``x-api-key``)."""
        if not self.auth_required:
            return A.ANONYMOUS
        auth = headers.get("authorization", "")
        bearer = auth[7:].strip() if auth[:7].lower() == "bearer " else None
        key = headers.get("x-api-key")
        if bearer is not None and self._tokens:
            if any(hmac.compare_digest(bearer.encode(), t) for t in self._tokens):
                return A.ALL_POWERFUL
        if key is not None and self._keys:
            if any(hmac.compare_digest(key.encode(), k) for k in self._keys):
                return A.ALL_POWERFUL
        if self.auth_file is not None:
            for given in (bearer, key):
                principal = self.auth_file.find(given) if given else None
                if principal is not None:
                    return principal
        raise UnauthenticatedError("missing or invalid credentials")

    def _authorize(self, principal: A.Principal, route: R.Route, req: Any) -> A.Requirement | None:
        """Raise PermissionDenied (403 code 15) unless ``principal`` holds the grant the
        operation needs on every namespace it touches; listings of namespaces are allowed
        on the way to a readable prefix (and filtered afterwards)."""
        if principal is A.ANONYMOUS or principal is A.ALL_POWERFUL:
            return None
        need = A.requirement(route, req)
        for ns in need.namespaces:
            if principal.may(need.grant, ns):
                continue
            if route.op.method == "list_namespaces" and principal.may_see(ns):
                continue
            shown = ".".join(ns) if ns else "the root namespace"
            raise PermissionDeniedError(f"{principal.name!r} may not {route.op.op_id} in {shown} (needs {need.grant})")
        return need

    @staticmethod
    def _visible(principal: A.Principal, route: R.Route, req: Any, result: Any) -> Any:
        """A namespace listing shows only the children the principal may see."""
        if route.op.method != "list_namespaces" or principal is A.ANONYMOUS or principal is A.ALL_POWERFUL:
            return result
        parent = tuple(getattr(req, "id", None) or ())
        names = getattr(result, "namespaces", None)
        if names is None:
            return result
        kept = [n for n in names if principal.may_see((*parent, n))]
        return result if len(kept) == len(names) else result.model_copy(update={"namespaces": kept})

    # -- request -> model ---------------------------------------------------------
    async def _json_body(self, request: Request) -> dict:
        data = await self._body(request)
        if not data.strip():
            return {}
        media = _media_type(request)
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
        _check_json(body)
        return body

    async def _arrow_body(self, request: Request, op: Operation) -> bytes:
        data = await self._body(request)
        media = _media_type(request)
        if data and media not in (R.ARROW_STREAM, "application/octet-stream", ""):
            raise InvalidInputError(f"expected Content-Type {R.ARROW_STREAM}, got {media!r}")
        # CreateTable with an empty body means "create an empty table" to some
        # clients; the backend decides, but never sees a non-Arrow body.
        await self._run(_check_arrow_stream, data, op.op_id == "CreateTable", self.max_decoded_bytes)
        return data

    @staticmethod
    def _context_from_headers(request: Request, fields: dict) -> None:
        """lance-ns context entries sent as headers (``x-lance-ns-purge``) back into the context."""
        for key, header in R.CONTEXT_HEADERS.items():
            value = request.headers.get(header)
            if value is not None:
                context = fields.get("context")
                fields["context"] = {**(context if isinstance(context, dict) else {}), key: value}

    def _model(self, op: Operation, fields: dict) -> Any:
        for field, enum in _MODES_BY_OP.get(op.op_id, ()):
            if fields.get(field) not in (None, ""):
                mode = enum.parse(fields[field])
                allowed = MODE_SUBSETS.get((op.op_id, field))
                if allowed and mode not in allowed:
                    names = ", ".join(sorted(m.value for m in allowed))
                    raise InvalidInputError(f"{op.op_id} {field} must be one of {names}, got {fields[field]!r}")
        model = coerce_request(fields, op.request)  # first: an id that is not a list of strings is 13
        self.limits.check_request(model)  # the server's own limits (--max-property-bytes...)
        if not self._checks_requests:  # a backend that is not ours gets valid ids too
            check_request(model)
        return model

    async def _current(self, request: Request, route: R.Route) -> Response:
        op = route.op
        delimiter = request.query_params.get("delimiter") or REST_DELIMITER
        fields: dict[str, Any] = {}
        data = None
        if route.body == "json":
            fields = await self._json_body(request)
            if route.body_field:  # the body is the field's value itself (a bare map)
                fields = {route.body_field: fields}
        elif route.body == "arrow":
            data = await self._arrow_body(request, op)
        if route.has_id:
            path_id = split_id(request.path_params["id"], delimiter)
            body_id = fields.get("id")
            if body_id is not None and body_id != path_id:
                raise InvalidInputError(f"body id {body_id!r} does not match the path id {path_id!r}")
            fields["id"] = path_id
        for p in route.path_params:
            fields[p.name] = request.path_params[p.name]
        for p in route.query_params:
            values = request.query_params.getlist(p.name)
            if values:
                fields[p.name] = R.parse_query_value(p, values)
        self._context_from_headers(request, fields)
        return await self._call(route, self._model(op, fields), data, request.scope.get(PRINCIPAL, A.ANONYMOUS))

    async def _seed(self, request: Request, op: Operation) -> Response:
        """The seed spec's ``POST /<OperationId>``: the JSON body is the request.

        Data operations take the Arrow IPC stream as the body instead; their
        request fields then travel as query parameters (``id`` as a string
        joined by ``delimiter``), as on the current routes.
        """
        route = R.ROUTES[op.method]
        data = None
        if op.has_data and _media_type(request) in (R.ARROW_STREAM, "application/octet-stream"):
            data = await self._arrow_body(request, op)
            fields: dict[str, Any] = {}
            delimiter = request.query_params.get("delimiter") or REST_DELIMITER
            if "id" in request.query_params:
                fields["id"] = split_id(request.query_params["id"], delimiter)
            for p in route.query_params:
                values = request.query_params.getlist(p.name)
                if values:
                    fields[p.name] = R.parse_query_value(p, values)
        else:
            fields = await self._json_body(request)
            if op.has_data:  # no Arrow body: only CreateTable may go without data
                data = b""
                _check_arrow_stream(data, op.op_id == "CreateTable", self.max_decoded_bytes)
        self._context_from_headers(request, fields)
        return await self._call(route, self._model(op, fields), data, request.scope.get(PRINCIPAL, A.ANONYMOUS))

    # -- model -> backend -> response -------------------------------------------------
    async def _call(self, route: R.Route, req: Any, data: bytes | None, principal: A.Principal) -> Response:
        fn = getattr(self.namespace, route.op.method)
        mutating = not A.is_read_method(route.op.method)
        try:
            need = self._authorize(principal, route, req)
            if need is not None and route.op.method in _VENDING_METHODS and not all(
                principal.may(A.WRITE, ns) for ns in need.namespaces
            ):  # a principal that may only read is vended read-only credentials
                fn = functools.partial(vending.capped, vending.Permission.READ, fn)
            start = time.perf_counter()
            try:
                result = await (self._run(fn, req, data) if route.op.has_data else self._run(fn, req))
            finally:
                self.metrics.observe_backend(route.op.op_id, time.perf_counter() - start)
        except BaseException as e:
            if mutating:
                self._audit(principal, route, req, f"error code {code_of(e)}")
            raise
        if mutating:
            self._audit(principal, route, req, "ok")
        result = self._visible(principal, route, req, self._without_own_secrets(result))
        if route.response == "arrow":
            payload = result if isinstance(result, (bytes, bytearray)) else getattr(result, "data", None)
            if isinstance(payload, str):
                payload = payload.encode("latin-1")
            return Response(bytes(payload or b""), status_code=route.status, media_type=R.ARROW_FILE)
        if route.response == "count":
            count = result if isinstance(result, int) else getattr(result, "count", None)
            if count is None and isinstance(result, Mapping):
                count = result.get("count")
            return _JSONBytes(_json_bytes(int(count or 0)), status_code=route.status)
        if route.response == "text":
            return _JSONBytes(_json_bytes(result if isinstance(result, str) else str(result)), status_code=route.status)
        if route.response_field:  # the response body is that field's value (a bare map)
            result = getattr(result, route.response_field, None) or {}
        return _JSONBytes(_json_bytes(result), status_code=route.status)

    @staticmethod
    def _audit(principal: A.Principal, route: R.Route, req: Any, outcome: str) -> None:
        if audit.isEnabledFor(logging.INFO):
            ident = getattr(req, "id", None)
            shown = ".".join(ident) if ident else "-"
            audit.info("principal=%s op=%s id=%s outcome=%s", principal.name, route.op.op_id, shown, outcome)

    def _without_own_secrets(self, result: Any) -> Any:
        """DescribeTable, DeclareTable, CreateTable... answer ``storage_options``: the
        server's own configured credentials are removed (a remote client brings its
        own); non-secret options (endpoint, region, allow_http) and credentials the
        backend vends for the table stay."""
        is_map = isinstance(result, Mapping)
        opts = result.get("storage_options") if is_map else getattr(result, "storage_options", None)
        if not isinstance(opts, Mapping) or not opts or not self._own_secrets:
            return result
        kept = {k: v for k, v in opts.items() if not (is_secret_key(k) and str(v) in self._own_secrets)}
        if len(kept) == len(opts):
            return result
        if is_map:
            return {**result, "storage_options": kept or None}
        return result.model_copy(update={"storage_options": kept or None})

    # -- endpoints -------------------------------------------------------------------
    def _endpoint(self, route: R.Route):
        async def endpoint(request: Request) -> Response:
            request.scope[OPERATION] = route.op.op_id
            return await self._current(request, route)

        endpoint.__name__ = route.op.op_id
        return endpoint

    def _seed_endpoint(self, op: Operation):
        async def endpoint(request: Request) -> Response:
            request.scope[OPERATION] = op.op_id
            return await self._seed(request, op)

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
            StarletteRoute("/metrics", self.metrics_endpoint, methods=["GET"]),
            StarletteRoute("/openapi.json", self.openapi_json, methods=["GET"]),
            StarletteRoute("/openapi.yaml", self.openapi_yaml, methods=["GET"]),
        ]
        if self.ui:
            table.append(ui.mount(self))

        async def on_namespace_error(request: Request, exc: Exception) -> Response:
            return _error_response(exc, request.method, request.url.path)

        async def on_http_error(request: Request, exc: Exception) -> Response:
            assert isinstance(exc, HTTPException)
            err = (UnsupportedOperationError if exc.status_code in (404, 405) else InvalidInputError)(
                f"{request.method} {request.url.path}: {exc.detail}"
            )
            return _json_error(err, request.url.path, status=exc.status_code)

        async def on_unexpected(request: Request, exc: Exception) -> Response:
            return _error_response(exc, request.method, request.url.path)

        app = Starlette(
            routes=table,
            exception_handlers={
                LanceNamespaceError: on_namespace_error,
                HTTPException: on_http_error,
                Exception: on_unexpected,
            },
        )
        app.state.namespace_app = self
        return _Outer(app, self, _FastRoutes(R.ROUTES.values()))

    async def serve_route(self, scope, receive, send, route: R.Route, path_id: str | None) -> None:
        """Serve a request :class:`_FastRoutes` matched, as Starlette would (same
        handler, same error answers) without its routing and middleware layers."""
        scope[OPERATION] = route.op.op_id
        if path_id is not None:
            scope["path_params"] = {"id": path_id}
        try:
            response = await self._current(Request(scope, receive), route)
        except Exception as exc:
            response = _error_response(exc, scope["method"], scope["path"])
        await response(scope, receive, send)


def _error_response(exc: Exception, method: str, path: str) -> Response:
    """The answer to an exception a handler raised: the error body of its code; an
    unexpected one is logged (redacted) and answered 500 code 18."""
    if not isinstance(exc, LanceNamespaceError):
        log.exception("internal error on %s %s", method, path)
    return _json_error(exc, path)


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


class _Outer:
    """Pure ASGI wrapper: authentication, request logging with latency.

    Written as plain ASGI (not BaseHTTPMiddleware) so that it adds no task
    per request; the token itself is never logged.
    """

    def __init__(self, app: Starlette, owner: NamespaceApp, fast: _FastRoutes):
        self.app = app
        self.owner = owner
        self.state = app.state
        self.fast = fast

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        start = time.perf_counter()
        status_box = [0]
        code_box: list = [None]
        logged = [False]
        metrics = self.owner.metrics
        metrics.in_flight.inc()

        def log_request() -> None:
            if logged[0]:
                return
            logged[0] = True
            elapsed = time.perf_counter() - start
            metrics.in_flight.dec()
            metrics.observe(scope.get(OPERATION, "other"), status_box[0], elapsed, code_box[0])
            if self.owner.log_requests and log.isEnabledFor(logging.INFO):
                log.info("%s %s %d %.1fms", scope["method"], scope["path"], status_box[0], elapsed * 1000)

        async def send_wrapper(message):
            if message["type"] == "http.response.start":
                status_box[0] = message["status"]
            elif message["type"] == "http.response.body":
                if status_box[0] >= 400 and code_box[0] is None:
                    code_box[0] = _error_code(message.get("body", b""))
                if not message.get("more_body"):
                    log_request()  # before the client can see the end of the response
            await send(message)

        try:
            if (self.owner.auth_required and scope["path"] not in ("/health", "/openapi.json", "/openapi.yaml")
                    and not self.owner.authenticates_itself(scope["path"])):
                headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
                try:
                    scope[PRINCIPAL] = self.owner._authenticate(headers)
                except UnauthenticatedError as e:
                    resp = _json_error(e, scope["path"])
                    resp.headers["www-authenticate"] = "Bearer"
                    return await resp(scope, receive, send_wrapper)
            route, path_id = (None, None) if scope.get("root_path") else self.fast.match(scope["method"], scope["path"])
            if route is not None:
                await self.owner.serve_route(scope, receive, send_wrapper, route, path_id)
            else:
                await self.app(scope, receive, send_wrapper)
        except Exception:
            # Starlette re-raises an error it has already answered (500 code 18) and
            # logged (redacted): raised further, uvicorn would log it again unredacted
            # and reset the connection
            if not status_box[0]:
                raise
        except BaseException as e:
            # a Rust panic is no Exception: it passes Starlette's handlers; answer it as JSON
            if not tables.is_panic(e) or status_box[0]:
                raise
            log.error("Lance panicked on %s %s: %s", scope["method"], scope["path"], e)
            await _json_error(InternalError("the storage engine failed unexpectedly"), scope["path"])(
                scope, receive, send_wrapper
            )
        finally:
            log_request()


def _error_code(body: bytes) -> int | str:
    """The integer ``code`` of an error body (``"none"`` for a body without one)."""
    try:
        code = json.loads(body).get("code")
    except (ValueError, AttributeError):
        return "none"
    return code if isinstance(code, int) else "none"


def create_app(
    namespace: LanceNamespace,
    *,
    auth_token: str | None = None,
    api_keys: Iterable[str] | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    threads: int | None = None,
    log_requests: bool = True,
    max_decoded_bytes: int | None = None,
    body_timeout: float = DEFAULT_BODY_TIMEOUT,
    limits: Limits | None = None,
    auth_file: str | None = None,
    ui: bool = True,
    queue_timeout: float = DEFAULT_QUEUE_TIMEOUT,
):
    """The ASGI app serving ``namespace`` over the Lance REST protocol (and, unless
    ``ui=False``, the catalog browser at ``/ui/``)."""
    return NamespaceApp(
        namespace,
        auth_token=auth_token,
        api_keys=api_keys,
        max_body_bytes=max_body_bytes,
        threads=threads,
        log_requests=log_requests,
        max_decoded_bytes=max_decoded_bytes,
        body_timeout=body_timeout,
        limits=limits,
        auth_file=auth_file,
        ui=ui,
        queue_timeout=queue_timeout,
    ).build()
