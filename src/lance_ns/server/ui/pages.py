"""The browser's pages: a namespace page (tree, child namespaces, tables, search) and
a table page (location, properties, schema, rows count, versions, tags, indices, a
sample of rows), plus the sign-in form used when the server requires credentials.

Every backend call goes through :meth:`Browser.call`, which is the REST routes'
:class:`~lance_ns.server.pipeline.Pipeline`: the same request checks (ids,
limits), authorization (grants, filtered listings, read-only credentials for a
principal that may only read), bounded thread pool, stripping of the server's own
credentials from ``storage_options`` and audit.  Nothing here reads storage directly.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import math
from pathlib import Path
from typing import Any, Awaitable, Callable
from urllib.parse import parse_qs, quote, urlencode

import anyio
from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ... import datasets
from ...base import parse_int
from ...readable import dump, size, type_label, when
from ...errors import (
    InternalError,
    InvalidInputError,
    InvalidTableStateError,
    LanceNamespaceError,
    PayloadTooLargeError,
    PermissionDeniedError,
    UnauthenticatedError,
    UnsupportedOperationError,
    http_status,
    transport_refusal,
)
from ...redact import RedactingFilter, redact_mapping, redact_text
from ...protocol import routes as R
from ..pipeline import Pipeline

log = logging.getLogger("lance_ns.server.ui")
log.addFilter(RedactingFilter())  # a backend's traceback may quote its secrets

HERE = Path(__file__).parent
#: names per page of a namespace's child namespaces and tables
PAGE_SIZE = 100
#: children shown per level of the namespace tree (the rest: on that level's own page)
TREE_SIZE = 50
#: versions per page of a table's history
VERSIONS_SHOWN = 20
#: rows in a table's sample by default, and the most a sample shows
SAMPLE_ROWS = 20
MAX_SAMPLE_ROWS = 100
#: a search asks for names in batches of SEARCH_BATCH and scans at most SEARCH_BUDGET
#: names of each listing per request, then offers to continue from where it stopped
SEARCH_BATCH = 1000
SEARCH_BUDGET = 20_000
#: longer cell values are cut (a vector or a document would swamp the table)
MAX_CELL_CHARS = 160
#: the cookie holding the token entered in the sign-in form (HttpOnly, SameSite=Strict)
COOKIE = "lance_ns_ui"
MAX_FORM_BYTES = 8192

#: every page: no script at all, styles and images from the server only, never framed,
#: page tokens and names in URLs not sent to other sites (``same-origin``: a stricter
#: ``no-referrer`` makes browsers send ``Origin: null`` on the UI's own forms), nothing cached
SECURITY_HEADERS = {
    "content-security-policy": "default-src 'none'; style-src 'self'; img-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
    "cache-control": "no-store",
}


# -- small helpers ---------------------------------------------------------------------


def _parts(path: str) -> list[str]:
    """``a/b/c`` (URL path, already decoded) -> ``["a", "b", "c"]``; the root is ``[]``."""
    path = path.strip("/")
    return path.split("/") if path else []


def _encode_token(token: str) -> str:
    return base64.urlsafe_b64encode(token.encode()).decode().rstrip("=")


def _decode_token(value: str) -> str | None:
    try:
        return base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)).decode()
    except (binascii.Error, ValueError):
        return None


def _token_headers(token: str) -> dict[str, str]:
    """A token from the sign-in form, checked exactly like a REST client's: as the
    bearer token or as an ``x-api-key`` value."""
    return {"authorization": f"Bearer {token}", "x-api-key": token}


def _safe_next(target: str | None, base: str) -> str:
    """Only a path inside the UI (no open redirect to another site)."""
    if target and target.startswith(base + "/") and not target.startswith("//") and "\\" not in target:
        return target
    return base + "/"


def cell(value: Any) -> str | None:
    """A value of a sample row as short text (None stays None: shown as null)."""
    if value is None:
        return None
    if isinstance(value, (bytes, bytearray)):
        text = f"{len(value)} bytes: {bytes(value[:24]).hex()}"
    elif isinstance(value, float):
        text = repr(value) if math.isfinite(value) else str(value)
    elif isinstance(value, (list, dict)):
        text = json.dumps(value, default=str, ensure_ascii=False)
    else:
        text = str(value)
    return text if len(text) <= MAX_CELL_CHARS else text[: MAX_CELL_CHARS - 1] + "…"


def schema_nodes(fields: list[dict]) -> list[dict]:
    """JSON Arrow fields (the protocol's form) as a tree: name, readable type, nullability,
    children for structs, lists of structs and maps."""
    nodes = []
    for f in fields or []:
        t = f.get("type") or {}
        kind = t.get("type")
        children: list[dict] = []
        if kind == "struct":
            children = schema_nodes(t.get("fields") or [])
        elif kind in ("list", "large_list", "fixed_size_list") and t.get("fields"):
            element = t["fields"][0].get("type") or {}
            if element.get("type") in ("struct", "map"):
                children = schema_nodes(element.get("fields") or [])
        elif kind == "map":
            children = schema_nodes(t.get("fields") or [])
        nodes.append({
            "name": f.get("name"),
            "type": type_label(t),
            "nullable": f.get("nullable", True),
            "metadata": f.get("metadata") or {},
            "children": children,
        })
    return nodes


class Urls:
    """Links of the UI under its mount point (``/ui`` or a proxy's prefix before it)."""

    def __init__(self, base: str):
        self.base = base

    def _join(self, parts: list[str]) -> str:
        return "/".join(quote(p, safe="") for p in parts)

    def ns(self, parts: list[str], **query: Any) -> str:
        url = f"{self.base}/ns/{self._join(parts)}" if parts else f"{self.base}/"
        return self._with(url, query)

    def table(self, parts: list[str], **query: Any) -> str:
        return self._with(f"{self.base}/table/{self._join(parts)}", query)

    def static(self, name: str) -> str:
        return f"{self.base}/static/{name}"

    @staticmethod
    def _with(url: str, query: dict) -> str:
        pairs = [(k, v) for k, v in query.items() if v not in (None, "", [])]
        flat = [(k, x) for k, v in pairs for x in (v if isinstance(v, list) else [v])]
        return url + ("?" + urlencode(flat) if flat else "")


class Section:
    """The outcome of one optional call of a page: a value, or why it is not shown."""

    def __init__(self, value: Any = None, error: str | None = None):
        self.value = value
        self.error = error


# -- the app ------------------------------------------------------------------------------


class Browser:
    """Builds the UI's Starlette app over a server's :class:`~lance_ns.server.pipeline.Pipeline`."""

    def __init__(self, pipeline: Pipeline):
        self.pipeline = pipeline
        self.env = Environment(
            loader=FileSystemLoader(HERE / "templates"),
            autoescape=select_autoescape(["html"], default=True),  # names and rows are user data
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.env.filters.update(when=when, size=size)

    # -- calls to the backend ------------------------------------------------------------
    def principal(self, request: Request) -> Any:
        """Who makes the request: checked like a REST request (bearer token or
        ``x-api-key`` header), or the token kept in the sign-in cookie.  Raises
        UnauthenticatedError; None when the server has no credentials configured."""
        if not self.pipeline.auth_required:
            return self.pipeline.authenticate({})  # the server's anonymous principal
        headers = dict(request.headers)
        if "authorization" not in headers and "x-api-key" not in headers:
            token = _decode_token(request.cookies.get(COOKIE, ""))
            if not token:
                raise UnauthenticatedError("sign in to browse this catalog")
            headers.update(_token_headers(token))
        return self.pipeline.authenticate(headers)

    async def call(self, principal: Any, method: str, **fields: Any) -> Any:
        """One namespace operation on behalf of ``principal``, exactly as the REST route
        runs it (the one pipeline): PermissionDeniedError (403 code 15) when refused."""
        route = R.ROUTES[method]
        pipeline = self.pipeline
        return await pipeline.call(principal, route, pipeline.model(route.op, fields))

    async def optional(self, principal: Any, method: str, **fields: Any) -> Section:
        """A call whose failure leaves one section of a page empty, with the reason."""
        try:
            return Section(await self.call(principal, method, **fields))
        except LanceNamespaceError as e:
            if isinstance(e, UnsupportedOperationError):
                return Section(error="not supported by this catalog")
            return Section(error=redact_text(str(e)))
        except Exception:  # one failing section must not take the page down; logged like REST's 500s
            log.exception("%s failed while rendering a page", R.ROUTES[method].op.op_id)
            return Section(error="failed unexpectedly (see the server log)")

    # -- rendering ---------------------------------------------------------------------
    def render(self, request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
        urls = Urls(request.scope.get("root_path", "").rstrip("/"))
        page = self.env.get_template(template).render(
            urls=urls,
            auth=self.pipeline.auth_required,
            catalog=redact_text(_describe_catalog(self.pipeline.namespace)),
            **context,
        )
        return HTMLResponse(page, status_code=status, headers=SECURITY_HEADERS)

    def page(self, handler: Callable[[Request, Any], Awaitable[Response]]):
        """An endpoint: authenticated, backend errors shown as an error page with
        the REST status (404 for an unknown namespace...), secrets masked."""

        async def endpoint(request: Request) -> Response:
            try:
                principal = self.principal(request)
            except UnauthenticatedError:
                target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
                base = request.scope.get("root_path", "").rstrip("/")
                return RedirectResponse(f"{base}/login?" + urlencode({"next": target}), status_code=303,
                                        headers=SECURITY_HEADERS)
            try:
                return await handler(request, principal)
            except LanceNamespaceError as e:
                return self.error(request, e)

        endpoint.__name__ = handler.__name__
        return endpoint

    def error(self, request: Request, exc: Exception) -> HTMLResponse:
        """The error page of ``exc``, with its HTTP status from the error table."""
        status = http_status(exc)
        code = getattr(exc, "code", None)
        return self.render(request, "error.html", status=status, status_code=status, code=code,
                           message=redact_text(str(exc)) or "error")

    # -- namespace page ------------------------------------------------------------------
    async def namespace_page(self, request: Request, principal: Any) -> Response:
        parts = _parts(request.path_params.get("path", ""))
        query = request.query_params
        q = (query.get("q") or "").strip()
        if parts:  # an unknown namespace is a 404 page; the root may not be describable
            properties = Section(await self.call(principal, "describe_namespace", id=parts))
        else:
            properties = await self.optional(principal, "describe_namespace", id=parts)
        props = redact_mapping(getattr(properties.value, "properties", None) or {})
        tree = await self.tree(principal, parts)
        if q:
            namespaces = await self.search(principal, "list_namespaces", "namespaces", parts, q, query.get("ns_from"))
            tables_ = await self.search(principal, "list_tables", "tables", parts, q, query.get("tables_from"))
        else:
            namespaces = await self.optional(principal, "list_namespaces", id=parts, limit=PAGE_SIZE,
                                             page_token=query.get("ns_from") or None)
            tables_ = await self.optional(principal, "list_tables", id=parts, limit=PAGE_SIZE,
                                          page_token=query.get("tables_from") or None)
        return self.render(
            request, "namespace.html", parts=parts, properties=props, properties_error=properties.error,
            tree=tree, q=q, namespaces=_listing(namespaces, "namespaces"), tables=_listing(tables_, "tables"),
            query=dict(query), page_size=PAGE_SIZE, search_budget=SEARCH_BUDGET,
        )

    async def tree(self, principal: Any, parts: list[str]) -> list[dict]:
        """The namespace tree from the root down to ``parts``: each level's first
        TREE_SIZE children, the one on the path opened (added if it is further down)."""
        levels = []
        for depth in range(len(parts) + 1):
            prefix = parts[:depth]
            listed = await self.optional(principal, "list_namespaces", id=prefix, limit=TREE_SIZE)
            names = list(getattr(listed.value, "namespaces", None) or [])
            opened = parts[depth] if depth < len(parts) else None
            if opened is not None and opened not in names:
                names.append(opened)
            more = bool(getattr(listed.value, "page_token", None))
            levels.append({"prefix": prefix, "names": names, "opened": opened, "more": more, "error": listed.error})
        return levels

    async def search(self, principal: Any, method: str, field: str, parts: list[str], q: str,
                     start: str | None) -> Section:
        """Names of ``parts`` containing ``q`` (case-insensitive): a bounded scan of the
        listing in pages.  The spec has no name filter, so this is the one way that works
        for every backend; past SEARCH_BUDGET names it stops and offers to continue."""
        needle = q.casefold()
        found: list[str] = []
        scanned = 0
        token = start or None
        try:
            while True:
                resp = await self.call(principal, method, id=parts, limit=SEARCH_BATCH, page_token=token)
                names = list(getattr(resp, field, None) or [])
                scanned += len(names)
                found += [n for n in names if needle in n.casefold()]
                token = getattr(resp, "page_token", None) or None
                if not token or not names or scanned >= SEARCH_BUDGET or len(found) >= PAGE_SIZE:
                    break
        except LanceNamespaceError as e:
            return Section(error=redact_text(str(e)))
        return Section({field: found, "page_token": token, "scanned": scanned})

    # -- table page --------------------------------------------------------------------------
    async def table_page(self, request: Request, principal: Any) -> Response:
        parts = _parts(request.path_params.get("path", ""))
        if len(parts) < 1:
            raise InvalidInputError("a table page needs a table id")
        query = request.query_params
        version = parse_int(query.get("version"), "version", minimum=0)
        rows = min(parse_int(query.get("rows"), "rows", minimum=0) or SAMPLE_ROWS, MAX_SAMPLE_ROWS)
        columns = [c for c in query.getlist("columns") if c]
        described = await self.describe(principal, parts, version)
        detail = dump(described)
        detail["location"] = redact_text(detail.get("location") or "")  # a URI may carry a password
        current = detail.get("version")
        sections: dict[str, Section] = {}

        async def fetch(name: str, method: str, **fields: Any) -> None:
            sections[name] = await self.optional(principal, method, id=parts, **fields)

        async with anyio.create_task_group() as tg:  # the calls are independent: run them together
            tg.start_soon(lambda: fetch("versions", "list_table_versions", descending=True, limit=VERSIONS_SHOWN,
                                        page_token=query.get("versions_from") or None))
            tg.start_soon(lambda: fetch("tags", "list_table_tags", limit=1000))
            if current is not None:
                tg.start_soon(lambda: fetch("rows_count", "count_table_rows", version=current))
                tg.start_soon(lambda: fetch("indices", "list_table_indices", version=current))
                tg.start_soon(lambda: fetch("sample", "query_table", k=rows, version=current, vector={},
                                            columns={"column_names": columns} if columns else None))
        tags_by_version: dict[int, list[str]] = {}
        tags = getattr(sections["tags"].value, "tags", None) or {}
        for name, contents in sorted(tags.items()):
            tags_by_version.setdefault(getattr(contents, "version", None), []).append(name)
        versions = _listing(sections["versions"], "versions")
        schema = schema_nodes((detail.get("schema") or {}).get("fields") or [])
        return self.render(
            request, "table.html", parts=parts, detail=detail, version=current, pinned=version,
            properties=redact_mapping(detail.get("properties") or {}),
            storage_options=redact_mapping(detail.get("storage_options") or {}),
            schema=schema, all_columns=[n["name"] for n in schema], columns=columns, rows=rows,
            max_rows=MAX_SAMPLE_ROWS, versions=versions, tags=tags, tags_by_version=tags_by_version,
            tags_error=sections["tags"].error,
            rows_count=_count(sections.get("rows_count")), indices=_indices(sections.get("indices")),
            sample=_sample(sections.get("sample"), rows), query=dict(query),
        )

    async def describe(self, principal: Any, parts: list[str], version: int | None) -> Any:
        """DescribeTable with schema and version; a table only declared (no data yet), or a
        backend without detailed metadata, gets the plain description."""
        try:
            return await self.call(principal, "describe_table", id=parts, version=version,
                                   load_detailed_metadata=True)
        except (InvalidTableStateError, UnsupportedOperationError):
            if version is not None:
                raise
        return await self.call(principal, "describe_table", id=parts, check_declared=True)

    # -- sign in / out ------------------------------------------------------------------------
    async def login(self, request: Request) -> Response:
        base = request.scope.get("root_path", "").rstrip("/")
        if request.method == "GET":
            target = _safe_next(request.query_params.get("next"), base)
            if not self.pipeline.auth_required:
                return RedirectResponse(target, status_code=303, headers=SECURITY_HEADERS)
            return self.render(request, "login.html", next=target, failed=False, signing_in=True)
        if not _same_origin(request):
            return self.error(request, PermissionDeniedError("cross-site sign-in refused"))
        body = await request.body()
        if len(body) > MAX_FORM_BYTES:
            return self.error(request, PayloadTooLargeError("form too large"))
        form = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
        token = (form.get("token") or [""])[0].strip()
        target = _safe_next((form.get("next") or [""])[0], base)
        if not self.pipeline.auth_required:
            return RedirectResponse(target, status_code=303, headers=SECURITY_HEADERS)
        try:
            if not token:
                raise UnauthenticatedError("no token")
            self.pipeline.authenticate(_token_headers(token))
        except UnauthenticatedError:
            return self.render(request, "login.html", status=401, next=target, failed=True, signing_in=True)
        response = RedirectResponse(target, status_code=303, headers=SECURITY_HEADERS)
        response.set_cookie(COOKIE, _encode_token(token), path=base + "/", httponly=True, samesite="strict",
                            secure=request.url.scheme == "https")
        return response

    async def logout(self, request: Request) -> Response:
        base = request.scope.get("root_path", "").rstrip("/")
        if not _same_origin(request):
            return self.error(request, PermissionDeniedError("cross-site sign-out refused"))
        response = RedirectResponse(f"{base}/login", status_code=303, headers=SECURITY_HEADERS)
        response.delete_cookie(COOKIE, path=base + "/", httponly=True, samesite="strict")
        return response

    def build(self) -> Starlette:
        async def not_found(request: Request, exc: Exception) -> Response:
            assert isinstance(exc, HTTPException)
            return self.error(request, transport_refusal(exc.status_code, f"no page at {request.url.path}: {exc.detail}"))

        async def unexpected(request: Request, exc: Exception) -> Response:
            log.exception("internal error on %s %s", request.method, request.url.path)
            return self.error(request, InternalError("internal error"))

        routes = [
            Route("/", self.page(self.namespace_page), methods=["GET"]),
            Route("/ns/{path:path}", self.page(self.namespace_page), methods=["GET"]),
            Route("/table/{path:path}", self.page(self.table_page), methods=["GET"]),
            Route("/login", self.login, methods=["GET", "POST"]),
            Route("/logout", self.logout, methods=["POST"]),
            Mount("/static", app=StaticFiles(directory=HERE / "static"), name="static"),
        ]
        return Starlette(routes=routes, exception_handlers={HTTPException: not_found, Exception: unexpected})


def _same_origin(request: Request) -> bool:
    """A form post from a page of this server (browsers send Origin on POST)."""
    origin = request.headers.get("origin")
    if origin is None or origin == "null":
        return origin is None
    host = request.headers.get("host", "")
    return origin.split("://", 1)[-1] == host


def _describe_catalog(namespace: Any) -> str:
    try:
        return namespace.namespace_id()
    except Exception:  # noqa: BLE001 - a title only
        return type(namespace).__name__


def _listing(section: Section, field: str) -> dict:
    value = section.value
    if isinstance(value, dict):  # a search result
        return {**value, "error": section.error}
    return {
        field: list(getattr(value, field, None) or []),
        "page_token": getattr(value, "page_token", None),
        "error": section.error,
    }


def _count(section: Section | None) -> Section | None:
    if section is None or section.error:
        return section
    value = section.value
    return Section(value if isinstance(value, int) else getattr(value, "count", value))


def _indices(section: Section | None) -> Section | None:
    if section is None or section.error:
        return section
    found = getattr(section.value, "indexes", None) or []
    return Section([dump(i) for i in found])


def _sample(section: Section | None, rows: int) -> Section | None:
    if section is None or section.error:
        return section
    value = section.value
    try:
        data = datasets.ipc_to_table(value.data if hasattr(value, "data") else value).slice(0, rows)
    except LanceNamespaceError as e:  # a foreign backend's answer that is no valid Arrow IPC file
        return Section(error=redact_text(str(e)))
    names = data.column_names
    return Section({"columns": names, "rows": [[cell(r[c]) for c in names] for r in data.to_pylist()]})
