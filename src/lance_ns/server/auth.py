"""Who may do what: the principals of an auth file and the grant each operation needs.

An auth file (TOML) lists principals, each with a token (or its SHA-256) and
grants on namespace prefixes::

    [[principal]]
    name = "etl"
    token_sha256 = "9f86d0..."       # or: token = "..."
    write = ["sales"]
    read = ["reference"]

A prefix is a namespace id written with ``.`` (``"sales"`` covers ``sales`` and
everything below it); ``"*"`` is every namespace, the root included.  ``read``
allows listing, describing and querying; ``write`` adds table creation,
writes, drops and versions; ``admin`` adds namespace creation and drop.

The grant an operation needs and the namespaces it touches are derived from
the operation registry and the route table (:func:`requirement`), not listed
by hand: a table operation is judged by the table's namespace, a namespace
operation by the namespace itself.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, NamedTuple, Sequence

from ..errors import InvalidInputError, PermissionDeniedError
from ..protocol import routes as R

log = logging.getLogger("lance_ns.server")

READ, WRITE, ADMIN = "read", "write", "admin"
#: each grant includes the ones before it
LEVELS = {READ: 0, WRITE: 1, ADMIN: 2}
EVERYTHING = "*"
#: allowed requests a principal remembers (cleared when full)
_REMEMBERED = 4096

#: table operations that change nothing (the REST client retries them freely too)
_READ_TABLE_OPS = frozenset(
    {"count_table_rows", "query_table", "explain_table_query_plan", "analyze_table_query_plan", "table_exists"}
)
_NAMESPACE_MUTATIONS = frozenset({"create_namespace", "drop_namespace"})


def is_read_method(method: str) -> bool:
    """Operations that change nothing: listing, describing, querying, exists."""
    return method in _READ_TABLE_OPS or method == "namespace_exists" or method.startswith(("list_", "describe_", "get_"))


class Requirement(NamedTuple):  # built per request: a tuple is cheaper than a frozen dataclass
    """The grant an operation needs on each of the namespaces it touches."""

    grant: str
    namespaces: tuple[tuple[str, ...], ...]


def _ids_in(value: Any) -> Iterable[list[str]]:
    """Every ``id`` (a list of strings) anywhere inside a request (batch operations)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            for key, child in item.items():
                if key == "id" and isinstance(child, list) and all(isinstance(c, str) for c in child):
                    yield child
                else:
                    stack.append(child)
        elif isinstance(item, list):
            stack.extend(item)


def requirement(route: R.Route, request: Any) -> Requirement:
    """What ``request`` (the operation of ``route``) needs, from where its id travels:
    ``/v1/namespace/{id}/...`` names a namespace; ``/v1/table/{id}/...`` and
    ``/v1/materialized_view/{id}/...`` a table, judged by its namespace; ids inside
    a batch body are tables too; a transaction is judged at the root."""
    method = route.op.method
    grant = ADMIN if method in _NAMESPACE_MUTATIONS else READ if is_read_method(method) else WRITE
    ident = list(getattr(request, "id", None) or [])
    if route.path.startswith("/v1/namespace/"):
        return Requirement(grant, (tuple(ident),))
    if route.path.startswith("/v1/transaction/") or method == "list_all_tables":
        return Requirement(grant, ((),))  # not tied to a namespace: needs a grant on "*"
    if route.has_id:
        namespaces = [tuple(ident[:-1])]
        if method == "rename_table" and getattr(request, "new_namespace_id", None) is not None:
            namespaces.append(tuple(request.new_namespace_id))
        return Requirement(grant, tuple(namespaces))
    body = request.model_dump(mode="json") if hasattr(request, "model_dump") else request
    found = tuple(tuple(i[:-1]) for i in _ids_in(body))
    return Requirement(grant, found or ((),))


def authorize(principal: "Principal", route: R.Route, request: Any) -> Requirement:
    """What ``request`` needs (:func:`requirement`), once ``principal`` is found to hold it on
    every namespace it touches; else PermissionDenied (403 code 15).  Listings of namespaces
    are allowed on the way to a readable prefix (and filtered afterwards).  Where the answer
    follows from the operation and the id alone it is remembered, per principal: its
    grants never change (a reloaded auth file makes new principals)."""
    method = route.op.method
    key = None
    if route.has_id and method != "rename_table":  # else ids in the body, or a second namespace
        key = (method, tuple(getattr(request, "id", None) or ()))
        need = principal.allowed_before(key)
        if need is not None:
            return need
    need = requirement(route, request)
    for ns in need.namespaces:
        if principal.may(need.grant, ns):
            continue
        if method == "list_namespaces" and principal.may_see(ns):
            continue
        shown = ".".join(ns) if ns else "the root namespace"
        raise PermissionDeniedError(f"{principal.name!r} may not {route.op.op_id} in {shown} (needs {need.grant})")
    if key is not None:
        principal.remember_allowed(key, need)
    return need


# -- principals -----------------------------------------------------------------------------


def _prefix(text: str) -> tuple[str, ...] | None:
    """``"sales.eu"`` -> ``("sales", "eu")``; ``"*"`` -> None (everything)."""
    if text == EVERYTHING:
        return None
    parts = tuple(text.split("."))
    if not text or any(not p for p in parts):
        raise InvalidInputError(f"grant prefix {text!r} is not a namespace id written with '.' (or '*')")
    return parts


@dataclass(frozen=True)
class Principal:
    name: str
    digest: bytes = field(repr=False)  # SHA-256 of the token
    #: (grant level, prefix or None for everything)
    grants: tuple[tuple[int, tuple[str, ...] | None], ...] = ()

    #: requests already found allowed, by operation and id (see :func:`authorize`)
    _allowed: dict = field(default_factory=dict, compare=False, hash=False, repr=False)

    def may(self, grant: str, namespace: Sequence[str]) -> bool:
        """Whether a grant at least ``grant`` covers ``namespace`` (or an ancestor of it)."""
        need = LEVELS[grant]
        ns = tuple(namespace)
        return any(level >= need and (prefix is None or ns[: len(prefix)] == prefix) for level, prefix in self.grants)

    def allowed_before(self, key: tuple) -> Requirement | None:
        """What a request of ``key`` (operation, id) was found to need and hold before."""
        return self._allowed.get(key)

    def remember_allowed(self, key: tuple, need: Requirement) -> None:
        if len(self._allowed) >= _REMEMBERED:  # bounded: ids are the callers' to choose
            self._allowed.clear()
        self._allowed[key] = need

    def may_see(self, namespace: Sequence[str]) -> bool:
        """Whether a listing shows ``namespace``: readable, or on the way to a readable prefix."""
        ns = tuple(namespace)
        return self.may(READ, ns) or any(prefix is not None and prefix[: len(ns)] == ns for _, prefix in self.grants)


#: the principal of the plain ``--auth-token`` / API keys: may do everything
ALL_POWERFUL = Principal("token", b"", ((LEVELS[ADMIN], None),))
#: no authentication configured at all
ANONYMOUS = Principal("anonymous", b"", ((LEVELS[ADMIN], None),))


def digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def parse_principals(text: str, source: str = "auth file") -> list[Principal]:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise InvalidInputError(f"cannot parse {source}: {e}") from None
    entries = doc.get("principal") or []
    if not isinstance(entries, list):
        raise InvalidInputError(f"{source}: [[principal]] must be an array of tables")
    principals, names, digests = [], set(), set()
    for i, entry in enumerate(entries):
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            raise InvalidInputError(f"{source}: principal #{i + 1} needs a name")
        if name in names:
            raise InvalidInputError(f"{source}: principal {name!r} appears twice")
        names.add(name)
        if ("token" in entry) == ("token_sha256" in entry):
            raise InvalidInputError(f"{source}: principal {name!r} needs exactly one of token, token_sha256")
        if "token" in entry:
            if not isinstance(entry["token"], str) or not entry["token"]:
                raise InvalidInputError(f"{source}: principal {name!r} has an empty token")
            token_digest = digest(entry["token"])
        else:
            try:
                token_digest = bytes.fromhex(str(entry["token_sha256"]))
            except ValueError:
                token_digest = b""
            if len(token_digest) != 32:
                raise InvalidInputError(f"{source}: principal {name!r}: token_sha256 must be 64 hex digits")
        if token_digest in digests:
            raise InvalidInputError(f"{source}: principal {name!r} shares its token with another principal")
        digests.add(token_digest)
        grants = []
        for level in LEVELS:
            prefixes = entry.get(level, [])
            if isinstance(prefixes, str):
                prefixes = [prefixes]
            if not isinstance(prefixes, list) or not all(isinstance(p, str) for p in prefixes):
                raise InvalidInputError(f"{source}: principal {name!r}: {level} must be a list of namespace prefixes")
            grants += [(LEVELS[level], _prefix(p)) for p in prefixes]
        unknown = set(entry) - {"name", "token", "token_sha256", *LEVELS}
        if unknown:
            raise InvalidInputError(f"{source}: principal {name!r}: unknown keys {sorted(unknown)}")
        principals.append(Principal(name, token_digest, tuple(grants)))
    return principals


class AuthFile:
    """The principals of a TOML file, re-read when its modification time changes.

    A file that no longer parses keeps the principals last read (and logs why):
    a typo while editing must not lock every client out, nor let every one in.
    """

    #: seconds between two looks at the file's modification time: a request costs no
    #: stat then, and a change takes effect within this long
    CHECK_INTERVAL = 1.0

    def __init__(self, path: str | os.PathLike):
        self.path = os.fspath(path)
        self._checked = float("-inf")  # time.monotonic() of the last look
        self._lock = threading.Lock()
        self._stamp: tuple[int, int] | None = None
        self._principals: list[Principal] = []
        self._by_digest: dict[bytes, Principal] = {}
        #: counts the loads of the file: what was found in an older one no longer holds
        self.generation = 0
        self._refresh(initial=True)

    def _refresh(self, initial: bool = False) -> None:
        now = time.monotonic()
        if not initial and now - self._checked < self.CHECK_INTERVAL:
            return
        self._checked = now
        st = os.stat(self.path)
        stamp = (st.st_mtime_ns, st.st_size)
        if stamp == self._stamp:
            return
        with self._lock:
            if stamp == self._stamp:
                return
            try:
                with open(self.path, encoding="utf-8") as f:
                    principals = parse_principals(f.read(), self.path)
            except (OSError, InvalidInputError) as e:
                if initial:
                    raise InvalidInputError(str(e)) from None
                log.error("auth file not reloaded, keeping the previous principals: %s", e)
                self._stamp = stamp
                return
            self._principals, self._stamp = principals, stamp
            self._by_digest = {p.digest: p for p in principals}
            self.generation += 1
            if not initial:
                log.info("auth file %s reloaded: %d principals", self.path, len(principals))

    def principals(self) -> list[Principal]:
        try:
            self._refresh()
        except OSError as e:  # removed or unreadable for a moment: keep what was read
            log.error("auth file not readable, keeping the previous principals: %s", e)
        return self._principals

    def current_generation(self) -> int:
        """:attr:`generation`, once the file was looked at if it is time to (per request:
        no more than a clock read and a comparison in between)."""
        if time.monotonic() - self._checked >= self.CHECK_INTERVAL:
            self.principals()
        return self.generation

    def find(self, token: str) -> Principal | None:
        """The principal holding ``token``, found by its SHA-256 digest: what a lookup's
        timing could tell is about the digest, which says nothing of the token's bytes."""
        self.principals()  # re-read if changed
        return self._by_digest.get(digest(token))
