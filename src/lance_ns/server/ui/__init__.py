"""The catalog browser: server-rendered HTML pages at ``/ui/`` over the served namespace.

Every page is built from the same namespace operations the REST routes call
(ListNamespaces, ListTables, DescribeTable, ListTableVersions, QueryTable...),
through the server's own pipeline (request checks, authorization, thread pool,
secret stripping, audit), so it shows any backend the same way.  Read-only: it offers no action that
changes the catalog.

:func:`mount` is all the server needs: ``NamespaceApp.build`` adds its result
to the route table unless the UI is turned off (``--no-ui``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.routing import Mount

from .pages import Browser  # imports jinja2 (the server extra's) with the server

#: where the browser lives; the UI authenticates its own requests (header or cookie)
PREFIX = "/ui"

if TYPE_CHECKING:  # pragma: no cover
    from ..app import NamespaceApp


def mount(owner: "NamespaceApp") -> Mount:
    """The UI as a Starlette ``Mount`` at :data:`PREFIX` over ``owner``'s namespace."""
    return Mount(PREFIX, app=Browser(owner.pipeline).build(), name="ui")
