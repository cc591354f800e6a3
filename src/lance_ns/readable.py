"""Values as people read them, for every front end (the command line, the catalog
browser): responses as the protocol spells them, times, sizes and Arrow types."""

from __future__ import annotations

import datetime as _dt
from typing import Any


def dump(model: Any) -> Any:
    """A response as the protocol spells it (``schema``, not pydantic's ``var_schema``)."""
    if model is None:
        return {}
    if hasattr(model, "model_dump"):
        return model.model_dump(mode="json", exclude_none=True, by_alias=True)
    return model


def when(millis: int | None) -> str | None:
    """Epoch milliseconds as ``2026-01-31 12:00:05 UTC``."""
    if millis is None:
        return None
    moment = _dt.datetime.fromtimestamp(int(millis) / 1000, tz=_dt.timezone.utc)
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def size(num_bytes: int | str | None) -> str | None:
    """``1536`` -> ``1.5 KiB``."""
    if num_bytes is None or num_bytes == "":
        return None
    value = float(num_bytes)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{int(value)} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def type_label(t: dict) -> str:
    """A JSON Arrow type as one readable label: ``list<struct>[4]``, ``map<utf8, int64>``."""
    kind = t.get("type", "?")
    if kind in ("list", "large_list", "fixed_size_list") and t.get("fields"):
        inner = type_label(t["fields"][0].get("type") or {})
        return f"{kind}<{inner}>" + (f"[{t['length']}]" if t.get("length") is not None else "")
    if kind == "map" and len(t.get("fields") or []) == 2:
        key, item = (type_label(f.get("type") or {}) for f in t["fields"])
        return f"map<{key}, {item}>"
    if t.get("length") is not None:
        return f"{kind}[{t['length']}]"
    return kind
