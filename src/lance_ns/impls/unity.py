"""Unity Catalog backend (impl ``unity``), per ``docs/spec/impl-unity.md``.

The hierarchy is Unity's own, fixed: ``catalog.schema.table``.  The root
lists catalogs, a catalog lists its schemas, and only schemas hold tables.
Namespaces are created and dropped only at level 2 (schemas), as the spec
says; catalogs are an administrator's business (Unity's ``POST /catalogs``
needs metastore-level rights), so level 1 answers Unsupported (code 0).

A Lance table is an ``EXTERNAL`` table with ``data_source_format=TEXT`` (Unity
knows no ``LANCE`` format), property ``table_type=lance`` and its
``storage_location``.  ``columns`` carry the Lance table's Arrow schema in
Unity's form (:mod:`.unity_columns`) when a Lance table exists at the
location (RegisterTable); a declared table has no data yet, so it is created
with ``columns: []``; the contract has no table update, so a schema change
through lance-ns (AlterTable*Columns) replaces the entry to refresh them.

Properties: ``endpoint`` (required; ``/api/2.1/unity-catalog`` is appended
unless present), ``auth_token`` (bearer), ``connect_timeout`` /
``read_timeout`` (ms, 10000 / 300000), ``max_retries`` (3),
``retry_backoff_ms`` (100) / ``retry_max_backoff_ms`` (5000) for exponential
backoff with full jitter, ``root`` (``/tmp/lance``), ``storage.*``.

Unity servers differ in their error bodies: up to 0.3 they answer 404
``NOT_FOUND`` and 409 ``ALREADY_EXISTS``; from 0.4 ``*_NOT_FOUND`` and 400
``*_ALREADY_EXISTS``.  Both are understood; a generic code is resolved by
what the request was about (a namespace or a table).
"""

from __future__ import annotations

import os
from typing import Iterable, Iterator
from urllib.parse import quote, unquote, urlparse

import httpx

from .. import ledger, retry, storage, tls
from ..catalog import CatalogNamespace
from ..catalog.entry import VERSIONS_KEY, CatalogTable, is_managed, shown_properties
from ..errors import (
    ConcurrentModificationError,
    InternalError,
    InvalidInputError,
    InvalidTableStateError,
    LanceNamespaceError,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NamespaceNotFoundError,
    PermissionDeniedError,
    ServiceUnavailableError,
    TableAlreadyExistsError,
    TableNotFoundError,
    ThrottlingError,
    UnauthenticatedError,
    UnsupportedOperationError,
)
from ..identifiers import to_string
from ..paging import page_by_service

API_PREFIX = "/api/2.1/unity-catalog"
EXTERNAL = "EXTERNAL"
#: page sizes asked for; the contract caps tables at 50, the others at 1000
TABLE_PAGE = 50
OTHER_PAGE = 1000

#: the table property recording the id of a managed table's ledger (see the end of the class)
LEDGER_KEY = "lance_ns.ledger"

#: a refusal before any work (gateway, overload): safe to retry writes too
_REFUSED = frozenset({429, 502, 503, 504})


class UnityError(Exception):
    """A non-2xx answer of the Unity server; ``about`` is "namespace" or "table"."""

    def __init__(self, status: int, error_code: str, message: str, about: str):
        super().__init__(f"Unity Catalog answered {status} {error_code}: {message}")
        self.status, self.error_code, self.message, self.about = status, error_code, message, about

    @property
    def not_found(self) -> bool:
        return self.status == 404 or self.error_code.endswith("NOT_FOUND")

    @property
    def about_table(self) -> bool:
        """A specific code (>= 0.4) names its object; a generic one (<= 0.3) is read by context."""
        if self.error_code.startswith(("CATALOG_", "SCHEMA_")):
            return False
        return self.error_code.startswith("TABLE_") or self.about == "table"

    @property
    def already_exists(self) -> bool:
        return self.error_code.endswith("ALREADY_EXISTS") or (self.status == 409 and not self.error_code)


class UnityNamespace(CatalogNamespace):
    lance_table_kind = EXTERNAL
    table_depths = (2,)
    max_depth = 2
    creatable_depths = (2,)
    supports_cascade = False  # the spec: only Restrict drops
    default_root = "/tmp/lance"

    def __init__(self, **properties: str):
        super().__init__(**properties)
        endpoint = self.prop("endpoint", required=True).rstrip("/")
        self.endpoint = endpoint if endpoint.endswith(API_PREFIX) else endpoint + API_PREFIX
        self.retry = retry.RetryPolicy.from_properties(self)
        connect = self.int_prop("connect_timeout", 10000, minimum=1) / 1000
        read = self.int_prop("read_timeout", 300000, minimum=1) / 1000
        headers = {"Accept": "application/json"}
        if self.prop("auth_token"):
            headers["Authorization"] = f"Bearer {self.prop('auth_token')}"
        self._http = httpx.Client(
            base_url=self.endpoint,
            headers=headers,
            timeout=httpx.Timeout(read, connect=connect, pool=connect),
            verify=tls.default_context(),
        )

    def close(self) -> None:
        self._http.close()

    # -- HTTP -----------------------------------------------------------------
    def _call(self, method: str, path: str, about: str, params: dict | None = None, body: dict | None = None) -> dict:
        resp = self._send(method, path, params, body)
        if resp.is_success:
            # a real server answers DELETE with a text/plain "200 OK" body, not JSON
            if not resp.content or "json" not in resp.headers.get("content-type", "application/json"):
                return {}
            return resp.json()
        try:
            err = resp.json()
        except ValueError:
            err = {}
        if not isinstance(err, dict):
            err = {}
        raise UnityError(resp.status_code, str(err.get("error_code") or ""), str(err.get("message") or resp.text[:200]), about)

    def _send(self, method: str, path: str, params: dict | None, body: dict | None) -> httpx.Response:
        reads = method == "GET"
        return retry.send(
            self._http,
            self.retry,
            method,
            path,
            safe=reads,
            # a refusal before any work is safe to repeat; other 5xx only when reading
            retry_status=lambda status: status in _REFUSED or (reads and status >= 500),
            what=f"Unity Catalog at {self.endpoint}: {method} {path}",
            params=params,
            json=body,
        )

    def _pages(self, path: str, field: str, params: dict, page: int, about: str) -> Iterator[dict]:
        """Every item of a Unity listing, following ``next_page_token``."""
        token, seen = None, set()
        while True:
            query = dict(params, max_results=page)
            if token:
                query["page_token"] = token
            body = self._call("GET", path, about, params=query)
            yield from body.get(field) or []
            token = body.get("next_page_token")
            if not token:
                return
            if token in seen:
                raise InternalError(f"Unity Catalog repeated page token {token!r} for {path}")
            seen.add(token)

    @staticmethod
    def _full(*names: str) -> str:
        for name in names:
            if "." in name:
                raise InvalidInputError(f"Unity Catalog names cannot contain '.': {name!r}")
        return quote(".".join(names), safe="")

    # -- errors -----------------------------------------------------------------
    def translate_error(self, exc: Exception) -> LanceNamespaceError | None:
        if not isinstance(exc, UnityError):
            return None
        if exc.status == 401:
            return UnauthenticatedError(str(exc))
        if exc.status == 403 or exc.error_code == "PERMISSION_DENIED":
            return PermissionDeniedError(str(exc))
        if exc.not_found:
            return (TableNotFoundError if exc.about_table else NamespaceNotFoundError)(str(exc))
        if exc.already_exists:
            return (TableAlreadyExistsError if exc.about_table else NamespaceAlreadyExistsError)(str(exc))
        if exc.status == 409:  # a conflict that is not a duplicate: someone else changed it
            return ConcurrentModificationError(str(exc))
        if exc.status == 400 and exc.error_code in ("INVALID_ARGUMENT", "INVALID_PARAMETER_VALUE"):
            return InvalidInputError(str(exc))
        if exc.status == 429:
            return ThrottlingError(str(exc))
        if exc.status == 503:
            return ServiceUnavailableError(str(exc))
        return InternalError(str(exc))

    # -- namespaces ---------------------------------------------------------------
    def get_namespace_entry(self, ns):
        path = f"/catalogs/{self._full(ns[0])}" if len(ns) == 1 else f"/schemas/{self._full(*ns)}"
        try:
            info = self._call("GET", path, "namespace")
        except UnityError as e:
            if e.not_found:
                return None
            raise
        return dict(info.get("properties") or {})

    def list_namespace_names(self, parent):
        if not parent:
            return [c["name"] for c in self._pages("/catalogs", "catalogs", {}, OTHER_PAGE, "namespace")]
        params = {"catalog_name": parent[0]}
        return [s["name"] for s in self._pages("/schemas", "schemas", params, OTHER_PAGE, "namespace")]

    def create_namespace_entry(self, ns, properties):
        catalog, schema = ns
        self._full(schema)
        self._call("POST", "/schemas", "namespace", body={"name": schema, "catalog_name": catalog, "properties": properties})

    def delete_namespace_entry(self, ns):
        try:
            self._call("DELETE", f"/schemas/{self._full(*ns)}", "namespace")
        except UnityError as e:
            if e.error_code == "FAILED_PRECONDITION":  # tables appeared since our check
                raise NamespaceNotEmptyError(f"namespace {to_string(ns)!r} is not empty: {e.message}") from e
            raise

    def drop_refusal(self, ns):
        # Catalogs are not ours to drop (see the module docstring): refused before the
        # shared algorithm looks at what the catalog holds.
        if len(ns) == 1:
            return "Unity catalogs cannot be dropped through Lance; drop schemas (catalog.schema)"
        return None

    # -- tables -------------------------------------------------------------------
    def _table(self, info: dict) -> CatalogTable:
        return CatalogTable(
            name=info["name"],
            location=self._location_read(info.get("storage_location")),
            properties=dict(info.get("properties") or {}),
            kind=info.get("table_type"),
        )

    def _location_read(self, location: str | None) -> str | None:
        """The location as this client wrote it: a real Unity server (0.4.1, 0.6.0) stores a
        local path ``/p`` as the URI ``file:///p``, percent-encoded (``/tmp/é`` is
        ``file:///tmp/%C3%A9``), so under a plain-path root the URI is read back as the path."""
        if location and location.startswith("file:") and not storage.is_uri(self.root):
            return os.path.normpath(unquote(urlparse(location).path))
        return location

    def list_table_entries(self, ns) -> Iterable[CatalogTable]:
        if len(ns) != 2:
            return []
        params = {"catalog_name": ns[0], "schema_name": ns[1]}
        return [self._table(t) for t in self._pages("/tables", "tables", params, TABLE_PAGE, "namespace")]

    def lance_table_page(self, ns, limit, page_token, keep=None):
        # Unity pages tables itself, in name order: a page reads the service pages it
        # spans, not the schema's every table (its tokens are opaque: see page_by_service)
        if len(ns) != 2:
            return [], None
        params = {"catalog_name": ns[0], "schema_name": ns[1]}

        def fetch(token, want):
            query = dict(params, max_results=min(want or TABLE_PAGE, TABLE_PAGE))  # (the contract caps it)
            if token:
                query["page_token"] = token
            body = self._call("GET", "/tables", "namespace", params=query)
            return [self._table(t) for t in body.get("tables") or []], body.get("next_page_token")

        return page_by_service(fetch, limit, page_token, self._listed(keep))

    def get_table_entry(self, ns, name):
        try:
            table = self._table(self._call("GET", f"/tables/{self._full(*ns, name)}", "table"))
        except UnityError as e:
            if e.not_found:
                return None
            raise
        if is_managed(table) and self.is_lance(table) and self._has_ledger(table):
            # the history and the version it was read at come from the ledger (see below)
            version, history = self._ledger(ns, table).read()
            table.properties.pop(VERSIONS_KEY, None)
            if history is not None:
                table.properties[VERSIONS_KEY] = history
            table.token = str(version)
        return table

    def create_table_entry(self, ns, table):
        self._full(table.name)
        if is_managed(table) and LEDGER_KEY not in table.properties:
            # a new managed table gets its own ledger (a rename or a re-created entry copies
            # the id); recorded on ``table`` too, so the caller answers what was stored
            table.properties[LEDGER_KEY] = ledger.new_id()
        body = {
            "name": table.name,
            "catalog_name": ns[0],
            "schema_name": ns[1],
            "table_type": EXTERNAL,
            "data_source_format": "TEXT",
            "storage_location": table.location,
            # the history is the ledger's, never a property (a re-created entry was read with it)
            "properties": {k: v for k, v in table.properties.items() if k != VERSIONS_KEY},
            "columns": self._columns_at(table),
        }
        try:  # a 404 here means the parent schema is gone: a namespace error
            self._call("POST", "/tables", "namespace", body=body)
        except UnityError as e:
            if e.already_exists:
                raise TableAlreadyExistsError(f"table {to_string(ns + [table.name])!r} already exists: {e.message}") from e
            raise

    def schema_changed(self, table_id, ds) -> None:
        """Unity's contract has no table update, so after a schema change the entry
        is replaced (delete, then create with the columns of the new schema).  The
        data is never touched (an EXTERNAL table); if the create fails it is tried
        once more, so the entry is not lost to one failed request."""
        ns, table = self.lance_table(table_id)
        self.delete_table_entry(ns, table.name)
        try:
            self.create_table_entry(ns, table)
        except Exception:  # noqa: BLE001 - retried once; a second failure is raised
            self.create_table_entry(ns, table)

    def _columns_at(self, table: CatalogTable) -> list[dict]:
        """Unity columns of the Lance table at the location ([] when none exists yet; a
        table being declared is not looked for: DeclareTable makes no storage call)."""
        if table.has_data is False:
            return []
        opts = self.table_storage_options(table)
        if not table.location or storage.lance_version(table.location, opts) is None:
            return []
        import lance

        from .unity_columns import columns_from_arrow

        schema = lance.dataset(table.location, storage_options=opts or None).schema
        try:
            return columns_from_arrow(schema)
        except ValueError as e:
            raise InvalidInputError(f"cannot describe {table.location!r} to Unity Catalog: {e}") from e

    def delete_table_entry(self, ns, name):
        self._call("DELETE", f"/tables/{self._full(*ns, name)}", "table")

    # -- implementation-managed tables: the history in a ledger beside the table ----------------
    # Unity's contract cannot update a table object (/tables/{full_name} answers GET and DELETE
    # only; properties are fixed at creation), so the history cannot live in it as on the other
    # catalogs.  Its one compare-and-swap, the Delta commit coordinator (/delta/preview/commits),
    # takes only MANAGED Delta tables.  So the table object records, at creation, that the table
    # is managed and the id of its ledger (:mod:`lance_ns.ledger`), and the history lives in that
    # ledger, changed with Lance's own conditional commit.  get_table_entry overlays it on the table
    # as read (``lance_ns.versions``, the ledger version as ``token``), so the shared algorithm
    # runs unchanged.
    supports_managed_versioning = True

    @staticmethod
    def _has_ledger(table: CatalogTable) -> bool:
        return bool(table.location) and ledger.is_id(table.properties.get(LEDGER_KEY))

    def _ledger(self, ns, table: CatalogTable) -> ledger.Ledger:
        if not self._has_ledger(table):
            raise InvalidTableStateError(
                f"table {to_string(ns + [table.name])!r} is marked managed_versioning=true but has no valid "
                f"{LEDGER_KEY} property (was it created outside lance-ns?): its history cannot be found"
            )
        return ledger.Ledger(ledger.uri(table.location, table.properties[LEDGER_KEY]), self.table_storage_options(table))

    def swap_table_properties(self, ns, table, properties):
        """The history swapped in the table's ledger iff its version is still the one read."""
        if shown_properties(properties) != shown_properties(table.properties):
            raise UnsupportedOperationError(
                "Unity Catalog cannot change a table's properties (they are fixed at creation); "
                "only the version history of a managed table changes, in its ledger"
            )
        # Unity is not asked again afterwards: a schema change re-creates the entry for a moment
        # (schema_changed), which would pass for a drop after the version was granted.
        return self._ledger(ns, table).swap(properties[VERSIONS_KEY], int(table.token or 0))

    def swap_tables_properties(self, changes):
        if len(changes) != 1:
            raise UnsupportedOperationError(
                "Unity Catalog cannot commit several tables atomically: each table's history is a "
                "ledger of its own and Lance commits one dataset at a time (commit each table alone)"
            )
        return super().swap_tables_properties(changes)
