"""Where a catalog's tables may live: the checks on a location a caller gives
(RegisterTable, DeclareTable), written once for every backend.  The backend's part
is its layout (``default_location``, ``owns_location`` and ``check_layout``:
:mod:`lance_ns.catalog.store`)."""

from __future__ import annotations

from .. import storage
from ..errors import InvalidInputError
from ..identifiers import to_string
from .entry import RESERVED_PARTS, overlaps

#: how many parent directories are checked for a Lance table around a location
_MAX_ANCESTORS = 32


def checked(cat, ns: list[str], name: str, raw: str, metadata_only: bool = False) -> str:
    """A location given by the caller, resolved, once it is safe to use for ``ns.name``.

    Refused (code 13): the root or a location containing it; a path through a
    reserved component (``_versions``, ``__manifest``...); a location inside
    a Lance table (a parent directory holds ``_versions``; not looked for with
    ``metadata_only``, DeclareTable's case, which makes no storage call); one
    equal to, containing or inside another table of the target namespace; and
    what the catalog's ``check_layout`` refuses (the backend's default-location scheme).
    Not covered, because it would take a scan of the whole catalog: overlap
    with a table of *another* namespace that has no data yet and sits
    outside the default-location scheme (and, declared, a Lance table in
    storage that no catalog entry names).
    """
    location = storage.resolve(cat.root, raw)
    root = cat.root.rstrip("/")
    if location.rstrip("/") == root or storage.is_within(location, root):
        raise InvalidInputError(f"location {raw!r} is, or contains, the namespace root {cat.root!r}")
    within = storage.is_within(cat.root, location)
    if not within and not cat.allows_external_locations:
        raise InvalidInputError(
            f"location {raw!r} is outside the namespace root {cat.root!r} "
            "(set allow_external_locations=true to allow it)"
        )
    # below the root only, inside it: the root's own path is the operator's choice
    parts = storage.parts(location)[len(storage.parts(cat.root)) :] if within else storage.parts(location)
    reserved = sorted(RESERVED_PARTS.intersection(parts))
    if reserved:
        raise InvalidInputError(f"location {raw!r} runs through the reserved path {reserved[0]!r}")
    for parent in [] if metadata_only else storage.parents(location, stop=cat.root if within else None,
                                                             limit=_MAX_ANCESTORS):
        if storage.has_versions(parent, cat.storage_options):
            raise InvalidInputError(f"location {raw!r} lies inside the Lance table at {parent!r}")
    cat.check_layout(ns, name, location, raw)
    return location


def check_default_layout(cat, ns: list[str], name: str, location: str, raw: str) -> None:
    """Refuse a location that aliases another table of this namespace or
    the default location (scheme) of another id."""
    if storage.is_within(cat.root, location) and cat.location_suffix:
        rel = location[len(cat.root.rstrip("/")):].strip("/").split("/")
        for i, part in enumerate(rel):
            if not part.endswith(cat.location_suffix):
                continue
            owner = rel[:i] + [part[: -len(cat.location_suffix)]]
            if i < len(rel) - 1:  # data there would mix with that table's, if it is created
                raise InvalidInputError(
                    f"location {raw!r} lies inside the default location of table {to_string(owner)!r}"
                )
            if owner != ns + [name] and cat.holds_tables(owner[:-1]) and cat.get_table_entry(owner[:-1], owner[-1]):
                raise InvalidInputError(f"location {raw!r} is the location of table {to_string(owner)!r}")
    for other in cat.list_table_entries(ns):
        if other.name != name and other.location and overlaps(other.location, location):
            raise InvalidInputError(
                f"location {raw!r} overlaps the location of table {to_string(ns + [other.name])!r}"
            )
