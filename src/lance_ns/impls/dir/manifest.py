"""The ``__manifest`` Lance table: pylance's catalog of nested namespaces and tables.

Same schema and rows as pylance's Rust ``DirectoryNamespace`` writes
(``object_id`` = names joined by ``$``, ``object_type`` = ``table`` or
``namespace``, ``location`` relative to the root, ``metadata`` = JSON
properties), so either implementation reads the other's manifest.

Where this one differs is how it keeps the table:

* reads come from an in-memory copy that is reloaded only when the table's
  latest version moved (one cheap version check per call), so paging and
  describe never re-scan it.  That check is a listing of ``_versions/``: on
  local disk a directory read, on object storage a LIST request; ``staleness``
  (the namespace's ``manifest_staleness_ms``, default 0) lets reads skip it for
  that long after the last one, trading freshness for fewer LISTs.  Writes
  always check, and this process's own writes are seen at once either way;
* an insert appends one small fragment and commits it against the version
  it checked (Lance's conditional commit: the version file is created only
  if absent, on local disk and on S3 alike).  When other commits landed in
  between, the table itself decides: the first row for an ``object_id`` in
  table order is the winner, a later one removes its own fragment and
  reports the object as existing.  No file locks, no lost entries;
* every ``compact_every`` versions the entries are rewritten as one fragment
  (see :meth:`Manifest.compact` for why not Lance's compaction) and all but
  the newest ``retain_versions`` versions removed, so storage stays
  proportional to the entries, not to the number of commits, and finding
  the latest version (a listing of ``_versions/``) stays cheap.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Iterator

import pyarrow as pa
from sortedcontainers import SortedList

from ... import storage
from ...base import refuse_blocking
from ...errors import ConcurrentModificationError
from ...paging import SortedNames
from .layout import ID_DELIMITER, MANIFEST_DIR

log = logging.getLogger(__name__)

TABLE = "table"
NAMESPACE = "namespace"
#: a published version of an implementation-managed table: a row of lance-ns's version
#: store (layout.VERSIONS_STORE_DIR), never of ``__manifest``, whose pylance readers
#: refuse object types they do not know (rows of earlier releases are moved out on load)
TABLE_VERSION = "table_version"

SCHEMA = pa.schema(
    [
        pa.field("object_id", pa.string(), False, metadata={"lance-schema:unenforced-primary-key:position": "0"}),
        pa.field("object_type", pa.string(), False),
        pa.field("location", pa.string()),
        pa.field("metadata", pa.string()),
        pa.field("base_objects", pa.list_(pa.field("object_id", pa.string()))),
    ]
)
_READ_COLUMNS = ["object_id", "object_type", "location", "metadata"]
_MAX_ATTEMPTS = 20
#: a fragment of this many rows is not merged again: a compaction rewrites about this
#: many rows, and this many per fragment with deleted rows, whatever the number of tables
SEALED_ROWS = 8_192


@dataclass(frozen=True, slots=True)  # slots: a million of them in memory
class Entry:
    object_id: str
    kind: str  # TABLE or NAMESPACE
    location: str | None = None
    properties: dict | None = None

    @property
    def parent(self) -> str:
        return self.object_id.rpartition(ID_DELIMITER)[0]

    @property
    def name(self) -> str:
        return self.object_id.rpartition(ID_DELIMITER)[2]


class Exists(Exception):
    """The object_id is taken (carries the existing entry)."""

    def __init__(self, entry: Entry):
        super().__init__(entry.object_id)
        self.entry = entry


def _literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _parse_metadata(raw: str | None) -> dict | None:
    if not raw:
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else None


def _root_dir(entry: Entry) -> str | None:
    loc = entry.location
    if not loc or "://" in loc or loc.startswith("/"):
        return None
    return loc.split("/", 1)[0]


def _rows(table: pa.Table) -> Iterator[Entry]:
    """The rows of ``table`` (``_READ_COLUMNS``) as entries, in table order, a batch's
    columns at a time (so a load's peak memory stays near the entries it builds)."""
    for batch in table.to_batches():
        for oid, kind, location, meta in zip(*(batch.column(c).to_pylist() for c in _READ_COLUMNS)):
            yield Entry(oid, kind, location, _parse_metadata(meta))


def _identity(fragment) -> tuple:
    """What a fragment holds: its id, data files, rows and deleted rows (pylance's
    merge_insert rewrites a fragment under the same id: the files tell)."""
    meta = fragment.metadata
    d = meta.deletion_file
    return (fragment.fragment_id, tuple(f.path for f in meta.files), meta.physical_rows,
            None if d is None else (d.id, d.read_version, d.num_deleted_rows))


def _plan(fragments: list, everything: bool = False) -> list[bool] | None:
    """Which fragments a compaction keeps as they are (True) and which it rewrites,
    or None when nothing is worth a commit.

    Rewritten: the trailing run (from the newest fragment back, an older one joins
    while it holds no more rows than those gathered after it and is not sealed: a
    binary counter), every fragment with a deletion file (an Overwrite takes none), or,
    with ``everything``, all of them."""
    if everything:
        return [False] * len(fragments)
    keep = [f.metadata.deletion_file is None for f in fragments]
    gathered = run = 0
    for i in range(len(fragments) - 1, -1, -1):
        rows = fragments[i].metadata.num_rows
        if rows >= SEALED_ROWS or (run and rows > gathered):
            break
        keep[i] = False
        gathered += rows
        run += 1
    if run == 1 and fragments[-1].metadata.deletion_file is None:
        keep[-1] = True  # one small fragment on its own: merging it changes nothing
    return None if all(keep) else keep


def _first_rows(rows: pa.Table) -> pa.Table:
    """The rows whose object_id was not seen before, in table order ("the first row wins")."""
    first: dict[str, int] = {}
    for i, oid in enumerate(rows.column("object_id").to_pylist()):
        first.setdefault(oid, i)
    return rows.take(sorted(first.values())) if len(first) < rows.num_rows else rows


def _lost_commit_race(exc: Exception) -> bool:
    """Whether a commit failed because another commit landed first (then re-check and retry):
    a retryable conflict, or an operation that cannot follow a concurrent compaction's Overwrite."""
    text = str(exc).lower()
    return isinstance(exc, OSError) and ("conflict" in text or "incompatible transaction" in text)


def _is_missing(exc: Exception) -> bool:
    text = str(exc).lower()
    return "not found" in text or "does not exist" in text or "no such file" in text


class Manifest:
    def __init__(self, root: str, storage_options: dict[str, str], compact_every: int = 32,
                 retain_versions: int = 8, staleness: float = 0.0, remote: bool = False,
                 directory: str = MANIFEST_DIR):
        #: ``directory``: ``__manifest``, or another table of the same schema and rules
        #: (the namespace's version store, layout.VERSIONS_STORE_DIR)
        self.uri = storage.join(root, directory)
        #: where rows of TABLE_VERSION found here go (:meth:`_move_out_versions`); None: they stay
        self.move_versions_to: Callable[[list[Entry]], None] | None = None
        self._moving = False
        self.storage_options = storage_options or None
        self.compact_every = compact_every
        self.retain_versions = max(retain_versions, 1)
        self._lock = threading.RLock()
        self._ds = None
        self._version = 0  # 0: no manifest table yet
        self._entries: dict[str, Entry] = {}
        self._versions_here: list[Entry] = []
        #: whether the loaded version holds rows sharing an object_id (a racing loser's row
        #: not yet backed out): compaction must then keep the table's order
        self._duplicates = False
        #: (parent, kind) -> sorted names, built on the first listing after a load and kept
        #: up to date by this process's own writes (O(log n) each)
        self._children: dict[tuple[str, str], SortedList] | None = None
        self._dirs: Counter | None = None
        #: seconds a read may rely on the last version check (0: every read checks)
        self.staleness = max(float(staleness), 0.0)
        self._checked_at = float("-inf")  # time.monotonic() of the last version check
        #: on object storage the version check is a LIST request: never made on the server's event loop
        self.remote = remote
        self._checked_once = threading.local()  # one_check(): this thread's reads check no more

    # -- reading -------------------------------------------------------------
    @property
    def version(self) -> int:
        return self._version

    def current(self) -> None:
        """Before a read: :meth:`refresh`, unless the last check is younger than ``staleness``
        or this thread is inside :meth:`one_check`."""
        if getattr(self._checked_once, "on", False):
            return
        if self.staleness and time.monotonic() - self._checked_at < self.staleness:
            return
        if self.remote:
            refuse_blocking("checking __manifest's latest version on object storage")
        self.refresh()

    @contextlib.contextmanager
    def one_check(self):
        """Reads of this thread inside check the latest version once, at the start (the
        checks of a bulk declaration: its commit checks again, under the lock)."""
        if getattr(self._checked_once, "on", False):
            yield
            return
        self.current()
        self._checked_once.on = True
        try:
            yield
        finally:
            self._checked_once.on = False

    def refresh(self) -> None:
        """Bring the in-memory copy to the table's latest version (cheap when unchanged)."""
        self._checked_at = time.monotonic()  # when the check started: what it sees is at least this new
        ds = self._ds
        # the common case, checked without the lock so that threads describe in parallel
        if ds is not None and ds.latest_version == self._version:
            if self._legacy_versions:
                self._move_out_versions()
            return
        refuse_blocking("reading a new version of __manifest")
        with self._lock:
            if self._ds is None:
                ds = self._open()
                if ds is not None:
                    self._load(ds)
            elif self._ds.latest_version != self._version:
                latest = self._open()
                if not self._load_appended(latest):
                    self._load(latest)
        if self._legacy_versions:
            self._move_out_versions()

    @property
    def _legacy_versions(self) -> bool:
        return self.move_versions_to is not None and not self._moving and bool(self._versions_here)

    def _move_out_versions(self) -> None:
        """Rows of TABLE_VERSION (lance-ns releases before 0.2 kept the history of managed
        tables in ``__manifest``) go to ``move_versions_to`` first, then leave this table,
        so that pylance's DirectoryNamespace, which refuses object types it does not know,
        can write this root again.  Copy, then delete: a failure in between leaves the rows
        in both places, and the next load moves them again (the copy skips what is there)."""
        refuse_blocking("moving version rows out of __manifest")
        with self._lock:
            rows = list(self._versions_here)
            if not rows or self._moving:
                return
            self._moving = True
            try:
                self.move_versions_to(rows)
                self.delete([r.object_id for r in rows])
                log.info("moved %d version rows of managed tables out of %s", len(rows), self.uri)
            except Exception as e:  # noqa: BLE001 - reads go on; the next load tries again
                log.warning("could not move version rows out of %s: %s", self.uri, e)
            finally:
                self._moving = False

    def _open(self):
        import lance

        try:
            return lance.dataset(self.uri, storage_options=self.storage_options)
        except Exception as e:  # lance has no dedicated not-found type
            if _is_missing(e):
                return None
            raise

    def _load(self, ds) -> None:
        for attempt in range(3):
            try:
                table = ds.to_table(columns=_READ_COLUMNS)
                break
            except Exception as e:  # a concurrent cleanup removed an old version's files
                if attempt == 2 or not _is_missing(e):
                    raise
                ds = self._open()
        entries: dict[str, Entry] = {}
        for entry in _rows(table):
            if entry.object_id not in entries:  # the first row of an object_id wins (see module doc)
                entries[entry.object_id] = entry
        self._ds, self._version, self._entries = ds, ds.version, entries
        self._duplicates = len(entries) < table.num_rows
        self._children = self._dirs = None
        self._versions_here = ([e for e in entries.values() if e.kind == TABLE_VERSION]
                               if self.move_versions_to is not None else [])

    def _load_appended(self, ds) -> bool:
        """Bring the in-memory copy to ``ds`` by reading only the fragments appended since
        the loaded version, when that is all that changed (another process's declares,
        a server worker's): every loaded fragment is still there, first, with the same
        deletions.  False when anything else changed (a delete, a compaction): then the
        caller loads it all."""
        if self._ds is None or ds is None:
            return False
        loaded = [_identity(f) for f in self._ds.get_fragments()]
        fragments = ds.get_fragments()
        if [_identity(f) for f in fragments[: len(loaded)]] != loaded:
            return False
        appended = fragments[len(loaded):]
        if appended:
            try:
                table = ds.scanner(columns=_READ_COLUMNS, fragments=appended, scan_in_order=True).to_table()
            except Exception as e:  # noqa: BLE001 - a concurrent cleanup: load it all instead
                log.debug("reading appended manifest fragments failed (%s): loading it all", e)
                return False
            for entry in _rows(table):
                if entry.object_id in self._entries:  # a racing loser's row, not yet backed out: the first wins
                    self._duplicates = True
                    continue
                self._put(entry)
                if entry.kind == TABLE_VERSION and self.move_versions_to is not None:
                    self._versions_here.append(entry)
        self._ds, self._version = ds, ds.version
        return True

    @contextlib.contextmanager
    def _reading(self):
        """The lock, for a read of the in-memory view; on the server's event loop a lock
        a commit holds is not waited for (WouldBlock: the read runs on a thread instead)."""
        if not self._lock.acquire(blocking=False):
            refuse_blocking("waiting for a commit to __manifest")
            self._lock.acquire()
        try:
            yield
        finally:
            self._lock.release()

    def get(self, oid: str) -> Entry | None:
        self.current()
        return self._entries.get(oid)

    def children(self, parent: str, kind: str) -> "Children":
        """The direct children of ``parent`` ('' is the root) of ``kind``: sorted names,
        paged (:class:`~lance_ns.paging.SortedNames`) without copying the listing."""
        self.current()
        return Children(self, (parent, kind))

    def _index(self) -> dict[tuple[str, str], SortedList]:
        """The children index (under the lock): built from the entries once per load."""
        if self._children is None:
            index: dict[tuple[str, str], list[str]] = {}
            for e in self._entries.values():
                index.setdefault((e.parent, e.kind), []).append(e.name)
            self._children = {key: SortedList(names) for key, names in index.items()}
        return self._children

    def descendants(self, prefix: str) -> list[Entry]:
        self.current()
        start = prefix + ID_DELIMITER
        with self._reading():
            return [e for oid, e in self._entries.items() if oid.startswith(start)]

    def with_prefix(self, prefix: str, kind: str) -> list[Entry]:
        """The entries of ``kind`` whose object_id starts with ``prefix``, by object_id."""
        self.current()
        with self._reading():
            return sorted((e for o, e in self._entries.items() if e.kind == kind and o.startswith(prefix)),
                          key=lambda e: e.object_id)

    def entries(self, kind: str) -> list[Entry]:
        """Every entry of ``kind`` (TABLE or NAMESPACE)."""
        self.current()
        with self._reading():
            return [e for e in self._entries.values() if e.kind == kind]

    def root_dirs(self) -> Counter:
        """How many entries live under each root directory (first segment of a
        relative location): such directories are not tables of their own."""
        self.current()
        with self._reading():
            if self._dirs is None:
                self._dirs = Counter(d for d in map(_root_dir, self._entries.values()) if d)
            return self._dirs

    # -- writing -------------------------------------------------------------
    def _ensure_table(self) -> None:
        if self._ds is not None:
            return
        import lance

        try:
            ds = lance.write_dataset(SCHEMA.empty_table(), self.uri, mode="create",
                                     storage_options=self.storage_options)
        except Exception as e:  # another process created it first
            ds = self._open()
            if ds is None:
                raise e
        self._load(ds)

    def insert(self, entry: Entry) -> None:
        """Add ``entry``; raise :class:`Exists` if its object_id is taken."""
        self.insert_many([entry])

    def insert_many(self, entries: list[Entry]) -> None:
        """Add every entry in one commit, or none: raise :class:`Exists` if any object_id is taken."""
        import lance

        row = pa.table(
            {
                "object_id": [e.object_id for e in entries],
                "object_type": [e.kind for e in entries],
                "location": [e.location for e in entries],
                "metadata": [json.dumps(e.properties, sort_keys=True) if e.properties else None for e in entries],
                "base_objects": pa.nulls(len(entries), SCHEMA.field("base_objects").type),
            },
            schema=SCHEMA,
        )
        with self._lock:
            self._ensure_table()
            for attempt in range(_MAX_ATTEMPTS):
                self.refresh()
                for entry in entries:
                    existing = self._entries.get(entry.object_id)
                    if existing is not None:
                        raise Exists(existing)
                base = self._version
                try:
                    # an append based on the version checked above (one data file + one commit)
                    ds = lance.write_dataset(row, self._private(), mode="append", storage_options=self.storage_options)
                except OSError as e:  # another commit landed first: check again
                    if not _lost_commit_race(e) or attempt == _MAX_ATTEMPTS - 1:
                        raise
                    continue
                if ds.version == base + 1:  # nothing committed in between: ours are the only rows
                    self._ds, self._version = ds, ds.version
                    for entry in entries:
                        self._put(entry)
                else:
                    self._settle(ds, entries)
                self._maybe_compact()
                return
        raise ConcurrentModificationError(f"could not add {entries[0].object_id!r} to the manifest")

    def _settle(self, ds, entries: list[Entry]) -> None:
        """Other commits landed between our check and our commit: the first row wins."""
        mine = max(f.fragment_id for f in ds.get_fragments())  # the newest fragment at our version
        oids = [e.object_id for e in entries]
        rows = ds.scanner(columns=["object_id"], filter="object_id IN (" + ", ".join(map(_literal, oids)) + ")",
                          with_row_address=True, scan_in_order=True).to_table()
        first: dict[str, int] = {}
        for oid, addr in zip(rows.column("object_id").to_pylist(), rows.column("_rowaddr").to_pylist()):
            first.setdefault(oid, addr >> 32)
        lost = [oid for oid in oids if first.get(oid, mine) != mine]
        if lost:
            try:
                self._remove_fragment(ds, mine, oids[0])
            except Exception as e:  # noqa: BLE001 - a leftover duplicate is harmless: readers take the first
                log.warning("could not remove duplicate manifest rows for %s: %s", oids, e)
            self._load(self._open())
            raise Exists(self._entries.get(lost[0]) or entries[0])
        self._load(ds)

    def _remove_fragment(self, ds, fragment_id: int, oid: str) -> None:
        from lance.dataset import LanceDataset, LanceOperation

        op = LanceOperation.Delete(updated_fragments=[], deleted_fragment_ids=[fragment_id],
                                   predicate=f"object_id = {_literal(oid)}")
        LanceDataset.commit(self.uri, op, read_version=ds.version, storage_options=self.storage_options)

    def delete(self, oids: list[str]) -> int:
        """Remove the entries of ``oids``; the number of rows this call removed.

        Lance re-runs a delete that lost a commit race against the new
        version, so of two racing deletes of one entry exactly one counts it:
        the caller that gets 0 lost (the entry was already gone).
        """
        if not oids:
            return 0
        with self._lock:
            for attempt in range(_MAX_ATTEMPTS):
                self.refresh()
                if self._ds is None:
                    return 0
                base = self._version
                pred = "object_id IN (" + ", ".join(_literal(o) for o in oids) + ")"
                ds = self._private()
                try:
                    removed = int(ds.delete(pred)["num_deleted_rows"])
                except OSError as e:  # a compaction's Overwrite landed first: delete from it
                    if not _lost_commit_race(e) or attempt == _MAX_ATTEMPTS - 1:
                        raise
                    continue
                if ds.version == base + 1:
                    self._ds, self._version = ds, ds.version
                    for oid in oids:
                        self._drop(oid)
                else:
                    self._load(self._open())
                self._maybe_compact()
                return removed

    def _private(self):
        """A dataset object of our own at the loaded version, for a call that mutates it.

        ``self._ds`` is read by other threads without the lock (``refresh``);
        a mutating call on it (``delete``, compaction) would make those reads
        fail with PyO3's "Already mutably borrowed".  So the shared object is
        only ever read, and replaced, never changed in place.
        """
        try:
            return self._ds.checkout_version(self._version)
        except Exception as e:  # that version was cleaned up by another process's compaction
            if not _is_missing(e):
                raise
            return self._open()

    def _put(self, entry: Entry) -> None:
        self._entries[entry.object_id] = entry
        if self._dirs is not None and _root_dir(entry):
            self._dirs[_root_dir(entry)] += 1
        if self._children is not None:
            names = self._children.setdefault((entry.parent, entry.kind), SortedList())
            if entry.name not in names:
                names.add(entry.name)

    def _drop(self, oid: str) -> None:
        entry = self._entries.pop(oid, None)
        if entry is not None and entry.kind == TABLE_VERSION and self._versions_here:
            self._versions_here = [e for e in self._versions_here if e.object_id != oid]
        if entry is not None and self._dirs is not None and _root_dir(entry):
            self._dirs[_root_dir(entry)] -= 1
            if self._dirs[_root_dir(entry)] <= 0:
                del self._dirs[_root_dir(entry)]
        if entry is not None and self._children is not None:
            self._children.get((entry.parent, entry.kind), SortedList()).discard(entry.name)

    # -- upkeep --------------------------------------------------------------
    def _maybe_compact(self) -> None:
        if self.compact_every and self._version % self.compact_every == 0:
            self.compact()

    def compact(self) -> None:
        """Merge the small fragments and rewrite those with deleted rows, reusing every
        other fragment as it is, then remove all but the newest versions: the cost of a
        compaction does not grow with the number of entries.

        The trailing small fragments are merged like a binary counter (:func:`_plan`:
        fragment sizes double towards the oldest, so a row is rewritten about log n
        times, and never again once its fragment holds ``SEALED_ROWS``).  The new list
        keeps the table's order and is committed as an Overwrite against the version it
        was planned on, without retries: Lance refuses it if anything committed in
        between, and a compaction that raced a commit waits for the next interval.  (Not
        Lance's own compaction: its Rewrite is accepted next to a concurrent append and
        puts the merged rows after it, so a losing duplicate appended meanwhile would
        come first, and "the first row wins" would hand the name to the loser.)  Lance
        takes a fragment into an Overwrite only without a deletion file, hence dirty
        fragments are rewritten; with duplicates present everything is (in order, the
        later rows dropped).
        """
        import lance
        from lance.dataset import LanceDataset, LanceOperation

        with self._lock:
            if self._ds is None:
                return
            written: list = []
            try:
                self.refresh()  # plan on the latest version (a stale plan's commit is refused anyway)
                ds = self._private()
                fragments = ds.get_fragments()
                keep = _plan(fragments, everything=self._duplicates)
                if keep is None:
                    return
                listed, pending = [], []

                def rewrite_pending():
                    if not pending:
                        return
                    rows = ds.scanner(fragments=pending, scan_in_order=True).to_table()
                    rows = _first_rows(rows) if self._duplicates else rows
                    if rows.num_rows:
                        new = lance.fragment.write_fragments(
                            rows, self.uri, schema=ds.schema, data_storage_version=ds.data_storage_version,
                            max_rows_per_file=SEALED_ROWS, storage_options=self.storage_options)
                        written.extend(new)
                        listed.extend(new)
                    pending.clear()

                for fragment, kept in zip(fragments, keep):
                    if kept:
                        rewrite_pending()
                        listed.append(fragment.metadata)
                    else:
                        pending.append(fragment)
                rewrite_pending()
                new_ds = LanceDataset.commit(self.uri, LanceOperation.Overwrite(ds.schema, listed),
                                             read_version=ds.version, max_retries=0,
                                             storage_options=self.storage_options)
            except Exception as e:  # upkeep must never fail the write that triggered it
                storage.remove_data_files(self.uri, self.storage_options, written)
                log.info("manifest compaction of %s skipped: %s", self.uri, e)
                return
            if self._duplicates or ds.version != self._version:
                self._load(new_ds)
            else:  # the same entries, fewer files
                self._ds, self._version = new_ds, new_ds.version
            self._cleanup(new_ds)

    def _cleanup(self, ds) -> None:
        try:
            # Few versions keep "which version is latest" cheap (it lists _versions/).
            # Readers lagging further behind than this reopen and retry (see _load).
            ds.cleanup_old_versions(retain_versions=self.retain_versions, error_if_tagged_old_versions=False)
        except Exception as e:  # noqa: BLE001 - old versions are only space
            log.warning("manifest cleanup of %s failed: %s", self.uri, e)

    def size_bytes(self) -> int:
        """Bytes the manifest table occupies (for the benchmark and tests)."""
        import pyarrow.fs as pafs

        fs, path = storage.filesystem(self.uri, self.storage_options)
        infos = fs.get_file_info(pafs.FileSelector(path, recursive=True, allow_not_found=True))
        return sum(i.size or 0 for i in infos if i.type == pafs.FileType.File)


class Children(SortedNames):
    """A live view of one (parent, kind) listing of a :class:`Manifest`: each read takes
    the manifest's lock (writers change the sorted list in place) and copies only what it
    returns."""

    def __init__(self, manifest: Manifest, key: tuple[str, str]):
        self._manifest, self._key = manifest, key

    def page(self, after: str | None, limit: int | None) -> tuple[list[str], bool]:
        with self._manifest._reading():
            names = self._manifest._index().get(self._key)
            if not names:
                return [], False
            start = names.bisect_right(after) if after is not None else 0
            stop = len(names) if limit is None else min(start + limit, len(names))
            return list(names.islice(start, stop)), stop < len(names)

    def __iter__(self) -> Iterator[str]:
        return iter(self.page(None, None)[0])

    def __len__(self) -> int:
        with self._manifest._reading():
            return len(self._manifest._index().get(self._key, ()))

    def __contains__(self, name: object) -> bool:
        with self._manifest._reading():
            return name in self._manifest._index().get(self._key, ())
