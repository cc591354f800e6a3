"""One namespace operation on behalf of a principal, the one way the server runs it:
authentication -> the request model (its checks) -> authorization (with the read-only
credential cap) -> the backend call (bounded threads, or inline on the event loop) ->
the server's own secrets stripped -> the audit line -> what the principal may see.

The protocol routes (:mod:`.app`) and the catalog browser (:mod:`.ui`) both call
:meth:`Pipeline.call`, so neither can skip a step.  Nothing here knows HTTP beyond
the credential headers.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import hmac
import logging
import time
import weakref
from collections.abc import Mapping
from typing import Any, NamedTuple

from lance_namespace import LanceNamespace

from .. import vending
from ..base import (
    NamespaceBase,
    Operation,
    WouldBlock,
    check_request,
    coerce_request,
    on_event_loop,
)
from ..errors import InvalidInputError, ServiceUnavailableError, UnauthenticatedError, code_of
from ..impls.mounts import MountsNamespace
from ..limits import Limits
from ..modes import CreateMode, DropBehavior, DropMode, RegisterMode, WriteMode
from ..protocol import routes as R
from ..redact import RedactingFilter, is_secret_key
from . import auth as A
from .settings import DEFAULT_THREADS, ServerSettings

log = logging.getLogger("lance_ns.server")
log.addFilter(RedactingFilter())  # messages and tracebacks may quote a backend's secrets
#: one line per mutating call: who (the principal's name, never a token), what, on which id, outcome
audit = logging.getLogger("lance_ns.audit")

#: where a request's backend time is left for the metrics (a request's ASGI scope)
BACKEND_SECONDS = "lance_ns.backend_seconds"
#: the scope key of the mount a request's id names, serving a ``mounts`` namespace (metrics' label)
MOUNT = "lance_ns.mount"
#: set in a request's scope when the backend answered it on the event loop (from memory)
ANSWERED_INLINE = "lance_ns.answered_inline"

#: operations whose answers may carry vended storage credentials (lance_ns.vending)
_VENDING_METHODS = frozenset({"describe_table", "declare_table", "create_table"})

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

#: the request headers that carry credentials (ASGI names them in lower case)
AUTH_HEADERS = frozenset({b"authorization", b"x-api-key"})


def _call_method(namespace: Any, method: str, *args: Any) -> Any:
    """``namespace.method(*args)``, the method looked up at each call (a test may replace it)."""
    return getattr(namespace, method)(*args)


class _Step(NamedTuple):
    """One operation as the pipeline runs it."""

    fn: Any  # the backend's operation (Pipeline._operation)
    mutating: bool  # audited
    vends: bool  # its answer may carry vended credentials (capped for a principal that may only read)
    inline: bool  # tried on the event loop first
    stamp: Any  # stamp(id): the backend's answers_stamp of this read; None: its answers are never kept


def _storage_options(result: Any) -> Any:
    """The ``storage_options`` of an answer (a response model or a map), None without any."""
    return result.get("storage_options") if isinstance(result, Mapping) else getattr(result, "storage_options", None)


def keepable(result: Any) -> bool:
    """Whether a read's result may be kept while its stamp holds: not one carrying vended
    credentials, which expire (a backend vends off the event loop, so this is a second net)."""
    return not vending.is_vended(_storage_options(result))


class Busy(ServiceUnavailableError):
    """Every backend thread stayed busy for the whole queue timeout: code 17 (503) with Retry-After."""


#: _answer_inline's "it would block": run the call on the backend's threads
_WOULD_BLOCK = object()


def _answer_inline(fn, req, turn: object):
    """A read the backend answers from memory, on the event loop; _WOULD_BLOCK when it
    would have to wait (storage, a lock), so that the caller runs it on a thread."""
    try:
        return on_event_loop(fn, req, turn)
    except WouldBlock:
        return _WOULD_BLOCK


class LoopTurns:
    """The turns of the event loop, as :func:`lance_ns.base.loop_turn` tells backends: a turn
    is marked when its first inline read runs, and ends by a callback queued then, behind
    every callback already queued.  A request that arrives later is run by a callback queued
    after that end, so it never shares a turn (and a backend's freshness check) with a read
    that ran before it was sent."""

    __slots__ = ("_current",)

    def __init__(self) -> None:
        self._current: object | None = None

    def current(self) -> object:
        marker = self._current
        if marker is None:
            marker = self._current = object()
            asyncio.get_running_loop().call_soon(self._end)
        return marker

    def _end(self) -> None:
        self._current = None


class Pipeline:
    """The steps every operation the server runs goes through, over one backend."""

    def __init__(self, namespace: LanceNamespace, settings: ServerSettings):
        self.namespace = namespace
        #: whether the backend is one of ours: every request is checked here, once, with its
        #: limits (:meth:`model`), and ours then run it past their own check
        #: (NamespaceBase.call_checked) and take an Arrow body as the table decoded here
        #: (lance_ns.datasets.ipc_to_table takes a table as it is)
        self.ours = isinstance(namespace, NamespaceBase)
        #: a ``mounts`` namespace's mounts (configuration, fixed): metrics and audit lines name the
        #: mount of each request's id
        self._mounts = frozenset(namespace.mounts) if isinstance(namespace, MountsNamespace) else frozenset()
        self._request_limits = (getattr(namespace, "limits", None) if self.ours else None) or Limits()
        self.limits = settings.limits
        self.auth_file = A.AuthFile(settings.auth_file) if settings.auth_file else None
        self._tokens = [settings.auth_token.encode()] if settings.auth_token else []
        self._keys = [k.encode() for k in settings.api_keys]
        #: whether any credentials are configured (then every request but the open ones needs them)
        self.auth_required = bool(self._tokens or self._keys or self.auth_file)
        self._by_creds: dict[tuple, A.Principal] = {}  # see principal_of
        self._creds_generation = -1
        #: backend calls running at once: the setting, else the size the backend asks for
        #: (``server_threads``: many for catalogs that wait on the network)
        self.threads = int(settings.threads or getattr(namespace, "server_threads", None) or DEFAULT_THREADS)
        if self.threads < 1:
            raise InvalidInputError(f"threads must be at least 1, got {self.threads}")
        self.queue_timeout = float(settings.queue_timeout)
        #: whether the backend may vend credentials (one that is not ours may; so may mounts when
        #: any mount does: their ``vends_credentials`` says whether every mount does)
        self._vends = bool(self._mounts) or bool(getattr(namespace, "vends_credentials", True))
        #: reads the backend answers from memory: tried on the event loop first (no thread hand-off)
        self.inline_methods = frozenset(getattr(namespace, "inline_methods", ()) or ())
        #: method -> what call() needs to know of it (_step)
        self._steps: dict[str, _Step] = {}
        #: the event loop's turns: the inline reads of one turn share a backend's freshness check
        self._turns = LoopTurns()
        # the backend's own threads: a blocking call (a slow catalog, object storage) never
        # runs on the event loop, and at most ``threads`` run at once
        self._pool = concurrent.futures.ThreadPoolExecutor(self.threads, thread_name_prefix="lance-ns-backend")
        weakref.finalize(self, self._pool.shutdown, wait=False)
        self._slots: asyncio.Semaphore | None = None  # free threads, on the loop that serves (a test
        self._slots_loop: asyncio.AbstractEventLoop | None = None  # client may start one per request)
        # the server's own credentials: never sent back in a response's storage_options
        own = getattr(namespace, "storage_options", None) or {}
        self._own_secrets = {str(v) for k, v in own.items() if is_secret_key(k) and v}

    # -- who ---------------------------------------------------------------------------
    def authenticate(self, headers: Mapping[str, str]) -> A.Principal:
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

    def principal_of(self, raw_headers: list[tuple[bytes, bytes]]) -> A.Principal:
        """:meth:`authenticate` for a request's raw headers.  The principal found for the
        same credentials is remembered while the auth file stays as it was loaded (a
        client sends the same token with every request); credentials that are refused
        are never remembered, so each refusal is decided afresh."""
        creds = tuple([pair for pair in raw_headers if pair[0] in AUTH_HEADERS])
        generation = 0 if self.auth_file is None else self.auth_file.current_generation()
        if generation != self._creds_generation:
            self._by_creds.clear()
            self._creds_generation = generation
        principal = self._by_creds.get(creds)
        if principal is None:
            principal = self.authenticate({k.decode(): v.decode("latin-1") for k, v in creds})
            if len(self._by_creds) >= 1024:
                self._by_creds.clear()
            self._by_creds[creds] = principal
        return principal

    def authorize(self, principal: A.Principal, route: R.Route, req: Any) -> A.Requirement | None:
        """Raise PermissionDenied (403 code 15) unless ``principal`` may make the request
        (:func:`auth.authorize`); None for the principals that may do everything."""
        if principal is A.ANONYMOUS or principal is A.ALL_POWERFUL:
            return None
        return A.authorize(principal, route, req)

    @staticmethod
    def visible(principal: A.Principal, route: R.Route, req: Any, result: Any) -> Any:
        """A namespace listing shows only the children the principal may see."""
        if route.op.method != "list_namespaces" or principal is A.ANONYMOUS or principal is A.ALL_POWERFUL:
            return result
        parent = tuple(getattr(req, "id", None) or ())
        names = getattr(result, "namespaces", None)
        if names is None:
            return result
        kept = [n for n in names if principal.may_see((*parent, n))]
        return result if len(kept) == len(names) else result.model_copy(update={"namespaces": kept})

    # -- what --------------------------------------------------------------------------
    def model(self, op: Operation, fields: dict) -> Any:
        """The operation's request model of ``fields``, with the server's checks (modes,
        ids, its own limits) whatever the backend."""
        for field, enum in _MODES_BY_OP.get(op.op_id, ()):
            if fields.get(field) not in (None, ""):
                mode = enum.parse(fields[field])
                allowed = MODE_SUBSETS.get((op.op_id, field))
                if allowed and mode not in allowed:
                    names = ", ".join(sorted(m.value for m in allowed))
                    raise InvalidInputError(f"{op.op_id} {field} must be one of {names}, got {fields[field]!r}")
        model = coerce_request(fields, op.request)  # first: an id that is not a list of strings is 13
        self.limits.check_request(model)  # the server's own limits (--max-property-bytes...)
        check_request(model, self._request_limits)  # what our backend's method would check; valid ids for any
        return model

    # -- run -------------------------------------------------------------------------------
    async def run(self, fn, *args):
        """Run a blocking call on the backend's threads.  With every thread busy a request
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
                raise Busy(f"all {self.threads} backend threads stayed busy for {self.queue_timeout:g} s; "
                           f"retry later") from None
        else:
            await slots.acquire()  # free: no waiting
        try:
            # (a Rust panic, a BaseException, goes on to the server's one answer of it: asgi.Outer)
            return await loop.run_in_executor(self._pool, fn, *args)
        finally:
            slots.release()

    async def call(self, principal: A.Principal, route: R.Route, req: Any, data: bytes | None = None,
                   scope: dict | None = None) -> Any:
        """Run the operation of ``route`` for ``principal`` on ``req``, a request :meth:`model`
        built and checked, and return its result as the principal may see it.  The backend's
        time is added up in ``scope`` (a request's, for the metrics)."""
        method = route.op.method
        step = self._steps.get(method) or self._step(method)
        fn = step.fn
        mount = self.label_mount(req, scope)
        try:
            need = self.authorize(principal, route, req)
            if need is not None and step.vends and not all(principal.may(A.WRITE, ns) for ns in need.namespaces):
                # a principal that may only read is vended read-only credentials
                fn = functools.partial(vending.capped, vending.Permission.READ, fn)
            start = time.perf_counter()
            try:
                if not step.inline:
                    result = await (self.run(fn, req, data) if route.op.has_data else self.run(fn, req))
                else:
                    result = _answer_inline(fn, req, self._turns.current())
                    if result is _WOULD_BLOCK:
                        result = await self.run(fn, req)
                    elif scope is not None:
                        scope[ANSWERED_INLINE] = True
            finally:
                if scope is not None:
                    scope[BACKEND_SECONDS] = scope.get(BACKEND_SECONDS, 0.0) + time.perf_counter() - start
        except BaseException as e:
            if step.mutating:
                self._audit(principal, route, req, f"error code {code_of(e)}", mount)
            raise
        if step.mutating:
            self._audit(principal, route, req, "ok", mount)
        if self._own_secrets:
            result = self.without_own_secrets(result)
        return self.visible(principal, route, req, result)

    def _step(self, method: str) -> "_Step":
        """What :meth:`call` needs to know of operation ``method``, worked out on its first call."""
        step = self._steps[method] = _Step(
            fn=self._operation(method),
            mutating=not A.is_read_method(method),
            vends=self._vends and method in _VENDING_METHODS,
            inline=method in self.inline_methods,
            stamp=self._stamp_of(method),
        )
        return step

    def _stamp_of(self, method: str):
        """The backend's ``answers_stamp`` of an inline read ``method``, given the id (None: a
        read not answered from memory, or a backend that keeps no answers)."""
        stamp_of = getattr(self.namespace, "answers_stamp", None)
        if method not in self.inline_methods or not callable(stamp_of):
            return None
        return functools.partial(stamp_of, method)

    def answers_stamp(self, method: str, req: Any) -> Any:
        """The backend's stamp of what an inline read ``method`` of ``req`` answers (its
        ``answers_stamp``), read in this turn of the event loop, as the read itself would
        check freshness; None where nothing may be kept: a read the server never answers
        from memory, a backend that keeps none, or a stamp that would block or fail (the
        read itself then runs, and answers as it does)."""
        step = self._steps.get(method) or self._step(method)
        if step.stamp is None:
            return None
        try:
            return on_event_loop(step.stamp, getattr(req, "id", None), self._turns.current())
        except WouldBlock:
            return None
        except Exception:  # noqa: BLE001 - the read itself reports what failed
            log.debug("no answers stamp for %s", method, exc_info=True)
            return None

    def _operation(self, method: str):
        """The backend's operation ``method`` for a request :meth:`model` checked: ours past
        their own check of it (it was just made here), any other namespace's as it is."""
        if self.ours:
            return functools.partial(self.namespace.call_checked, method)
        return functools.partial(_call_method, self.namespace, method)

    def label_mount(self, req: Any, scope: dict | None) -> str | None:
        """The mount a request's id names (a ``mounts`` namespace served; None otherwise), left
        in its ``scope`` for the metrics (an answer kept by the app is labelled here too)."""
        if not self._mounts:
            return None
        ident = getattr(req, "id", None)
        mount = ident[0] if ident and ident[0] in self._mounts else None
        if mount is not None and scope is not None:
            scope[MOUNT] = mount
        return mount

    @staticmethod
    def _audit(principal: A.Principal, route: R.Route, req: Any, outcome: str, mount: str | None) -> None:
        if audit.isEnabledFor(logging.INFO):
            ident = getattr(req, "id", None)
            shown = ".".join(ident) if ident else "-"
            where = f" mount={mount}" if mount is not None else ""
            audit.info("principal=%s op=%s id=%s%s outcome=%s", principal.name, route.op.op_id, shown, where, outcome)

    def without_own_secrets(self, result: Any) -> Any:
        """DescribeTable, DeclareTable, CreateTable... answer ``storage_options``: the
        server's own configured credentials are removed (a remote client brings its
        own); non-secret options (endpoint, region, allow_http) and credentials the
        backend vends for the table stay."""
        if not self._own_secrets:
            return result
        opts = _storage_options(result)
        if not isinstance(opts, Mapping) or not opts:
            return result
        kept = {k: v for k, v in opts.items() if not (is_secret_key(k) and str(v) in self._own_secrets)}
        if len(kept) == len(opts):
            return result
        if isinstance(result, Mapping):
            return {**result, "storage_options": kept or None}
        return result.model_copy(update={"storage_options": kept or None})
