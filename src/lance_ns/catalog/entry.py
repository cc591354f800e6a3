"""A catalog's table entry (:class:`CatalogTable`) and the rules on its properties,
shared by the catalog namespace (:mod:`lance_ns.catalog`), its version history
(:mod:`lance_ns.catalog.versions`) and the backends."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field

from .. import storage
from ..base import is_name_too_long
from ..errors import InternalError, LanceNamespaceError, UnsupportedOperationError
from ..ledger import DIRECTORY as LEDGER_DIRECTORY
from ..modes import is_true

TABLE_TYPE_KEY = "table_type"
#: joins the string ids ListAllTables answers (the REST protocol's default delimiter)
ALL_TABLES_DELIMITER = "$"
LANCE = "lance"
#: the request ``context`` key asking DropTable / DropNamespace to delete the
#: data of tables at locations the namespace does not own (registered ones)
PURGE_CONTEXT_KEY = "purge"
#: (over REST it travels as the ``x-lance-ns-purge`` header: protocol.routes.CONTEXT_HEADERS)
#: path components that belong to a Lance table or to a namespace's own files:
#: no table location may run through them
RESERVED_PARTS = frozenset(
    {"_versions", "_indices", "_deletions", "_transactions", "_refs", "__manifest",
     ".lance-reserved", ".lance-deregistered", LEDGER_DIRECTORY}
)
#: the property (of the connection, a namespace, or a table's creation request) that makes
#: tables created from then on implementation-managed; recorded per table under this key
MANAGED_KEY = "managed_versioning"
#: where a catalog table object keeps the version history of an implementation-managed
#: table (JSON list of TableVersion dicts, ascending); never shown as a property
VERSIONS_KEY = "lance_ns.versions"
#: whether lance-ns owns a table's data ("true": a drop deletes it; "false": a drop keeps it,
#: ``purge`` deletes it), recorded in the table's entry when it is made: "true" where the
#: namespace chose the location (DeclareTable without one, CreateTable, a CTAS), "false" for
#: a registered table or a location given to DeclareTable.  Never shown as a property (a
#: client copying a table's properties into another catalog must not carry the claim along);
#: given in a request's properties it is the caller's explicit word, and recorded as given.
#: Tables made before the mark existed have none: there the location decides
#: (CatalogNamespace.owns_location), as it did then; ``lance-ns table adopt`` marks them.
OWNED_KEY = storage.OWNED_KEY


def purge_requested(request) -> bool:
    """Whether a drop request asks to delete data the namespace does not own."""
    context = getattr(request, "context", None) or {}
    return is_true(context.get(PURGE_CONTEXT_KEY))


def is_managed(table: "CatalogTable") -> bool:
    """Whether a table is implementation-managed (its kind is recorded at creation)."""
    return is_true((table.properties or {}).get(MANAGED_KEY, ""))



def shown_properties(properties: dict[str, str] | None) -> dict[str, str]:
    """A table's properties as answered: without the version history and the ownership
    mark kept among them."""
    return {k: v for k, v in (properties or {}).items() if k not in _UNSHOWN}


_UNSHOWN = frozenset({VERSIONS_KEY, OWNED_KEY})


def with_owner(properties: dict[str, str], owned: bool) -> dict[str, str]:
    """``properties`` with the ownership mark: the caller's, where it gave one, else ``owned``."""
    given = properties.get(OWNED_KEY)
    return {**properties, OWNED_KEY: "true" if (is_true(given) if given is not None else owned) else "false"}


def recorded_owner(table: "CatalogTable") -> bool | None:
    """Whether the table's entry records lance-ns as the owner of its data (None: no mark,
    a table made by a release before the mark)."""
    mark = (table.properties or {}).get(OWNED_KEY)
    return None if mark is None else is_true(mark)


def with_history(table: "CatalogTable", history: list[dict]) -> dict[str, str]:
    """``table``'s properties with ``history`` as its version history."""
    return {**(table.properties or {}), VERSIONS_KEY: json.dumps(history, separators=(",", ":"))}


def overlaps(a: str, b: str) -> bool:
    """Whether two locations are equal or one lies inside the other."""
    a, b = a.rstrip("/") + "/", b.rstrip("/") + "/"
    return a.startswith(b) or b.startswith(a)


@dataclass
class CatalogTable:
    name: str
    location: str | None = None
    properties: dict[str, str] = field(default_factory=dict)
    #: the catalog's own table kind (HMS/Glue ``EXTERNAL_TABLE``, Unity ``EXTERNAL``)
    kind: str | None = None
    #: the catalog's version of the object as read (Glue ``VersionId``; on Unity the
    #: version of the table's ledger): what a compare-and-swap of its properties is conditioned on
    token: str | None = None
    #: False for a table being declared (nothing at its location to describe to the
    #: catalog, and DeclareTable makes no storage call to find out); None: not known
    has_data: bool | None = None


def is_lance_properties(properties: dict[str, str] | None) -> bool:
    for key, value in (properties or {}).items():
        if key.lower() == TABLE_TYPE_KEY and str(value).lower() == LANCE:
            return True
    return False


def translating(fn):
    """Map any backend exception to a lance_namespace error with a code."""

    @functools.wraps(fn)
    def wrapper(self, *args, **kwargs):
        try:
            return fn(self, *args, **kwargs)
        except LanceNamespaceError:
            raise
        except Exception as e:  # noqa: BLE001 - translated, never swallowed
            if is_name_too_long(e):
                raise  # the operation wrapper answers it (code 13) for every backend
            ns = getattr(self, "ns", self)  # a collaborator of the namespace translates as it does
            mapped = ns.translate_error(e)
            if mapped is None and storage.is_unreachable(e):
                mapped = storage.unreachable_error(e)
            if mapped is None:
                mapped = InternalError(f"{type(ns).__name__}: {type(e).__name__}: {e}")
            raise mapped from e

    return wrapper


def no_managed_branch(request) -> None:
    if getattr(request, "branch", None):
        raise UnsupportedOperationError("branches of implementation-managed tables are not supported")
