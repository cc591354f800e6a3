"""An in-process Unity Catalog server written from the published contract (a double).

The real Unity Catalog OSS server runs too where Maven serves it (tests/services/unity_oss.py:
conformance backends ``unity-oss`` / ``unity-oss-0.4``, and tests/unity parametrised onto it).
This double stays for what the real server cannot be made to do: fail on cue (``inject``:
5xx, 429, 403, stalls for timeouts, a 409 that is no duplicate, a 404 from a write racing a
drop), keep a request log (retries and pages counted), page at a small size the server picks,
check a bearer token (the real one runs with authorization disabled: enabling it needs an
identity provider), speak Unity <= 0.3's errors (404 ``NOT_FOUND``, 409 ``ALREADY_EXISTS``;
no such release is on Maven Central), and hold every request and response to the published
contract; and it is all there is where Maven refuses the real server (it refuses every
``unitycatalog-server`` release on the development machines).

It serves catalogs, schemas and tables of ``/api/2.1/unity-catalog`` (list with
``max_results``/``page_token``, get, create, delete), on 127.0.0.1 with a free
port, in a thread.  Every request and every 2xx response is validated against
``tests/contracts/unity-catalog-api.yaml`` (vendored) with openapi-core; error
responses (the contract describes none) against the error body every Unity
server sends, ``{"error_code", "message"}``.  A violation is answered with
500 ``CONTRACT_VIOLATION`` and recorded in ``violations``; the fixtures fail
the test when any was recorded.  A verdict is a function of the whole request (and
response), so the same bytes again get the verdict they got before without being
validated again (the concurrent-append races repeat each table's GET many times).

Listings are in ascending name order and a ``next_page_token`` is the page's last name, as
the real server pages (its ``PagedListingHelper``); clients must treat tokens as opaque.

``legacy_errors`` selects the error convention of Unity <= 0.3 (404
``NOT_FOUND``, 409 ``ALREADY_EXISTS``) instead of >= 0.4 (404 ``*_NOT_FOUND``,
400 ``*_ALREADY_EXISTS``).  ``page_size`` is the server's own page cap, small
by default so client paging loops are exercised.  ``inject(...)`` makes the
next matching requests fail or stall, for retry and error-mapping tests.
Like the real server it stores a local ``storage_location`` ``/p`` as the
URI ``file:///p``, normalised and percent-encoded.
"""

from __future__ import annotations

import copy
import json
import posixpath
import threading
import time
import urllib.request
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterator
from urllib.parse import quote

import jsonschema
import yaml
from openapi_core import Config, OpenAPI
from openapi_core.contrib.werkzeug import WerkzeugOpenAPIRequest, WerkzeugOpenAPIResponse
from openapi_schema_validator import OAS30Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT4 as _OAS30_SPEC  # OpenAPI 3.0 schemas are draft-4 based
from werkzeug.serving import WSGIRequestHandler, make_server
from werkzeug.wrappers import Request, Response

PREFIX = "/api/2.1/unity-catalog"
#: the one path the double serves outside the contract when it runs in a process of its
#: own: the violations recorded so far (the test process cannot read the double's memory)
VIOLATIONS_PATH = "/__double__/violations"
SERVED = ("catalogs", "schemas", "tables")
ERROR_SCHEMA = {
    "type": "object",
    "required": ["error_code", "message"],
    "properties": {"error_code": {"type": "string", "minLength": 1}, "message": {"type": "string"}},
}


def contract_path() -> Path:
    """The published contract, vendored in the tests' tree (see tests/contracts/README.md)."""
    return Path(__file__).resolve().parents[1] / "contracts" / "unity-catalog-api.yaml"


@lru_cache(maxsize=1)
def contract() -> OpenAPI:
    spec = yaml.safe_load(contract_path().read_text())
    # The document's only server is http://localhost:8080/...; ours runs on a
    # free port, so match the API prefix on any host.
    spec["servers"] = [{"url": PREFIX}]
    # Only the resources this server serves: openapi-core finds paths by
    # scanning, and the other ~25 would triple the cost of every request.
    # A request outside them is still refused as a violation.
    spec["paths"] = {p: v for p, v in spec["paths"].items() if p.split("/")[1] in SERVED}
    # The published document fails its own meta-validation (ColumnInfo.nullable
    # has default 'true', a string); the schemas themselves are used as written.
    return OpenAPI.from_dict(spec, config=Config(spec_validator_cls=None))


#: contract verdicts already reached: (what, the request's method, path, headers and body[, the
#: response's status and body]) -> the errors found; bounded, it starts again when full
_VERDICTS: dict[tuple, list] = {}
_VERDICTS_MAX = 4096


def _verdict(key: tuple, judge) -> list:
    found = _VERDICTS.get(key)
    if found is None:
        found = judge()
        if len(_VERDICTS) >= _VERDICTS_MAX:
            _VERDICTS.clear()
        _VERDICTS[key] = found
    return found


@lru_cache(maxsize=None)
def component_validator(name: str):
    """A jsonschema validator for ``#/components/schemas/<name>`` of the contract."""
    spec = yaml.safe_load(contract_path().read_text())
    resource = Resource.from_contents(spec, default_specification=_OAS30_SPEC)
    registry = Registry().with_resource("urn:unity", resource)
    schema = {"$ref": f"urn:unity#/components/schemas/{name}"}
    return OAS30Validator(schema, registry=registry)


def _fail_on(violations: list[str]) -> None:
    """The test's failure when the double recorded any violation (in this process or another)."""
    if violations:
        raise AssertionError("Unity contract violations:\n" + "\n".join(violations))


class HttpError(Exception):
    def __init__(self, status: int, code: str, message: str):
        self.status, self.code, self.message = status, code, message


@dataclass
class _Fault:
    status: int
    code: str
    remaining: int
    method: str | None = None
    path: str | None = None  # prefix below the API root, e.g. "/schemas"
    delay: float = 0.0  # seconds to wait first; with status 0 the request then proceeds

    def matches(self, method: str, path: str) -> bool:
        return self.remaining > 0 and self.method in (None, method) and (self.path is None or path.startswith(self.path))


class UnityServer:
    def __init__(self, legacy_errors: bool = False, page_size: int = 4, auth_token: str | None = None):
        self.legacy_errors = legacy_errors
        self.page_size = page_size
        self.auth_token = auth_token
        self.catalogs: dict[str, dict] = {}  # name -> CatalogInfo
        self.schemas: dict[str, dict] = {}  # "c.s" -> SchemaInfo
        self.tables: dict[str, dict] = {}  # "c.s.t" -> TableInfo
        self.violations: list[str] = []
        self.requests: list[tuple[str, str]] = []  # (method, path?query)
        self._faults: list[_Fault] = []
        self._lock = threading.RLock()
        #: in a process of its own (unity_server_process): VIOLATIONS_PATH answers what was recorded
        self.reports_violations = False

    # -- test hooks --------------------------------------------------------------
    def inject(
        self, status: int, code: str = "INTERNAL_ERROR", times: int = 1, method: str | None = None, path: str | None = None, delay: float = 0.0
    ) -> None:
        """Answer the next ``times`` matching requests with ``status``/``code``
        (status 0: answer normally), after ``delay`` seconds."""
        with self._lock:
            self._faults.append(_Fault(status, code, times, method, path, delay))

    def check(self) -> None:
        """Fail if any request or response broke the contract."""
        found, self.violations = self.violations, []
        _fail_on(found)

    # -- WSGI ----------------------------------------------------------------------
    def __call__(self, environ, start_response):
        if self.reports_violations and environ.get("PATH_INFO") == VIOLATIONS_PATH:
            found, self.violations = self.violations, []
            return Response(json.dumps(found), mimetype="application/json")(environ, start_response)
        request = Request(environ)
        response = self._handle(request)
        return response(environ, start_response)

    def _handle(self, request: Request) -> Response:
        self.requests.append((request.method, request.full_path))
        # a verdict is a function of the whole request (and response): the same bytes again get
        # the verdict they got before, without openapi-core's ~1-4 ms (racing clients repeat a
        # request many times over: an append reads its table three times)
        asked = (request.method, request.full_path, tuple(request.headers.items()), request.get_data())
        errors = _verdict(("request", asked),
                          lambda: list(contract().iter_request_errors(WerkzeugOpenAPIRequest(request))))
        if errors:
            return self._violation(request, "request", errors)
        try:
            status, body = 200, self._dispatch(request)
        except HttpError as e:
            status, body = e.status, {"error_code": e.code, "message": e.message}
        response = Response(json.dumps(body), status=status, mimetype="application/json")
        if status < 400:
            problems = _verdict(("response", asked, status, response.get_data()), lambda: list(
                contract().iter_response_errors(WerkzeugOpenAPIRequest(request), WerkzeugOpenAPIResponse(response))))
        else:
            problems = [e.message for e in jsonschema.Draft7Validator(ERROR_SCHEMA).iter_errors(body)]
        if problems:
            return self._violation(request, f"{status} response", problems)
        return response

    def _violation(self, request: Request, what: str, errors: list) -> Response:
        detail = "; ".join(_describe(e) for e in errors)
        self.violations.append(f"{request.method} {request.full_path}: {what}: {detail}")
        body = {"error_code": "CONTRACT_VIOLATION", "message": f"{what} breaks the contract: {detail}"}
        return Response(json.dumps(body), status=500, mimetype="application/json")

    # -- routing ---------------------------------------------------------------------
    def _dispatch(self, request: Request) -> dict:
        if self.auth_token and request.headers.get("Authorization") != f"Bearer {self.auth_token}":
            raise HttpError(401, "UNAUTHENTICATED", "missing or wrong bearer token")
        path = request.path[len(PREFIX) :]
        with self._lock:
            fault = next((f for f in self._faults if f.matches(request.method, path)), None)
            if fault:
                fault.remaining -= 1
        if fault:
            time.sleep(fault.delay)
            if fault.status:
                raise HttpError(fault.status, fault.code, "injected failure")
        kind, _, name = path.strip("/").partition("/")
        method = request.method
        body = request.get_json(silent=True) if method in ("POST", "PATCH") else None
        handler = getattr(self, f"_{method.lower()}_{kind}_{'one' if name else 'all'}", None)
        if handler is None:  # the request validated, so the contract has it; we do not serve it
            raise HttpError(501, "NOT_IMPLEMENTED", f"{method} {path} is not served by the test server")
        with self._lock:
            return handler(name, request.args, body) if name else handler(request.args, body)

    # -- helpers -------------------------------------------------------------------------
    def _not_found(self, what: str, name: str):
        return HttpError(404, "NOT_FOUND" if self.legacy_errors else f"{what}_NOT_FOUND", f"{what.lower()} {name} not found")

    def _exists(self, what: str, name: str):
        if self.legacy_errors:
            return HttpError(409, "ALREADY_EXISTS", f"{what.lower()} {name} already exists")
        return HttpError(400, f"{what}_ALREADY_EXISTS", f"{what.lower()} {name} already exists")

    @staticmethod
    def _name(value, what: str) -> str:
        if not isinstance(value, str) or not value or "." in value or "/" in value:
            raise HttpError(400, "INVALID_ARGUMENT", f"invalid {what} name {value!r}")
        return value

    def _page(self, items: list[dict], args, field: str) -> dict:
        try:
            size = int(args.get("max_results", 0))
        except ValueError:
            raise HttpError(400, "INVALID_ARGUMENT", "max_results must be an integer") from None
        if size < 0:
            raise HttpError(400, "INVALID_ARGUMENT", "max_results must not be negative")
        size = min(size, self.page_size) if size else self.page_size
        # as the real server (its PagedListingHelper): ascending names, the next token
        # the last name of the page
        items = sorted(items, key=lambda item: item["name"])
        token = args.get("page_token") or ""
        rest = [item for item in items if item["name"] > token] if token else items
        out = {field: copy.deepcopy(rest[:size])}
        if len(rest) > size:
            out["next_page_token"] = rest[size - 1]["name"]
        return out

    def _stamp(self) -> dict:
        return {"created_at": int(time.time() * 1000), "owner": "tester", "created_by": "tester"}

    @staticmethod
    def _force(args) -> bool:
        return args.get("force", "false").lower() == "true"

    # -- catalogs --------------------------------------------------------------------------
    def _get_catalogs_all(self, args, body):
        return self._page(list(self.catalogs.values()), args, "catalogs")

    def _post_catalogs_all(self, args, body):
        name = self._name(body.get("name"), "catalog")
        if name in self.catalogs:
            raise self._exists("CATALOG", name)
        info = {"name": name, "properties": dict(body.get("properties") or {}), "id": str(uuid.uuid4()), **self._stamp()}
        if body.get("comment") is not None:
            info["comment"] = body["comment"]
        self.catalogs[name] = info
        return copy.deepcopy(info)

    def _get_catalogs_one(self, name, args, body):
        if name not in self.catalogs:
            raise self._not_found("CATALOG", name)
        return copy.deepcopy(self.catalogs[name])

    def _delete_catalogs_one(self, name, args, body):
        if name not in self.catalogs:
            raise self._not_found("CATALOG", name)
        inside = [k for k in self.schemas if k.startswith(name + ".")]
        if inside and not self._force(args):
            raise HttpError(400, "FAILED_PRECONDITION", f"catalog {name} is not empty")
        for key in inside:
            self._drop_schema(key)
        del self.catalogs[name]
        return {}

    # -- schemas -------------------------------------------------------------------------------
    def _get_schemas_all(self, args, body):
        catalog = args["catalog_name"]
        if catalog not in self.catalogs:
            raise self._not_found("CATALOG", catalog)
        return self._page([s for s in self.schemas.values() if s["catalog_name"] == catalog], args, "schemas")

    def _post_schemas_all(self, args, body):
        catalog = body["catalog_name"]
        name = self._name(body["name"], "schema")
        if catalog not in self.catalogs:
            raise self._not_found("CATALOG", catalog)
        full = f"{catalog}.{name}"
        if full in self.schemas:
            raise self._exists("SCHEMA", full)
        info = {
            "name": name,
            "catalog_name": catalog,
            "full_name": full,
            "properties": dict(body.get("properties") or {}),
            "schema_id": str(uuid.uuid4()),
            **self._stamp(),
        }
        self.schemas[full] = info
        return copy.deepcopy(info)

    def _get_schemas_one(self, full, args, body):
        if full not in self.schemas:
            raise self._not_found("SCHEMA", full)
        return copy.deepcopy(self.schemas[full])

    def _delete_schemas_one(self, full, args, body):
        if full not in self.schemas:
            raise self._not_found("SCHEMA", full)
        if any(k.startswith(full + ".") for k in self.tables) and not self._force(args):
            raise HttpError(400, "FAILED_PRECONDITION", f"cannot delete schema {full}: it has tables")
        self._drop_schema(full)
        return {}

    def _drop_schema(self, full: str) -> None:
        for key in [k for k in self.tables if k.startswith(full + ".")]:
            del self.tables[key]
        del self.schemas[full]

    # -- tables ------------------------------------------------------------------------------------
    def _get_tables_all(self, args, body):
        full = f"{args['catalog_name']}.{args['schema_name']}"
        if args["catalog_name"] not in self.catalogs:
            raise self._not_found("CATALOG", args["catalog_name"])
        if full not in self.schemas:
            raise self._not_found("SCHEMA", full)
        return self._page([t for k, t in self.tables.items() if k.rpartition(".")[0] == full], args, "tables")

    def _post_tables_all(self, args, body):
        catalog, schema = body["catalog_name"], body["schema_name"]
        name = self._name(body["name"], "table")
        if catalog not in self.catalogs:
            raise self._not_found("CATALOG", catalog)
        if f"{catalog}.{schema}" not in self.schemas:
            raise self._not_found("SCHEMA", f"{catalog}.{schema}")
        if body["table_type"] != "EXTERNAL":
            raise HttpError(400, "INVALID_ARGUMENT", "only EXTERNAL tables can be created")
        if not body.get("storage_location"):
            raise HttpError(400, "INVALID_ARGUMENT", "storage_location is required for EXTERNAL tables")
        full = f"{catalog}.{schema}.{name}"
        if full in self.tables:
            raise self._exists("TABLE", full)
        info = {
            k: copy.deepcopy(body[k])
            for k in ("name", "catalog_name", "schema_name", "table_type", "data_source_format", "columns", "storage_location", "comment")
            if body.get(k) is not None
        }
        if info["storage_location"].startswith("/"):  # as the real server (0.4.1, 0.6.0) stores a local path
            info["storage_location"] = "file://" + quote(posixpath.normpath(info["storage_location"]))
        info.update(properties=dict(body.get("properties") or {}), table_id=str(uuid.uuid4()), **self._stamp())
        info["updated_at"] = info["created_at"]
        self.tables[full] = info
        return copy.deepcopy(info)

    def _get_tables_one(self, full, args, body):
        if full not in self.tables:
            raise self._not_found("TABLE", full)
        return copy.deepcopy(self.tables[full])

    def _delete_tables_one(self, full, args, body):
        if full not in self.tables:
            raise self._not_found("TABLE", full)
        del self.tables[full]
        return {}


def _describe(error) -> str:
    inner = getattr(error, "schema_errors", None) or getattr(getattr(error, "__cause__", None), "schema_errors", None)
    if inner:
        return f"{error}: " + "; ".join(getattr(e, "message", str(e)) for e in inner)
    cause = getattr(error, "__cause__", None)
    return f"{error}" + (f" ({cause})" if cause else "")


class _QuietHandler(WSGIRequestHandler):
    # Werkzeug writes headers and body separately: with Nagle on, every answer
    # waits ~40 ms for the client's delayed ACK.
    disable_nagle_algorithm = True
    protocol_version = "HTTP/1.1"  # keep-alive: the client's pooled connection is reused

    def log_request(self, *args, **kwargs):  # one line per request would drown test output
        pass


class _Remote:
    """The test's handle on a double in another process: what it recorded, asked over HTTP."""

    def __init__(self, endpoint: str):
        self.endpoint = endpoint

    def check(self) -> None:
        with urllib.request.urlopen(f"{self.endpoint}{VIOLATIONS_PATH}", timeout=30) as r:
            _fail_on(json.loads(r.read()))


@dataclass
class RunningUnity:
    server: UnityServer | _Remote  # _Remote: the double runs in a process of its own
    endpoint: str  # base URL; clients append /api/2.1/unity-catalog


@contextmanager
def unity_server(legacy_errors: bool = False, page_size: int = 4, auth_token: str | None = None, catalogs=("lance_ci",)) -> Iterator[RunningUnity]:
    """Start the server on 127.0.0.1 (free port) in a thread; stop it on exit."""
    app = UnityServer(legacy_errors=legacy_errors, page_size=page_size, auth_token=auth_token)
    httpd = make_server("127.0.0.1", 0, app, threaded=True, request_handler=_QuietHandler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="unity-test-server", daemon=True)
    thread.start()
    endpoint = f"http://127.0.0.1:{httpd.server_port}"
    try:
        headers = {"Content-Type": "application/json"}
        if auth_token:
            headers["Authorization"] = f"Bearer {auth_token}"
        for name in catalogs:  # created through the API itself: a real call proves readiness
            body = json.dumps({"name": name, "comment": "test"}).encode()
            with urllib.request.urlopen(urllib.request.Request(f"{endpoint}{PREFIX}/catalogs", body, headers), timeout=10):
                pass
        app.check()
        yield RunningUnity(app, endpoint)
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


@contextmanager
def unity_server_process(legacy_errors: bool = False, auth_token: str | None = None,
                         catalogs=("lance_ci",)) -> Iterator[RunningUnity]:
    """The double in a process of its own, for load (the concurrent-append races): its
    request and response checks then take no time from the test process's clients.  No
    ``inject``, no request log: the checks that need those use :func:`unity_server`."""
    import os
    import subprocess
    import sys

    from .process import stop_by_pid

    root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}
    # the options (a bearer token among them) go in on stdin, never on a command line; the
    # double exits when its stdin closes, so a test process killed outright leaves none behind
    proc = subprocess.Popen([sys.executable, "-m", "tests.services.unity"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, env=env, text=True, cwd=root)
    proc.stdin.write(json.dumps({"legacy_errors": legacy_errors, "auth_token": auth_token,
                                 "catalogs": list(catalogs)}) + "\n")
    proc.stdin.flush()
    try:
        line = proc.stdout.readline()  # the endpoint, once the catalogs are made
        if not line.startswith("http://"):
            raise RuntimeError(f"the Unity double did not start (exit {proc.wait()})")
        endpoint = line.strip()
        yield RunningUnity(_Remote(endpoint), endpoint)
    finally:
        proc.stdin.close()
        stop_by_pid(proc)


def _serve_until_stdin_closes() -> None:
    """The process of :func:`unity_server_process`: options on the first line of stdin, the
    endpoint on stdout once the catalogs are made, served until stdin closes or SIGTERM."""
    import signal
    import sys

    options = json.loads(sys.stdin.readline())
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with unity_server(**options) as running:
        running.server.reports_violations = True
        print(running.endpoint, flush=True)
        threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
        stop.wait()


if __name__ == "__main__":
    _serve_until_stdin_closes()
