"""The version history of the directory namespace's implementation-managed tables.

Published versions are rows of lance-ns's own version store
``<root>/_lance_ns/table_versions`` (a :class:`~.manifest.Manifest`: a Lance table
with ``__manifest``'s schema and rules, beside ``__manifest``, whose object types
pylance's DirectoryNamespace knows and ours would break), granted one per version
by its conditional insert, several tables in one commit.  Each table's rows are
keyed by its history id (:data:`HISTORY_KEY`, recorded at creation): a rename keeps
the history, a table declared again under the name starts empty.
"""

from __future__ import annotations

import functools
import json
import logging
from dataclasses import replace

from ...catalog.entry import is_managed
from ...errors import TableNotFoundError
from ...identifiers import to_string
from .manifest import Exists
from .view import TABLE_VERSION, Entry

log = logging.getLogger(__name__)

#: the table property naming a managed table's history in the version store (set at
#: creation, copied by a rename, so a table declared again under the name starts empty);
#: tables made before it existed are found under their object id
HISTORY_KEY = "lance_ns.history"


def history_id(table) -> str | None:
    """Where ``table``'s history lives in the version store (None: a listed root table)."""
    if table.entry is None:
        return None
    return (table.properties or {}).get(HISTORY_KEY) or table.entry.object_id


@functools.lru_cache(maxsize=8192)
def _record(raw: str) -> dict:
    """A version row's record, parsed once: every answer about a managed table reads its
    whole history, several times a commit, and parsing each record again (~3 us) made a
    table's commits cost more with every version it had.  Shared between reads: records
    are read, never changed (a row's record is written once; a row withdrawn and granted
    again is another string)."""
    return json.loads(raw)


class VersionStoreHistory:
    """The history store of a :class:`~.namespace.DirectoryNamespace` (``ns``): the
    three methods of :class:`~lance_ns.catalog.versions.PropertyHistory`, plus
    ``forget`` (after a drop) and ``adopt`` (rows an earlier release kept in
    ``__manifest``)."""

    def __init__(self, ns):
        self.ns = ns

    @staticmethod
    def _version_row_id(history: str, version: int) -> str:
        # "/" never occurs in a name: no table or namespace can have this id
        return f"{history}/v/{version:020d}"

    def _version_rows(self, history: str | None) -> list[Entry]:
        if self.ns.version_store is None or history is None:
            return []
        return self.ns.version_store.with_prefix(f"{history}/v/", TABLE_VERSION)

    def versions(self, ns, table):
        return [_record(e.properties["record"]) for e in self._version_rows(history_id(table))]

    def add(self, items):
        """One version-store commit for every table: a version's row id is unique, so of
        racing commits of one version exactly one lands (manifest.insert_many)."""
        rows = []
        for ns, table, records in items:
            history = history_id(table)
            if history is None:
                return False
            for r in records:
                rows.append(Entry(self._version_row_id(history, r["version"]), TABLE_VERSION, None,
                                  {"record": json.dumps(r, sort_keys=True)}))
        try:
            self.ns.version_store.insert_many(rows)
        except Exists:
            return False
        for ns, table, _ in items:  # a table dropped meanwhile: its new rows go with it
            current = self.ns.manifest.get(table.entry.object_id)
            if current is None or history_id(replace(table, properties=dict(current.properties or {}),
                                                            entry=current)) != history_id(table):
                self.ns.version_store.delete([r.object_id for r in rows])
                raise TableNotFoundError(f"table {to_string(ns + [table.name])!r} was dropped meanwhile")
        return True

    def remove(self, ns, table, numbers):
        history = history_id(table)
        if history is not None:
            self.ns.version_store.delete([self._version_row_id(history, v) for v in numbers])
        return True

    def forget(self, tables) -> None:
        """After a drop or deregistration: the history of the tables that went.  Best
        effort: a history left behind is never read again (a new table gets a new id)."""
        if self.ns.version_store is None:
            return
        doomed = [e.object_id for t in tables if is_managed(t) for e in self._version_rows(history_id(t))]
        try:
            self.ns.version_store.delete(doomed)
        except Exception as e:  # noqa: BLE001 - the drop itself succeeded
            log.warning("could not remove the version history of dropped tables: %s", e)

    def adopt(self, rows: list[Entry]) -> None:
        """The version rows an earlier release kept in ``__manifest`` (keyed by the
        table's object id, as tables without HISTORY_KEY are found), into the store."""
        for _ in range(3):
            missing = [r for r in rows if self.ns.version_store.get(r.object_id) is None]
            if not missing:
                return
            try:
                self.ns.version_store.insert_many(missing)
                return
            except Exists:  # another process moves the same rows: take what is left
                continue
