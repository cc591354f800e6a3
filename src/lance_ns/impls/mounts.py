"""Mounts (impl ``mounts``): one namespace over several configured namespaces.

The first level of every id names a mount; the rest of the id is the mounted
namespace's own.  ``[onprem, sales, orders]`` is table ``[sales, orders]`` of the
mount ``onprem``.  Properties (strings, like every impl):

* ``NAME = CONFIG``: the mount ``NAME`` is the named configuration ``CONFIG`` (the
  ``lance-ns`` config file or ``LANCE_NS__...`` variables, :func:`lance_ns.config.named_config`);
* ``NAME.impl`` and ``NAME.KEY``: a mount configured in place, as a TOML table
  flattens (``mounts.scratch = { impl = "dir", root = "/data" }`` in a named
  configuration of impl ``mounts``: ``mounts.`` is the impl prefix every tool config has).

Every key may carry that ``mounts.`` prefix; ``limits.*`` and ``storage.*`` are this
namespace's own (so ``limits``, ``storage`` and ``mounts`` cannot name a mount).

In Python, :meth:`MountsNamespace.of` mounts namespace objects already connected.

Rules, all decided here before a mount is called:

* the root lists the mounts (ListNamespaces), exists and describes with no
  properties, holds no tables; a mount's own namespace (``[NAME]``) is that mount's root;
* creating or dropping a mount is configuration: CreateNamespace/DropNamespace of
  ``[NAME]`` (or of the root) answer 13;
* an unknown mount answers as the id's kind would (namespace 1; table or transaction 4);
* an operation addressing two mounts (RenameTable into another mount, a batch over
  tables of two mounts) answers 13 naming both: no catalog can make that atomic;
* a mount that cannot be reached answers 17 for its ids only; one that failed to
  connect is tried again on its next call (a server starts with a mount down);
* an operation the mount lacks answers 0 naming the mount; errors of the mount pass
  through with their codes, and answers carry full ids (DescribeTable's ``namespace``,
  ListAllTables' ids).

Served, a read is answered on the server's event loop where the mount it reaches answers
that read from memory itself (its ``inline_methods``: a local ``dir``), so a mount costs
the server no thread hand-off; any other call, the root's ListAllTables and a mount's first
connection run on the server's threads.
"""

from __future__ import annotations

import functools
import threading
import typing
from typing import Any, Callable, Mapping

from lance_namespace import LanceNamespace
from lance_namespace.errors import LanceNamespaceError
from pydantic import BaseModel

from ..base import MEMORY_READS, OPERATIONS, NamespaceBase, Operation, normalising, placement_answer, refuse_blocking
from ..errors import (
    InvalidInputError,
    NamespaceNotFoundError,
    ServiceUnavailableError,
    TableNotFoundError,
    UnsupportedOperationError,
)
from ..catalog.entry import ALL_TABLES_DELIMITER
from ..identifiers import validate_id
from ..paging import page_across, paginate
from ..redact import redact_text
from ..storage import is_unreachable

#: request fields that hold an id (first level: the mount) wherever they appear in a request
_ID_FIELDS = ("id", "new_namespace_id")
#: operations whose ``id`` names a namespace (every other one addresses a table, a
#: transaction's id being its table's id and then the transaction)
_NAMESPACE_OPS = frozenset(
    {"create_namespace", "drop_namespace", "describe_namespace", "namespace_exists",
     "list_namespaces", "list_tables", "list_all_tables"}
)
#: what the root answers itself (creating or dropping a mount is refused there)
_LOCAL_ANSWERS = _NAMESPACE_OPS - {"create_namespace", "drop_namespace"}


class Mount:
    """One mount: its name, how to connect it, and the namespace once connected."""

    def __init__(self, name: str, connect: Callable[[], LanceNamespace], namespace: LanceNamespace | None = None):
        self.name = name
        self._connect = connect
        self.owned = namespace is None  # opened here, so closed here
        self._namespace = namespace
        self._lock = threading.Lock()
        #: method -> how a call reaches the connected namespace (:meth:`route`), for this connection
        self._routes: dict[str, tuple[LanceNamespace, Callable, bool, bool]] = {}

    @classmethod
    def connected(cls, name: str, namespace: LanceNamespace) -> "Mount":
        """A namespace connected elsewhere, mounted as it is (and left open)."""
        return cls(name, lambda: namespace, namespace)

    @property
    def connected_namespace(self) -> LanceNamespace | None:
        """The mounted namespace if it is connected (None: not yet, or it could not be)."""
        return self._namespace

    def namespace(self) -> LanceNamespace:
        """The mounted namespace, connected on first use (17 while it cannot be)."""
        if self._namespace is not None:
            return self._namespace
        refuse_blocking(f"connecting mount {self.name!r}")  # on the server's event loop: its threads connect
        with self._lock:
            if self._namespace is None:
                try:
                    self._namespace = self._connect()
                except InvalidInputError as e:  # its configuration, not its service: say which mount
                    raise InvalidInputError(f"mount {self.name!r}: {e}") from e
                except ServiceUnavailableError as e:
                    raise self.unavailable(e) from e
                except LanceNamespaceError:
                    raise
                except Exception as e:  # its service could not be reached: tried again next call
                    raise self.unavailable(e) from e
            return self._namespace

    def route(self, method: str, limits: Any) -> tuple[Callable, bool, bool] | None:
        """How a call of ``method`` reaches the mounted namespace (None: it has no such
        operation): the callable, whether the namespace answers it from memory, and whether
        it is ours.  Ours and checking by the same ``limits`` as the mounts (which checked the
        request on the way in): its checked boundary, not its public method, so no request is
        checked twice.  Worked out once per method and connection (a call through a mount
        costs what the mounted call does, plus a few microseconds)."""
        namespace = self.namespace()
        route = self._routes.get(method)
        if route is not None and route[0] is namespace:
            return route[1:]
        call = getattr(namespace, method, None)
        if call is None:
            return None
        ours = isinstance(namespace, NamespaceBase)
        if ours and namespace.limits == limits:
            call = functools.partial(namespace.call_checked, method)
        route = self._routes[method] = (namespace, call, method in _from_memory(namespace), ours)
        return route[1:]

    def unavailable(self, cause: Exception) -> ServiceUnavailableError:
        """The 17 this mount answers when ``cause`` kept it from answering."""
        # a connection error may quote the URL it could not reach, credentials and all: masked
        return ServiceUnavailableError(f"mount {self.name!r} is unavailable: {redact_text(str(cause))}")

    def operations(self) -> list[str]:
        """The OperationIds the mounted namespace says it supports (all when it does not say)."""
        ns = self.namespace()
        listed = getattr(ns, "list_operations", None)
        return sorted(listed()) if callable(listed) else sorted(op.op_id for op in OPERATIONS.values())

    def close(self) -> None:
        self._routes.clear()
        if self.owned and self._namespace is not None:
            close = getattr(self._namespace, "close", None)
            if callable(close):
                close()
            self._namespace = None


#: first segments of this namespace's own properties, never a mount's name
_OWN_PROPERTIES = frozenset({"limits", "storage", "mounts"})


def _mount_configs(properties: Mapping[str, str]) -> dict[str, Callable[[], LanceNamespace]]:
    """Properties -> mount name -> how to connect it.  ``NAME`` names a configuration,
    ``NAME.impl``/``NAME.KEY`` configure one in place; each may carry the impl prefix
    (``mounts.NAME...``), as every impl's properties may in a named configuration."""
    from .. import config

    named: dict[str, str] = {}
    inline: dict[str, dict[str, str]] = {}
    for key, value in properties.items():
        key = key[len("mounts.") :] if key.startswith("mounts.") else key
        name, _, rest = key.partition(".")
        if name in _OWN_PROPERTIES:
            continue
        if rest:
            inline.setdefault(name, {})[rest] = value
        else:
            named[name] = value
    twice = sorted(named.keys() & inline.keys())
    if twice:
        raise InvalidInputError(f"mount {twice[0]!r} is given both as a named configuration and in place")
    mounts: dict[str, Callable[[], LanceNamespace]] = {}
    for name, cfg_name in named.items():
        mounts[name] = lambda cfg_name=cfg_name: config.load_namespace(cfg_name)
    for name, props in inline.items():
        impl = props.pop("impl", None)
        if not impl:
            raise InvalidInputError(f"mount {name!r} needs {name}.impl (or {name} = a configuration name)")
        if impl == "mounts":
            raise InvalidInputError(f"mount {name!r}: a mount cannot itself be mounts")
        config.load_class(impl)  # an unknown impl or missing extra is a configuration error: now, not per call
        mounts[name] = lambda impl=impl, props=props: config.connect(impl, props)
    return mounts


def _from_memory(namespace: LanceNamespace) -> frozenset[str]:
    """The reads a mounted namespace answers from memory (its ``inline_methods``; none for one
    that is not ours)."""
    return getattr(namespace, "inline_methods", None) or frozenset()


def _every_mount(capability: str) -> property:
    """A capability of the mounts: true where every mount has it (false while one is down)."""

    def every(self) -> bool:
        try:
            return all(bool(getattr(m.namespace(), capability, False)) for m in self._mounts.values())
        except ServiceUnavailableError:
            return False

    every.__doc__ = f"``{capability}`` of every mount."
    return property(every)


class MountsNamespace(NamespaceBase):
    """Several namespaces as one, the first id level naming the mount (see the module docstring)."""

    def __init__(self, **properties: str):
        super().__init__(**properties)
        self._attach(Mount(name, connect) for name, connect in _mount_configs(self.properties).items())
        for mount in self._mounts.values():  # connected now where it can be; a mount down is tried again on use
            try:
                mount.namespace()
            except ServiceUnavailableError:
                pass

    @classmethod
    def of(cls, mounts: Mapping[str, LanceNamespace | Callable[[], LanceNamespace]], **properties: str) -> "MountsNamespace":
        """Mounts of namespace objects already connected (closing this leaves them open), or of
        functions that connect one (called on first use, and again after a failed connection)."""
        self = cls.__new__(cls)
        NamespaceBase.__init__(self, **properties)
        self._attach(Mount.connected(name, ns) if isinstance(ns, LanceNamespace) else Mount(name, ns)
                     for name, ns in mounts.items())
        return self

    def _attach(self, mounts: typing.Iterable[Mount]) -> None:
        self._mounts = {mount.name: mount for mount in mounts}
        if not self._mounts:
            raise InvalidInputError("mounts needs at least one mount: NAME = a configuration name, "
                                    "or NAME.impl = an impl (each may be written mounts.NAME...)")
        for name in self._mounts:
            validate_id([name])

    @property
    def mounts(self) -> list[str]:
        return sorted(self._mounts)

    def mount(self, name: str) -> LanceNamespace:
        """The namespace mounted as ``name`` (connecting it if need be)."""
        if name not in self._mounts:
            raise NamespaceNotFoundError(f"no mount named {name!r} (mounts: {', '.join(self.mounts)})")
        return self._mounts[name].namespace()

    def namespace_id(self) -> str:
        return f"MountsNamespace {{ mounts: {self.mounts!r} }}"

    def close(self) -> None:
        for mount in self._mounts.values():
            mount.close()

    # -- what each mount supports ---------------------------------------------------------
    def mount_operations(self) -> dict[str, list[str]]:
        """mount -> the OperationIds it supports (a mount that is down: 17)."""
        return {name: mount.operations() for name, mount in sorted(self._mounts.items())}

    def list_operations(self) -> list[str]:
        """What the mounts root answers itself, and what any reachable mount supports."""
        ops = {OPERATIONS[m].op_id for m in _LOCAL_ANSWERS}
        for mount in self._mounts.values():
            try:
                ops.update(mount.operations())
            except ServiceUnavailableError:
                continue
        return sorted(ops)

    @property
    def inline_methods(self) -> frozenset[str]:
        """Every read a mount may answer from memory, and any more a connected mount lists: the
        REST server tries them on its event loop, and a call reaching a mount that does not list
        it (or is not connected yet) moves to the threads (:meth:`_dispatch`).  So a mount that
        connects after the server started is served as it would be alone."""
        inline = set(MEMORY_READS)
        for mount in self._mounts.values():
            namespace = mount.connected_namespace
            if namespace is not None:
                inline.update(_from_memory(namespace))
        return frozenset(inline)

    def answers_stamp(self, method, ident):
        """The root's own answers are the configuration's (they never change); a mount's
        are kept under the mount's own stamp, when it keeps any."""
        if not ident:
            return ()
        mount = self._mounts.get(ident[0])
        namespace = None if mount is None else mount.connected_namespace
        if namespace is None or method not in _from_memory(namespace):
            return None
        stamp_of = getattr(namespace, "answers_stamp", None)
        own = None if stamp_of is None else stamp_of(method, ident[1:])
        return None if own is None else (ident[0], own)

    # the capabilities a backend declares (lance_ns.conformance's CAPABILITY_ATTRIBUTES)
    supports_cascade = _every_mount("supports_cascade")
    drop_missing_ok = _every_mount("drop_missing_ok")
    supports_managed_versioning = _every_mount("supports_managed_versioning")
    vends_credentials = _every_mount("vends_credentials")

    def adopt_table(self, table_id: list[str]) -> bool:
        """``lance-ns table adopt`` on the mount the id names (see CatalogNamespace.adopt_table)."""
        table_id = validate_id(list(table_id))
        if len(table_id) < 2:
            raise TableNotFoundError(f"{table_id!r} names no table inside a mount")
        adopt = getattr(self.mount(table_id[0]), "adopt_table", None)
        if adopt is None:
            raise UnsupportedOperationError(f"mount {table_id[0]!r} records no owners (it cannot adopt a table)")
        return adopt(table_id[1:])

    # -- placement (lance_ns.sync's plan): the mount's own rules on the rest of the id -----
    def _placement(self, ids: list[str], what: str, ask: Callable[[Any, list[str]], Any], raising: bool = False) -> Any:
        """``ask(mount, the rest of the id)`` of the mount the id names; what keeps it from being
        asked is the answer, an error (refusals), or raised (``raising``: where the answer is a value)."""
        found = self._placement_of(ids, what, ask)
        if raising and isinstance(found, LanceNamespaceError):
            raise found
        return found

    def _placement_of(self, ids: list[str], what: str, ask: Callable[[Any, list[str]], Any]) -> Any:
        ids = validate_id(list(ids))
        if not ids:
            return InvalidInputError("the mounts root holds nothing of its own")
        if ids[0] not in self._mounts:
            why = f"no mount named {ids[0]!r} (mounts: {', '.join(self.mounts)})"
            return NamespaceNotFoundError(why) if what == "namespace" else TableNotFoundError(why)
        if len(ids) == 1:
            return InvalidInputError(f"{ids[0]!r} is a mount: mounts are configuration, not a {what}")
        return ask(self.mount(ids[0]), ids[1:])

    def namespace_refusal(self, ns, planned=False):
        return self._placement(ns, "namespace", lambda mount, own: placement_answer(
            mount, "namespace_refusal", own, planned))

    def table_refusal(self, table_id, location=None):
        return self._placement(table_id, "table", lambda mount, own: placement_answer(
            mount, "table_refusal", own, location))

    def table_location_for(self, table_id, seed=None):
        return self._placement(table_id, "table", lambda mount, own: placement_answer(
            mount, "table_location_for", own, seed), raising=True)

    def storage_options_for(self, table_id):
        return self._placement(table_id, "table", lambda mount, own: placement_answer(
            mount, "storage_options_for", own), raising=True) or {}

    def managed_versioning_for(self, table_id, properties=None):
        return self._placement(table_id, "table", lambda mount, own: placement_answer(
            mount, "managed_versioning_for", own, properties), raising=True)

    # -- the root itself ------------------------------------------------------------------
    def _answer_root(self, op: Operation, request: Any) -> Any:
        """An operation on the root of the mounts (id ``[]``)."""
        if op.method == "list_namespaces":
            page, token = paginate(self.mounts, request.limit, request.page_token)
            return op.response(namespaces=page, page_token=token)
        if op.method == "describe_namespace":
            return op.response(properties={})
        if op.method == "namespace_exists":
            return op.response() if op.response else None
        if op.method == "list_tables":
            return op.response(tables=[], page_token=None)
        if op.method == "list_all_tables":
            return self._all_tables(op, request)
        if op.method in ("create_namespace", "drop_namespace"):
            raise InvalidInputError(f"{op.op_id} of the mounts root: mounts are configuration, not namespaces")
        raise _not_found(op, "the mounts root holds no tables")

    def _all_tables(self, op: Operation, request: Any) -> Any:
        """The root's ListAllTables: the mounts' listings one after another (mounts in the order
        of their ids' prefixes), each paged by the mount itself, so a page reads only the pages
        of the mounts it spans."""
        refuse_blocking("ListAllTables over every mount")  # served: on the threads, whatever the mounts are

        def page_of(name: str, limit: int | None, token: str | None) -> tuple[list[str], str | None]:
            # the mount's own page and token (a mount answering more than asked makes a longer
            # page: its token resumes after all of them, so nothing is skipped)
            answer = self.mount(name).list_all_tables(
                request.model_copy(update={"id": [], "page_token": token, "limit": limit}))
            return [f"{name}{ALL_TABLES_DELIMITER}{t}" for t in answer.tables or []], answer.page_token

        names = sorted(self.mounts, key=lambda name: name + ALL_TABLES_DELIMITER)  # as their ids sort
        page, token = page_across(names, page_of, request.limit, request.page_token)
        return op.response(tables=page, page_token=token)

    # -- one call on one mount ------------------------------------------------------------
    def _dispatch(self, op: Operation, request: Any, *data: Any) -> Any:
        ids = _ids_of(request)
        if ids in ([], [[]]):  # no id, or the root's
            return self._answer_root(op, request)
        if not all(ids):  # e.g. RenameTable of a mount's table into the root
            raise InvalidInputError(f"{op.op_id} reaches the mounts root, which holds no tables")
        names = sorted({i[0] for i in ids})
        if len(names) > 1:
            both = " and ".join(repr(n) for n in names)
            raise InvalidInputError(f"{op.op_id} spans mounts {both}: each mount commits on its own")
        name = names[0]
        if "transaction" in op.method and len(ids[0]) < 2:
            raise InvalidInputError(f"{op.op_id}: {ids[0]!r} is no transaction id (a table id, then the transaction)")
        own_id = ids[0][1:]
        if op.method in ("create_namespace", "drop_namespace") and not own_id:
            raise InvalidInputError(f"{op.op_id} of {name!r}: mounts are configuration (mounts.NAME), not namespaces")
        if name not in self._mounts:
            raise _not_found(op, f"no mount named {name!r} (mounts: {', '.join(self.mounts)})")
        if _addresses_table(op) and not own_id:
            raise _not_found(op, f"{name!r} is a mount, not a table")
        mount = self._mounts[name]
        route = mount.route(op.method, self.limits)
        if route is None:
            raise UnsupportedOperationError(f"{op.op_id} is not supported by mount {name!r}")
        method, from_memory, ours = route
        if not from_memory:
            refuse_blocking(f"{op.op_id} on mount {name!r}")  # served: this mount's calls run on the threads
        if data and not ours:
            from ..datasets import ipc_stream_bytes

            data = tuple(ipc_stream_bytes(d) for d in data)  # a table our server decoded, for one that takes bytes
        try:
            answer = method(_rebased(request, lambda i: i[1:]), *data)
        except (UnsupportedOperationError, NotImplementedError) as e:
            raise UnsupportedOperationError(f"mount {name!r}: {e or op.op_id + ' is not supported'}") from e
        except LanceNamespaceError:
            raise
        except Exception as e:
            if is_unreachable(e) or isinstance(e, (ConnectionError, TimeoutError)):
                raise mount.unavailable(e) from e
            raise
        return _with_mount(op, answer, name)


#: what _id_fields answers for a request carrying its id alone
_ID_ONLY = (("id", True),)
#: request model -> its fields that carry ids (see _id_fields)
_ID_FIELDS_OF: dict[type, tuple[tuple[str, bool], ...]] = {}


def _id_fields(model: type, visiting: frozenset = frozenset()) -> tuple[tuple[str, bool], ...]:
    """The fields of a request model that carry ids, read once per model: ``(name, True)``
    for an id itself, ``(name, False)`` for a sub-model or a list of them that holds ids
    somewhere (a batch's entries).  Most requests have one: ``id``.  (A model met again
    inside itself, as an Arrow type's children are, adds nothing.)"""
    if model in _ID_FIELDS_OF:
        return _ID_FIELDS_OF[model]
    if model in visiting:
        return ()
    found = []
    for name, info in model.model_fields.items():
        if name in _ID_FIELDS:
            found.append((name, True))
        elif any(_id_fields(sub, visiting | {model}) for sub in _models_in(info.annotation)):
            found.append((name, False))
    if not visiting:  # a top-level answer is complete; one inside a cycle may not be
        _ID_FIELDS_OF[model] = tuple(found)
    return tuple(found)


def _models_in(annotation: Any) -> list[type]:
    """The pydantic models an annotation names (through Optional, List, Annotated)."""
    if isinstance(annotation, type):
        return [annotation] if issubclass(annotation, BaseModel) else []
    return [m for arg in typing.get_args(annotation) for m in _models_in(arg)]


def _ids_of(request: Any) -> list[list[str]]:
    """Every id a request carries: nearly every request carries its ``id`` alone, read
    without walking its fields (:func:`_ids_in`)."""
    if _id_fields(type(request)) == _ID_ONLY:
        return [list(request.id)] if isinstance(request.id, list) else []
    return list(_ids_in(request))


def _ids_in(model: Any):
    """Every id a request carries, at any depth (a batch's entries carry theirs)."""
    for name, is_id in _id_fields(type(model)):
        value = getattr(model, name)
        if is_id:
            if isinstance(value, list):
                yield list(value)
        else:
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, BaseModel):
                    yield from _ids_in(item)


def _rebased(model: Any, change: Callable[[list[str]], list[str]]) -> Any:
    """``model`` with every id field changed by ``change`` (a copy; the caller's request is left as it was)."""
    update = {}
    for name, is_id in _id_fields(type(model)):
        value = getattr(model, name)
        if is_id:
            if isinstance(value, list):
                update[name] = change(list(value))
        elif isinstance(value, list):
            update[name] = [_rebased(v, change) if isinstance(v, BaseModel) else v for v in value]
        elif isinstance(value, BaseModel):
            update[name] = _rebased(value, change)
    return model.model_copy(update=update) if update else model


def _with_mount(op: Operation, answer: Any, name: str) -> Any:
    """A mount's answer with full ids where it carries ids."""
    if op.method == "list_all_tables" and answer is not None:
        # a page of the mount's ids, full; its token stays the mount's (the next page's request carries it back)
        tables = [f"{name}{ALL_TABLES_DELIMITER}{t}" for t in answer.tables or []]
        return answer.model_copy(update={"tables": tables})
    if isinstance(answer, BaseModel) and isinstance(getattr(answer, "namespace", None), list):
        return answer.model_copy(update={"namespace": [name, *answer.namespace]})
    return answer


def _addresses_table(op: Operation) -> bool:
    return op.method not in _NAMESPACE_OPS and "transaction" not in op.method


def _not_found(op: Operation, why: str) -> LanceNamespaceError:
    """Nothing at an id: a namespace (1) or a table (4; a transaction's id is its table's too)."""
    return NamespaceNotFoundError(why) if op.method in _NAMESPACE_OPS else TableNotFoundError(why)


def _operation(op: Operation):
    def method(self, request=None, *data):
        return self._dispatch(op, request, *data)

    method.__name__ = op.method
    method.__doc__ = f"{op.op_id} on the mount the id's first level names."
    return method


for _op in OPERATIONS.values():
    setattr(MountsNamespace, _op.method, normalising(_operation(_op), _op))
del _op
