"""RegisterTable and RenameTable: the operations that give an existing table an
entry (where its data already is) in a catalog -- :class:`EntryOperations`, a
collaborator the catalog namespace holds (``ns.entry_ops``).  How an entry is
stored or renamed is the backend's (``create_table_entry``, ``replace_table_entry``,
``rename_table_entry``: :mod:`lance_ns.catalog.store`)."""

from __future__ import annotations

from lance_namespace import RegisterTableResponse, RenameTableResponse

from .. import storage
from ..errors import InvalidInputError, TableAlreadyExistsError, UnsupportedOperationError
from ..identifiers import split_table_id, to_string, validate_id
from ..modes import RegisterMode, is_true
from . import locations
from .entry import MANAGED_KEY, CatalogTable, shown_properties, translating, with_owner


class EntryOperations:
    """RegisterTable and RenameTable of the catalog namespace ``ns``."""

    def __init__(self, ns):
        self.ns = ns

    @translating
    def register_table(self, request):
        ns, name = split_table_id(request.id)
        mode = RegisterMode.parse(request.mode, RegisterMode.CREATE)
        if is_true((request.properties or {}).get(MANAGED_KEY, "")):
            raise UnsupportedOperationError(
                "RegisterTable adopts a table as storage-managed: its history was written outside the "
                "namespace (create the table through the namespace to have it implementation-managed)"
            )
        self.ns.require_table_namespace(ns)
        existing = self.ns.get_table_entry(ns, name)  # before any storage work: a duplicate is 5 wherever the data is
        if existing is not None and mode is RegisterMode.CREATE:
            raise TableAlreadyExistsError(f"table {to_string(ns + [name])!r} already exists")
        location = locations.checked(self.ns, ns, name, request.location)
        try:
            found = storage.open_lance(location, self.ns.storage_options)
        except Exception as e:  # noqa: BLE001 - unreachable: 17; anything else: not a table we can read
            if storage.is_unreachable(e):
                raise storage.unreachable_error(e, location) from e
            found = None
        if found is None:
            raise InvalidInputError(f"no Lance table at {location!r}")
        # a registered table's data is whoever put it there's: a drop keeps it (purge deletes it)
        props = with_owner(self.ns.stored_properties(request.properties), owned=False)
        table = CatalogTable(name=name, location=location, properties=props, kind=self.ns.lance_table_kind)
        if existing is not None:
            if not self.ns.is_lance(existing):
                raise InvalidInputError(f"table {to_string(ns + [name])!r} is not a Lance table; not replacing it")
            self.ns.replace_table_entry(ns, table)
        else:
            self.ns.create_table_entry(ns, table)
        self.ns.after_register(ns, table)
        return RegisterTableResponse(location=location, properties=shown_properties(props) or None)

    @translating
    def rename_table(self, request):
        """Rename (and, with ``new_namespace_id``, move) a table's catalog entry.

        The data stays where it is, and so does its owner: a table lance-ns made keeps
        its data deleted by a later DropTable, a registered one keeps it kept (see
        :meth:`~lance_ns.catalog.CatalogNamespace.owns_data`).
        """
        ns, table = self.ns.lance_table(request.id)
        new_ns = ns if request.new_namespace_id is None else validate_id(request.new_namespace_id)
        new_name = validate_id([request.new_table_name])[0]
        if new_ns + [new_name] == ns + [table.name]:
            raise InvalidInputError(f"table {to_string(ns + [new_name])!r} already has that name")
        self.ns.require_table_namespace(new_ns)
        if self.ns.get_table_entry(new_ns, new_name) is not None:
            raise TableAlreadyExistsError(f"table {to_string(new_ns + [new_name])!r} already exists")
        self.ns.rename_table_entry(ns, table, new_ns, new_name)
        return RenameTableResponse()
