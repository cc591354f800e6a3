"""Identifiers: list <-> string forms, delimiters, and name validation.

A name is never a path: every backend stores names in directories, object
keys or catalog rows, so ``/``, ``\\``, ``..``, empty names and control
characters are refused here.  An operation's ``id`` is validated once per
request, by the operation wrapper (:func:`lance_ns.base.normalising`), before
any backend sees it; code past it (the server's path parsing, the backends'
:func:`split_table_id`) only splits.
"""

from __future__ import annotations

import re
from typing import Iterable, Sequence

from .invalid_input import invalid_input

DEFAULT_DELIMITER = "."
#: The REST protocol's default delimiter for ``{id}`` path segments.
REST_DELIMITER = "$"
MAX_NAME_BYTES = 255  # the common file-name limit of local and object stores
_CONTROL_CHARACTER = re.compile(r"[\x00-\x1f\x7f]")
#: Names of these characters and length pass every rule below: one match answers most
#: names (a bulk declaration checks three per table: 0.45 us against 0.84 us).
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_\-]{1,%d}" % MAX_NAME_BYTES)


def name_problem(name: object) -> str | None:
    """Why ``name`` is not a valid object name, or None if it is."""
    if type(name) is str and _PLAIN_NAME.fullmatch(name):
        return None
    if not isinstance(name, str):
        return f"name must be a string, got {type(name).__name__}"
    if name == "":
        return "name must not be empty"
    if name.strip() != name:
        return f"name {name!r} must not start or end with white space"
    if "/" in name or "\\" in name:
        return f"name {name!r} must not contain '/' or '\\'"
    if name in (".", "..") or ".." in name:
        return f"name {name!r} must not contain '..'"
    if _CONTROL_CHARACTER.search(name):  # (a per-character loop was a tenth of a bulk declaration)
        return f"name {name!r} must not contain control characters"
    try:
        encoded = name.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: no file system or catalog can store it
        return f"name {name!r} is not valid Unicode text"
    if len(encoded) > MAX_NAME_BYTES:
        return f"name is longer than {MAX_NAME_BYTES} bytes"
    return None


def validate_name(name: object, what: str = "name") -> str:
    problem = name_problem(name)
    if problem:
        raise invalid_input(f"invalid {what}: {problem}")
    return name  # type: ignore[return-value]


def validate_id(parts: Sequence[str] | None, what: str = "identifier") -> list[str]:
    """Validate every component of a list identifier (None/[] is the root)."""
    if parts is None:
        return []
    if type(parts) is list and _plain_id(parts):
        return list(parts)
    if isinstance(parts, str):
        raise invalid_input(f"{what} must be a list of names, got a string")
    return [validate_name(p, f"{what} component") for p in parts]


#: plain names (:data:`_PLAIN_NAME`) joined by "/", which no name may hold
_PLAIN_ID = re.compile(r"[A-Za-z0-9_\-]{1,%d}(?:/[A-Za-z0-9_\-]{1,%d})*" % (MAX_NAME_BYTES, MAX_NAME_BYTES))


def _plain_id(parts: list) -> bool:
    """Whether every component is a plain name: one match for the whole id (a bulk
    declaration checks one per table: 1.2 us against 3.5 us a name at a time).  The
    count of "/" tells a component holding one (``["a/b"]``) from two components."""
    try:
        joined = "/".join(parts)
    except TypeError:  # a component that is not a string: the slow path says which
        return False
    return _PLAIN_ID.fullmatch(joined) is not None and joined.count("/") == len(parts) - 1


def split_id(value: str, delimiter: str) -> list[str]:
    """String form -> list form.  Only its syntax is checked (no empty
    component, as in ``a$$b``); the names are the operation's to validate.

    ``""`` and the delimiter itself (the REST protocol's ``$``) are the root.
    """
    if not delimiter:
        raise invalid_input("delimiter must not be empty")
    if value in ("", delimiter):
        return []
    parts = value.split(delimiter)
    if "" in parts:
        raise invalid_input(f"identifier {value!r} has an empty component")
    return parts


def names_same_object(body_id: object, path_id: Sequence[str], delimiter: str) -> bool:
    """Whether a request body's ``id`` names the object its path names.

    The path is authoritative; a body id is the same request when, joined and
    split again by the request's delimiter, it is the path's id.  Lance's Rust
    REST client (DuckDB's extension embeds it) sends a nested table's body id as
    one joined string: ``{"id": ["sales$orders"]}`` for the path ``sales$orders``.
    """
    if not isinstance(body_id, list) or not all(isinstance(p, str) for p in body_id):
        return False
    if list(body_id) == list(path_id):
        return True
    joined = delimiter.join(body_id)
    if not delimiter or (joined not in ("", delimiter) and "" in joined.split(delimiter)):
        return False  # (no delimiter, or an empty component: names nothing)
    return split_id(joined, delimiter) == list(path_id)


def parse_id(value: str | Sequence[str] | None, delimiter: str = DEFAULT_DELIMITER) -> list[str]:
    """String or list form -> validated list form.  ``""``/None/``[]`` is the root.

    In string form the root may also be written as the delimiter itself (the
    REST protocol's ``$``).  Empty components (``a$$b``) are invalid input.
    """
    if value is None:
        return []
    return validate_id(split_id(value, delimiter) if isinstance(value, str) else list(value))


def to_string(parts: Iterable[str] | None, delimiter: str = DEFAULT_DELIMITER) -> str:
    return delimiter.join(parts or [])


def split_table_id(parts: Sequence[str] | None) -> tuple[list[str], str]:
    """A table id, validated by the operation wrapper -> (namespace id, table
    name); the table name is required."""
    if isinstance(parts, str):
        raise invalid_input("table identifier must be a list of names, got a string")
    if not parts:
        raise invalid_input("table identifier must not be empty")
    return list(parts[:-1]), parts[-1]
