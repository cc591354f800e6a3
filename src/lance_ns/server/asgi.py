"""The outside of the server: the one ASGI wrapper every HTTP request passes
(:class:`Outer`), and answers as raw ASGI messages (:class:`Answer`).

:class:`Outer` authenticates, then answers a protocol request itself (the app's one
router, then its handler: the answer comes back whole, no Starlette routing or
middleware) and hands anything else (``/health``, ``/metrics``, the OpenAPI documents,
the UI) to Starlette.  Either way it does, once for every path: the metrics, the access
log line, the error answer (:func:`error_response`; Starlette's handler calls the same)
and the answer to a Rust panic (a BaseException that passes every ``except
Exception``), so no path can count, log or fail differently.
"""

from __future__ import annotations

import json
import logging
import time
from typing import TYPE_CHECKING, Any

import pydantic_core

from ..base import is_panic
from ..errors import (
    InternalError,
    LanceNamespaceError,
    UnauthenticatedError,
    error_body,
    http_status,
)
from ..protocol import routes as R
from ..redact import redact_text
from .pipeline import BACKEND_SECONDS, MOUNT, Busy, log

if TYPE_CHECKING:  # pragma: no cover
    from starlette.applications import Starlette

    from .app import NamespaceApp

#: where the authenticated principal travels from the wrapper to the handler
PRINCIPAL = "lance_ns.principal"
#: the OperationId an endpoint serves, for the metrics' ``operation`` label
OPERATION = "lance_ns.operation"
#: paths answered without credentials
OPEN_PATHS = frozenset({"/health", "/openapi.json", "/openapi.yaml"})
#: seconds a client answered 503 (every backend thread busy) is told to wait before retrying
RETRY_AFTER_SECONDS = 1
JSON_TYPE = R.JSON.encode()


class Answer:
    """A whole response as raw ASGI messages: the body is bytes already, so it needs no
    Starlette Response (header objects, a render step).  Any Starlette endpoint may
    return it too (it is an ASGI callable)."""

    __slots__ = ("body", "status", "media_type", "headers", "code")

    def __init__(self, body: bytes, status: int = 200, media_type: bytes = JSON_TYPE,
                 headers: tuple = (), code: int | None = None):
        self.body, self.status, self.media_type, self.headers = body, status, media_type, headers
        #: the protocol's error code of an error answer (metrics), None otherwise
        self.code = code

    async def __call__(self, scope, receive, send) -> None:
        headers = [(b"content-type", self.media_type), (b"content-length", str(len(self.body)).encode()),
                   *self.headers]
        await send({"type": "http.response.start", "status": self.status, "headers": headers})
        await send({"type": "http.response.body", "body": self.body})


def json_bytes(result: Any) -> bytes:
    """A response model (or map, count, string) as the JSON body, serialised straight to
    bytes by pydantic-core (aliases, no nulls) without an intermediate dict."""
    return pydantic_core.to_json({} if result is None else result, by_alias=True, exclude_none=True)


def json_error(exc: BaseException, path: str = "") -> Answer:
    """The JSON error answer of ``exc``: its status (lance_ns.errors.http_status, the one place
    statuses are decided) and body, secrets redacted."""
    status = http_status(exc)
    body = error_body(exc, instance=path or None)
    for field in ("error", "detail"):  # a backend's message may quote a secret
        body[field] = redact_text(body[field])
    headers = ((b"connection", b"close"),) if status in (408, 413) else ()  # the rest of the body is not read
    if isinstance(exc, Busy):
        headers = ((b"retry-after", str(RETRY_AFTER_SECONDS).encode()),)
    return Answer(json_bytes(body), status, JSON_TYPE, headers, code=body.get("code"))


def error_response(exc: Exception, method: str, path: str) -> Answer:
    """The answer to an exception a handler raised: the error body of its code; an
    unexpected one is logged (redacted) and answered 500 code 18."""
    if not isinstance(exc, LanceNamespaceError):
        log.exception("internal error on %s %s", method, path)
    return json_error(exc, path)


class _Seen:
    """What the wrapper saw of one request's answer, and its one metrics record and log line."""

    __slots__ = ("owner", "scope", "downstream", "start", "status", "code", "done")

    def __init__(self, owner: "NamespaceApp", scope: dict, send):
        self.owner, self.scope, self.downstream = owner, scope, send
        self.start = time.perf_counter()
        self.status, self.code, self.done = 0, None, False
        if owner.metrics is not None:
            owner.metrics.started()

    def answered(self, answer: Answer) -> None:
        """An answer in hand: recorded before it is sent (the client may read the log next)."""
        self.status, self.code = answer.status, answer.code
        self.finish()

    async def send(self, message) -> None:
        """Starlette's messages, watched on their way out."""
        if message["type"] == "http.response.start":
            self.status = message["status"]
        elif message["type"] == "http.response.body":
            if self.status >= 400 and self.code is None:
                self.code = _error_code(message.get("body", b""))
            if not message.get("more_body"):
                self.finish()  # before the client can see the end of the response
        await self.downstream(message)

    def finish(self) -> None:
        if self.done:
            return
        self.done = True
        owner, scope = self.owner, self.scope
        elapsed = time.perf_counter() - self.start
        status = self.status or 500  # nothing answered: the client sees the connection fail
        if owner.metrics is not None:
            owner.metrics.finished(scope.get(OPERATION, "other"), status, elapsed, self.code,
                                   scope.get(BACKEND_SECONDS), scope.get(MOUNT))
        if owner.log_requests and log.isEnabledFor(logging.INFO):
            log.info("%s %s %d %.1fms", scope["method"], scope["path"], status, elapsed * 1000)


class Outer:
    """Pure ASGI wrapper of every request, and the one error boundary: authentication, the
    protocol's routes (the app's router, answered whole, without Starlette's routing or
    middleware), metrics, the access log line, and the one answer of what any handler
    raised (:func:`error_response`, its status from the error table) or a panic.

    Written as plain ASGI (not BaseHTTPMiddleware) so that it adds no task
    per request; the token itself is never logged.
    """

    def __init__(self, app: "Starlette", owner: "NamespaceApp"):
        self.app = app
        self.owner = owner
        self.state = app.state

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        owner = self.owner
        seen = _Seen(owner, scope, send)
        try:
            answer = await self._protocol(scope, receive)
            if answer is None:  # not the protocol's: Starlette's paths (it answers errors as error_response does)
                await self.app(scope, receive, seen.send)
            else:
                seen.answered(answer)
                await answer(scope, receive, send)
        except Exception:
            # Starlette re-raises an error it has already answered (500 code 18) and
            # logged (redacted): raised further, uvicorn would log it again unredacted
            # and reset the connection
            if not seen.status:
                raise
        except BaseException as e:
            # a Rust panic is no Exception: it passes every handler; answer it as JSON
            if not is_panic(e) or seen.status:
                raise
            log.error("Lance panicked on %s %s: %s", scope["method"], scope["path"], e)
            answer = json_error(InternalError("the storage engine failed unexpectedly"), scope["path"])
            seen.answered(answer)
            await answer(scope, receive, send)
        finally:
            if not seen.done:
                seen.finish()

    async def _protocol(self, scope, receive) -> Answer | None:
        """The answer to a protocol request (or a 401 where credentials are needed), None
        for a path that is not the protocol's."""
        owner = self.owner
        try:
            match, refused = owner.router.match(scope["method"], _route_path(scope)), None
        except LanceNamespaceError as e:  # the protocol's path, but no route of it answers
            match, refused = None, e
        answer = self._refusal(scope, match) if owner.pipeline.auth_required else None
        if answer is not None:
            return answer
        if refused is not None:
            return error_response(refused, scope["method"], scope["path"])
        if match is None:
            return None
        scope[OPERATION] = match.route.op.op_id
        try:
            return await owner.serve_route(scope, receive, match)
        except Exception as exc:
            return error_response(exc, scope["method"], scope["path"])

    def _refusal(self, scope: dict, match) -> Answer | None:
        """On a server with credentials: 401 for a request without valid ones where they
        are needed; else None, the principal left in the scope.  A protocol route always
        needs them; other paths unless open or the UI's own (it takes its sign-in cookie too)."""
        owner = self.owner
        if match is not None or (scope["path"] not in OPEN_PATHS and not owner.authenticates_itself(scope["path"])):
            try:
                scope[PRINCIPAL] = owner.pipeline.principal_of(scope["headers"])
            except UnauthenticatedError as e:
                answer = json_error(e, scope["path"])
                answer.headers += ((b"www-authenticate", b"Bearer"),)
                return answer
        return None


def _route_path(scope: dict) -> str:
    """The path the routes see: without the app's ``root_path`` (a server mounted below one)."""
    path, root = scope["path"], scope.get("root_path") or ""
    return path[len(root):] if root and path.startswith(root) else path


def _error_code(body: bytes) -> int | str:
    """The integer ``code`` of an error body (``"none"`` for a body without one)."""
    try:
        code = json.loads(body).get("code")
    except (ValueError, AttributeError):
        return "none"
    return code if isinstance(code, int) else "none"
