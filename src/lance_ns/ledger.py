"""A ledger: one text document whose every change is a compare-and-swap, kept in
a tiny Lance dataset.

For a catalog whose API has no conditional update of a table object (Unity
Catalog), the version history of an implementation-managed table lives here
instead, beside the table: ``<location>/_lance_ns/ledger-<id>.lance``.

* Inside the table's location, so it goes wherever the table's data goes: a
  purging DropTable removes it with the table, and the storage options that
  reach the table reach it.  pylance leaves it alone: a table is its
  ``_versions/``, ``data/``, ``_deletions/``, ``_indices/``, ``_transactions/``
  and ``_refs/``/``tree/`` (branches), and ``cleanup_old_versions`` removes
  only unreferenced files in those.  No table location may run through
  ``_lance_ns`` (``catalog.RESERVED_PARTS``).
* Named by an id the catalog records when the table is created (never
  changed: a rename or a re-created entry copies it), so a table declared
  again at the same location after a deregistration starts with an empty
  ledger instead of inheriting the old table's history.

Each ledger version holds the whole document as its one row.  A change is an
Overwrite committed against the version the caller read, with
``max_retries=0``: Lance creates a version's manifest only if it does not
exist (on local disk and on S3 alike), and without retries it refuses a commit
when anything landed after the version read -- the same conditional commit the
directory namespace's ``__manifest`` relies on.  The first change creates the
dataset; of racing creators exactly one wins.  Every ``cleanup_every``
versions all but the newest ``retain_versions`` are removed, so the ledger
stays a few small files however many commits it takes.
"""

from __future__ import annotations

import logging
import re

import pyarrow as pa

from . import storage

log = logging.getLogger(__name__)

#: the directory, inside a table's location, that holds lance-ns's own files
DIRECTORY = "_lance_ns"
SCHEMA = pa.schema([pa.field("document", pa.string(), False)])
_ID = re.compile(r"[0-9a-f]{32}")
#: attempts of a read that a concurrent cleanup can outrun (it removed the version's files)
_READ_ATTEMPTS = 3


def new_id() -> str:
    import uuid

    return uuid.uuid4().hex


def is_id(value: object) -> bool:
    """Whether ``value`` is a ledger id (:func:`new_id`): it becomes a path component."""
    return isinstance(value, str) and _ID.fullmatch(value) is not None


def uri(location: str, ledger_id: str) -> str:
    """Where the ledger ``ledger_id`` of the table at ``location`` lives."""
    if not is_id(ledger_id):
        raise ValueError(f"not a ledger id: {ledger_id!r}")
    return storage.join(location, DIRECTORY, f"ledger-{ledger_id}.lance")


class Ledger:
    def __init__(self, uri: str, storage_options: dict[str, str] | None = None,
                 retain_versions: int = 4, cleanup_every: int = 8):
        self.uri = uri
        self.storage_options = storage_options or None
        #: versions kept by the cleanup: a reader that opened one of them can still read it
        self.retain_versions = max(retain_versions, 2)
        self.cleanup_every = max(cleanup_every, 1)

    def read(self) -> tuple[int, str | None]:
        """(version, document) as of now; (0, None) while nothing was ever written."""
        for attempt in range(_READ_ATTEMPTS):
            ds = storage.open_lance(self.uri, self.storage_options)
            if ds is None:
                return 0, None
            try:
                rows = ds.to_table(columns=["document"]).column("document").to_pylist()
            except Exception as e:  # noqa: BLE001 - a cleanup removed this version's file: read the newer one
                if attempt == _READ_ATTEMPTS - 1:
                    raise
                log.debug("ledger %s moved while being read: %s", self.uri, e)
                continue
            return ds.version, (rows[0] if rows else None)
        raise AssertionError("unreachable")

    def swap(self, document: str, read_version: int) -> bool:
        """Make ``document`` the ledger's content iff its version is still ``read_version``
        (0: iff it does not exist yet); False when another change landed first."""
        import lance
        from lance.dataset import LanceDataset, LanceOperation

        fragments = []
        try:
            fragments = lance.fragment.write_fragments(
                pa.table({"document": [document]}, schema=SCHEMA), self.uri, schema=SCHEMA,
                storage_options=self.storage_options)
            new = LanceDataset.commit(self.uri, LanceOperation.Overwrite(SCHEMA, fragments),
                                      read_version=read_version or None, max_retries=0,
                                      storage_options=self.storage_options)
        except Exception as e:
            # Refused or failed.  Which one is told by the ledger itself: a commit that
            # landed although its answer was lost shows our document at read_version + 1;
            # a version other than the one read means another change came first.
            try:
                version, current = self.read()
            except Exception:  # noqa: BLE001 - the storage fails altogether: the commit's error says why
                raise e from None
            if version == read_version + 1 and current == document:
                return True
            storage.remove_data_files(self.uri, self.storage_options, fragments)
            if version != read_version:
                return False
            raise
        if new.version % self.cleanup_every == 0:
            self._cleanup(new)
        return True

    def _cleanup(self, ds) -> None:
        try:
            ds.cleanup_old_versions(retain_versions=self.retain_versions, error_if_tagged_old_versions=False)
        except Exception as e:  # noqa: BLE001 - old versions are only space; the commit stands
            log.warning("cleanup of the ledger %s failed: %s", self.uri, e)
