"""The namespace operations of a catalog (CreateNamespace, ListNamespaces,
DescribeNamespace, NamespaceExists, DropNamespace) and ListAllTables, the walk of
the namespace tree: :class:`NamespaceOperations`, a collaborator the catalog
namespace holds (``ns.namespace_ops``).  A backend changes how a checked drop is
carried out through its ``drop_namespace_checked`` (:mod:`lance_ns.catalog.store`)."""

from __future__ import annotations

from typing import Iterable

from lance_namespace import (
    CreateNamespaceResponse,
    DescribeNamespaceResponse,
    DropNamespaceResponse,
    ListNamespacesResponse,
    ListTablesResponse,
    NamespaceExistsResponse,
)

from ..errors import (
    InternalError,
    InvalidInputError,
    LanceNamespaceError,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NamespaceNotFoundError,
    UnsupportedOperationError,
)
from ..identifiers import to_string
from ..modes import CreateMode, DropBehavior, DropMode
from ..paging import page_of_sorted, paginate
from .entry import ALL_TABLES_DELIMITER, purge_requested, translating


class NamespaceOperations:
    """The namespace operations of the catalog namespace ``ns``."""

    def __init__(self, ns):
        self.ns = ns

    @translating
    def create_namespace(self, request):
        ns = request.id or []
        mode = CreateMode.parse(request.mode, CreateMode.CREATE)
        if not ns:
            raise InvalidInputError("the root namespace always exists and cannot be created")
        refusal = self.ns.namespace_refusal(ns)
        if refusal is not None:
            raise refusal
        self.ns.require_namespace(ns[:-1])
        existing = self.ns.get_namespace_entry(ns)
        if existing is not None:
            if mode is CreateMode.CREATE:
                raise NamespaceAlreadyExistsError(f"namespace {to_string(ns)!r} already exists")
            if mode is CreateMode.EXIST_OK:
                return CreateNamespaceResponse(properties=existing)
            self.ns.drop_namespace_checked(ns, DropBehavior.RESTRICT)
        props = self.ns.namespace_properties_in(request.properties)
        try:
            self.ns.create_namespace_entry(ns, props)
        except Exception as e:
            mapped = e if isinstance(e, LanceNamespaceError) else self.ns.translate_error(e)
            # A creation race lost: the catalog says the name is taken, or fails inside while
            # another's creation lands (HMS 3.1: a losing create_database removes the directory
            # the winner made, and the winner's chmod of it fails).  Which, the entry tells.
            taken = isinstance(mapped, NamespaceAlreadyExistsError)
            if not (taken and mode is CreateMode.EXIST_OK or isinstance(mapped, InternalError)):
                raise
            try:
                winner = self.ns.get_namespace_entry(ns)
            except Exception:  # the catalog cannot say: its first answer stands
                winner = None
            if winner is None:  # nothing there, or no namespace (a table of that name)
                raise
            if mode is not CreateMode.EXIST_OK:
                raise NamespaceAlreadyExistsError(f"namespace {to_string(ns)!r} was created concurrently") from e
            # ExistOk lost a creation race: the winner's namespace is what was asked for
            return CreateNamespaceResponse(properties=winner)
        return CreateNamespaceResponse(properties=self.ns.get_namespace_entry(ns) or props)

    @translating
    def list_namespaces(self, request):
        parent = request.id or []
        self.ns.require_namespace(parent)
        if self.ns.max_depth is not None and len(parent) >= self.ns.max_depth:
            names: Iterable[str] = []
        else:
            names = self.ns.list_namespace_names(parent)
        page, token = page_of_sorted(names, request.limit, request.page_token)
        return ListNamespacesResponse(namespaces=page, page_token=token)

    @translating
    def describe_namespace(self, request):
        ns = request.id or []
        return DescribeNamespaceResponse(properties=self.ns.require_namespace(ns))

    @translating
    def namespace_exists(self, request):
        self.ns.require_namespace(request.id or [])
        return NamespaceExistsResponse()

    @translating
    def drop_namespace(self, request):
        ns = request.id or []
        refusal = self.ns.drop_refusal(ns)
        if refusal:  # before anything is read: what is refused at that level is refused outright
            raise UnsupportedOperationError(refusal)
        mode = DropMode.parse(request.mode, DropMode.FAIL)
        behavior = DropBehavior.parse(request.behavior, DropBehavior.RESTRICT)
        if not ns:
            raise InvalidInputError("the root namespace cannot be dropped")
        if behavior is DropBehavior.CASCADE and not self.ns.supports_cascade:
            raise UnsupportedOperationError(f"{type(self.ns).__name__} supports only Restrict drops")
        self.ns.check_depth(ns)
        props = self.ns.get_namespace_entry(ns)
        if props is None:
            if mode is DropMode.SKIP or self.ns.drop_missing_ok:
                return DropNamespaceResponse()
            raise NamespaceNotFoundError(f"namespace {to_string(ns)!r} does not exist")
        self.ns.drop_namespace_checked(ns, behavior, purge_requested(request))
        return DropNamespaceResponse(properties=props)

    @translating
    def list_all_tables(self, request):
        """Every Lance table below ``id`` (default: the root), as string ids joined
        by ``$`` (the REST protocol's delimiter, never part of a name in the
        directory layout), sorted and paged like ListTables."""
        start = list(request.id or [])  # checked once, by the operation wrapper
        self.ns.require_namespace(start)
        ids = sorted(to_string(t, ALL_TABLES_DELIMITER) for t in self._tables_below(start, request.include_declared))
        page, token = paginate(ids, request.limit, request.page_token)
        return ListTablesResponse(tables=page, page_token=token)

    def _tables_below(self, ns: list[str], include_declared: bool | None) -> Iterable[list[str]]:
        if self.ns.holds_tables(ns):
            yield from (ns + [n] for n in self.ns.table_names(ns, self.ns.holds_data if include_declared is False else None))
        if self.ns.max_depth is None or len(ns) < self.ns.max_depth:
            for child in self.ns.list_namespace_names(ns):
                yield from self._tables_below(ns + [child], include_declared)

    def drop_checked(self, ns: list[str], behavior: DropBehavior, purge: bool = False) -> None:
        """Restrict: refuse a namespace that holds anything; Cascade: drop what it holds
        (through the backend's ``drop_namespace_checked``, children first), then the namespace."""
        children = list(self.ns.list_namespace_names(ns)) if self.ns.max_depth is None or len(ns) < self.ns.max_depth else []
        tables = list(self.ns.list_table_entries(ns))
        if behavior is DropBehavior.RESTRICT:
            if children or tables:
                raise NamespaceNotEmptyError(
                    f"namespace {to_string(ns)!r} is not empty "
                    f"({len(children)} namespaces, {len(tables)} tables)"
                )
        else:
            foreign = [t.name for t in tables if not self.ns.is_lance(t)]
            if foreign:
                # Cascade never touches what is not ours: refuse rather than lose data.
                raise NamespaceNotEmptyError(
                    f"namespace {to_string(ns)!r} holds non-Lance tables {sorted(foreign)[:5]}; "
                    "drop them with their own tools first"
                )
            for child in children:
                self.ns.drop_namespace_checked(ns + [child], behavior, purge)
            for table in tables:
                self.ns.drop_table_checked(ns, table, purge)
        if self.ns.delete_namespace_entry(ns) is False:
            raise NamespaceNotFoundError(f"namespace {to_string(ns)!r} does not exist")
