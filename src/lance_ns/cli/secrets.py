"""Secrets kept out of everything the command prints.

The one call site of the CLI for masking: configuration values whose key names
a secret (``password``, ``*secret*``, ``token``, ``*key*``, connection strings),
passwords inside URLs (``http://user:pw@host``) and ``key=value`` secrets inside
connection strings.  :class:`Scrubber` also removes the known secret values of
the connection from any text (error messages quote URIs and properties).

TODO(merge): the package-wide masking function (``lance_ns.redact``) is being
written in parallel; when it lands, :func:`mask_value` should call it.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping

MASK = "****"
_SECRET_KEY = re.compile(r"secret|passw|token|credential|private|key|signature|(^|[._-])sas|connection.?string", re.I)
# key names that contain "key" but name no secret
_PUBLIC_KEYS = re.compile(r"(^|[._])(partition_key|key_prefix|primary_key|sort_key|page_token|next_page_token)$", re.I)
_URL_PASSWORD = re.compile(r"(?P<head>[a-z][a-z0-9+.-]*://[^/\s:@]*:)(?P<pw>[^@\s/]+)(?=@)", re.I)
_INLINE = re.compile(
    r"(?P<head>\b(?:password|pwd|accountkey|sharedaccesskey|sig|secret|token|api[_-]?key)=)(?P<value>[^;&\s]+)", re.I
)


def is_secret_key(key: str) -> bool:
    return bool(_SECRET_KEY.search(key)) and not _PUBLIC_KEYS.search(key)


def mask_text(text: str) -> str:
    """Passwords in URLs and ``password=...``-style pairs replaced by the mask."""
    text = _URL_PASSWORD.sub(lambda m: m.group("head") + MASK, text)
    return _INLINE.sub(lambda m: m.group("head") + MASK, text)


def mask_value(key: str, value: Any) -> Any:
    if value is None:
        return value
    if is_secret_key(key):
        return MASK
    return mask_text(value) if isinstance(value, str) else value


def mask_mapping(values: Mapping[str, Any]) -> dict[str, Any]:
    return {k: mask_value(k, v) for k, v in values.items()}


def mask_tree(value: Any, key: str = "") -> Any:
    """Every mapping inside ``value`` masked by key, every string by :func:`mask_text`."""
    if isinstance(value, Mapping):
        return {k: mask_tree(v, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [mask_tree(v, key) for v in value]
    return mask_value(key, value)


class Scrubber:
    """Removes the known secret values (from the connection's configuration) from text."""

    MIN_LENGTH = 4  # shorter values would mangle ordinary words

    def __init__(self) -> None:
        self.values: set[str] = set()

    def learn(self, properties: Mapping[str, Any]) -> None:
        for key, value in properties.items():
            if not isinstance(value, str):
                continue
            found: Iterable[str] = [value] if is_secret_key(key) else []
            found = [*found, *(m.group("pw") for m in _URL_PASSWORD.finditer(value)),
                     *(m.group("value") for m in _INLINE.finditer(value))]
            self.values.update(v for v in found if len(v) >= self.MIN_LENGTH)

    def __call__(self, text: str) -> str:
        for value in sorted(self.values, key=len, reverse=True):
            text = text.replace(value, MASK)
        return mask_text(text)
