"""Answers from table metadata, without a Spark job or a data scan."""

from __future__ import annotations

from typing import Mapping

from .options import SourceOptions
from .planning import snapshot_version
from .resolve import resolve


def count(table: str | None = None, options: Mapping[str, str] | None = None, *, filter: str | None = None) -> int:
    """Rows of a table, taking the same options as the ``lance`` source.

    ``count("db.events", {"impl": "dir", "dir.root": "/lake"})`` or
    ``count(options={"path": "/lake/events.lance", "version": "3"})``.
    Without ``filter`` the answer comes from fragment metadata (no scan).
    """
    opts = dict(options or {})
    if table is not None:
        opts["table"] = table
    parsed = SourceOptions.parse(opts)
    ref, _ = resolve(parsed)
    ds = ref.open(snapshot_version(ref, parsed))
    return ds.count_rows(filter) if filter else ds.count_rows()
