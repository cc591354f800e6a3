"""Apache Iceberg REST Catalog backend (impl ``iceberg``).

Per ``impl-iceberg-rest.md``: the first identifier level is the *warehouse*;
the levels below it are Iceberg namespaces (any depth); a Lance table is a
companion Iceberg table with one nullable string column ``dummy`` and
``table_type=lance`` in its properties, located where the Lance data lives
(default ``{root}/{warehouse}/{namespace...}/{table}``; a bare-scheme root
such as ``s3://`` makes that ``s3://{warehouse}/...``).

Properties: ``endpoint`` (required, http/https), ``auth_token``,
``credential`` (``client_id:client_secret``), ``connect_timeout`` /
``read_timeout`` (ms, 10000 / 30000), ``max_retries`` (3), ``root`` (cwd),
``list_concurrency`` (16, metadata loads in flight during ListTables),
``storage.*`` (pylance storage options).

Client choice.  pyiceberg's ``RestCatalog`` speaks the protocol: config
merge (defaults < ours < overrides, so a server ``prefix`` wins), 0x1F
namespace encoding, pagination, the endpoints and their error classes, and a
retry after a 401 that calls ``_refresh_token``.  We keep one RestCatalog per
warehouse (that *is* the ``/v1/config?warehouse=`` cache) and replace only
what does not fit the Lance spec:

* the HTTP session: pyiceberg has no timeouts or connection retries, so our
  ``requests`` adapter adds ``connect_timeout``/``read_timeout`` and urllib3
  retries (``max_retries``; connection errors for any method, read errors and
  502/503/504 only for idempotent ones, so a create is never sent twice);
* OAuth2: pyiceberg's legacy manager never renews before expiry and its
  newer one sends the secret as HTTP Basic, which not every Iceberg server
  accepts.  ``_ClientCredentials`` posts ``client_id``/``client_secret`` to
  ``{endpoint}/v1/oauth/tokens`` as the REST spec describes, renews before
  ``expires_in`` runs out and on a 401; one token serves every warehouse;
* the prefix: when the config names none, the warehouse name is used;
* no FileIO per loaded table (we never touch the companion's Iceberg files);
* ``purgeRequested=false`` spelled as the spec does (pyiceberg sends "False").

Everything else (resolve ids, check parents, mark and filter Lance tables,
sort, page) is the shared CatalogNamespace algorithm, which also keeps the
Lance semantics where an Iceberg server is lax (e.g. SeaweedFS answers 200 to a
duplicate create and ``[]`` when listing a missing namespace: existence is
checked first).  ListTables must load each table's metadata to see
``table_type`` (~10 ms a table): a page of ``limit`` tables loads, on a thread
pool, only the tables that page needs (see ``lance_table_page``).

Implementation-managed tables keep their version history in the companion's
properties like every catalog's; an Iceberg commit cannot require properties, so
each commit also moves ``main`` to a snapshot of its own under
``assert-ref-snapshot-id`` (``_WarehouseCatalog.swap_properties``).
"""

from __future__ import annotations

import dataclasses
import json
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlparse

import pydantic
import requests
from pyiceberg import exceptions as ice
from pyiceberg.catalog.rest import PREFIX, Capability, Endpoint, Endpoints, HttpMethod, RestCatalog, TableResponse
from pyiceberg.catalog.rest.auth import AuthManager, AuthManagerAdapter
from pyiceberg.catalog.rest.response import TokenResponse, _handle_non_200_response
from pyiceberg.io import FileIO
from pyiceberg.schema import Schema
from pyiceberg.table import CommitTableRequest, TableIdentifier
from pyiceberg.table.metadata import _generate_snapshot_id
from pyiceberg.table.refs import MAIN_BRANCH, SnapshotRefType
from pyiceberg.table.snapshots import Operation, Snapshot, Summary
from pyiceberg.table.update import (
    AddSnapshotUpdate,
    AssertRefSnapshotId,
    AssertTableUUID,
    RemovePropertiesUpdate,
    RemoveSnapshotsUpdate,
    SetPropertiesUpdate,
    SetSnapshotRefUpdate,
)
from pyiceberg.types import NestedField, StringType
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from .. import storage
from ..catalog import CatalogNamespace
from ..catalog.entry import CatalogTable
from ..identifiers import to_string
from ..paging import page_by_loading
from ..errors import (
    InternalError,
    InvalidInputError,
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

#: the companion table's schema (the spec's single nullable string column)
DUMMY_SCHEMA = Schema(NestedField(field_id=1, name="dummy", field_type=StringType(), required=False))
TOKEN_PATH = "/v1/oauth/tokens"
#: the one (empty) manifest list every lance-ns snapshot of a companion table names,
#: under the table's Iceberg ``metadata/`` directory
EMPTY_MANIFEST_LIST = "metadata/lance-ns-empty-manifest-list.avro"
#: the companion table's Iceberg metadata directory under its (the Lance table's) location
ICEBERG_METADATA = "metadata"
#: the REST spec's multi-table commit (atomic), used only where a server advertises it
TRANSACTIONS_COMMIT = "transactions/commit"
COMMIT_TRANSACTION = Endpoint(http_method=HttpMethod.POST, path=f"/v1/{{prefix}}/{TRANSACTIONS_COMMIT}")


@dataclasses.dataclass
class _Companion(CatalogTable):
    """A companion table as loaded, with the state a commit of it is conditioned on."""

    uuid: str | None = None
    #: the snapshot the ``main`` branch points at (None: no snapshot yet)
    main_snapshot: int | None = None
    #: that snapshot's parent (a commit answered ambiguously is found through it)
    main_parent: int | None = None
    last_sequence_number: int = 0
    schema_id: int | None = None
    format_version: int = 2


class _Adapter(HTTPAdapter):
    """Default timeouts and urllib3 retries for every request of a session."""

    def __init__(self, timeout: tuple[float, float], retries: int, pool: int):
        self._timeout = timeout
        retry = Retry(
            total=retries,
            connect=retries,
            read=retries,
            status=retries,
            status_forcelist=(502, 503, 504),
            backoff_factor=0.1,
            raise_on_status=False,  # the last 503 reaches pyiceberg's error mapping
        )
        super().__init__(max_retries=retry, pool_connections=4, pool_maxsize=pool)

    def send(self, request, **kwargs):
        if kwargs.get("timeout") is None:
            kwargs["timeout"] = self._timeout
        return super().send(request, **kwargs)


class _ClientCredentials(AuthManager):
    """OAuth2 client credentials flow with renewal before expiry and on 401.

    With only ``auth_token`` the token is sent as is (a 401 then stays a 401);
    with both, the given token is used until a 401, then the credential.
    """

    def __init__(self, session: requests.Session, token_url: str, credential: str | None, token: str | None):
        self._session = session
        self._url = token_url
        self._credential = credential
        self._token = token
        self._renew_at = float("inf") if token else 0.0
        self._lock = threading.Lock()
        self.fetches = 0  # how many tokens were fetched (observable in tests)

    def close(self) -> None:
        self._session.close()

    def refresh(self) -> None:
        if self._credential is None:
            return
        client_id, colon, secret = self._credential.partition(":")
        data = {"grant_type": "client_credentials", "client_secret": secret if colon else client_id, "scope": "catalog"}
        if colon:  # "secret" alone: no client_id, as Iceberg's clients do
            data["client_id"] = client_id
        resp = self._session.post(self._url, data=data)
        if resp.status_code != 200:
            raise _token_error(resp)
        body = TokenResponse.model_validate_json(resp.text)
        self.fetches += 1
        self._token = body.access_token
        if body.expires_in is None:
            self._renew_at = float("inf")  # renewed on a 401 only
        else:  # renew a little before the server would refuse it
            self._renew_at = time.monotonic() + body.expires_in - min(60.0, body.expires_in / 10)

    def auth_header(self) -> str | None:
        with self._lock:
            if self._credential is not None and (self._token is None or time.monotonic() >= self._renew_at):
                self.refresh()
            return f"Bearer {self._token}" if self._token else None

    def force_refresh(self) -> None:
        with self._lock:
            self.refresh()


def _token_error(resp: requests.Response) -> LanceNamespaceError:
    msg = f"OAuth2 token request to {resp.url} failed: HTTP {resp.status_code} {resp.text[:200]}"
    if resp.status_code in (400, 401):  # invalid_client / invalid_grant
        return UnauthenticatedError(msg)
    if resp.status_code == 403:
        return PermissionDeniedError(msg)
    if resp.status_code == 503:
        return ServiceUnavailableError(msg)
    return InternalError(msg)


class _NoFileIO(FileIO):
    """The companion table's Iceberg files are never read or written by us, so
    no FileIO is built per loaded table (pyiceberg's would import pyarrow's
    Iceberg IO and set up a filesystem per table)."""

    def _refuse(self, *args, **kwargs):
        raise UnsupportedOperationError("lance-ns does not read or write Iceberg data files")

    new_input = new_output = delete = _refuse


class _WarehouseCatalog(RestCatalog):
    """pyiceberg's RestCatalog for one warehouse, on the owner's session setup."""

    #: loaded tables remembered for conditional loads (oldest forgotten first)
    MAX_REMEMBERED = 10_000

    def __init__(self, owner: "IcebergRestNamespace", warehouse: str):
        self._owner = owner
        super().__init__(f"lance-ns/{warehouse}", uri=owner.endpoint, warehouse=warehouse)
        if not self.properties.get(PREFIX):
            self.properties[PREFIX] = warehouse  # the spec's fallback
            if self._unprefixed():
                del self.properties[PREFIX]
        #: identifier -> (the server's ETag, the table as loaded with it)
        self._remembered: dict[tuple[str, ...], tuple[str, CatalogTable]] = {}
        self._remembered_lock = threading.Lock()

    def _unprefixed(self) -> bool:
        """Whether a server whose config names no prefix serves the protocol without one.

        The Lance spec's fallback (the warehouse name as the prefix) cannot reach a server
        whose routes have no prefix at all, as Iceberg's reference server (RESTCatalogServer,
        the ``apache/iceberg-rest-fixture`` image): it answers ``/v1/{warehouse}/namespaces``
        400 "No route for request", while Iceberg's own clients, reading the prefix as
        optional, call ``/v1/namespaces``.  So, only where the config names no prefix, one
        listing tells: the fallback is kept unless its listing is refused (400/404) and the
        unprefixed one answers 200.  Such a server ignores the warehouse: every warehouse
        name reaches its one catalog.
        """
        listing = self.url(Endpoints.list_namespaces, prefixed=True)
        if self._session.get(listing).status_code not in (400, 404):
            return False
        return self._session.get(self.url(Endpoints.list_namespaces, prefixed=False)).status_code == 200

    def load_entry(self, identifier: tuple[str, ...]) -> CatalogTable:
        """A table's location and properties (what tells a Lance table), from
        LoadTable without building a pyiceberg Table.

        Freshness-aware, as the Iceberg REST spec allows: when the server sent
        an ``ETag`` with the last load of this identifier, the load asks
        ``If-None-Match`` and a ``304`` reuses what was loaded then.  That is
        safe because the server answers 304 only while the table's metadata is
        unchanged (servers derive the ETag from the metadata file's location):
        a changed table, or another table created under the same name after a
        drop, has new metadata, so it is loaded again.  A server that sends no
        ETag (SeaweedFS) gets a full load every time: nothing is reused.
        """
        self._check_endpoint(Capability.V1_LOAD_TABLE)
        with self._remembered_lock:
            remembered = self._remembered.get(identifier)
        url = self.url(Endpoints.load_table, prefixed=True, **self._split_identifier_for_path(identifier))
        response = self._session.get(url, headers={"If-None-Match": remembered[0]} if remembered else None)
        if response.status_code == 304 and remembered:
            return dataclasses.replace(remembered[1], properties=dict(remembered[1].properties))
        try:
            response.raise_for_status()
        except requests.HTTPError as exc:
            self._remember(identifier, None)
            _handle_non_200_response(exc, {404: ice.NoSuchTableError})
        table = _companion(identifier[-1], TableResponse.model_validate_json(response.text).metadata)
        etag = response.headers.get("ETag")
        self._remember(identifier, (etag, dataclasses.replace(table, properties=dict(table.properties))) if etag else None)
        return table

    def swap_properties(self, changes: list[tuple[tuple[str, ...], _Companion, dict[str, str]]]) -> bool:
        """Commit each table's new ``properties`` iff every table is still as read, atomically.

        Each table's change is an Iceberg commit that adds a snapshot on ``main``
        under the requirements ``assert-table-uuid`` and ``assert-ref-snapshot-id``
        (main = the snapshot read), so of two commits built on one read the server
        grants one and answers the other 409 CommitFailedException (False here).
        One table goes to its update endpoint; several go together to
        ``POST /v1/{prefix}/transactions/commit``, which the REST spec makes atomic,
        and only where the server advertises it in its config's ``endpoints``.

        The snapshot changes no Iceberg data (operation ``replace``, the shared empty
        manifest list) and replaces its parent (``remove-snapshots``), so a companion
        keeps one snapshot however many commits it takes.  When the answer is lost
        (timeout, 5xx) the tables are read again: the commit took effect iff its
        snapshots are on ``main`` (or parents of the ones there).
        """
        if len(changes) == 1:
            self._check_endpoint(Capability.V1_UPDATE_TABLE)
            identifier = changes[0][0]
            url = self.url(Endpoints.update_table, prefixed=True, **self._split_identifier_for_path(identifier))
        else:
            self._check_endpoint(COMMIT_TRANSACTION)
            url = self.url(TRANSACTIONS_COMMIT, prefixed=True)
        requests_, snapshots = [], []
        for identifier, read, properties in changes:
            request, snapshot_id = self._change(identifier, read, properties)
            requests_.append(request)
            snapshots.append(snapshot_id)
        if len(changes) == 1:
            body = requests_[0].model_dump_json()
        else:  # the spec's CommitTransactionRequest
            body = json.dumps({"table-changes": [json.loads(r.model_dump_json()) for r in requests_]})
        try:
            response = self._session.post(url, data=body.encode(), headers={"Content-Type": "application/json"})
        except (requests.Timeout, requests.ConnectionError):
            if self._landed(changes, snapshots):
                return True
            raise
        if response.status_code == 409:
            return False
        try:
            response.raise_for_status()
        except requests.HTTPError as exc:
            if response.status_code >= 500 and self._landed(changes, snapshots):
                return True
            _handle_non_200_response(exc, {404: ice.NoSuchTableError})
        return True

    def _change(self, identifier: tuple[str, ...], read: _Companion, properties: dict[str, str]):
        """(CommitTableRequest, its new snapshot id): ``properties`` conditioned on ``read``."""
        snapshot_id = _generate_snapshot_id()
        manifest_list = storage.join(read.location or "", EMPTY_MANIFEST_LIST)
        if read.main_snapshot is None:  # the table's first lance-ns snapshot
            self._owner.write_empty_manifest_list(read, manifest_list, snapshot_id)
        snapshot = Snapshot(
            snapshot_id=snapshot_id,
            parent_snapshot_id=read.main_snapshot,
            sequence_number=read.last_sequence_number + 1,
            timestamp_ms=int(time.time() * 1000),
            manifest_list=manifest_list,
            summary=Summary(Operation.REPLACE),
            schema_id=read.schema_id,
        )
        updates: list = [
            AddSnapshotUpdate(snapshot=snapshot),
            SetSnapshotRefUpdate(ref_name=MAIN_BRANCH, type=SnapshotRefType.BRANCH, snapshot_id=snapshot_id),
        ]
        if read.main_snapshot is not None:
            updates.append(RemoveSnapshotsUpdate(snapshot_ids=[read.main_snapshot]))
        changed = {k: v for k, v in properties.items() if read.properties.get(k) != v}
        removed = [k for k in read.properties if k not in properties]
        if changed:
            updates.append(SetPropertiesUpdate(updates=changed))
        if removed:
            updates.append(RemovePropertiesUpdate(removals=removed))
        request = CommitTableRequest(
            identifier=TableIdentifier(namespace=list(identifier[:-1]), name=identifier[-1]),
            requirements=(AssertTableUUID(uuid=read.uuid),
                          AssertRefSnapshotId(ref=MAIN_BRANCH, snapshot_id=read.main_snapshot)),
            updates=tuple(updates),
        )
        return request, snapshot_id

    def _landed(self, changes, snapshots: list[int]) -> bool:
        """Whether a commit whose answer was lost took effect: every table's snapshot is on
        main, or a later commit built on it (True); every table is untouched (False: the
        caller raises the failure).  Raises when the tables cannot tell."""
        landed = []
        for (identifier, read, _), snapshot_id in zip(changes, snapshots):
            now = self.load_entry(identifier)
            if snapshot_id in (now.main_snapshot, now.main_parent):
                landed.append(True)
            elif now.main_snapshot == read.main_snapshot:
                landed.append(False)
            else:
                landed.append(None)
        if all(landed):
            return True
        if not any(landed) and None not in landed:
            return False
        names = ", ".join(repr(".".join(i)) for i, _, _ in changes)
        raise ServiceUnavailableError(
            f"the commit of {names} got no answer and the tables have moved on since; whether it took "
            "effect is unknown: read the tables' versions before retrying"
        )

    def _remember(self, identifier: tuple[str, ...], entry: tuple[str, CatalogTable] | None) -> None:
        with self._remembered_lock:
            self._remembered.pop(identifier, None)
            if entry is not None:
                self._remembered[identifier] = entry
                if len(self._remembered) > self.MAX_REMEMBERED:
                    del self._remembered[next(iter(self._remembered))]

    def _create_session(self) -> requests.Session:
        session = self._owner.new_session()
        self._config_headers(session)
        session.auth = AuthManagerAdapter(self._owner.auth)
        self._auth_manager = self._owner.auth
        return session

    def _load_file_io(self, properties=None, location=None) -> FileIO:
        return _NoFileIO()

    def _refresh_token(self) -> None:  # pyiceberg's hook after a 401
        self._owner.auth.force_refresh()


def _companion(name: str, meta) -> _Companion:
    """The catalog entry of a loaded companion table (pyiceberg TableMetadata)."""
    main = meta.refs.get(MAIN_BRANCH)
    head = meta.snapshot_by_id(main.snapshot_id) if main else None
    return _Companion(
        name=name,
        location=meta.location,
        properties=dict(meta.properties),
        uuid=str(meta.table_uuid),
        main_snapshot=main.snapshot_id if main else None,
        main_parent=head.parent_snapshot_id if head else None,
        last_sequence_number=getattr(meta, "last_sequence_number", 0) or 0,
        schema_id=meta.current_schema_id,
        format_version=meta.format_version,
    )


def _delete_lance_files(location: str, opts: dict[str, str]) -> None:
    """Everything under a dropped table's ``location`` but the dropped marker and the
    companion's Iceberg ``metadata/`` (storage.delete_dropped, keeping one more child)."""
    import pyarrow.fs as pafs

    fs, path = storage.filesystem(location, opts)
    try:
        children = fs.get_file_info(pafs.FileSelector(path, recursive=False, allow_not_found=True))
    except OSError:
        storage.delete_dropped(location, opts)
        return
    for child in children:
        name = child.path.rstrip("/").rsplit("/", 1)[-1]
        if name not in (storage.DROPPED_MARKER, ICEBERG_METADATA):
            storage.delete_location(storage.join(location, name), opts)


_BARE_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://$")


class IcebergRestNamespace(CatalogNamespace):
    supports_cascade = False  # the spec: only Restrict drops
    #: implementation-managed tables: the history lives in the companion's properties,
    #: committed with ``assert-ref-snapshot-id`` on a snapshot of its own (see swap_properties)
    supports_managed_versioning = True
    drop_missing_ok = True  # the spec: DropNamespace is idempotent
    location_suffix = ""  # {root}/{warehouse}/{namespace...}/{table}

    def __init__(self, **properties: str):
        super().__init__(**properties)
        self.endpoint = (self.prop("endpoint", required=True) or "").rstrip("/")
        parsed = urlparse(self.endpoint)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise InvalidInputError(f"endpoint must be an http:// or https:// URL, got {self.endpoint!r}")
        self._timeout = (
            self.int_prop("connect_timeout", 10000, minimum=1) / 1000,
            self.int_prop("read_timeout", 30000, minimum=1) / 1000,
        )
        self._retries = self.int_prop("max_retries", 3)
        self._workers = self.int_prop("list_concurrency", 16, minimum=1)
        #: the token source every warehouse's session shares
        self.auth = _ClientCredentials(
            self.new_session(), self.endpoint + TOKEN_PATH, self.prop("credential"), self.prop("auth_token")
        )
        self._catalogs: dict[str, _WarehouseCatalog] = {}
        self._known: set[str] = set()  # warehouses seen to exist
        self._lock = threading.Lock()

    def new_session(self) -> requests.Session:
        """An HTTP session with this connection's timeouts, retries and pool size."""
        session = requests.Session()
        adapter = _Adapter(self._timeout, self._retries, pool=self._workers + 4)
        session.mount("http://", adapter)
        session.mount("https://", adapter)
        return session

    def close(self) -> None:
        """Release the HTTP connections (the client stays usable: they reopen)."""
        with self._lock:
            for cat in self._catalogs.values():
                cat.close()
            self._catalogs.clear()
        self.auth.close()

    # -- warehouse -> catalog (the config cache) -----------------------------------
    def _catalog(self, warehouse: str) -> _WarehouseCatalog:
        with self._lock:
            cat = self._catalogs.get(warehouse)
            if cat is None:
                try:
                    cat = _WarehouseCatalog(self, warehouse)
                except ice.RESTError as e:
                    status = getattr(getattr(e.__cause__, "response", None), "status_code", None)
                    if status == 404:
                        raise NamespaceNotFoundError(f"warehouse {warehouse!r} does not exist: {e}") from e
                    raise
                self._catalogs[warehouse] = cat
            return cat

    def default_location(self, ns: list[str], name: str) -> str:
        root = self.prop("root") or ""
        if _BARE_SCHEME.match(root):  # e.g. "s3://": {root}{warehouse=bucket}/...
            return root + "/".join([*ns, name])
        return storage.join(self.root, *ns, name)

    # -- primitives ------------------------------------------------------------------
    def get_namespace_entry(self, ns):
        try:
            cat = self._catalog(ns[0])
            if len(ns) == 1:
                if ns[0] not in self._known:
                    cat.list_namespaces(())  # 404 if the server has no such warehouse
                    self._known.add(ns[0])
                return {}
            return dict(cat.load_namespace_properties(tuple(ns[1:])))
        except (ice.NoSuchNamespaceError, NamespaceNotFoundError):
            return None

    def list_namespace_names(self, parent):
        if not parent:
            raise UnsupportedOperationError(
                "the Iceberg REST protocol cannot list warehouses; list a warehouse's namespaces instead"
            )
        below = tuple(parent[1:])
        # Servers may return nested namespaces too (SeaweedFS does without a parent filter).
        found = self._catalog(parent[0]).list_namespaces(below)
        return sorted({tuple(i)[-1] for i in found if len(i) == len(below) + 1 and tuple(i[:-1]) == below})

    def create_namespace_entry(self, ns, properties):
        if len(ns) == 1:
            raise UnsupportedOperationError("warehouses are made by the catalog's administrator, not through this API")
        self._catalog(ns[0]).create_namespace(tuple(ns[1:]), properties)

    def drop_namespace_checked(self, ns, behavior, purge=False):
        try:
            super().drop_namespace_checked(ns, behavior, purge)
        except ice.NoSuchNamespaceError:
            # A racing drop removed it between the existence check and the emptiness
            # listings (a spec-following server answers those 404): dropping a missing
            # namespace succeeds (drop_missing_ok), as the drop itself would.
            pass

    def delete_namespace_entry(self, ns):
        if len(ns) == 1:
            raise UnsupportedOperationError("warehouses cannot be dropped through this API")
        try:
            self._catalog(ns[0]).drop_namespace(tuple(ns[1:]))
        except ice.NoSuchNamespaceError:
            pass  # idempotent (the spec)

    def _all_table_names(self, ns: list[str]) -> list[str]:
        """The sorted names of every table of ``ns`` (one cheap listing, names only)."""
        if len(ns) == 1:
            return []  # Iceberg tables live in a namespace, never in the warehouse itself
        return sorted({ident[-1] for ident in self._catalog(ns[0]).list_tables(tuple(ns[1:]))})

    def _load_all(self, ns: list[str], names: list[str]) -> list[CatalogTable]:
        """The tables ``names`` (in that order, those still there), loaded
        ``list_concurrency`` at a time: one metadata load per table is the only
        way to see ``table_type``."""
        if not names:
            return []
        cat = self._catalog(ns[0])
        with ThreadPoolExecutor(max_workers=min(self._workers, len(names))) as pool:
            loaded = list(pool.map(lambda n: self._load(cat, ns, n, lenient=True), names))
        return [t for t in loaded if t is not None]

    def list_table_entries(self, ns):
        return self._load_all(ns, self._all_table_names(ns))

    def lance_table_page(self, ns, limit, page_token, keep=None):
        return page_by_loading(self._all_table_names(ns), limit, page_token, lambda batch: self._load_all(ns, batch),
                               self._listed(keep))

    def get_table_entry(self, ns, name):
        if len(ns) == 1:
            return None
        return self._load(self._catalog(ns[0]), ns, name)

    @staticmethod
    def _load(cat: _WarehouseCatalog, ns: list[str], name: str, lenient: bool = False) -> CatalogTable | None:
        try:
            return cat.load_entry((*ns[1:], name))
        except (ice.NoSuchTableError, ice.NoSuchNamespaceError):
            return None  # gone meanwhile
        except pydantic.ValidationError:
            if lenient:  # metadata pyiceberg cannot read is no companion table of ours:
                return CatalogTable(name=name)  # listed as non-Lance, not a failed listing
            raise

    def create_table_entry(self, ns, table):
        if len(ns) == 1:
            raise InvalidInputError("Iceberg tables live in a namespace below the warehouse, not in the warehouse")
        self._catalog(ns[0]).create_table(
            (*ns[1:], table.name), schema=DUMMY_SCHEMA, location=table.location, properties=table.properties
        )

    def delete_table_entry(self, ns, name):
        try:
            # The spec's query is ``purgeRequested=false``; pyiceberg would put the
            # Python bool on the wire as "False", so the literal is passed.
            self._catalog(ns[0]).drop_table((*ns[1:], name), purge_requested="false")  # type: ignore[arg-type]
        except ice.NoSuchTableError:
            return False  # a racing drop came first: it is the one winner

    def rename_table_entry(self, ns, table, new_ns, new_name):
        # the protocol's POST /v1/{prefix}/tables/rename, within one warehouse (catalog)
        if ns[0] != new_ns[0]:
            raise InvalidInputError("Iceberg REST renames tables within one warehouse only")
        self._catalog(ns[0]).rename_table((*ns[1:], table.name), (*new_ns[1:], new_name))

    def drop_table_checked(self, ns, table, purge=False):
        # Unlike the shared order (entry first), data goes first here: an Iceberg
        # server may own the storage under its tables -- SeaweedFS deletes a
        # dropped table's files itself and then refuses any S3 access to that
        # path, so deleting after the entry fails with AccessDenied.  While the
        # entry exists the location is ours to delete; if the drop fails in
        # between, the entry is still there and DropTable can be retried.
        # The companion's own Iceberg metadata (``metadata/`` under the same
        # location) goes only after the entry: a server that reads it on LoadTable
        # (the reference server) answers 500 for an entry whose metadata file is
        # gone, so racing drops and readers would see an internal error, and a
        # drop failing in between would leave a table no DropTable can load.
        opts = self.table_storage_options(table) if self.deletes_data_of(ns, table, purge) else None
        if opts is not None:
            try:
                storage.mark_dropped(table.location, opts)
                _delete_lance_files(table.location, opts)
            except Exception:
                # A racing drop came first, and the server now refuses access to the
                # table's path (SeaweedFS refuses even reading its metadata then).
                try:
                    gone = self.get_table_entry(ns, table.name) is None
                except OSError:
                    gone = True
                if gone:
                    raise TableNotFoundError(f"table {to_string(ns + [table.name])!r} does not exist") from None
                raise
        self.remove_table_entry(ns, table)
        if opts is not None:
            try:
                storage.delete_location(storage.join(table.location, ICEBERG_METADATA), opts)
            except Exception:  # noqa: BLE001 - SeaweedFS deletes it itself and refuses access to the path
                pass

    # -- implementation-managed tables -----------------------------------------------
    def swap_tables_properties(self, changes) -> bool:
        """One Iceberg commit per table; several tables through the server's multi-table
        transaction, atomic (where it advertises one; else code 0, as on catalogs without one)."""
        warehouses = {ns[0] for ns, _, _ in changes}
        if len(warehouses) > 1:
            raise UnsupportedOperationError("an Iceberg REST transaction commits tables of one warehouse only")
        cat = self._catalog(warehouses.pop())
        if len(changes) > 1 and COMMIT_TRANSACTION not in cat._supported_endpoints:
            raise UnsupportedOperationError(
                f"the Iceberg REST server {self.endpoint} does not advertise the multi-table commit "
                f"(POST /v1/{{prefix}}/{TRANSACTIONS_COMMIT}) in its config's endpoints, so several tables "
                "cannot be committed atomically; commit them one at a time"
            )
        for ns, table, _ in changes:
            if not isinstance(table, _Companion):  # every table object read here is one
                raise InternalError(f"table {to_string(ns + [table.name])!r} was not read from the catalog")
        return cat.swap_properties([((*ns[1:], table.name), table, props) for ns, table, props in changes])

    def write_empty_manifest_list(self, table: _Companion, location: str, snapshot_id: int) -> None:
        """The valid, empty manifest list the companion's snapshots name (an Iceberg
        engine reading the companion table reads no rows rather than a missing file),
        written by pyiceberg's manifest-list writer at the table's first snapshot."""
        from pyiceberg.io.pyarrow import PyArrowFile
        from pyiceberg.manifest import write_manifest_list

        fs, path = storage.filesystem(location, self.table_storage_options(table))
        if not storage.is_uri(location):  # a local table's directory may not exist yet
            fs.create_dir(path.rsplit("/", 1)[0], recursive=True)
        with write_manifest_list(
            format_version=table.format_version,  # type: ignore[arg-type]
            output_file=PyArrowFile(location, path, fs),
            snapshot_id=snapshot_id,
            parent_snapshot_id=None,
            sequence_number=table.last_sequence_number + 1,
            avro_compression="null",
        ):
            pass  # no manifests: the companion table holds no Iceberg data

    # -- errors ------------------------------------------------------------------------
    def translate_error(self, exc):
        msg = f"Iceberg REST catalog {self.endpoint}: {exc}"
        for kinds, mapped in _ERRORS:
            if isinstance(exc, kinds):
                return mapped(msg)
        return None


_ERRORS: list[tuple[tuple[type[BaseException], ...], type[LanceNamespaceError]]] = [
    ((ice.NoSuchNamespaceError,), NamespaceNotFoundError),
    ((ice.NoSuchTableError,), TableNotFoundError),
    ((ice.NamespaceAlreadyExistsError,), NamespaceAlreadyExistsError),
    ((ice.TableAlreadyExistsError,), TableAlreadyExistsError),
    ((ice.NamespaceNotEmptyError,), NamespaceNotEmptyError),
    ((ice.UnauthorizedError, ice.AuthorizationExpiredError, ice.OAuthError), UnauthenticatedError),
    ((ice.ForbiddenError,), PermissionDeniedError),
    ((ice.ServiceUnavailableError, requests.ConnectionError, requests.Timeout), ServiceUnavailableError),
    ((ice.TooManyRequestsError,), ThrottlingError),
    ((ice.BadRequestError, ice.NoSuchIdentifierError), InvalidInputError),
    ((NotImplementedError,), UnsupportedOperationError),
]
