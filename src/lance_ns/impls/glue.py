"""AWS Glue Data Catalog (impl ``glue``), on boto3.

Namespaces (``impl-glue.md``): the root namespace ``[]`` is the catalog named
by ``catalog_id`` (default: the caller's account catalog).  Below it:

* a **database** is always a leaf: ``[db]`` is a database of the root catalog,
  ``[c1, ..., ck, db]`` a database of the catalog chain ``c1/.../ck``;
* a **catalog** is any other level: ``[c1]`` a child catalog of the root
  catalog (Glue id ``<account>:c1``), ``[c1, c2]`` its child (``<account>:c1/c2``).

So the root's level 1 lists the root catalog's own databases AND its child
catalogs (GetDatabases + GetCatalogs ParentCatalogId=root, Recursive=false;
the root itself, which IncludeRoot would add, is ``[]``).  This keeps the
everyday Glue layout, one account catalog of databases, as plain ``db$table``
ids, and gives the spec's ``catalog$database$table`` for multi-level catalogs.
Should a database and a child catalog share a name, the database wins where
the id ends and the catalog is the path through it.

CreateNamespace makes a database (in the catalog of the parent id) unless the
properties ask ``glue.namespace_type=catalog``; Glue's CreateCatalog has no
parent, so catalogs are created only at level 1 below the account catalog
(deeper ones, e.g. federated ``s3tablescatalog/<bucket>``, are made by their
services and browsed here).  Glue endpoints without the catalog APIs (moto,
some compatible metastores) behave as an account with databases only.

Tables are ``EXTERNAL_TABLE`` objects with ``Parameters.table_type=lance``
(case-insensitive on read) and ``StorageDescriptor.Location``; other tables
are hidden from listings and are InvalidInput (13) to Describe/Deregister.
Only RESTRICT drops (CASCADE is Unsupported, code 0).  DescribeTable with
``load_detailed_metadata`` reads version/schema from the table with pylance
(a superset of the spec's location-only answer).  Errors:
EntityNotFound -> 1/4, AlreadyExists -> 2/5, AccessDenied and credential
failures -> 16, InvalidInput -> 13, throttling / unavailable / internal /
connection failures (after botocore's retries) -> 17.

Credentials: the AWS default chain, static keys, session keys, or an
assumed role (``assume_role_*``) whose credentials botocore refreshes before
they expire.  ``retry_mode`` (standard|adaptive|legacy, default standard) and
``max_attempts`` (default 5) tune botocore's retries.  An endpoint without
STS needs ``catalog_id`` set to name multi-level catalogs.
"""

from __future__ import annotations

import datetime
import functools
import logging
import threading
from typing import Any, Iterator

import boto3
import botocore.credentials
import botocore.exceptions
import botocore.loaders
import botocore.session
from botocore.config import Config

from ..catalog import CatalogNamespace
from ..catalog.entry import CatalogTable
from ..errors import (
    ConcurrentModificationError,
    InvalidInputError,
    LanceNamespaceError,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NamespaceNotFoundError,
    ServiceUnavailableError,
    TableAlreadyExistsError,
    TableNotFoundError,
    UnauthenticatedError,
    UnsupportedOperationError,
)
from ..identifiers import to_string
from ..paging import ContinuationListings, paginate

EXTERNAL_TABLE = "EXTERNAL_TABLE"
NAMESPACE_TYPE_KEY = "glue.namespace_type"
DATABASE, CATALOG = "database", "catalog"

_DENIED = {
    "AccessDeniedException", "AccessDenied", "UnrecognizedClientException", "InvalidClientTokenId",
    "ExpiredTokenException", "ExpiredToken", "InvalidSignatureException", "SignatureDoesNotMatch",
    "MissingAuthenticationTokenException", "IncompleteSignature",
}  # fmt: skip
_UNAVAILABLE = {
    "ThrottlingException", "Throttling", "ServiceUnavailable", "ServiceUnavailableException",
    "InternalServiceException", "InternalFailure", "OperationTimeoutException",
    "RequestLimitExceeded", "TooManyRequestsException", "SlowDown", "RequestTimeout",
}  # fmt: skip
_INVALID = {"InvalidInputException", "ValidationException", "InvalidParameterValueException"}
# what an endpoint without the catalog APIs answers (moto: HTTP 500 "Code: 500")
_NO_API = {"500", "501", "NotImplemented", "UnknownOperationException", "InvalidAction"}
#: custom endpoints found without the catalog API in this process
_NO_CATALOG_API: set[str] = set()
#: (endpoint, catalog_id) -> whether it honours UpdateTable's VersionId, probed once per process
_VERSION_ID_HONOURED: dict[tuple, bool] = {}


log = logging.getLogger(__name__)

_LOADER = None


def _botocore_session() -> botocore.session.Session:
    """A fresh session sharing one model loader: parsing Glue's service model
    once per process makes a new namespace cost milliseconds, not a second."""
    global _LOADER
    if _LOADER is None:
        _LOADER = botocore.loaders.create_loader()
    session = botocore.session.Session()
    session.register_component("data_loader", _LOADER)
    return session


def _now() -> datetime.datetime:
    """The clock assumed-role credentials are checked against (tests move it)."""
    return datetime.datetime.now(datetime.timezone.utc)


def _code(exc: Exception) -> str:
    return exc.response.get("Error", {}).get("Code", "") if isinstance(exc, botocore.exceptions.ClientError) else ""


def _not_found(exc: Exception) -> bool:
    """Glue's answer for a missing database, table or catalog."""
    return _code(exc) == "EntityNotFoundException"


def _already_exists(exc: Exception) -> bool:
    return _code(exc) == "AlreadyExistsException"


def _conflict(exc: Exception) -> bool:
    """A conditional UpdateTable lost: the table's VersionId changed meanwhile."""
    return _code(exc) == "ConcurrentModificationException"


def _forgets_listing(write):
    """A write to a namespace's tables: the listing kept for its continuation pages is
    dropped once it is done (once done: a listing read while it ran is not kept either)."""

    @functools.wraps(write)
    def wrapper(self, ns, *args):
        try:
            return write(self, ns, *args)
        finally:
            self._listings.forget(tuple(ns))

    return wrapper


class GlueNamespace(CatalogNamespace):
    lance_table_kind = EXTERNAL_TABLE
    supports_cascade = False  # the spec: RESTRICT only

    def __init__(self, **properties: str):
        super().__init__(**properties)
        self.catalog_id = self.prop("catalog_id")
        self._account: str | None = None
        # None: not probed yet; an endpoint known to lack the catalog API is
        # remembered per process (each probe costs botocore's retries of a 500)
        self._catalog_api: bool | None = False if self.prop("endpoint") in _NO_CATALOG_API else None
        self._lock = threading.Lock()
        self._listings = ContinuationListings()  # see lance_table_page
        try:
            self._boto = self._session()
            self.glue = self._boto.client("glue", endpoint_url=self.prop("endpoint"), config=self._config())
        except botocore.exceptions.BotoCoreError as e:  # NoRegionError, bad endpoint, ...
            raise InvalidInputError(f"cannot configure the Glue client: {e}") from e
        if self.managed_default() and not self.supports_managed_versioning:
            raise UnsupportedOperationError(f"managed_versioning=true: implementation-managed tables: "
                                            f"{self.managed_refusal}")

    def close(self) -> None:
        """Release the HTTP connections of the Glue (and STS) clients."""
        self.glue.close()
        if getattr(self, "_sts", None) is not None:
            self._sts.close()

    # -- client configuration ------------------------------------------------------
    def _config(self) -> Config:
        mode = self.prop("retry_mode", "standard")
        if mode not in ("standard", "adaptive", "legacy"):
            raise InvalidInputError(f"retry_mode must be standard, adaptive or legacy, got {mode!r}")
        return Config(retries={"mode": mode, "total_max_attempts": self.int_prop("max_attempts", 5, minimum=1)})

    def _session(self) -> boto3.Session:
        """The four authentication methods of the spec, in one botocore session."""
        base = _botocore_session()
        region = self.prop("region")
        if region:
            base.set_config_variable("region", region)
        key, secret = self.prop("access_key_id"), self.prop("secret_access_key")
        if bool(key) != bool(secret):
            raise InvalidInputError("access_key_id and secret_access_key must be given together")
        if key:
            base.set_credentials(key, secret, self.prop("session_token"))
        role = self.prop("assume_role_arn")
        if not role:
            return boto3.Session(botocore_session=base)
        self._sts = boto3.Session(botocore_session=base).client(
            "sts", region_name=self.prop("assume_role_region") or region, config=self._config()
        )
        duration = self.int_prop("assume_role_timeout_sec", 3600, minimum=900)  # STS minimum
        creds = botocore.credentials.DeferredRefreshableCredentials(
            refresh_using=lambda: self._assume_role(role, duration),
            method="assume-role",
            time_fetcher=lambda: _now(),
        )
        # Refresh a quarter of the way before expiry (botocore's 15/10 minutes
        # would refresh on every call for the shortest STS sessions).
        creds._advisory_refresh_timeout = min(15 * 60, duration // 4)
        creds._mandatory_refresh_timeout = min(10 * 60, duration // 6)
        assumed = _botocore_session()
        if region:
            assumed.set_config_variable("region", region)
        assumed._credentials = creds  # botocore has no public setter for a refreshable provider
        self._credentials = creds
        return boto3.Session(botocore_session=assumed)

    def _assume_role(self, role: str, duration: int) -> dict[str, str]:
        kwargs: dict[str, Any] = {
            "RoleArn": role,
            "RoleSessionName": self.prop("assume_role_session_name", "lance-ns-glue"),
            "DurationSeconds": duration,
        }
        if self.prop("assume_role_external_id"):
            kwargs["ExternalId"] = self.prop("assume_role_external_id")
        c = self._sts.assume_role(**kwargs)["Credentials"]
        return {
            "access_key": c["AccessKeyId"],
            "secret_key": c["SecretAccessKey"],
            "token": c["SessionToken"],
            "expiry_time": c["Expiration"].isoformat(),
        }

    # -- ids -------------------------------------------------------------------------
    def _root_id(self) -> str:
        """The root catalog's id (``catalog_id`` or the account, via STS once)."""
        if self.catalog_id:
            return self.catalog_id
        with self._lock:
            if self._account is None:
                sts = self._boto.client("sts", region_name=self.glue.meta.region_name, config=self._config())
                self._account = sts.get_caller_identity()["Account"]
            return self._account

    def _catalog_id(self, chain: list[str]) -> str | None:
        """Glue CatalogId of a catalog chain (None: the default catalog)."""
        if not chain:
            return self.catalog_id
        root = self._root_id()
        return root + ("/" if ":" in root else ":") + "/".join(chain)

    def _cat_kw(self, chain: list[str]) -> dict[str, str]:
        cid = self._catalog_id(chain)
        return {"CatalogId": cid} if cid else {}

    # -- catalog API (absent on moto and some compatible endpoints) -----------------
    def _catalog_call(self, method: str, **kwargs) -> dict | None:
        """A catalog-API call; None if the entity or the API itself is missing."""
        if self._catalog_api is False:
            return None
        try:
            out = getattr(self.glue, method)(**kwargs)
        except botocore.exceptions.ClientError as e:
            if _not_found(e):
                self._catalog_api = True
                return None
            if _code(e) in _NO_API or e.response.get("ResponseMetadata", {}).get("HTTPStatusCode") == 501:
                self._catalog_api = False
                if self.prop("endpoint"):  # never for AWS itself: it has the API
                    _NO_CATALOG_API.add(self.prop("endpoint"))
                return None
            raise
        self._catalog_api = True
        return out

    def _get_catalog(self, chain: list[str]) -> dict | None:
        out = self._catalog_call("get_catalog", CatalogId=self._catalog_id(chain))
        return out["Catalog"] if out else None

    def _child_catalogs(self, chain: list[str]) -> Iterator[str]:
        kwargs: dict[str, Any] = {"Recursive": False, "IncludeRoot": False}
        parent = self._catalog_id(chain)
        if parent:
            kwargs["ParentCatalogId"] = parent
        while True:
            out = self._catalog_call("get_catalogs", **kwargs)
            if out is None:
                return
            for cat in out.get("CatalogList", []):
                cid = cat.get("CatalogId") or ""
                # a child's own name is the last part of its id (account:parent/child)
                name = cid.split(":", 1)[-1].rsplit("/", 1)[-1] if ":" in cid else cat["Name"]
                if cid != parent:
                    yield name
            if not out.get("NextToken"):
                return
            kwargs["NextToken"] = out["NextToken"]

    # -- namespace primitives ------------------------------------------------------------
    def _resolve(self, ns: list[str]) -> tuple[str, dict[str, str]] | None:
        """(DATABASE|CATALOG, Parameters) of a namespace, or None if it is missing."""
        if len(ns) > 1 and self._get_catalog(ns[:-1]) is None:
            return None  # databases and catalogs below level 1 live in a catalog chain
        try:
            db = self.glue.get_database(Name=ns[-1], **self._cat_kw(ns[:-1]))["Database"]
            return DATABASE, dict(db.get("Parameters") or {})
        except botocore.exceptions.ClientError as e:
            if not _not_found(e):
                raise
        cat = self._get_catalog(ns)
        return (CATALOG, dict(cat.get("Parameters") or {})) if cat is not None else None

    def _kind(self, ns: list[str]) -> str | None:
        found = self._resolve(ns)
        return found[0] if found else None

    def get_namespace_entry(self, ns):
        found = self._resolve(ns)
        return found[1] if found else None

    def list_namespace_names(self, parent):
        if parent and self._kind(parent) == DATABASE:
            return []  # a database holds tables only
        pages = self.glue.get_paginator("get_databases").paginate(**self._cat_kw(parent))
        names = [db["Name"] for page in pages for db in page.get("DatabaseList", [])]
        return names + list(self._child_catalogs(parent))

    def namespace_refusal(self, ns, planned=False):
        """Below level 1 a namespace lives in a catalog (databases hold tables only): for a
        planner, refused where the parent is no catalog Glue holds now (one it makes is a
        database).  CreateNamespace itself answers a missing parent first (1)."""
        refusal = super().namespace_refusal(ns, planned)
        if refusal is None and planned and len(ns) > 1 and self._kind(ns[:-1]) != CATALOG:
            refusal = InvalidInputError(
                f"namespace {to_string(ns)!r} needs {to_string(ns[:-1])!r} to be a Glue catalog, which it is not "
                "(a database holds tables only; a catalog is made at level 1 with glue.namespace_type=catalog)")
        return refusal

    def table_refusal(self, table_id, location=None):
        refusal = super().table_refusal(table_id, location)
        if refusal is None and len(table_id) > 1 and self._kind(list(table_id[:-1])) == CATALOG:
            refusal = InvalidInputError(f"{to_string(table_id[:-1])!r} is a Glue catalog: tables live in databases")
        return refusal

    def namespace_properties_in(self, properties):
        props = dict(properties or {})
        if NAMESPACE_TYPE_KEY in props:  # checked before anything is created
            kind = str(props[NAMESPACE_TYPE_KEY]).lower()
            if kind not in (DATABASE, CATALOG):
                raise InvalidInputError(f"{NAMESPACE_TYPE_KEY} must be {DATABASE!r} or {CATALOG!r}, got {kind!r}")
            props[NAMESPACE_TYPE_KEY] = kind
        return props

    def create_namespace_entry(self, ns, properties):
        props = dict(properties)
        kind = props.pop(NAMESPACE_TYPE_KEY, DATABASE)
        if len(ns) > 1 and self._kind(ns[:-1]) == DATABASE:
            raise InvalidInputError(f"{to_string(ns[:-1])!r} is a Glue database: it holds tables, not namespaces")
        try:
            if kind == DATABASE:
                self.glue.create_database(DatabaseInput={"Name": ns[-1], "Parameters": props}, **self._cat_kw(ns[:-1]))
                return
            if len(ns) > 1 or (self.catalog_id and ":" in self.catalog_id):
                raise UnsupportedOperationError("Glue creates catalogs only directly below the account catalog")
            if self._catalog_call("create_catalog", Name=ns[-1], CatalogInput={"Parameters": props}) is None:
                raise UnsupportedOperationError("this Glue endpoint has no catalog API (CreateCatalog)")
        except botocore.exceptions.ClientError as e:
            if _already_exists(e):
                raise NamespaceAlreadyExistsError(f"namespace {to_string(ns)!r} already exists") from e
            raise

    @_forgets_listing
    def delete_namespace_entry(self, ns):
        kind = self._kind(ns)
        if kind is None:
            return False  # a racing drop came first: it is the one winner
        try:
            if kind == DATABASE:
                # DeleteDatabase also deletes the tables in it: look once more right
                # before it, so a table declared since the caller's check is not lost
                # (the window left is this one round trip; Glue has no conditional delete)
                if self.glue.get_tables(MaxResults=1, **self._table_kw(ns)).get("TableList"):
                    raise NamespaceNotEmptyError(f"namespace {to_string(ns)!r} is not empty (a table was added)")
                self.glue.delete_database(Name=ns[-1], **self._cat_kw(ns[:-1]))
            elif kind == CATALOG:
                self.glue.delete_catalog(CatalogId=self._catalog_id(ns))
        except botocore.exceptions.ClientError as e:
            if _not_found(e):
                return False  # a racing drop came first: it is the one winner
            raise

    # -- table primitives ----------------------------------------------------------------
    def _table_kw(self, ns: list[str]) -> dict[str, str]:
        return {"DatabaseName": ns[-1], **self._cat_kw(ns[:-1])}

    @staticmethod
    def _table(t: dict) -> CatalogTable:
        return CatalogTable(
            name=t["Name"],
            location=(t.get("StorageDescriptor") or {}).get("Location"),
            properties=dict(t.get("Parameters") or {}),
            kind=t.get("TableType"),
            token=t.get("VersionId"),
        )

    def list_table_entries(self, ns):
        if len(ns) > 1 and self._catalog_api is False:
            return []
        try:
            pages = self.glue.get_paginator("get_tables").paginate(**self._table_kw(ns))
            return [self._table(t) for page in pages for t in page.get("TableList", [])]
        except botocore.exceptions.ClientError as e:
            if _not_found(e):
                return []  # a catalog (not a database): no tables
            raise

    def lance_table_page(self, ns, limit, page_token, keep=None):
        """GetTables cannot start at a name and promises no order, so a sorted page reads
        the whole database (the spec: "sort the results and apply pagination"); the
        continuation pages after it reuse that listing instead of reading it again, so an
        enumeration in pages reads the database once, not once a page."""
        if keep is not None:  # (include_declared=false judges each table's storage: not kept)
            return super().lance_table_page(ns, limit, page_token, keep)
        names = self._listings.names(tuple(ns), bool(page_token), lambda: self.lance_table_names(ns))
        return paginate(names, limit, page_token)

    def get_table_entry(self, ns, name):
        if len(ns) > 1 and self._catalog_api is False:
            return None
        try:
            return self._table(self.glue.get_table(Name=name, **self._table_kw(ns))["Table"])
        except botocore.exceptions.ClientError as e:
            if _not_found(e):
                return None
            raise

    @staticmethod
    def _table_input(table: CatalogTable) -> dict:
        return {
            "Name": table.name,
            "TableType": EXTERNAL_TABLE,
            "Parameters": dict(table.properties),
            "StorageDescriptor": {"Location": table.location or ""},
        }

    @_forgets_listing
    def create_table_entry(self, ns, table):
        try:
            self.glue.create_table(TableInput=self._table_input(table), **self._table_kw(ns))
            if len(ns) == 1 and self._kind(ns) is None:  # (an account catalog's database)
                # a racing DeleteDatabase took the table with it: the drop won
                raise NamespaceNotFoundError(f"namespace {to_string(ns)!r} was dropped meanwhile")
        except botocore.exceptions.ClientError as e:
            if _already_exists(e):
                raise TableAlreadyExistsError(f"table {to_string(ns + [table.name])!r} already exists") from e
            if _not_found(e):
                if self._kind(ns) == CATALOG:
                    raise InvalidInputError(f"{to_string(ns)!r} is a Glue catalog; tables live in databases") from e
                raise NamespaceNotFoundError(f"namespace {to_string(ns)!r} does not exist") from e
            raise

    @_forgets_listing
    def replace_table_entry(self, ns, table):
        try:  # one atomic UpdateTable rather than delete + create
            self.glue.update_table(TableInput=self._table_input(table), **self._table_kw(ns))
        except botocore.exceptions.ClientError as e:
            if _not_found(e):
                raise TableNotFoundError(f"table {to_string(ns + [table.name])!r} does not exist") from e
            raise

    # -- implementation-managed tables: UpdateTable conditioned on the VersionId read ----------
    @property
    def supports_managed_versioning(self) -> bool:
        """Whether this endpoint honours UpdateTable's ``VersionId`` (:meth:`_probe_version_id`):
        the compare-and-swap every version commit of a managed table rests on."""
        return self._version_id_honoured()

    @property
    def managed_refusal(self) -> str:
        return ("this Glue endpoint ignores UpdateTable's VersionId (an update with a stale VersionId "
                "succeeded), so racing commits would each be acknowledged and all but one lost")

    def _version_id_honoured(self) -> bool:
        key = (self.prop("endpoint"), self.catalog_id)
        if key not in _VERSION_ID_HONOURED:
            _VERSION_ID_HONOURED[key] = self._probe_version_id()
        return _VERSION_ID_HONOURED[key]

    def _probe_version_id(self) -> bool:
        """Ask the endpoint whether it honours ``VersionId``: in a scratch database, update
        a scratch table once, then again with the VersionId from before the first update,
        which Glue refuses (ConcurrentModificationException) and moto accepts.  An endpoint
        that refuses the probe itself (no CreateDatabase right, say) cannot tell: Glue's
        documented behaviour is assumed, and a warning says so."""
        import uuid

        database = f"lance_ns_cas_probe_{uuid.uuid4().hex[:12]}"
        kw = {**self._cat_kw([]), "DatabaseName": database}
        table = {"Name": "probe", "TableType": EXTERNAL_TABLE, "Parameters": {"probe": "0"}}
        try:
            self.glue.create_database(DatabaseInput={"Name": database}, **self._cat_kw([]))
            try:
                self.glue.create_table(TableInput=table, **kw)
                before = self.glue.get_table(Name="probe", **kw)["Table"].get("VersionId")
                if not before:
                    return False  # nothing to commit against (refused as swap_table_properties does)
                self.glue.update_table(TableInput={**table, "Parameters": {"probe": "1"}}, VersionId=before, **kw)
                try:
                    self.glue.update_table(TableInput={**table, "Parameters": {"probe": "2"}}, VersionId=before, **kw)
                except botocore.exceptions.ClientError as e:
                    if _conflict(e):
                        return True
                    raise
                log.warning("Glue endpoint %s ignores UpdateTable's VersionId: implementation-managed "
                            "tables are refused on it", self.prop("endpoint") or "(AWS)")
                return False
            finally:
                try:
                    self.glue.delete_table(Name="probe", **kw)
                finally:
                    self.glue.delete_database(Name=database, **self._cat_kw([]))
        except botocore.exceptions.ClientError as e:
            log.warning("could not probe whether Glue honours UpdateTable's VersionId (%s); assuming it "
                        "does, as AWS Glue documents", _code(e) or e)
            return True

    def swap_table_properties(self, ns, table, properties):
        """Glue's compare-and-swap: UpdateTable with the ``VersionId`` the table was read at
        fails with ConcurrentModificationException when it changed meanwhile (what
        Iceberg's Glue catalog commits with).  Refused (code 0) on an endpoint that
        ignores the ``VersionId``: there every racing commit would be acknowledged."""
        if not self.supports_managed_versioning:
            raise UnsupportedOperationError(f"implementation-managed tables: {self.managed_refusal}")
        if not table.token:
            raise UnsupportedOperationError(
                "implementation-managed tables: this Glue endpoint answers no table VersionId to commit against"
            )
        changed = CatalogTable(name=table.name, location=table.location, properties=properties, kind=table.kind)
        try:
            self.glue.update_table(TableInput=self._table_input(changed), VersionId=table.token,
                                   **self._table_kw(ns))
        except botocore.exceptions.ClientError as e:
            if _conflict(e):
                return False
            if _not_found(e):
                raise TableNotFoundError(f"table {to_string(ns + [table.name])!r} does not exist") from e
            raise
        return True

    @_forgets_listing
    def delete_table_entry(self, ns, name):
        try:
            self.glue.delete_table(Name=name, **self._table_kw(ns))
        except botocore.exceptions.ClientError as e:
            if _not_found(e):
                raise TableNotFoundError(f"table {to_string(ns + [name])!r} does not exist") from e
            raise

    # -- errors ------------------------------------------------------------------------------
    def translate_error(self, exc: Exception) -> LanceNamespaceError | None:
        if isinstance(exc, botocore.exceptions.ClientError):
            code, msg = _code(exc), exc.response.get("Error", {}).get("Message") or str(exc)
            status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0
            text = f"Glue {code}: {msg}"
            if _not_found(exc):
                return NamespaceNotFoundError(text)
            if _already_exists(exc):
                return NamespaceAlreadyExistsError(text)
            if code in _DENIED or status in (401, 403):
                return UnauthenticatedError(text)  # the Glue spec's "16 Forbidden"
            if code in _INVALID:
                return InvalidInputError(text)
            if _conflict(exc):
                return ConcurrentModificationError(text)
            if code in _UNAVAILABLE or status in (429, 502, 503, 504):
                return ServiceUnavailableError(text)
            if code in _NO_API:
                return UnsupportedOperationError(text)
            return None
        if isinstance(exc, (botocore.exceptions.ConnectionError, botocore.exceptions.HTTPClientError)):
            return ServiceUnavailableError(f"Glue endpoint unreachable: {exc}")
        if isinstance(
            exc,
            (
                botocore.exceptions.NoCredentialsError,
                botocore.exceptions.PartialCredentialsError,
                botocore.exceptions.CredentialRetrievalError,
            ),
        ):
            return UnauthenticatedError(f"AWS credentials: {exc}")
        if isinstance(exc, (botocore.exceptions.ParamValidationError, botocore.exceptions.NoRegionError)):
            return InvalidInputError(str(exc))
        return None

