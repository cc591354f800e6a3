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
import urllib.parse
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
from ..base import (
    BY_OP_ID,
    NamespaceBase,
    Operation,
    WouldBlock,
    call_checked,
    check_request,
    coerce_request,
    is_panic,
    on_event_loop,
)
from ..errors import (
    InternalError,
    InvalidInputError,
    LanceNamespaceError,
    ServiceUnavailableError,
    UnauthenticatedError,
    UnsupportedOperationError,
    code_of,
    error_body,
    http_status,
)
from ..identifiers import REST_DELIMITER, names_same_object, split_id
from ..limits import Limits
from ..modes import CreateMode, DropBehavior, DropMode, RegisterMode, WriteMode
from ..redact import RedactingFilter, is_secret_key, redact_text
from . import auth as A
from ..protocol import routes as R
from . import ui
from .metrics import Metrics
from .settings import DEFAULT_BODY_TIMEOUT, DEFAULT_MAX_BODY_BYTES, DEFAULT_QUEUE_TIMEOUT, DEFAULT_THREADS

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
#: the seconds the backend call of a request took (metrics: one record per request)
BACKEND_SECONDS = "lance_ns.backend_seconds"

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

#: (context key, lower-case header name as bytes) for lance-ns context entries sent as headers
_CONTEXT_HEADERS = tuple((key, header.lower().encode()) for key, header in R.CONTEXT_HEADERS.items())
_ARROW_FILE_TYPE = R.ARROW_FILE.encode()

#: whether a task can take back a cancellation (Python 3.11+), as _Deadlines needs
_UNCANCEL = hasattr(asyncio.Task, "uncancel")

#: seconds a client answered 503 (every backend thread busy) is told to wait before retrying
RETRY_AFTER_SECONDS = 1


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


class _Busy(ServiceUnavailableError):
    """Every backend thread stayed busy for the whole queue timeout: code 17 (503) with Retry-After."""


class _BodyTimeout(InvalidInputError):
    """A body not received in time: code 13 (InvalidInput) with HTTP 408."""


def _json_error(exc: BaseException, path: str = "", status: int | None = None) -> "_Answer":
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
    headers = ((b"connection", b"close"),) if status in (408, 413) else ()  # the rest of the body is not read
    if isinstance(exc, _Busy):
        headers = ((b"retry-after", str(RETRY_AFTER_SECONDS).encode()),)
    return _Answer(_json_bytes(body), status, _JSON_TYPE, headers, code=body.get("code"))


def _json_bytes(result: Any) -> bytes:
    """A response model (or map, count, string) as the JSON body, serialised straight to
    bytes by pydantic-core (aliases, no nulls) without an intermediate dict."""
    return pydantic_core.to_json({} if result is None else result, by_alias=True, exclude_none=True)


_JSON_TYPE = R.JSON.encode()


class _Answer:
    """A whole response as raw ASGI messages: the body is bytes already, so it needs no
    Starlette Response (header objects, a render step).  Any Starlette endpoint may
    return it too (it is an ASGI callable)."""

    __slots__ = ("body", "status", "media_type", "headers", "code")

    def __init__(self, body: bytes, status: int = 200, media_type: bytes = _JSON_TYPE,
                 headers: tuple = (), code: int | None = None):
        self.body, self.status, self.media_type, self.headers = body, status, media_type, headers
        #: the protocol's error code of an error answer (metrics), None otherwise
        self.code = code

    async def __call__(self, scope, receive, send) -> None:
        headers = [(b"content-type", self.media_type), (b"content-length", str(len(self.body)).encode()),
                   *self.headers]
        await send({"type": "http.response.start", "status": self.status, "headers": headers})
        await send({"type": "http.response.body", "body": self.body})


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
        if is_panic(e):
            log.error("Lance panicked in %s: %s", getattr(fn, "__name__", fn), e)
            raise InternalError("the storage engine failed unexpectedly") from None
        raise


#: bodies up to this size, and this many requests, are remembered as built (NamespaceApp._known)
_KNOWN_BODY_BYTES = 1024
_KNOWN_REQUESTS = 4096

#: _answer_inline's "it would block": run the call on the backend's threads
_WOULD_BLOCK = object()


def _answer_inline(fn, req, checked: bool):
    """A read the backend answers from memory, on the event loop; _WOULD_BLOCK when it
    would have to wait (storage, a lock), so that the caller runs it on a thread."""
    try:
        if checked:
            return on_event_loop(_call_shielded, call_checked, fn, req)
        return on_event_loop(_call_shielded, fn, req)
    except WouldBlock:
        return _WOULD_BLOCK


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
        metrics: bool = True,
    ):
        self.namespace = namespace
        #: our namespaces check every request once themselves (lance_ns.base.normalising)
        self._checks_requests = isinstance(namespace, NamespaceBase)
        self.ui = ui  # the catalog browser at /ui/ (server.ui)
        self.auth_file = A.AuthFile(auth_file) if auth_file else None
        #: Prometheus metrics (/metrics), None when turned off (``--no-metrics``)
        self.metrics = Metrics() if metrics else None
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
        #: whether the backend may vend credentials (one that is not ours may)
        self._vends = bool(getattr(namespace, "vends_credentials", True))
        #: reads the backend answers from memory: tried on the event loop first (no thread hand-off)
        self._inline_methods = frozenset(getattr(namespace, "inline_methods", ()) or ())
        #: the requests of those reads as built and checked, by their bytes: a client asks
        #: the same describe again and again (bounded: cleared when full)
        self._known: dict[tuple, Any] = {}
        self._by_creds: dict[tuple, A.Principal] = {}  # see _principal_of
        self._creds_generation = -1
        self.log_requests = log_requests
        # the backend's own threads: a blocking call (a slow catalog, object storage) never
        # runs on the event loop, and at most ``threads`` run at once
        self._pool = concurrent.futures.ThreadPoolExecutor(self.threads, thread_name_prefix="lance-ns-backend")
        weakref.finalize(self, self._pool.shutdown, wait=False)
        self._deadlines: _Deadlines | None = None  # body reads under way (their timeout)
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

    async def _body(self, request: _Incoming) -> bytes:
        declared = request.header(b"content-length")
        if declared and declared.isdigit() and int(declared) > self.max_body_bytes:
            raise tables.DataTooLarge(f"request body exceeds the limit of {self.max_body_bytes} bytes")
        # uvicorn has no body timeout: a client trickling bytes would hold a connection forever
        if not _UNCANCEL:  # Python 3.10: anyio's cancel scope
            try:
                with anyio.fail_after(self.body_timeout):
                    return await self._read_body(request)
            except TimeoutError:
                raise _BodyTimeout(f"request body not received within {self.body_timeout:g} s") from None
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
            raise _BodyTimeout(f"request body not received within {self.body_timeout:g} s") from None
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
                raise tables.DataTooLarge(f"request body exceeds the limit of {self.max_body_bytes} bytes")
            chunks.append(chunk)
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)

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

    def _principal_of(self, raw_headers: list[tuple[bytes, bytes]]) -> A.Principal:
        """:meth:`_authenticate` for a request's raw headers.  The principal found for the
        same credentials is remembered while the auth file stays as it was loaded (a
        client sends the same token with every request); credentials that are refused
        are never remembered, so each refusal is decided afresh."""
        creds = tuple([pair for pair in raw_headers if pair[0] in _AUTH_HEADERS])
        generation = 0 if self.auth_file is None else self.auth_file.current_generation()
        if generation != self._creds_generation:
            self._by_creds.clear()
            self._creds_generation = generation
        principal = self._by_creds.get(creds)
        if principal is None:
            principal = self._authenticate({k.decode(): v.decode("latin-1") for k, v in creds})
            if len(self._by_creds) >= 1024:
                self._by_creds.clear()
            self._by_creds[creds] = principal
        return principal

    def _authorize(self, principal: A.Principal, route: R.Route, req: Any) -> A.Requirement | None:
        """Raise PermissionDenied (403 code 15) unless ``principal`` may make the request
        (:func:`auth.authorize`); None for the principals that may do everything."""
        if principal is A.ANONYMOUS or principal is A.ALL_POWERFUL:
            return None
        return A.authorize(principal, route, req)

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
        await self._run(_check_arrow_stream, data, op.op_id == "CreateTable", self.max_decoded_bytes)
        return data

    @staticmethod
    def _context_from_headers(request: _Incoming, fields: dict) -> None:
        """lance-ns context entries sent as headers (``x-lance-ns-purge``) back into the context."""
        for key, header in _CONTEXT_HEADERS:
            value = request.header(header)
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

    async def _current(self, request: _Incoming, route: R.Route) -> _Answer:
        op = route.op
        query = request.query
        delimiter = request.query_value("delimiter") or REST_DELIMITER
        fields: dict[str, Any] = {}
        data = known = None
        if route.body == "json":
            raw = await self._body(request)
            if op.method in self._inline_methods and len(raw) <= _KNOWN_BODY_BYTES:
                known = (op.method, request.scope["path"], request.scope.get("query_string"), raw,
                         *(request.header(h) for _, h in _CONTEXT_HEADERS))
                req = self._known.get(known)
                if req is not None:  # this very request was built and checked before
                    return await self._call(route, req, None, request.scope, True)
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
        req = self._model(op, fields)
        answer = await self._call(route, req, data, request.scope)
        if known is not None and answer.status < 400:  # answered: its checks passed
            if len(self._known) >= _KNOWN_REQUESTS:
                self._known.clear()
            self._known[known] = req
        return answer

    async def _seed(self, request: _Incoming, op: Operation) -> _Answer:
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
        return await self._call(route, self._model(op, fields), data, request.scope)

    # -- model -> backend -> response -------------------------------------------------
    async def _call(self, route: R.Route, req: Any, data: bytes | None, scope: dict,
                    checked: bool = False) -> _Answer:
        """Run the operation (``checked``: ``req`` was checked before) for the request of
        ``scope`` (its principal; the backend call's duration is left there for the metrics)
        and render its answer."""
        principal = scope.get(PRINCIPAL, A.ANONYMOUS)
        fn = getattr(self.namespace, route.op.method)
        mutating = not A.is_read_method(route.op.method)
        try:
            need = self._authorize(principal, route, req)
            if need is not None and self._vends and route.op.method in _VENDING_METHODS and not all(
                principal.may(A.WRITE, ns) for ns in need.namespaces
            ):  # a principal that may only read is vended read-only credentials
                fn = functools.partial(vending.capped, vending.Permission.READ, fn)
            start = time.perf_counter()
            try:
                if route.op.method not in self._inline_methods:
                    result = await (self._run(fn, req, data) if route.op.has_data else self._run(fn, req))
                else:
                    result = _answer_inline(fn, req, checked)
                    if result is _WOULD_BLOCK:  # checked already: not again on the thread
                        result = await self._run(call_checked, fn, req)
            finally:
                scope[BACKEND_SECONDS] = time.perf_counter() - start
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
            return _Answer(bytes(payload or b""), route.status, _ARROW_FILE_TYPE)
        if route.response == "count":
            count = result if isinstance(result, int) else getattr(result, "count", None)
            if count is None and isinstance(result, Mapping):
                count = result.get("count")
            return _Answer(_json_bytes(int(count or 0)), route.status)
        if route.response == "text":
            return _Answer(_json_bytes(result if isinstance(result, str) else str(result)), route.status)
        if route.response_field:  # the response body is that field's value (a bare map)
            result = getattr(result, route.response_field, None) or {}
        return _Answer(_json_bytes(result), route.status)

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
        if not self._own_secrets:
            return result
        is_map = isinstance(result, Mapping)
        opts = result.get("storage_options") if is_map else getattr(result, "storage_options", None)
        if not isinstance(opts, Mapping) or not opts:
            return result
        kept = {k: v for k, v in opts.items() if not (is_secret_key(k) and str(v) in self._own_secrets)}
        if len(kept) == len(opts):
            return result
        if is_map:
            return {**result, "storage_options": kept or None}
        return result.model_copy(update={"storage_options": kept or None})

    # -- endpoints -------------------------------------------------------------------
    def _endpoint(self, route: R.Route):
        async def endpoint(request: Request) -> _Answer:
            request.scope[OPERATION] = route.op.op_id
            return await self._current(_Incoming(request.scope, request.receive), route)

        endpoint.__name__ = route.op.op_id
        return endpoint

    def _seed_endpoint(self, op: Operation):
        async def endpoint(request: Request) -> _Answer:
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
        handler, same error answers) without its routing and middleware layers; the
        answer is in hand before it is sent, so metrics and the log line need no
        wrapper around ``send``."""
        start = time.perf_counter()
        metrics = self.metrics
        if metrics is not None:
            metrics.started()
        answer = None
        if path_id is not None:
            scope["path_params"] = {"id": path_id}
        try:
            try:
                answer = await self._current(_Incoming(scope, receive), route)
            except Exception as exc:
                answer = _error_response(exc, scope["method"], scope["path"])
            except BaseException as exc:  # a Rust panic is no Exception
                if not is_panic(exc):
                    raise
                log.error("Lance panicked on %s %s: %s", scope["method"], scope["path"], exc)
                answer = _json_error(InternalError("the storage engine failed unexpectedly"), scope["path"])
            await answer(scope, receive, send)
        finally:
            elapsed = time.perf_counter() - start
            status = answer.status if answer is not None else 500
            if metrics is not None:
                metrics.finished(route.op.op_id, status, elapsed, answer.code if answer is not None else "none",
                                 scope.get(BACKEND_SECONDS))
            if self.log_requests and log.isEnabledFor(logging.INFO):
                log.info("%s %s %d %.1fms", scope["method"], scope["path"], status, elapsed * 1000)


def _error_response(exc: Exception, method: str, path: str) -> _Answer:
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


#: the request headers that carry credentials (ASGI names them in lower case)
_AUTH_HEADERS = frozenset({b"authorization", b"x-api-key"})
#: paths answered without credentials
_OPEN_PATHS = frozenset({"/health", "/openapi.json", "/openapi.yaml"})


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
        owner = self.owner
        route, path_id = (None, None) if scope.get("root_path") else self.fast.match(scope["method"], scope["path"])
        # a protocol route always needs credentials; other paths unless open or the UI's own
        if owner.auth_required and (route is not None or (
                scope["path"] not in _OPEN_PATHS and not owner.authenticates_itself(scope["path"]))):
            try:
                scope[PRINCIPAL] = owner._principal_of(scope["headers"])
            except UnauthenticatedError as e:
                answer = _json_error(e, scope["path"])
                answer.headers += ((b"www-authenticate", b"Bearer"),)
                return await self._logged(answer, scope, receive, send)
        if route is not None:  # the protocol's routes: metrics and log line in serve_route
            scope[OPERATION] = route.op.op_id
            return await owner.serve_route(scope, receive, send, route, path_id)
        return await self._logged(self.app, scope, receive, send)

    async def _logged(self, app, scope, receive, send):
        """``app`` (Starlette's routes, or an answer) with metrics and the log line taken
        from the messages it sends."""
        start = time.perf_counter()
        status_box = [0]
        code_box: list = [None]
        logged = [False]
        metrics = self.owner.metrics
        if metrics is not None:
            metrics.started()

        def log_request() -> None:
            if logged[0]:
                return
            logged[0] = True
            elapsed = time.perf_counter() - start
            if metrics is not None:
                metrics.finished(scope.get(OPERATION, "other"), status_box[0], elapsed, code_box[0],
                                 scope.get(BACKEND_SECONDS))
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
            await app(scope, receive, send_wrapper)
        except Exception:
            # Starlette re-raises an error it has already answered (500 code 18) and
            # logged (redacted): raised further, uvicorn would log it again unredacted
            # and reset the connection
            if not status_box[0]:
                raise
        except BaseException as e:
            # a Rust panic is no Exception: it passes Starlette's handlers; answer it as JSON
            if not is_panic(e) or status_box[0]:
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
    metrics: bool = True,
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
        metrics=metrics,
    ).build()
