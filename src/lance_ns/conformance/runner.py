"""Running the scenario: :func:`run_checks` against a :class:`~.targets.Target`
inside one uniquely named namespace it creates and removes, one
:class:`~.model.CheckResult` per check.

Why raw requests for REST targets: a client validates names before sending
and maps code-less error bodies by HTTP status, which would hide exactly the
departures a vendor needs to see.  So every call to a REST target goes over
the wire unvalidated (:meth:`RestNamespace.raw_request`), and every error
response is recorded and checked for an integer ``code`` whose HTTP status
matches the spec's table.
"""

from __future__ import annotations

import time
import uuid
from typing import Any, Callable, Iterable, Mapping
from urllib.parse import quote

from ..base import BY_OP_ID, OPERATIONS, coerce_request
from ..errors import ERRORS, LanceNamespaceError
from ..walk import drop_tree
from .model import FAIL, NS, PASS, SKIP, Call, Check, CheckResult, Failed, Fn, Http, Skipped
from .scenario import CHECKS, arrow_stream
from .targets import Target


class Run:
    """The state of one scenario run: the namespace, variables, observed errors."""

    def __init__(self, target: Target, ns: list[str]):
        self.target = target
        self.ns = ns
        self.vars: dict[str, Any] = {}
        self.errors: list[dict] = []  # every HTTP error response seen: method, path, status, code
        self.has_data: bool | None = None
        self.nested: bool | None = None  # whether a namespace can be created inside the run's
        self.passed: set[str] = set()
        self.leaks: list[tuple[str, list[str]]] = []  # (op, id) created although refused

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
        """Run one operation; returns the response as a dict (JSON names), raises LanceNamespaceError."""
        op = BY_OP_ID[op_id]
        req = dict(self.expand(dict(request)))
        rest = self.target.rest
        if rest is not None:
            return self._over_the_wire(rest, op, req, data)
        model = op.request.model_validate(req) if raw else coerce_request(req, op.request)
        fn = getattr(self.target.client, op.method)
        result = fn(model, data if data is not None else b"") if op.has_data else fn(model)
        if isinstance(getattr(result, "data", None), bytes):  # QueryTable's Arrow IPC file, as over REST
            return {"value": result.data}
        if hasattr(result, "model_dump"):
            try:
                return result.model_dump(mode="json", by_alias=True, exclude_none=True)
            except UnicodeDecodeError:  # a binary payload (QueryTable's Arrow data) stays bytes
                return result.model_dump(by_alias=True, exclude_none=True)
        return result if isinstance(result, dict) else {"value": result}

    def _over_the_wire(self, rest, op, req: dict, data: bytes | None) -> dict:
        from ..protocol.routes import ROUTES

        route = ROUTES[op.method]
        fields = op.request.model_validate(req).model_dump(by_alias=True, exclude_none=True, mode="json")
        path, params, content, headers = rest.encode(route, fields, data)
        resp = rest.raw_request(route.method, path, params=params, content=content, headers=headers)
        self.observe(route.method, path, resp)
        error = resp.error()
        if error is not None:
            raise error
        if route.response == "count":  # a bare number (or an object naming it)
            body = resp.json()
            return {"count": body.get("count") if isinstance(body, dict) else body}
        if route.response in ("arrow", "text"):
            return {"value": resp.content}
        body = resp.json() if resp.content else {}  # an empty body: nothing to say (NamespaceExists)
        if not isinstance(body, dict):
            raise ValueError(f"HTTP {resp.status} with a body that is not a JSON object: {_clip(resp.text)}")
        if route.response_field:  # a bare map stands for that response field
            body = {route.response_field: body}
        if op.response is not None:
            op.response.model_validate(body)  # the protocol's response shape (a ValidationError fails the step)
        return body

    def observe(self, method: str, path: str, resp) -> None:
        if resp.status >= 400:
            self.errors.append({"method": method, "path": path, "status": resp.status, "code": resp.code})

    def create_data_table(self, step: Call) -> dict:
        """CreateTable with an Arrow IPC body; pylance through DeclareTable if unsupported."""
        try:
            return self.call(step.op, step.request, arrow_stream())
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
            raise Skipped(f"CreateTable is unsupported and pylance cannot write to the declared location: {e}")
        return self.call("DescribeTable", {"id": step.request["id"]})

    def run_step(self, step, check: Check) -> None:
        if isinstance(step, Fn):
            problem = step.fn(self)
            if problem:
                raise Failed(problem)
            return
        if isinstance(step, Http):
            self._http_step(step)
            return
        try:
            resp = self.create_data_table(step) if step.arrow else self.call(step.op, step.request, step.data, step.raw)
        except LanceNamespaceError as e:
            code = int(e.code)
            if step.expect is not None and code in _codes(step.expect):
                return
            if code == 0 and check.optional:
                raise Skipped(f"{step.op} is not supported: {e}")
            want = "success" if step.expect is None else _code_name(step.expect)
            raise Failed(f"{step.op} {_brief(step.request)}: expected {want}, got {_code_name(code)}: {_clip(e)}")
        except (Skipped, Failed):
            raise
        except Exception as e:  # noqa: BLE001 - a broken peer: report it, keep going
            raise Failed(f"{step.op} {_brief(step.request)}: {type(e).__name__}: {_clip(e)}")
        if step.expect is not None:
            if step.op in _UNDO:  # it created something it should not have: remove it at the end
                self.leaks.append((step.op, self.expand(dict(step.request))["id"]))
            raise Failed(f"{step.op} {_brief(step.request)}: expected {_code_name(step.expect)}, but it succeeded ({_clip(resp)})")
        for var, key in step.save.items():
            self.vars[var] = resp.get(key)
        if step.verify:
            problem = step.verify(resp, self.vars)
            if problem:
                raise Failed(f"{step.op} {_brief(step.request)}: {problem}")

    def _http_step(self, step: Http) -> None:
        client = self.target.anonymous if step.status == 401 else self.target.rest
        headers = {"Content-Type": step.content_type} if step.content_type else {}
        path = self.path(step.path)
        try:
            resp = client.raw_request(step.method, path, content=step.body, headers=headers)
        except Exception as e:  # noqa: BLE001
            raise Failed(f"{step.method} {path}: {type(e).__name__}: {_clip(e)}")
        self.observe(step.method, path, resp)
        problems = []
        if resp.status != step.status:
            problems.append(f"HTTP {resp.status} (expected {step.status})")
        if step.code is not None and resp.code != step.code:
            body = resp.json()
            problems.append(f"code {body.get('code') if isinstance(body, dict) else None!r} (expected {step.code})")
        if problems:
            raise Failed(f"{step.method} {path} -> " + ", ".join(problems) + f": {_clip(resp.text)}")


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


def _needs_met(check: Check, target: Target, run: Run) -> str | None:
    if check.after and check.after not in run.passed:
        return f"{check.after} did not pass"
    reason = target_lacks(check, target)
    if reason:
        return reason
    if "data" in check.needs and run.has_data is False:
        return "no table with data could be created"
    if "nested" in check.needs and run.nested is False:
        return "the backend has no namespace level below the scenario's namespace (a flat catalog)"
    return None


def target_lacks(check: Check, target: Target) -> str | None:
    """Why ``check`` cannot apply to ``target`` whatever the run finds (None: it may): what
    the target is (REST or direct, with credentials or not) and what its class declares.
    The test suite generates a backend's checks from this, before anything runs."""
    if "http" in check.needs and target.rest is None:
        return "needs a REST server (--uri)"
    if "direct" in check.needs and target.rest is not None:
        return "needs a direct (not REST) target: the protocol's body for this operation carries no such field"
    if "auth" in check.needs and target.anonymous is None:
        return "needs --auth-token"
    lacking = sorted(check.needs & target.lacks)
    if lacking:
        return f"the backend declares it has no {', '.join(lacking)} (class attribute)"
    allowed = sorted(check.unless & target.caps)
    if allowed:
        return f"the backend declares {', '.join(allowed)} (class attribute): the spec allows other behaviour"
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


SETUP = Check("scenario.setup", "CreateNamespace", "creates the scenario's namespace", (Call("CreateNamespace", {"id": [NS]}),))


#: creating operations -> how to undo them
_UNDO = {
    "CreateNamespace": ("DropNamespace",),
    "DeclareTable": ("DropTable", "DeregisterTable"),
    "RegisterTable": ("DeregisterTable",),
    "CreateTable": ("DropTable",),
}


class _Unvalidated:
    """The run's own (for REST: unvalidated) calls as a namespace object, so
    the shared tree walk can remove names a server should have refused."""

    def __init__(self, run: Run):
        self._run = run

    def __getattr__(self, method: str):
        op = OPERATIONS[method]

        def call(request):
            resp = self._run.call(op.op_id, request.model_dump(exclude_none=True), raw=True)
            return _Fields(resp)

        return call


class _Fields:
    def __init__(self, fields: dict):
        self._fields = fields

    def __getattr__(self, name: str):
        return self._fields.get(name)


def _cleanup(run: Run) -> str | None:
    """Cascade first; servers that ignore Cascade (or lack it) are emptied by hand."""
    try:
        run.call("DropNamespace", {"id": [NS], "behavior": "Cascade"})
    except LanceNamespaceError:
        for op, ident in reversed(run.leaks):
            for undo in _UNDO[op]:
                if _quiet(run, undo, {"id": ident}):
                    break
        drop_tree(_Unvalidated(run), list(run.ns), best_effort=True)
    try:
        run.call("NamespaceExists", {"id": [NS]})
    except LanceNamespaceError as e:
        if int(e.code) == 1:
            return None
    return f"the scenario's namespace {'.'.join(run.ns)!r} still exists"


CLEANUP = Check(
    "scenario.cleanup", "DropNamespace", "removes the scenario's namespace and everything in it", (Fn(_cleanup),)
)
#: every result name a run reports, in order
RESULT_NAMES = [SETUP.name, *(c.name for c in CHECKS), CLEANUP.name]


def run_checks(
    target: Target,
    checks: Iterable[Check] | None = None,
    parent: list[str] | None = None,
    on_result: Callable[[CheckResult], None] | None = None,
) -> list[CheckResult]:
    """Run the scenario in a fresh namespace under ``parent`` and remove it."""
    checks = list(CHECKS if checks is None else checks)
    run = Run(target, list(parent or []) + [unique_namespace()])
    results: list[CheckResult] = []
    clock = [time.perf_counter()]

    def emit(check: Check, status: str, detail: str = "") -> None:
        now = time.perf_counter()
        r = CheckResult(check.name, check.operation, check.expectation, status, detail, round(now - clock[0], 3))
        clock[0] = now
        results.append(r)
        if on_result:
            on_result(r)

    if not _run_one(run, SETUP, emit):
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
            if check.name == "table.create":
                run.has_data = ok
    finally:
        _run_one(run, CLEANUP, emit)
    return results


def _run_one(run: Run, check: Check, emit) -> bool:
    try:
        for step in check.setup:
            try:
                run.run_step(step, check)
            except Failed as e:
                raise Failed(f"setup failed: {e}") from None
        for step in check.steps:
            run.run_step(step, check)
    except Skipped as e:
        emit(check, SKIP, str(e))
        return False
    except Failed as e:
        emit(check, FAIL, str(e))
        return False
    run.passed.add(check.name)
    emit(check, PASS)
    return True


def _quiet(run: Run, op: str, request: dict) -> bool:
    try:
        run.call(op, request, raw=True)
        return True
    except Exception:  # noqa: BLE001 - best effort cleanup of a possibly broken peer
        return False


def summary(results: list[CheckResult]) -> dict[str, int]:
    out = {PASS: 0, FAIL: 0, SKIP: 0}
    for r in results:
        out[r.status] += 1
    return out


def passed(results: list[CheckResult]) -> bool:
    return bool(results) and all(r.status != FAIL for r in results)
