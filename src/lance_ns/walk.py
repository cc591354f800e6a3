"""The one client-side tree walk: everything below a namespace, and dropping it.

For namespaces whose server does not honour ``behavior=Cascade`` (and for
cleaning up after tests and ``lance-ns check``), a cascade is done by hand:
tables first, then child namespaces deepest first, then the namespace.  Not
atomic: a failure part-way leaves whatever was not dropped yet.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from .base import OPERATIONS


@dataclass
class Tree:
    """What lies below a namespace: child namespaces deepest first, and tables."""

    namespaces: list[list[str]] = field(default_factory=list)
    tables: list[list[str]] = field(default_factory=list)


def every_page(ns: Any, method: str, items: str, parts: list[str]) -> list[str]:
    """All names of a listing (``list_namespaces``/``list_tables``), page after page."""
    make = OPERATIONS[method].request
    out: list[str] = []
    token, seen = None, set()
    while True:
        resp = getattr(ns, method)(make(id=parts, page_token=token))
        out.extend(getattr(resp, items) or [])
        token = resp.page_token or None
        if not token or token in seen:  # a repeated token would loop forever
            return out
        seen.add(token)


def tree(ns: Any, parts: list[str]) -> Tree:
    """Every namespace (deepest first) and table below ``parts``."""
    found = Tree(tables=[parts + [t] for t in every_page(ns, "list_tables", "tables", parts)])
    for child in every_page(ns, "list_namespaces", "namespaces", parts):
        below = tree(ns, parts + [child])
        found.namespaces += below.namespaces + [parts + [child]]
        found.tables += below.tables
    return found


def drop_tree(
    ns: Any,
    parts: list[str],
    found: Tree | None = None,
    *,
    best_effort: bool = False,
    advance: Callable[[], None] = lambda: None,
) -> Tree:
    """Drop every table and namespace below ``parts``, then ``parts`` itself.

    ``best_effort``: keep going past failures (cleanup of a possibly broken
    peer); a table that cannot be dropped is deregistered instead.
    """
    drop_table, deregister = OPERATIONS["drop_table"], OPERATIONS["deregister_table"]
    drop_namespace = OPERATIONS["drop_namespace"]
    if found is None:
        try:
            found = tree(ns, parts)
        except Exception:
            if not best_effort:
                raise
            found = Tree()
    for table_id in found.tables:
        try:
            ns.drop_table(drop_table.request(id=table_id))
        except Exception:
            if not best_effort:
                raise
            _quietly(ns.deregister_table, deregister.request(id=table_id))
        advance()
    for child in found.namespaces + [parts]:
        if best_effort:
            _quietly(ns.drop_namespace, drop_namespace.request(id=child))
        else:
            ns.drop_namespace(drop_namespace.request(id=child))
        advance()
    return found


def _quietly(fn: Callable, request: Any) -> bool:
    try:
        fn(request)
        return True
    except Exception:  # noqa: BLE001 - best effort by request
        return False
