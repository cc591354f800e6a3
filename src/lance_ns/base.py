"""The shared base of every implementation.

* the operation registry (method name -> request/response models and the
  spec's OperationId), derived from ``lance_namespace.LanceNamespace`` so it
  follows the library pylance uses;
* request normalisation: pylance's Rust core calls back with plain dicts,
  Python callers pass models; every operation a subclass defines receives a
  validated model, with identifier components and limits checked here, once
  per request (the REST server checks its requests itself and calls the
  operation past the check: :meth:`NamespaceBase.call_checked`);
* properties: ``storage.*`` keys become pylance storage options.
"""

from __future__ import annotations

import errno
import concurrent.futures
import functools
import threading
import inspect
from contextvars import ContextVar
from dataclasses import dataclass
from collections.abc import Callable, Hashable, Mapping  # not typing's: its isinstance check is several times slower
from typing import Any

import pydantic
from lance_namespace import LanceNamespace

from .errors import InternalError, InvalidInputError, LanceNamespaceError, UnsupportedOperationError
from .gc_pause import gc_paused
from .identifiers import validate_id
from .limits import Limits
from .modes import parse_bool
from .redact import redact_value
from .storage import is_unreachable, unreachable_error


@dataclass(frozen=True)
class Operation:
    method: str  # snake_case method name
    op_id: str  # the spec's OperationId, e.g. "DescribeTable"
    request: type  # pydantic request model
    response: type | None  # pydantic response model (None for str results)
    has_data: bool  # takes Arrow IPC ``request_data`` bytes
    bulk: bool = False  # one request of many items (BatchCommitTables...): see gc_pause


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def _build_registry() -> dict[str, Operation]:
    ops = {}
    for name, fn in inspect.getmembers(LanceNamespace, inspect.isfunction):
        if name.startswith("_") or name == "namespace_id":
            continue
        sig = inspect.signature(fn)
        params = list(sig.parameters.values())[1:]
        if not params or not isinstance(params[0].annotation, type):
            continue
        ret = sig.return_annotation if isinstance(sig.return_annotation, type) else None
        ops[name] = Operation(
            method=name,
            op_id=_camel(name),
            request=params[0].annotation,
            response=None if ret is str else ret,
            has_data="request_data" in sig.parameters,
            bulk=name.startswith("batch_"),
        )
    return ops


#: method name -> Operation, for every operation of the interface.
OPERATIONS: dict[str, Operation] = _build_registry()
#: OperationId (and the seed spec's old names) -> Operation.
BY_OP_ID: dict[str, Operation] = {op.op_id: op for op in OPERATIONS.values()}
BY_OP_ID["GetNamespace"] = OPERATIONS["describe_namespace"]
BY_OP_ID["GetTable"] = OPERATIONS["describe_table"]


def coerce_request(request: Any, model: type) -> Any:
    """A request given as a model, a dict, a JSON string or None -> ``model``."""
    if isinstance(request, model):
        return request
    try:
        if request is None:
            return model()
        if isinstance(request, (str, bytes)):
            return model.model_validate_json(request)
        if isinstance(request, pydantic.BaseModel):
            return model.model_validate(request.model_dump(exclude_none=True))
        if isinstance(request, Mapping):
            return model.model_validate(dict(request))
    except pydantic.ValidationError as e:
        raise InvalidInputError(f"invalid {model.__name__}: {_short(e)}") from None
    raise InvalidInputError(f"{model.__name__} must be an object, got {type(request).__name__}")


def _short(e: pydantic.ValidationError) -> str:
    parts = []
    for err in e.errors()[:3]:
        loc = ".".join(str(x) for x in err.get("loc", ()))
        parts.append(f"{loc}: {err.get('msg')}" if loc else str(err.get("msg")))
    return "; ".join(parts)


_DEFAULT_LIMITS = Limits()


def is_panic(exc: BaseException) -> bool:
    """A Rust panic inside pylance (``pyo3_runtime.PanicException``): a BaseException,
    so it escapes every ``except Exception``; it is an internal error, never fatal."""
    return not isinstance(exc, Exception) and type(exc).__name__ == "PanicException"


def is_name_too_long(exc: BaseException) -> bool:
    """A name that fits the limits but not the file system (ENAMETOOLONG, also
    as pyarrow's file-system errors carry it)."""
    return isinstance(exc, OSError) and exc.errno == errno.ENAMETOOLONG


#: threads that run operations pylance calls back from its own (Rust) threads; see normalising
_CALLBACK_THREADS = concurrent.futures.ThreadPoolExecutor(max_workers=32, thread_name_prefix="lance-ns-callback")


def check_request(request: Any, limits: Limits = _DEFAULT_LIMITS) -> None:
    """The checks a request gets once, before any backend sees it: every
    identifier component (:func:`validate_id`) and the request limits."""
    if getattr(request, "id", None) is not None:
        validate_id(request.id)
    limits.check_request(request)


#: set while the REST server answers a call on its event loop (see NamespaceBase.inline_methods)
_ON_EVENT_LOOP: ContextVar[bool] = ContextVar("lance_ns_on_event_loop", default=False)
#: the turn of the server's event loop the call runs in (see loop_turn), None off the loop
_LOOP_TURN: ContextVar[object | None] = ContextVar("lance_ns_loop_turn", default=None)


def loop_turn() -> object | None:
    """The turn of the REST server's event loop this read runs in, None elsewhere.

    Every request a turn runs was sent before the turn began (the server's
    LoopTurns marks a turn when its first read runs and ends it by a callback queued
    behind every callback queued so far: a request that arrives later runs after that
    end).  So a backend may check its storage for the latest version once per turn, at
    the turn's first read, and answer every read of the turn with what it found: each
    read still sees every commit that completed before it was sent."""
    return _LOOP_TURN.get()


class WouldBlock(BaseException):
    """Raised instead of blocking the REST server's event loop (a load from storage, a
    lock another thread holds): the server then runs the same call on its backend
    threads.  A BaseException, so no backend's error translation answers it."""


def refuse_blocking(what: str) -> None:
    """Call before work that may block: on the server's event loop it raises WouldBlock."""
    if _ON_EVENT_LOOP.get():
        raise WouldBlock(what)


def on_event_loop(fn: Callable, arg: Any, turn: object | None = None) -> Any:
    """``fn(arg)`` with :func:`refuse_blocking` armed (WouldBlock: call it elsewhere), in the
    event loop's ``turn`` (:func:`loop_turn`)."""
    token, turn_token = _ON_EVENT_LOOP.set(True), _LOOP_TURN.set(turn)
    try:
        return fn(arg)
    finally:
        _LOOP_TURN.reset(turn_token)
        _ON_EVENT_LOOP.reset(token)


def normalising(fn: Callable, op: Operation) -> Callable:
    """The public operation ``op`` of a backend's ``fn``: its request coerced to the model
    and checked (:func:`check_request`), then ``fn`` run at the operation boundary
    (:func:`_at_boundary`).  The REST server checks each request itself, once, and calls
    the boundary alone (:meth:`NamespaceBase.call_checked`)."""
    boundary = _at_boundary(fn, op)
    # thousands of items parsed, planned and committed in one call: the collector paused once,
    # around the parsing too on the public path, around the boundary on the server's
    checked = gc_paused()(boundary) if op.bulk else boundary

    @functools.wraps(fn)
    def wrapper(self, request=None, *args, **kwargs):
        if isinstance(threading.current_thread(), threading._DummyThread):
            # Called back by pylance from one of its Rust threads (a commit of an
            # implementation-managed table): pylance called from such a thread aborts
            # the process ("PyEval_SaveThread ... GIL is released"), so the operation,
            # which may well use pylance, runs on a Python thread of our own.
            return _CALLBACK_THREADS.submit(wrapper, self, request, *args, **kwargs).result()
        req = coerce_request(request, op.request)
        check_request(req, getattr(self, "limits", _DEFAULT_LIMITS))
        return boundary(self, req, *args, **kwargs)

    if op.bulk:
        wrapper = functools.wraps(fn)(gc_paused()(wrapper))
    wrapper.__lance_ns_wrapped__ = True  # type: ignore[attr-defined]
    wrapper.__lance_ns_checked__ = checked  # type: ignore[attr-defined]
    return wrapper


def _at_boundary(fn: Callable, op: Operation) -> Callable:
    """``fn`` with the operation boundary's net: every error leaves it as the spec's.  An
    operation calling another through its public method passes that one's boundary too;
    what leaves it is already the spec's error, which passes this one unchanged."""

    def boundary(self, req, *args, **kwargs):
        try:
            return fn(self, req, *args, **kwargs)
        except pydantic.ValidationError as e:
            # a backend building a response or sub-model from bad input
            raise InvalidInputError(_short(e)) from None
        except OSError as e:
            if is_name_too_long(e):
                raise InvalidInputError(f"{op.op_id}: a name is too long for the storage") from None
            if is_unreachable(e):  # the safety net: whatever path the call took
                raise unreachable_error(e) from e
            raise self._boundary_error(e)
        except LanceNamespaceError:
            raise
        except Exception as e:
            # The operation boundary's safety net: a backend client's error that reached it
            # untranslated (a data operation calling a catalog primitive) answers the
            # backend's own code for it, never 18 for a known condition.
            raise self._boundary_error(e)
        except BaseException as e:
            if is_panic(e):
                raise InternalError(f"{op.op_id}: Lance failed unexpectedly") from e
            raise

    return boundary


def parse_int(raw: str | None, what: str, minimum: int = 0) -> int | None:
    """A whole number given as text (a property, a query parameter); None when absent."""
    if raw in (None, ""):
        return None
    try:
        value = int(raw)
    except ValueError:
        raise InvalidInputError(f"{what} must be an integer, got {raw!r}") from None
    if value < minimum:
        raise InvalidInputError(f"{what} must be >= {minimum}, got {value}")
    return value


def placement_answer(namespace: Any, question: str, *args: Any) -> Any:
    """A placement question (:class:`NamespaceBase`'s ``table_location_for``...) to any
    namespace; None from one that does not answer them (not lance-ns's)."""
    ask = getattr(namespace, question, None)
    return ask(*args) if callable(ask) else None


#: the reads a backend may answer from memory, its catalog held there (``inline_methods``)
MEMORY_READS = frozenset({"describe_table", "table_exists", "list_tables", "list_namespaces",
                          "describe_namespace", "namespace_exists"})


class NamespaceBase(LanceNamespace):
    """Base of every lance-ns implementation.

    Constructed as ``Impl(**properties)`` (string keys and values), which is
    what ``lance_namespace.connect`` and pylance do.
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for name, op in OPERATIONS.items():
            fn = cls.__dict__.get(name)
            if callable(fn) and not getattr(fn, "__lance_ns_wrapped__", False):
                setattr(cls, name, normalising(fn, op))

    #: backend calls the REST server runs at once (its thread pool; ``--threads`` overrides):
    #: catalogs reached over the network spend their calls waiting, so many threads pay
    server_threads = 32
    #: read operations this backend can often answer from memory (some of :data:`MEMORY_READS`):
    #: the REST server tries them on its event loop (no thread hand-off) and, where they would
    #: block (:func:`refuse_blocking`), on its threads.  Only a backend whose every blocking
    #: step on these paths calls refuse_blocking may list any.
    inline_methods: frozenset[str] = frozenset()

    def __init__(self, **properties: str):
        self.properties: dict[str, str] = {str(k): str(v) for k, v in properties.items() if v is not None}
        self.storage_options: dict[str, str] = {
            k[len("storage.") :]: v for k, v in self.properties.items() if k.startswith("storage.")
        }
        #: request limits (``limits.*`` properties; see :mod:`lance_ns.limits`)
        self.limits = Limits.from_properties(self.properties)

    # -- lifetime -------------------------------------------------------------
    def close(self) -> None:
        """Release connections and clients (backends holding any override it)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def answers_stamp(self, method: str, ident: list[str] | None) -> Hashable | None:
        """What the REST server keeps an inline read's answer under: a value equal between
        two calls only if every read ``method`` (one of :attr:`inline_methods`) of the object
        ``ident`` names (a request's ``id``) answers the same at both.  While it stays equal
        the server answers that very request again from the bytes it answered, without
        calling the backend.  Called on the server's event loop, so :func:`refuse_blocking`
        before any work that may block (WouldBlock: the read is run as usual).  None, the
        default: nothing is kept."""
        return None

    def translate_error(self, exc: Exception) -> LanceNamespaceError | None:
        """A backend client's exception -> the spec error (None: not one of the client's)."""
        return None

    def _boundary_error(self, exc: Exception) -> Exception:
        mapped = self.translate_error(exc)
        if mapped is None:
            return exc
        mapped.__cause__ = exc
        return mapped

    # -- properties ---------------------------------------------------------
    def prop(self, key: str, default: str | None = None, required: bool = False) -> str | None:
        value = self.properties.get(key)
        if value in (None, ""):
            if required:
                raise InvalidInputError(f"{type(self).__name__} needs the {key!r} property")
            return default
        return value

    def int_prop(self, key: str, default: int, minimum: int = 0) -> int:
        value = parse_int(self.prop(key), f"property {key!r}", minimum)
        return default if value is None else value

    def bool_prop(self, key: str, default: bool) -> bool:
        raw = self.prop(key)
        return default if raw is None else parse_bool(raw, f"property {key!r}")

    # -- identity -----------------------------------------------------------
    def namespace_id(self) -> str:
        """The impl and its properties, secrets masked (:mod:`lance_ns.redact`)."""
        inner = ", ".join(f"{k}: {redact_value(k, v)!r}" for k, v in sorted(self.properties.items()))
        return f"{type(self).__name__} {{ {inner} }}"

    def __repr__(self) -> str:
        return self.namespace_id()

    # -- spec extras ----------------------------------------------------------
    @classmethod
    def supported_operations(cls) -> list[str]:
        """The spec's ListOperations: OperationIds this class implements."""
        return sorted(
            op.op_id
            for name, op in OPERATIONS.items()
            if getattr(cls, name, None) is not getattr(LanceNamespace, name, None)
            and not getattr(getattr(cls, name, None), "__lance_ns_refused__", False)
        )

    def list_operations(self) -> list[str]:
        return self.supported_operations()

    # -- placement: what a planner (lance_ns.sync) asks before it writes ----------
    def namespace_refusal(self, ns: list[str], planned: bool = False) -> LanceNamespaceError | None:
        """The error CreateNamespace of ``ns`` would answer by this namespace's rules
        (its depth, the levels it creates), told without writing; None where it would
        create it, or cannot tell before it tries (a remote server).  ``planned``: asked
        by a planner that first makes the missing parents itself, with plain
        CreateNamespace calls, so what those parents would refuse counts too."""
        return None

    def table_refusal(self, table_id: list[str], location: str | None = None) -> LanceNamespaceError | None:
        """The error RegisterTable of ``table_id`` at ``location`` (DeclareTable at the
        default location when None) would answer by this namespace's rules, told without
        writing; None where it would accept it, or cannot tell before it tries."""
        return None

    def table_location_for(self, table_id: list[str], seed: str | None = None) -> str | None:
        """Where this namespace places the data of a table it makes at ``table_id`` (its
        default location), told before any entry exists; None where it cannot tell (a
        remote server decides when the table is declared).  Where a layout draws names
        at random, the same ``seed`` gives the same place (a copy resumed finds its files)."""
        return None

    def storage_options_for(self, table_id: list[str]) -> dict[str, str]:
        """The storage options this namespace reads and writes ``table_id``'s data with
        (its ``storage.*`` properties)."""
        return dict(self.storage_options)

    def managed_versioning_for(self, table_id: list[str], properties: dict[str, str] | None = None) -> bool | None:
        """Whether a table this namespace makes at ``table_id`` with ``properties`` would be
        implementation-managed (its versions committed through the namespace), told before
        any entry exists; None where it cannot tell (a remote server decides at declaration)."""
        return None

    # the seed spec's names
    def get_namespace(self, request=None):
        return self.describe_namespace(request)

    def get_table(self, request=None):
        return self.describe_table(request)

    def call_checked(self, method: str, request: Any, *args: Any) -> Any:
        """Operation ``method`` on a request model already checked as its public method
        would (:func:`check_request` with this namespace's ``limits``): the REST server's
        one path, which builds and checks every request itself, once."""
        own = self.__dict__.get(method)  # set on the object itself (a test's stand-in): as it is
        if own is not None:
            return own(request, *args)
        operation = getattr(type(self), method)
        boundary = getattr(operation, "__lance_ns_checked__", None)
        return boundary(self, request, *args) if boundary is not None else operation(self, request, *args)

    def call(self, op_id_or_method: str, request: Any = None, request_data: bytes | None = None):
        """Invoke an operation by OperationId or method name (used by the server and CLI)."""
        op = BY_OP_ID.get(op_id_or_method) or OPERATIONS.get(op_id_or_method)
        if op is None:
            raise UnsupportedOperationError(f"unknown operation {op_id_or_method!r}")
        fn = getattr(self, op.method)
        if op.has_data:
            return fn(request, request_data if request_data is not None else b"")
        return fn(request)


class delegate:
    """``op = delegate("data_ops")`` in a namespace class: the operation ``op`` is
    answered by the collaborator the namespace holds under that attribute.  The
    namespace's method stays the one entry point, wrapped like any operation
    (request normalisation, limits, the error boundary); the collaborator gets the
    checked request."""

    def __init__(self, collaborator: str):
        self.collaborator = collaborator

    def __set_name__(self, owner: type, name: str) -> None:
        # runs before __init_subclass__, which then wraps the plain function set here
        collaborator = self.collaborator

        def operation(ns, request=None, *args):
            return getattr(getattr(ns, collaborator), name)(request, *args)

        operation.__name__, operation.__qualname__ = name, f"{owner.__qualname__}.{name}"
        operation.__doc__ = f"Answered by ``self.{collaborator}.{name}``."
        setattr(owner, name, operation)


def refused(reason: str) -> Callable:
    """An operation answered Unsupported (code 0) with ``reason`` (why Lance or
    the catalog has no way to do it); ListOperations does not list it."""

    def operation(self, request=None, *args):
        raise UnsupportedOperationError(reason)

    operation.__lance_ns_refused__ = True  # type: ignore[attr-defined]
    return operation


def unsupported(what: str) -> LanceNamespaceError:
    return UnsupportedOperationError(f"{what} is not supported by this namespace")
