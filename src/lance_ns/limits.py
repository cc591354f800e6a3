"""Documented, configurable limits on what a request may carry.

Every namespace (:class:`lance_ns.base.NamespaceBase`) applies its
:class:`Limits` to the requests it is given, and the REST server applies its
own (``--max-property-bytes`` ...) before any backend, ours or not, sees a
request.  Anything over a limit is invalid input, code 13.

============================  ===========  ===============================================
limit                         default      what it bounds
============================  ===========  ===============================================
``max_name_bytes``            255          each identifier component (UTF-8 bytes): the
                                           file-name limit of local and object stores, and
                                           the most (:mod:`lance_ns.identifiers` caps it)
``max_property_bytes``        65536        each property key or value (UTF-8 bytes)
``max_properties``            1000         properties in one request
``max_decoded_bytes``         none / body  decoded size of an Arrow IPC body; the server's
                                           default is its ``max_body_bytes``
============================  ===========  ===============================================
"""

from __future__ import annotations

import functools
from collections.abc import Mapping  # not typing's: its isinstance check is several times slower
from dataclasses import dataclass
from typing import Any

from .invalid_input import invalid_input

DEFAULT_MAX_NAME_BYTES = 255
DEFAULT_MAX_PROPERTY_BYTES = 64 * 1024
DEFAULT_MAX_PROPERTIES = 1000

#: request fields that carry a string map of user properties
_MAP_FIELDS = ("properties", "metadata")


@dataclass(frozen=True)
class Limits:
    max_name_bytes: int = DEFAULT_MAX_NAME_BYTES
    max_property_bytes: int = DEFAULT_MAX_PROPERTY_BYTES
    max_properties: int = DEFAULT_MAX_PROPERTIES
    max_decoded_bytes: int | None = None

    @classmethod
    def from_properties(cls, props: Mapping[str, str]) -> "Limits":
        """The ``limits.*`` properties of a namespace (``limits.max_properties=100``...)."""
        values: dict[str, Any] = {}
        for name in cls.__dataclass_fields__:
            raw = props.get(f"limits.{name}")
            if raw in (None, ""):
                continue
            try:
                values[name] = int(raw)
            except ValueError:
                raise invalid_input(f"property 'limits.{name}' must be an integer, got {raw!r}") from None
            if values[name] < 1:
                raise invalid_input(f"property 'limits.{name}' must be positive, got {raw!r}")
        return cls(**values)

    def check_request(self, request: Any) -> None:
        """Refuse a request (a model or a dict) whose names or properties exceed the
        limits, or whose properties are not Unicode text."""
        if isinstance(request, Mapping):
            get, fields = request.get, _MAP_FIELDS
        else:  # a model: only the map fields it declares (pydantic's path for a missing attribute is slow)
            get, fields = functools.partial(getattr, request), _map_fields_of(type(request))
        parts = request.get("id") if isinstance(request, Mapping) else getattr(request, "id", None)
        if isinstance(parts, (list, tuple)):
            for part in parts:
                if isinstance(part, str) and _over(part, self.max_name_bytes):
                    raise invalid_input(f"a name is longer than the limit of {self.max_name_bytes} bytes")
        for field in fields:
            values = get(field)
            if not isinstance(values, Mapping):
                continue
            if len(values) > self.max_properties:
                raise invalid_input(f"{field}: {len(values)} entries, over the limit of {self.max_properties}")
            for key, value in values.items():
                for text in (key, value):
                    if not isinstance(text, str):
                        continue
                    if _over(text, self.max_property_bytes):
                        raise invalid_input(
                            f"{field}: a key or value is longer than the limit of {self.max_property_bytes} bytes"
                        )
                    if not _is_unicode(text):  # a lone surrogate: stored, it breaks every later JSON answer
                        raise invalid_input(f"{field}: a key or value is not valid Unicode text")


@functools.lru_cache(maxsize=None)
def _map_fields_of(model: type) -> tuple[str, ...]:
    declared = getattr(model, "model_fields", None)
    return _MAP_FIELDS if declared is None else tuple(f for f in _MAP_FIELDS if f in declared)


def _over(text: str, limit: int) -> bool:
    """Whether ``text`` is longer than ``limit`` UTF-8 bytes (without encoding huge strings)."""
    if len(text) > limit:
        return True
    if len(text) * 4 <= limit:
        return False
    return len(text.encode("utf-8", "surrogatepass")) > limit


def _is_unicode(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
