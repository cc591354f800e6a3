"""The runtime conformance checker behind ``lance-ns check``.

The scenario is data: :data:`CHECKS` is an ordered list of :class:`Check`
(name, operation, expectation, steps).  A step is a :class:`Call` (an
operation and the error code it must answer, or success), an :class:`Http`
request (raw protocol: status and integer ``code``) or a :class:`Fn` (a
predicate over what the scenario has seen).  :func:`run_checks` runs them
against a :class:`Target` (a Lance REST server or any ``LanceNamespace``)
inside one uniquely named namespace it creates and removes, and returns one
:class:`CheckResult` per check.  Tests reuse the same data.

Why raw HTTP at all: our REST client validates names before sending and
maps code-less error bodies by HTTP status, which would hide exactly the
departures a vendor needs to see.  So invalid names go over the wire
unvalidated (``raw=True``), and every error response any step receives is
recorded and checked for an integer ``code`` whose HTTP status matches the
spec's table.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Mapping
from urllib.parse import quote

from lance_namespace import LanceNamespace

from .base import BY_OP_ID, coerce_request
from .errors import ERRORS, LanceNamespaceError

PASS, FAIL, SKIP = "pass", "fail", "skip"
OK = None  # ``Call.expect`` for "the operation succeeds"
NS = "{ns}"  # placeholder: the scenario's namespace id (spliced into id lists / paths)


# -- the data model of a check ---------------------------------------------------


@dataclass(frozen=True)
class Call:
    """Run an operation; it must succeed (``expect=OK``) or fail with ``expect``."""

    op: str  # OperationId, e.g. "CreateNamespace"
    request: Mapping[str, Any] = field(default_factory=dict)  # "{ns}" and "{var}" placeholders
    expect: int | tuple[int, ...] | None = OK  # a tuple: any of these codes
    #: (response dict, vars) -> problem message or None
    verify: Callable[[dict, dict], str | None] | None = None
    save: Mapping[str, str] = field(default_factory=dict)  # var name -> response field
    arrow: bool = False  # send a small valid Arrow IPC stream as the body (CreateTable)
    raw: bool = False  # REST targets: send without client-side validation


@dataclass(frozen=True)
class Http:
    """A raw REST request (REST targets only): expected status and error code."""

    method: str
    path: str  # "{ns}" becomes the '$'-joined, URL-quoted namespace id
    status: int
    code: int | None = None  # the integer ``code`` the error body must carry
    body: bytes | None = None
    content_type: str | None = None


@dataclass(frozen=True)
class Fn:
    """A predicate over the run: ``fn(run) -> problem message or None``."""

    fn: Callable[["Run"], str | None]


@dataclass(frozen=True)
class Check:
    name: str
    operation: str
    expectation: str
    steps: tuple
    setup: tuple = ()  # Calls that must succeed first (failure: the check fails, named "setup")
    needs: frozenset = frozenset()  # "http" (a REST target), "data" (a Lance table), "auth"
    #: the operation is optional in the spec: an Unsupported (code 0) answer skips the check
    optional: bool = False
    after: str | None = None  # skipped unless this earlier check passed (no cascading noise)


@dataclass
class CheckResult:
    name: str
    operation: str
    expectation: str
    status: str  # pass / fail / skip
    detail: str = ""
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return dict(self.__dict__)


class _Skip(Exception):
    pass


class _Fail(Exception):
    pass


# -- verifiers (small, named, reused) ------------------------------------------------


def _exactly(field_name: str, *values: str):
    def verify(resp: dict, vars: dict) -> str | None:
        got = resp.get(field_name) or []
        return None if sorted(got) == sorted(values) else f"{field_name} is {got!r}, expected {sorted(values)!r}"

    return verify


def _props_include(expected: dict[str, str]):
    def verify(resp: dict, vars: dict) -> str | None:
        got = resp.get("properties") or {}
        wrong = {k: got.get(k) for k, v in expected.items() if got.get(k) != v}
        return f"properties lack {expected!r} (got {wrong!r})" if wrong else None

    return verify


def _props_exclude(key: str):
    def verify(resp: dict, vars: dict) -> str | None:
        got = resp.get("properties") or {}
        return f"property {key!r} survived an Overwrite" if key in got else None

    return verify


def _has_location(resp: dict, vars: dict) -> str | None:
    return None if resp.get("location") else "no location in the response"


def _same_location(var: str):
    def verify(resp: dict, vars: dict) -> str | None:
        want, got = vars.get(var), resp.get("location")
        norm = lambda s: (s or "").removeprefix("file://").rstrip("/")  # noqa: E731
        return None if norm(got) == norm(want) else f"location {got!r}, expected {want!r}"

    return verify


def _page(field_name: str, n: int, more: bool, complete: tuple[str, ...] = ()):
    """A page of ``n`` items; with ``complete``, this page and "page1" are exactly those."""

    def verify(resp: dict, vars: dict) -> str | None:
        items = resp.get(field_name) or []
        token = resp.get("page_token")
        if len(items) != n:
            return f"limit gave {len(items)} items {items!r}, expected {n}"
        if more and not token:
            return "no page_token although items remain"
        if not more and token:
            return f"page_token {token!r} on the last page"
        if complete and sorted((vars.get("page1") or []) + items) != sorted(complete):
            return f"pages {vars.get('page1')!r} + {items!r} are not exactly {sorted(complete)!r}"
        return None

    return verify


def _versions(resp: dict, vars: dict) -> str | None:
    versions = resp.get("versions") or []
    return None if versions else "no versions listed for a table with data"


# -- the scenario -----------------------------------------------------------------

_NS_PROPS = {"owner": "lance-ns-check"}


def _nsid(*more: str) -> list[str]:
    return [NS, *more]


def _paging_checks(kind: str, op: str, field_name: str, create_op: str, container: str) -> list[Check]:
    """A listing of three items in ``container``, whole and in pages of two."""
    items = ("p1", "p2", "p3")
    setup = (Call("CreateNamespace", {"id": _nsid(container)}),) + tuple(
        Call(create_op, {"id": _nsid(container, name)}) for name in items
    )
    first = Call(
        op, {"id": _nsid(container), "limit": 2}, verify=_page(field_name, 2, True),
        save={"token": "page_token", "page1": field_name},
    )
    rest = Call(
        op, {"id": _nsid(container), "limit": 2, "page_token": "{token}"}, verify=_page(field_name, 1, False, items)
    )
    everything = Call(op, {"id": _nsid(container)}, verify=_exactly(field_name, *items))
    return [
        Check(f"{kind}.list", op, f"lists every {kind[:-1]} of a namespace", (everything,), setup=setup),
        Check(
            f"{kind}.list.paging",
            op,
            "limit=2 gives 2 items and a page_token; the token gives the third item, no token, no repeats",
            (first, rest),
        ),
    ]


def _arrow_stream() -> bytes:
    import pyarrow as pa

    table = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": ["a", "b", "c"]})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def _error_bodies(run: "Run") -> str | None:
    bad = [e for e in run.errors if e["code"] is None]
    if not run.errors:
        raise _Skip("no error responses were observed")
    return None if not bad else f"{len(bad)} error responses without an integer code, e.g. {_show(bad)}"


def _error_statuses(run: "Run") -> str | None:
    bad = [e for e in run.errors if e["code"] in ERRORS and ERRORS[e["code"]].http_status != e["status"]]
    if not run.errors:
        raise _Skip("no error responses were observed")
    return None if not bad else f"{len(bad)} error responses whose HTTP status does not match the code: {_show(bad)}"


def _show(errors: list[dict]) -> str:
    return "; ".join(f"{e['method']} {e['path']} -> {e['status']} code={e['code']}" for e in errors[:3])


#: checks that use a namespace level below the scenario's namespace; a flat
#: catalog (one level of databases: Hive 2, Glue) skips them
_NESTED = frozenset(
    {
        "table.declare.missing_namespace",
        "tables.list.missing_namespace",
        "tables.list",
        "tables.list.paging",
    }
)


def _needs_nesting(check: Check) -> Check:
    if check.name.startswith(("namespace.", "namespaces.")) or check.name in _NESTED:
        return replace(check, needs=check.needs | {"nested"})
    return check


def scenario() -> list[Check]:
    """The ordered scenario.  Later checks may rely on the state earlier ones built."""
    return [_needs_nesting(c) for c in _scenario()]


def _scenario() -> list[Check]:
    missing = _nsid("__missing__")
    missing_table = _nsid("__missing_table__")
    checks = [
        # -- namespaces
        Check(
            "namespace.create",
            "CreateNamespace",
            "creates a child namespace with properties",
            (Call("CreateNamespace", {"id": _nsid("a"), "properties": _NS_PROPS}),),
        ),
        Check("namespace.exists", "NamespaceExists", "an existing namespace exists", (Call("NamespaceExists", {"id": _nsid("a")}),)),
        Check(
            "namespace.describe",
            "DescribeNamespace",
            "returns the properties given at creation",
            (Call("DescribeNamespace", {"id": _nsid("a")}, verify=_props_include(_NS_PROPS)),),
        ),
        Check(
            "namespace.create.duplicate",
            "CreateNamespace",
            "mode=Create on an existing namespace -> code 2 NamespaceAlreadyExists",
            (Call("CreateNamespace", {"id": _nsid("a"), "mode": "Create"}, expect=2),),
        ),
        Check(
            "namespace.create.exist_ok",
            "CreateNamespace",
            "mode=ExistOk on an existing namespace succeeds and keeps its properties",
            (
                Call("CreateNamespace", {"id": _nsid("a"), "mode": "ExistOk", "properties": {"other": "x"}}),
                Call("DescribeNamespace", {"id": _nsid("a")}, verify=_props_include(_NS_PROPS)),
            ),
        ),
        Check(
            "namespace.create.overwrite",
            "CreateNamespace",
            "mode=Overwrite on an existing (empty) namespace replaces its properties",
            (
                Call("CreateNamespace", {"id": _nsid("a"), "mode": "Overwrite", "properties": {"new": "1"}}),
                Call("DescribeNamespace", {"id": _nsid("a")}, verify=_props_exclude("owner")),
            ),
        ),
        Check(
            "namespace.create.missing_parent",
            "CreateNamespace",
            "a namespace under a missing parent -> code 1 NamespaceNotFound",
            (Call("CreateNamespace", {"id": _nsid("__missing__", "child")}, expect=1),),
        ),
        Check(
            "namespace.create.invalid_name",
            "CreateNamespace",
            "names with '/', '\\', control characters or '..' -> code 13 InvalidInput",
            (
                Call("CreateNamespace", {"id": _nsid("bad/name")}, expect=13, raw=True),
                Call("CreateNamespace", {"id": _nsid("..")}, expect=13, raw=True),
                Call("CreateNamespace", {"id": _nsid("bad\\name")}, expect=13, raw=True),
                Call("CreateNamespace", {"id": _nsid("bad\x07name")}, expect=13, raw=True),
            ),
        ),
        Check("namespace.describe.missing", "DescribeNamespace", "a missing namespace -> code 1", (Call("DescribeNamespace", {"id": missing}, expect=1),)),
        Check("namespace.exists.missing", "NamespaceExists", "a missing namespace -> code 1", (Call("NamespaceExists", {"id": missing}, expect=1),)),
        Check("namespaces.list.missing", "ListNamespaces", "children of a missing namespace -> code 1", (Call("ListNamespaces", {"id": missing}, expect=1),)),
        *_paging_checks("namespaces", "ListNamespaces", "namespaces", "CreateNamespace", "pg"),
        Check(
            "namespace.drop.missing",
            "DropNamespace",
            "mode=Fail on a missing namespace -> code 1",
            (Call("DropNamespace", {"id": missing, "mode": "Fail"}, expect=1),),
        ),
        Check(
            "namespace.drop.skip_missing",
            "DropNamespace",
            "mode=Skip on a missing namespace succeeds",
            (Call("DropNamespace", {"id": missing, "mode": "Skip"}),),
        ),
        Check(
            "namespace.drop.not_empty",
            "DropNamespace",
            "behavior=Restrict on a non-empty namespace -> code 3 NamespaceNotEmpty, nothing dropped",
            (
                Call("DropNamespace", {"id": _nsid("ne"), "behavior": "Restrict"}, expect=3),
                Call("NamespaceExists", {"id": _nsid("ne", "child")}),
            ),
            setup=(Call("CreateNamespace", {"id": _nsid("ne")}), Call("CreateNamespace", {"id": _nsid("ne", "child")})),
        ),
        Check(
            "namespace.drop",
            "DropNamespace",
            "drops an empty namespace; it no longer exists",
            (Call("DropNamespace", {"id": _nsid("a")}), Call("NamespaceExists", {"id": _nsid("a")}, expect=1)),
        ),
        # -- tables (metadata)
        Check(
            "table.declare",
            "DeclareTable",
            "declares a table and returns its location",
            (Call("DeclareTable", {"id": _nsid("t1")}, verify=_has_location, save={"t1_loc": "location"}),),
        ),
        Check(
            "table.describe",
            "DescribeTable",
            "describes a declared table at the declared location",
            (Call("DescribeTable", {"id": _nsid("t1")}, verify=_same_location("t1_loc")),),
        ),
        Check("table.exists", "TableExists", "a declared table exists", (Call("TableExists", {"id": _nsid("t1")}),)),
        Check(
            "table.declare.duplicate",
            "DeclareTable",
            "declaring an existing table -> code 5 TableAlreadyExists",
            (Call("DeclareTable", {"id": _nsid("t1")}, expect=5),),
        ),
        Check(
            "table.declare.missing_namespace",
            "DeclareTable",
            "a table in a missing namespace -> code 1",
            (Call("DeclareTable", {"id": _nsid("__missing__", "t")}, expect=1),),
        ),
        Check(
            "table.declare.invalid_name",
            "DeclareTable",
            "table names with '/', '\\' or '..' -> code 13",
            (
                Call("DeclareTable", {"id": _nsid("bad/t")}, expect=13, raw=True),
                Call("DeclareTable", {"id": _nsid("..")}, expect=13, raw=True),
                Call("DeclareTable", {"id": _nsid("bad\\t")}, expect=13, raw=True),
            ),
        ),
        Check("table.describe.missing", "DescribeTable", "a missing table -> code 4 TableNotFound", (Call("DescribeTable", {"id": missing_table}, expect=4),)),
        Check("table.exists.missing", "TableExists", "a missing table -> code 4", (Call("TableExists", {"id": missing_table}, expect=4),)),
        Check(
            "tables.list.missing_namespace",
            "ListTables",
            "tables of a missing namespace -> code 1 (not an empty list)",
            (Call("ListTables", {"id": missing}, expect=1),),
        ),
        *_paging_checks("tables", "ListTables", "tables", "DeclareTable", "tp"),
        Check(
            "table.drop",
            "DropTable",
            "drops a table; it no longer exists; dropping again -> code 4",
            (
                Call("DropTable", {"id": _nsid("t1")}),
                Call("TableExists", {"id": _nsid("t1")}, expect=4),
                Call("DropTable", {"id": _nsid("t1")}, expect=4),
            ),
        ),
        Check("table.deregister.missing", "DeregisterTable", "a missing table -> code 4", (Call("DeregisterTable", {"id": missing_table}, expect=4),)),
        # -- tables with data
        Check(
            "table.create",
            "CreateTable",
            "creates a table from an Arrow IPC stream (or pylance writes one through DeclareTable)",
            (Call("CreateTable", {"id": _nsid("data"), "mode": "Create"}, arrow=True, verify=_has_location),),
            needs=frozenset({"data"}),
        ),
        Check(
            "table.versions",
            "ListTableVersions",
            "a table with data lists at least one version",
            (Call("ListTableVersions", {"id": _nsid("data")}, verify=_versions),),
            needs=frozenset({"data"}),
            optional=True,
            after="table.create",
        ),
        Check(
            "table.deregister",
            "DeregisterTable",
            "deregisters a table (its data stays); it no longer exists",
            (
                Call("DescribeTable", {"id": _nsid("data")}, save={"data_loc": "location"}),
                Call("DeregisterTable", {"id": _nsid("data")}),
                Call("TableExists", {"id": _nsid("data")}, expect=4),
            ),
            needs=frozenset({"data"}),
        ),
        Check(
            "table.register",
            "RegisterTable",
            "registers the deregistered table's location under a new name",
            (
                Call("RegisterTable", {"id": _nsid("reg"), "location": "{data_loc}"}),
                Call("DescribeTable", {"id": _nsid("reg")}, verify=_same_location("data_loc")),
            ),
            needs=frozenset({"data"}),
        ),
        Check(
            "table.register.duplicate",
            "RegisterTable",
            "mode=Create on an existing table -> code 5",
            (Call("RegisterTable", {"id": _nsid("reg"), "location": "{data_loc}", "mode": "Create"}, expect=5),),
            needs=frozenset({"data"}),
            after="table.register",
        ),
        Check(
            "table.register.overwrite",
            "RegisterTable",
            "mode=Overwrite on an existing table succeeds",
            (Call("RegisterTable", {"id": _nsid("reg"), "location": "{data_loc}", "mode": "Overwrite"}),),
            needs=frozenset({"data"}),
            after="table.register",
        ),
        # -- raw protocol (REST servers)
        Check(
            "http.malformed_arrow",
            "CreateTable",
            "a body that is not Arrow IPC -> HTTP 400, code 13",
            (Http("POST", "/v1/table/{ns}$bad_arrow/create", 400, 13, b"this is not an Arrow IPC stream", "application/vnd.apache.arrow.stream"),),
            needs=frozenset({"http"}),
        ),
        Check(
            "http.malformed_json",
            "CreateNamespace",
            "a body that is not JSON -> HTTP 400, code 13",
            (Http("POST", "/v1/namespace/{ns}$bad_json/create", 400, 13, b"{not json", "application/json"),),
            needs=frozenset({"http"}),
        ),
        Check(
            "http.unknown_mode",
            "CreateNamespace",
            "an unknown mode -> HTTP 400, code 13 (never silently ignored)",
            (Http("POST", "/v1/namespace/{ns}$bad_mode/create", 400, 13, b'{"mode":"Bogus"}', "application/json"),),
            needs=frozenset({"http"}),
        ),
        Check(
            "http.empty_component",
            "DescribeNamespace",
            "an id with an empty component (a$$b) -> HTTP 400, code 13",
            (Http("POST", "/v1/namespace/{ns}$$x/describe", 400, 13, b"{}", "application/json"),),
            needs=frozenset({"http"}),
        ),
        Check(
            "http.unauthenticated",
            "DescribeNamespace",
            "a request without credentials -> HTTP 401, code 16",
            (Http("POST", "/v1/namespace/{ns}/describe", 401, 16, b"{}", "application/json"),),
            needs=frozenset({"http", "auth"}),
        ),
        # -- cascade last: it removes what the scenario built
        Check(
            "namespace.drop.cascade",
            "DropNamespace",
            "behavior=Cascade drops a namespace holding a child namespace and a table",
            (
                Call("DropNamespace", {"id": _nsid("cz"), "behavior": "Cascade"}),
                Call("NamespaceExists", {"id": _nsid("cz")}, expect=1),
                Call("TableExists", {"id": _nsid("cz", "t")}, expect=(1, 4)),
            ),
            setup=(
                Call("CreateNamespace", {"id": _nsid("cz")}),
                Call("CreateNamespace", {"id": _nsid("cz", "child")}),
                Call("DeclareTable", {"id": _nsid("cz", "t")}),
            ),
        ),
        Check(
            "protocol.error_code",
            "*",
            "every error response carries an integer code",
            (Fn(_error_bodies),),
            needs=frozenset({"http"}),
        ),
        Check(
            "protocol.error_status",
            "*",
            "every error response's HTTP status matches its code (404 not found, 409 conflict, 400 invalid...)",
            (Fn(_error_statuses),),
            needs=frozenset({"http"}),
        ),
    ]
    return checks


CHECKS: list[Check] = scenario()


# -- targets ----------------------------------------------------------------------


@dataclass
class Target:
    """What is checked: a namespace client, plus raw HTTP access for REST servers."""

    client: LanceNamespace
    http: Any = None  # httpx.Client with base_url, for REST targets
    anonymous_http: Any = None  # httpx.Client without credentials (auth checks)
    description: str = ""

    @classmethod
    def rest(cls, uri: str, auth_token: str | None = None, headers: Mapping[str, str] | None = None) -> "Target":
        import httpx

        from .impls.rest import RestNamespace

        props = {"uri": uri, "max_retries": "0"}
        props.update({f"header.{k}": v for k, v in (headers or {}).items()})
        if auth_token:
            props["auth_token"] = auth_token
        client = RestNamespace(**props)
        hdrs = dict(headers or {})
        if auth_token:
            hdrs["Authorization"] = f"Bearer {auth_token}"
        http = httpx.Client(base_url=uri.rstrip("/"), headers=hdrs, timeout=30)
        anon = httpx.Client(base_url=uri.rstrip("/"), timeout=30) if auth_token else None
        return cls(client, http, anon, f"REST server {uri}")

    @classmethod
    def backend(cls, namespace: LanceNamespace) -> "Target":
        return cls(namespace, description=namespace.namespace_id())

    def close(self) -> None:
        for c in (self.http, self.anonymous_http):
            if c is not None:
                c.close()
        if self.http is not None and hasattr(self.client, "close"):
            self.client.close()  # our REST client, created by rest()


# -- running --------------------------------------------------------------------


class Run:
    """The state of one scenario run: the namespace, variables, observed errors."""

    def __init__(self, target: Target, ns: list[str]):
        self.target = target
        self.ns = ns
        self.vars: dict[str, Any] = {}
        self.errors: list[dict] = []  # every HTTP error response seen: method, path, status, code
        self.has_data: bool | None = None
        self.nested: bool | None = None  # whether a namespace can be created inside the scenario's
        self.passed: set[str] = set()
        self.leaks: list[tuple[str, list[str]]] = []  # (op, id) created although refused
        self._hooked = [c for c in (target.http, getattr(target.client, "_client", None) if target.http else None) if c]
        for c in self._hooked:
            c.event_hooks["response"] = [*c.event_hooks["response"], self._record]

    def close(self) -> None:
        for c in self._hooked:
            c.event_hooks["response"] = [h for h in c.event_hooks["response"] if h != self._record]

    def _record(self, resp) -> None:
        if resp.status_code < 400:
            return
        resp.read()
        try:
            body = json.loads(resp.content)
        except ValueError:
            body = None
        code = body.get("code") if isinstance(body, dict) else None
        if isinstance(code, bool) or not isinstance(code, int):
            code = None
        self.errors.append(
            {"method": resp.request.method, "path": resp.request.url.path, "status": resp.status_code, "code": code}
        )

    # -- placeholders
    def expand(self, value: Any) -> Any:
        if isinstance(value, list):
            out: list = []
            for v in value:
                if v == NS:
                    out.extend(self.ns)
                else:
                    out.append(self.expand(v))
            return out
        if isinstance(value, dict):
            return {k: self.expand(v) for k, v in value.items()}
        if isinstance(value, str) and value.startswith("{") and value.endswith("}") and value[1:-1] in self.vars:
            return self.vars[value[1:-1]]
        return value

    def path(self, template: str) -> str:
        return template.replace(NS, quote("$".join(self.ns), safe=""))

    # -- calls
    def call(self, op_id: str, request: Mapping[str, Any], data: bytes | None = None, raw: bool = False) -> dict:
        """Run one operation; returns the response as a dict, raises LanceNamespaceError."""
        op = BY_OP_ID[op_id]
        req = dict(self.expand(dict(request)))
        client = self.target.client
        if raw and self.target.http is not None and hasattr(client, "_invoke"):
            # unvalidated: build the model without the base's name checks
            from .server.routes import ROUTES

            model = op.request.model_validate(req)
            result = client._invoke(ROUTES[op.method], model, data)
        else:
            model = coerce_request(req, op.request) if not raw else op.request.model_validate(req)
            fn = getattr(client, op.method)
            result = fn(model, data if data is not None else b"") if op.has_data else fn(model)
        if hasattr(result, "model_dump"):
            return result.model_dump(mode="json", exclude_none=True)
        return result if isinstance(result, dict) else {"value": result}

    def create_data_table(self, step: Call) -> dict:
        """CreateTable with an Arrow IPC body; pylance through DeclareTable if unsupported."""
        try:
            return self.call(step.op, step.request, _arrow_stream())
        except LanceNamespaceError as e:
            if int(e.code) != 0:
                raise
        import lance
        import pyarrow as pa

        table_id = self.expand(list(step.request["id"]))
        try:
            lance.write_dataset(
                pa.table({"id": [1, 2, 3]}), namespace_client=self.target.client, table_id=table_id, mode="create"
            )
        except LanceNamespaceError:
            raise
        except Exception as e:  # noqa: BLE001 - storage the client cannot reach: not a protocol failure
            raise _Skip(f"CreateTable is unsupported and pylance cannot write to the declared location: {e}")
        return self.call("DescribeTable", {"id": step.request["id"]})

    def run_step(self, step, check: Check) -> None:
        if isinstance(step, Fn):
            problem = step.fn(self)
            if problem:
                raise _Fail(problem)
            return
        if isinstance(step, Http):
            self._http_step(step)
            return
        try:
            if step.arrow:
                resp = self.create_data_table(step)
            else:
                resp = self.call(step.op, step.request, raw=step.raw)
        except LanceNamespaceError as e:
            code = int(e.code)
            if step.expect is not None and code in _codes(step.expect):
                return
            if code == 0 and check.optional:
                raise _Skip(f"{step.op} is not supported: {e}")
            want = "success" if step.expect is None else _code_name(step.expect)
            raise _Fail(f"{step.op} {_brief(step.request)}: expected {want}, got {_code_name(code)}: {_clip(e)}")
        except (_Skip, _Fail):
            raise
        except Exception as e:  # noqa: BLE001 - a broken peer: report it, keep going
            raise _Fail(f"{step.op} {_brief(step.request)}: {type(e).__name__}: {_clip(e)}")
        if step.expect is not None:
            if step.op in _UNDO:  # it created something it should not have: remove it at the end
                self.leaks.append((step.op, self.expand(dict(step.request))["id"]))
            raise _Fail(f"{step.op} {_brief(step.request)}: expected {_code_name(step.expect)}, but it succeeded ({_clip(resp)})")
        for var, key in step.save.items():
            self.vars[var] = resp.get(key)
        if step.verify:
            problem = step.verify(resp, self.vars)
            if problem:
                raise _Fail(f"{step.op} {_brief(step.request)}: {problem}")

    def _http_step(self, step: Http) -> None:
        client = self.target.anonymous_http if step.status == 401 else self.target.http
        headers = {"Content-Type": step.content_type} if step.content_type else {}
        path = self.path(step.path)
        try:
            resp = client.request(step.method, path, content=step.body, headers=headers)
        except Exception as e:  # noqa: BLE001
            raise _Fail(f"{step.method} {path}: {type(e).__name__}: {_clip(e)}")
        try:
            body = resp.json()
        except ValueError:
            body = None
        code = body.get("code") if isinstance(body, dict) else None
        problems = []
        if resp.status_code != step.status:
            problems.append(f"HTTP {resp.status_code} (expected {step.status})")
        if step.code is not None and (isinstance(code, bool) or code != step.code):
            problems.append(f"code {code!r} (expected {step.code})")
        if problems:
            raise _Fail(f"{step.method} {path} -> " + ", ".join(problems) + f": {_clip(resp.text)}")


def _codes(expect: int | tuple[int, ...]) -> tuple[int, ...]:
    return expect if isinstance(expect, tuple) else (expect,)


def _code_name(code: int | tuple[int, ...]) -> str:
    if isinstance(code, tuple):
        return " or ".join(_code_name(c) for c in code)
    info = ERRORS.get(code)
    return f"code {code} ({info.name})" if info else f"code {code}"


def _brief(request: Mapping) -> str:
    return " ".join(f"{k}={v!r}" for k, v in request.items() if k in ("id", "mode", "behavior", "limit"))


def _clip(x: object, n: int = 160) -> str:
    s = str(x).replace("\n", " ")
    return s if len(s) <= n else s[: n - 3] + "..."


#: creating operations -> how to undo them
_UNDO = {
    "CreateNamespace": ("DropNamespace",),
    "DeclareTable": ("DropTable", "DeregisterTable"),
    "RegisterTable": ("DeregisterTable",),
    "CreateTable": ("DropTable",),
}


def _needs_met(check: Check, target: Target, run: Run) -> str | None:
    if check.after and check.after not in run.passed:
        return f"{check.after} did not pass"
    if "http" in check.needs and target.http is None:
        return "needs a REST server (--uri)"
    if "auth" in check.needs and target.anonymous_http is None:
        return "needs --auth-token"
    if "data" in check.needs and run.has_data is False:
        return "no table with data could be created"
    if "nested" in check.needs and run.nested is False:
        return "the backend has no namespace level below the scenario's namespace (a flat catalog)"
    return None


def _probe_nesting(run: Run) -> bool:
    """Whether a namespace can be created inside the scenario's namespace.

    Unsupported (0) or InvalidInput (13) for the child means a flat catalog;
    any other answer lets the nested checks run and report for themselves.
    """
    probe = [NS, "nesting_probe"]
    try:
        run.call("CreateNamespace", {"id": probe}, raw=True)
    except LanceNamespaceError as e:
        return int(e.code) not in (0, 13)
    _quiet(run, "DropNamespace", {"id": probe})
    return True


def unique_namespace(prefix: str = "lance_ns_check") -> str:
    return f"{prefix}_{uuid.uuid4().hex[:10]}"


def run_checks(
    target: Target,
    checks: Iterable[Check] | None = None,
    parent: list[str] | None = None,
    on_result: Callable[[CheckResult], None] | None = None,
) -> list[CheckResult]:
    """Run the scenario in a fresh namespace under ``parent`` and remove it."""
    checks = list(CHECKS if checks is None else checks)
    ns = list(parent or []) + [unique_namespace()]
    run = Run(target, ns)
    results: list[CheckResult] = []

    clock = [time.perf_counter()]

    def emit(check: Check, status: str, detail: str = "") -> None:
        now = time.perf_counter()
        r = CheckResult(check.name, check.operation, check.expectation, status, detail, round(now - clock[0], 3))
        clock[0] = now
        results.append(r)
        if on_result:
            on_result(r)

    setup = Check("scenario.setup", "CreateNamespace", "creates the scenario's namespace", (Call("CreateNamespace", {"id": [NS]}),))
    if not _run_one(run, setup, emit):
        return results
    try:
        if any("nested" in c.needs for c in checks):
            run.nested = _probe_nesting(run)
        for check in checks:
            reason = _needs_met(check, target, run)
            if reason:
                emit(check, SKIP, reason)
                continue
            ok = _run_one(run, check, emit)
            if "data" in check.needs and check.name == "table.create":
                run.has_data = ok
    finally:
        cleanup = Check("scenario.cleanup", "DropNamespace", "removes the scenario's namespace and everything in it", (Fn(_cleanup),))
        _run_one(run, cleanup, emit)
        run.close()
    return results


def _run_one(run: Run, check: Check, emit) -> bool:
    try:
        for step in check.setup:
            try:
                run.run_step(step, check)
            except _Fail as e:
                raise _Fail(f"setup failed: {e}") from None
        for step in check.steps:
            run.run_step(step, check)
    except _Skip as e:
        emit(check, SKIP, str(e))
        return False
    except _Fail as e:
        emit(check, FAIL, str(e))
        return False
    run.passed.add(check.name)
    emit(check, PASS)
    return True


def _cleanup(run: Run) -> str | None:
    """Cascade first; servers that ignore Cascade are emptied by hand."""
    try:
        run.call("DropNamespace", {"id": [NS], "behavior": "Cascade"})
    except LanceNamespaceError:
        for op, ident in reversed(run.leaks):
            for undo in _UNDO[op]:
                if _quiet(run, undo, {"id": ident}):
                    break
        _empty(run, list(run.ns))
        try:
            run.call("DropNamespace", {"id": [NS]})
        except LanceNamespaceError as e:
            return f"the scenario's namespace {'.'.join(run.ns)!r} could not be removed: {_clip(e)}"
    try:
        run.call("NamespaceExists", {"id": [NS]})
    except LanceNamespaceError as e:
        if int(e.code) == 1:
            return None
    return f"the scenario's namespace {'.'.join(run.ns)!r} still exists"


def _empty(run: Run, ns: list[str]) -> None:
    try:
        for child in run.call("ListNamespaces", {"id": ns}, raw=True).get("namespaces") or []:
            _empty(run, ns + [child])
            _quiet(run, "DropNamespace", {"id": ns + [child]})
        for table in run.call("ListTables", {"id": ns}, raw=True).get("tables") or []:
            if not _quiet(run, "DropTable", {"id": ns + [table]}):
                _quiet(run, "DeregisterTable", {"id": ns + [table]})
    except LanceNamespaceError:
        pass


def _quiet(run: Run, op: str, request: dict) -> bool:
    try:
        run.call(op, request, raw=True)
        return True
    except LanceNamespaceError:
        return False
    except Exception:  # noqa: BLE001 - best effort cleanup of a possibly broken peer
        return False


def summary(results: list[CheckResult]) -> dict[str, int]:
    out = {PASS: 0, FAIL: 0, SKIP: 0}
    for r in results:
        out[r.status] += 1
    return out


def passed(results: list[CheckResult]) -> bool:
    return bool(results) and all(r.status != FAIL for r in results)
