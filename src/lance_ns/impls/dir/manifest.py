"""The ``__manifest`` Lance table: pylance's catalog of nested namespaces and tables.

Same schema and rows as pylance's Rust ``DirectoryNamespace`` writes
(``object_id`` = names joined by ``$``, ``object_type`` = ``table`` or
``namespace``, ``location`` relative to the root, ``metadata`` = JSON
properties), so either implementation reads the other's manifest.

Where this one differs is how it keeps the table:

* reads come from an in-memory copy that is brought up to date only when the
  table's latest version moved (one cheap version check per call), by reading
  the fragments another process's commit changed (:meth:`Manifest._load_changed`),
  so paging and describe never re-scan it.  That check is a listing of ``_versions/``: on
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
* every ``compact_every`` versions the small fragments are merged and those
  that lost many rows rewritten (see :mod:`.compaction` for how, and why not
  Lance's compaction), and every ``retain_versions`` versions all but the
  newest ``retain_versions`` are removed (whether or not there was anything to
  compact), so storage stays proportional to the entries, not to the number
  of commits, and finding the latest version (a listing of ``_versions/``)
  stays cheap.  Both run on a thread after the write that made them due
  (:mod:`.upkeep`), never inside a write.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import itertools
import json
import logging
import threading
import time
import weakref
from collections import Counter
from typing import Callable, Iterator, NamedTuple

import pyarrow as pa
import pyarrow.compute as pc

from ... import storage
from ...base import refuse_blocking
from ...errors import ConcurrentModificationError, UnsupportedOperationError
from ...gc_pause import gc_paused
from ...paging import SortedNames
from . import compaction, indexes
from .upkeep import Upkeep
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
#: from this many rows a new process answers its first read of one entry by a scan for
#: that row while the manifest loads on a thread (below it, loading it all is as quick)
COLD_LOOKUP_ROWS = 50_000


class Entry(NamedTuple):
    """A row of the manifest (held in memory by :class:`Entries`)."""

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


class Entries:
    """The manifest's entries by object_id, a million of them at 1M tables.  Each held as
    one string, ``kind NUL metadata-JSON NUL location`` (:func:`_row`), handed out as
    :class:`Entry`.  A dict holding only strings is one the garbage collector never tracks,
    so no collection walks the entries.  Held as tuples, each append of new (tracked) tuples
    made the dict tracked again until the next full collection: a bulk declaration at 580k
    tables spent ~30 ms a batch of 10,000 in collections walking it.  A string is also
    smaller than a tuple and its location string (~56 bytes less an entry)."""

    __slots__ = ("_rows",)

    def __init__(self):
        self._rows: dict[str, str] = {}

    def __len__(self) -> int:
        return len(self._rows)

    def __contains__(self, oid: str) -> bool:
        return oid in self._rows

    def get(self, oid: str) -> Entry | None:
        row = self._rows.get(oid)
        return None if row is None else _entry(oid, row)

    def __getitem__(self, oid: str) -> Entry:
        return _entry(oid, self._rows[oid])

    def add_row(self, oid: str, row: str) -> None:
        """Add an entry as stored (:func:`_row`)."""
        self._rows[oid] = row

    def row(self, oid: str) -> str | None:
        """An entry as stored (:func:`_row`), or None."""
        return self._rows.get(oid)

    def pop(self, oid: str) -> Entry | None:
        row = self._rows.pop(oid, None)
        return None if row is None else _entry(oid, row)

    def of_kind(self, kind: str, prefix: str = "") -> Iterator[Entry]:
        """The entries of ``kind`` whose object_id starts with ``prefix``."""
        head = kind + _NUL
        return (_entry(oid, row) for oid, row in self._rows.items() if row.startswith(head) and oid.startswith(prefix))

    def kinds(self) -> Iterator[tuple[str, str]]:
        """(object_id, kind) of every entry."""
        return ((oid, row[:row.index(_NUL)]) for oid, row in self._rows.items())

    def location(self, oid: str) -> str | None:
        """An entry's location ('' for none), or None: no such entry."""
        row = self._rows.get(oid)
        return None if row is None else row.split(_NUL, 2)[2]

    def located(self) -> Iterator[tuple[str, str]]:
        """(object_id, location: '' for none) of every entry."""
        return ((oid, row.split(_NUL, 2)[2]) for oid, row in self._rows.items())


_NUL = "\0"


def _row(kind: str, location: str | None, metadata: str | None) -> str:
    """An entry as :class:`Entries` stores it.  The location last: a NUL in one (none this
    namespace writes has one) cannot shift the fields; JSON text holds none; a kind is a
    word (table, namespace, table_version)."""
    return f"{kind}{_NUL}{metadata or ''}{_NUL}{location or ''}"


def _fields(row: str) -> list[str]:
    """[kind, metadata JSON, location] of a row as :class:`Entries` stores it (:func:`_row`)."""
    return row.split(_NUL, 2)


def _entry(oid: str, row: str) -> Entry:
    kind, metadata, location = _fields(row)
    pairs = _metadata_pairs(metadata) if metadata else None
    return Entry(oid, kind, location or None, None if pairs is None else dict(pairs))


@functools.lru_cache(maxsize=4096)
def _metadata_pairs(raw: str) -> tuple | None:
    """A row's metadata JSON parsed, for the tables read again and again (a describe of
    one: ~1 us against 4.5 us parsed each time)."""
    parsed = _parse_metadata(raw)
    return None if parsed is None else tuple(parsed.items())


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


_UNANSWERED = object()

#: manifests loading on a thread (:meth:`Manifest._cold_get`): at interpreter exit they
#: stop and are waited for, since a thread still inside Lance then aborts the process
_BACKGROUND_LOADS: "weakref.WeakSet[Manifest]" = weakref.WeakSet()


@atexit.register
def _stop_background_loads() -> None:
    loading = list(_BACKGROUND_LOADS)
    for manifest in loading:
        manifest.abandon_background_load()
    for manifest in loading:
        manifest.wait_for_background_load(60)


def _in_list(oids: list[str]) -> str:
    return "object_id IN (" + ", ".join(map(_literal, oids)) + ")"


def _rows(table: pa.Table, fragment_keys: dict[int, str]) -> Iterator[tuple[str, str, str | None]]:
    """The rows of ``table`` (``_READ_COLUMNS`` and ``_rowaddr``) in table order, each as
    (object_id, the row as :class:`Entries` stores it, the key of the fragment it lives
    in; ``fragment_keys``: fragment id -> key), a batch's columns at a time (so a load's
    peak memory stays near the entries it builds).  No Entry is built on the way: at a
    load, building one and storing it took 3.5x the time of storing the row (1M rows:
    2.3 s against 0.7 s); the metadata is parsed when an entry is read, not here."""
    for batch in table.to_batches():
        keys = _keys_of(batch.column("_rowaddr"), fragment_keys)
        for oid, kind, location, meta, key in zip(*(batch.column(c).to_pylist() for c in _READ_COLUMNS), keys):
            yield oid, _row(kind, location, meta), key


def _keys_of(row_addresses, fragment_keys: dict[int, str]) -> Iterator[str | None]:
    """The key of the fragment each row address lies in (``fragment_keys``: fragment id ->
    key; None for one not there), endless when all lie in one fragment (zip it with the rows)."""
    ids = pc.shift_right(row_addresses, 32)  # a row address: fragment id << 32 | offset
    bounds = pc.min_max(ids)
    low, high = bounds["min"].as_py(), bounds["max"].as_py()
    return itertools.repeat(fragment_keys.get(low)) if low == high else map(fragment_keys.get, ids.to_pylist())


def _appended_keys(ds, n: int, fragment_ids: dict[str, int]) -> list[str | None]:
    """The fragment key of each of the ``n`` rows the newest commit appended, in order
    (one append writes fragments of compaction.rows_per_file rows); None for each where the
    newest fragments do not hold exactly those rows.  Adds their keys to ``fragment_ids``."""
    newest, rows = [], 0
    for fragment in reversed(ds.get_fragments()):
        if rows >= n:
            break
        newest.append(fragment.metadata)
        rows += fragment.metadata.physical_rows
    if rows != n:
        return [None] * n
    fragment_ids.update((compaction.fragment_key(meta), meta.id) for meta in newest)
    return [compaction.fragment_key(meta) for meta in reversed(newest) for _ in range(meta.physical_rows)]


class _Change(NamedTuple):
    """What another process's commit changed in the entries held (:func:`_read_change`)."""

    dropped: list[str]  # entries gone, or held as another row now (then in ``added`` too)
    moved: dict[str, str]  # object_id -> the key of the fragment its unchanged row lives in now
    added: list[tuple[str, str, str]]  # (object_id, row, fragment key) to hold, in table order
    duplicates: bool  # an appended row of an object_id held (a racing loser's) was skipped


def _oids_by_key(ds, fragments: list) -> dict[str, str]:
    """object_id -> the fragment's key, of each row the ``fragments`` of ``ds`` hold (deletions applied)."""
    if not fragments:
        return {}
    table = ds.scanner(columns=["object_id"], fragments=fragments, with_row_address=True).to_table()
    keys = _keys_of(table.column("_rowaddr"), _fragment_keys(fragments))
    return dict(zip(table.column("object_id").to_pylist(), keys))


def _change_or_why(loaded, gone: list, ds, new: list, held: Entries, where: dict[str, str],
                   duplicates: bool) -> _Change | str:
    """What :func:`_read_change` reads, or why a full load must bring the copy to ``ds`` instead."""
    if gone and duplicates:
        return "duplicate rows held: the table's order decides"
    if gone and sum(f.metadata.physical_rows for f in gone + new) > len(held):
        return "more rows changed than are held: a full load reads fewer"
    try:
        change = _read_change(loaded, gone, ds, new, held, where)
    except Exception as e:  # noqa: BLE001 - a cleanup removed files of the newer version too
        return f"reading the change failed: {e}"
    if change is None:
        return "the rows read are not the rows held, or a duplicate came with replaced fragments"
    return change


def _read_change(loaded, gone: list, ds, new: list, held: Entries, where: dict[str, str]) -> _Change | None:
    """What turned the fragments ``gone`` of the ``loaded`` version into the fragments ``new``
    of ``ds`` (:func:`.compaction.changes_since`).  The rows ``gone`` held are read at the
    loaded version, their object_ids only.  A new fragment of a gone one's files (a delete:
    only its deletions differ) holds some of those very rows: its object_ids are read; other
    new fragments (appended, written by a compaction) are read whole.  None where a full load
    must decide: the rows read are not those held (held as loaded by another path, or a
    deletion undone by a restore), or a duplicate row comes with replaced fragments (which
    row is first is the table order's).  Where the loaded version's files are gone, the rows
    ``gone`` held are taken from memory (:func:`_held_in`)."""
    try:
        was = _oids_by_key(loaded, gone)
    except Exception as e:  # noqa: BLE001 - the loaded version cleaned up meanwhile (see _held_in)
        if not _is_missing(e):
            raise
        was = _held_in(gone, where)
    if was is None or list(map(where.get, was)) != list(was.values()):
        return None
    gone_files = {compaction.files_of(f) for f in gone}
    trimmed, written = [], []
    for f in new:
        (trimmed if compaction.files_of(f) in gone_files else written).append(f)
    kept = _oids_by_key(ds, trimmed)  # (their keys, the first file's path, are as held)
    if not kept.keys() <= was.keys():
        return None
    rows = []
    if written:
        table = ds.scanner(columns=_READ_COLUMNS, fragments=written, scan_in_order=True,
                           with_row_address=True).to_table()
        rows = list(_rows(table, _fragment_keys(written)))
    fresh = _first_rows(rows, held, was, kept)
    if len(fresh) < len(rows) and gone:
        return None
    moved = {oid: key for oid, row, key in fresh if oid in was and held.row(oid) == row}
    added = [item for item in fresh if item[0] not in moved]
    dropped = [oid for oid in was if oid not in kept and oid not in moved]
    return _Change(dropped, moved, added, len(fresh) < len(rows))


def _held_in(gone: list, where: dict[str, str]) -> dict[str, str] | None:
    """object_id -> fragment key of the entries held in the fragments ``gone``, from memory:
    what :func:`_oids_by_key` reads at the loaded version, once another process's cleanup
    has removed that version's files (a process idle while another committed
    ``retain_versions`` times past a compaction: an idle server worker, a Spark executor).
    A pass over every entry held (~0.1 s at 1.1M entries) instead of a full load (~2 s); None
    where an entry's fragment is not known (then only a full load can tell)."""
    if None in where.values():
        return None
    keys = {compaction.fragment_key(f.metadata) for f in gone}
    return {oid: key for oid, key in where.items() if key in keys}


def _first_rows(rows: list, held: Entries, was: dict[str, str], kept: dict[str, str]) -> list:
    """``rows`` but those of an object_id that an earlier one of them has, that is ``kept``
    or that is held and not in ``was`` (the rows of the fragments they replace)."""
    seen = set(kept)
    first = []
    for item in rows:
        oid = item[0]
        if oid not in seen and (oid in was or oid not in held):
            seen.add(oid)
            first.append(item)
    return first


def _fragment_keys(fragments, fragment_ids: dict[str, int] | None = None) -> dict[int, str]:
    """Fragment id -> key of each fragment; added to ``fragment_ids`` (key -> id) if given."""
    keys = {f.fragment_id: compaction.fragment_key(f.metadata) for f in fragments}
    if fragment_ids is not None:
        fragment_ids.update((key, fragment_id) for fragment_id, key in keys.items())
    return keys


def _fragment_of(ds, key: str, fragment_ids: dict[str, int]):
    """The fragment of ``key`` in ``ds``, or None.  ``fragment_ids`` (key -> fragment id)
    is a hint, checked against the fragment's files: pylance's Overwrite renumbers fragments.
    When it misses, every fragment's key is read (~7 us each, ~1.3 ms at a million rows)
    and the hint is rebuilt from them."""
    fragment_id = fragment_ids.get(key)
    if fragment_id is not None:
        fragment = ds.get_fragment(fragment_id)
        if fragment is not None and compaction.fragment_key(fragment.metadata) == key:
            return fragment
    fragment_ids.clear()
    _fragment_keys(ds.get_fragments(), fragment_ids)
    fragment_id = fragment_ids.get(key)
    return None if fragment_id is None else ds.get_fragment(fragment_id)


def _fragment_deletion(ds, groups: dict[str, list[str]], fragment_ids: dict[str, int]) -> tuple[int, object]:
    """A Delete operation removing the rows of each group of object_ids from the fragment
    of its key (written, not committed), and the rows it removes; (0, None) when a
    fragment is not there."""
    from lance.dataset import LanceOperation

    updated, emptied, removed = [], [], 0
    for key, group in groups.items():
        fragment = _fragment_of(ds, key, fragment_ids)
        if fragment is None:
            return 0, None
        before = fragment.metadata.num_rows
        after = fragment.delete(_in_list(group))
        if after is None:  # no row left: the fragment goes
            emptied.append(fragment.fragment_id)
            removed += before
        else:
            updated.append(after)
            removed += before - after.num_rows
    oids = [oid for group in groups.values() for oid in group]
    return removed, LanceOperation.Delete(updated_fragments=updated, deleted_fragment_ids=emptied,
                                          predicate=_in_list(oids))


def _lost_commit_race(exc: Exception) -> bool:
    """Whether a commit failed because another commit landed first (then re-check and retry):
    a retryable conflict, or an operation that cannot follow a concurrent Overwrite (pylance's) or compaction."""
    text = str(exc).lower()
    return isinstance(exc, OSError) and ("conflict" in text or "incompatible transaction" in text)


def _is_missing(exc: Exception) -> bool:
    text = str(exc).lower()
    return "not found" in text or "does not exist" in text or "no such file" in text


def _latest_version(ds, attempts: int = 3) -> int:
    """``ds.latest_version``, asked again when the manifest it found was removed before it was
    read (another process's upkeep commits and cleans up old versions meanwhile: seen once,
    under load, as "_versions/136.manifest was not found" during a rename race)."""
    for attempt in range(attempts):
        try:
            return ds.latest_version
        except OSError as e:
            if attempt == attempts - 1 or not _is_missing(e):
                raise
    raise AssertionError("unreachable")


class Manifest:
    def __init__(self, root: str, storage_options: dict[str, str], compact_every: int = 32,
                 retain_versions: int = 8, staleness: float = 0.0, remote: bool = False,
                 directory: str = MANIFEST_DIR, write_refusal: str | None = None):
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
        self._entries = Entries()
        #: object_id -> the key (:func:`.compaction.fragment_key`) of the fragment holding its row, so that
        #: a delete rewrites one fragment's deletions, not a scan of the whole table
        self._where: dict[str, str] = {}
        #: fragment key -> fragment id at the loaded version: a delete's hint (:func:`_fragment_of`)
        self._fragment_ids: dict[str, int] = {}
        self._versions_here: list[Entry] = []
        #: whether the loaded version holds rows sharing an object_id (a racing loser's row
        #: not yet backed out): compaction must then keep the table's order
        self._duplicates = False
        #: (parent, kind) -> sorted names (:mod:`.indexes`), built on the first listing after
        #: a load and kept up to date by this process's own writes (O(log n) each)
        self._children: dict | None = None
        #: root directory -> entries living in it that are not named after it (:mod:`.indexes`):
        #: counted by each load, kept up to date by each write
        self._other_dirs: Counter | None = None
        #: seconds a read may rely on the last version check (0: every read checks)
        self.staleness = max(float(staleness), 0.0)
        self._checked_at = float("-inf")  # time.monotonic() of the last version check
        #: on object storage the version check is a LIST request: never made on the server's event loop
        self.remote = remote
        self._checked_once = threading.local()  # one_check(): this thread's reads check no more
        #: a new process answers its first describe by a scan for the one row (:meth:`_cold_get`)
        #: when the manifest holds COLD_LOOKUP_ROWS rows or more
        self.cold_lookups = True
        self._loader: threading.Thread | None = None  # the background load, once started
        self._abandon = threading.Event()  # set at interpreter exit: the background load stops
        self.upkeep = Upkeep(self)
        #: why this table must not be written (its store ignores conditional PUTs:
        #: storage.conditional_put_refusal); None: it may
        self.write_refusal = write_refusal

    def _writable(self) -> None:
        if self.write_refusal:
            raise UnsupportedOperationError(f"{self.uri}: {self.write_refusal}")

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
        if ds is not None and _latest_version(ds) == self._version:
            if self._legacy_versions:
                self._move_out_versions()
            return
        refuse_blocking("reading a new version of __manifest")
        with self._lock:
            if self._ds is None:
                ds = self._open()
                if ds is not None:
                    self._load(ds)
            elif _latest_version(self._ds) != self._version:
                self.catch_up(self._open())
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

    @gc_paused()  # a million entries built in a row
    def _load(self, ds, abandon: threading.Event | None = None) -> None:
        """Read all of ``ds`` into memory (``abandon`` set: stop, changing nothing)."""
        started = time.perf_counter()
        for attempt in range(3):
            try:
                keys = _fragment_keys(ds.get_fragments())
                table = ds.to_table(columns=_READ_COLUMNS, with_row_address=True)
                break
            except Exception as e:  # a concurrent cleanup removed an old version's files
                if attempt == 2 or not _is_missing(e):
                    raise
                ds = self._open()
        entries, where = Entries(), {}
        for i, (oid, row, key) in enumerate(_rows(table, keys)):
            if oid not in entries:  # the first row of an object_id wins (see module doc)
                entries.add_row(oid, row)
                where[oid] = key
            if abandon is not None and not i % 65_536 and abandon.is_set():
                return
        self._ds, self._version, self._entries, self._where = ds, ds.version, entries, where
        self._fragment_ids = {key: fragment_id for fragment_id, key in keys.items()}
        self._duplicates = len(entries) < table.num_rows
        self._children = None
        # (with duplicates, a losing row's directory must not count: counted from the entries)
        self._other_dirs = None if self._duplicates else indexes.other_dirs_of_table(table)
        self._versions_here = (list(entries.of_kind(TABLE_VERSION))
                               if self.move_versions_to is not None else [])
        # INFO: at a million entries a whole load holds this process's writers up for seconds,
        # and after the first it means a change could not be read by its fragments alone
        log.info("%s: version %d loaded whole, %d entries in %.2f s", self.uri, ds.version, len(entries),
                 time.perf_counter() - started)

    def catch_up(self, ds) -> None:
        """The copy brought to ``ds``, a newer version: by the fragments changed, else whole."""
        if not self._load_changed(ds):
            self._load(ds)

    @gc_paused()  # (tens of thousands of rows read in a row)
    def _load_changed(self, ds) -> bool:
        """Bring the in-memory copy to ``ds`` reading only the fragments changed since the loaded
        version (:func:`.compaction.changes_since`); False, changing nothing, where a full load
        must do (:func:`_change_or_why`)."""
        if self._ds is None or ds is None:
            return False
        gone, new = compaction.changes_since(self._ds.get_fragments(), ds.get_fragments())
        change = _change_or_why(self._ds, gone, ds, new, self._entries, self._where, self._duplicates)
        if isinstance(change, str):
            log.debug("%s: version %d -> %d to be loaded whole: %s", self.uri, self._version, ds.version, change)
            return False
        self._duplicates |= change.duplicates  # (appended after every row held: those held win)
        for oid in change.dropped:
            self._drop(oid)
        self._where.update(change.moved)
        for oid, row, key in change.added:
            if self._put(oid, row, key) == TABLE_VERSION and self.move_versions_to is not None:
                self._versions_here.append(_entry(oid, row))
        for fragment in gone:
            self._fragment_ids.pop(compaction.fragment_key(fragment.metadata), None)
        _fragment_keys(new, self._fragment_ids)
        log.debug("%s: version %d -> %d read by the fragments it changed (%d gone, %d new): %d entries dropped, %d added",
                  self.uri, self._version, ds.version, len(gone), len(new), len(change.dropped), len(change.added))
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
        if self._ds is None and self.cold_lookups:
            found = self._cold_get(oid)
            if found is not _UNANSWERED:
                return found
        self.current()
        return self._entries.get(oid)

    def _cold_get(self, oid: str):
        """A new process's first read of one entry.  On a large manifest it is answered by a
        scan for its row alone while the whole manifest loads on a thread of its own (a
        million rows take seconds; a Spark executor or a server worker that starts to
        describe a table need not wait for them); a small one is loaded at once.
        ``_UNANSWERED`` when another thread is loading it."""
        refuse_blocking("reading __manifest for the first time")
        with self._lock:
            if self._ds is not None or (self._loader is not None and self._loader.is_alive()):
                return _UNANSWERED
            ds = self._open()
            if ds is None:
                return None
            if sum(f.metadata.num_rows for f in ds.get_fragments()) < COLD_LOOKUP_ROWS:
                self._load(ds)  # loading it all costs about what the scan would: no thread
                self._checked_at = time.monotonic()
                return self._entries.get(oid)
            rows = ds.scanner(columns=_READ_COLUMNS, filter=f"object_id = {_literal(oid)}", scan_in_order=True,
                              with_row_address=True, limit=1).to_table()
            _BACKGROUND_LOADS.add(self)
            self._loader = threading.Thread(target=self._load_in_background, name="lance-ns-manifest-load",
                                            daemon=True)
            self._loader.start()
        return next((_entry(oid, row) for oid, row, _ in _rows(rows, {})), None)

    def abandon_background_load(self) -> None:
        """Make a background load stop at its next step (interpreter exit)."""
        self._abandon.set()

    def wait_for_background_load(self, timeout: float) -> None:
        if self._loader is not None:
            self._loader.join(timeout)

    def _load_in_background(self) -> None:
        try:
            with self._lock:
                ds = self._open() if self._ds is None and not self._abandon.is_set() else None
                if ds is not None:
                    self._load(ds, self._abandon)
                    self._checked_at = time.monotonic()
        except Exception as e:  # noqa: BLE001 - the next read loads it itself and reports what fails
            log.info("loading %s in the background failed: %s", self.uri, e)
            self.cold_lookups = False
        finally:
            _BACKGROUND_LOADS.discard(self)

    def children(self, parent: str, kind: str) -> "Children":
        """The direct children of ``parent`` ('' is the root) of ``kind``: sorted names,
        paged (:class:`~lance_ns.paging.SortedNames`) without copying the listing."""
        self.current()
        return Children(self, (parent, kind))

    @contextlib.contextmanager
    def listing(self, key: tuple[str, str]):
        """The sorted names of one (parent, kind) listing (None: none), read in place under
        the lock while the caller's ``with`` lasts (writers change the list in place)."""
        with self._reading():
            yield self._index().get(key)

    def _index(self) -> dict:
        """The children index (under the lock): built from the entries once per load."""
        if self._children is None:
            with gc_paused():  # (a million names in a row)
                self._children = indexes.children_index(self._entries.kinds())
        return self._children

    def descendants(self, prefix: str) -> list[Entry]:
        """Every entry inside the namespace ``prefix`` (an object_id), at any depth: walked
        through the children index, so a DropNamespace costs what the namespace holds, not
        what the manifest holds (a scan of every entry took 254 ms at 100,000 namespaces)."""
        self.current()
        if not prefix:
            return []
        with self._reading():
            index, found, parents = self._index(), [], [prefix]
            while parents:
                parent = parents.pop()
                for kind in (NAMESPACE, TABLE, TABLE_VERSION):  # (a table's: rows of older releases)
                    for name in index.get((parent, kind), ()):
                        oid = parent + ID_DELIMITER + name
                        found.append(self._entries[oid])
                        parents.append(oid)
            return found

    def with_prefix(self, prefix: str, kind: str) -> list[Entry]:
        """The entries of ``kind`` whose object_id starts with ``prefix``, by object_id."""
        self.current()
        with self._reading():
            return sorted(self._entries.of_kind(kind, prefix),
                          key=lambda e: e.object_id)

    def entries(self, kind: str) -> list[Entry]:
        """Every entry of ``kind`` (TABLE or NAMESPACE)."""
        self.current()
        with self._reading():
            return list(self._entries.of_kind(kind))

    def holds_dir(self, directory: str) -> bool:
        """Whether an entry's location lies in the root directory ``directory`` (it is then
        not a table of its own), as of the loaded version: callers check it with
        :meth:`current` first, once for many directories."""
        with self._reading():
            if self._other_dirs is None:
                self._other_dirs = indexes.other_dirs(self._entries.located())
            return indexes.holds(self._other_dirs, self._entries.location, directory)

    # -- writing -------------------------------------------------------------
    def _ensure_table(self) -> None:
        """Create the (empty) table on the first write, unless another process did.

        ``write_dataset(mode="create")`` would not do: Lance re-applies a create that
        loses a race as an Overwrite of the winner's version, and every entry the
        winner had committed meanwhile would be gone (two servers taking their first
        writes on a fresh root).  Version 1 is committed without retries instead: its
        manifest is created only if absent (a hard link on local disk, a conditional
        PUT on object storage), so a loser fails and reads the winner's table."""
        if self._ds is not None:
            return
        from lance.dataset import LanceDataset, LanceOperation

        try:
            ds = LanceDataset.commit(self.uri, LanceOperation.Overwrite(SCHEMA, []), max_retries=0,
                                     enable_v2_manifest_paths=True, storage_options=self.storage_options)
        except Exception as e:  # another process created it first (or the storage failed)
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
                "metadata": (metadata := [json.dumps(e.properties, sort_keys=True) if e.properties else None
                                          for e in entries]),
                "base_objects": pa.nulls(len(entries), SCHEMA.field("base_objects").type),
            },
            schema=SCHEMA,
        )
        self._writable()
        with self._lock:
            self._ensure_table()
            for attempt in range(_MAX_ATTEMPTS):
                self.refresh()
                held = self._entries
                for entry in entries:
                    if entry.object_id in held:
                        raise Exists(held[entry.object_id])
                base = self._version
                try:
                    # an append based on the version checked above (one data file + one commit)
                    ds = lance.write_dataset(row, self._private(), mode="append", storage_options=self.storage_options,
                                             max_rows_per_file=compaction.rows_per_file(len(entries)))
                except OSError as e:  # another commit landed first: check again
                    if not _lost_commit_race(e) or attempt == _MAX_ATTEMPTS - 1:
                        raise
                    continue
                if ds.version == base + 1:  # nothing committed in between: ours are the only rows
                    self._ds, self._version = ds, ds.version
                    for entry, meta, key in zip(entries, metadata, _appended_keys(ds, len(entries), self._fragment_ids)):
                        self._put(entry.object_id, _row(entry.kind, entry.location, meta), key)
                else:
                    self._settle(ds, entries)
                self.upkeep.after_commit(self._version)
                return
        raise ConcurrentModificationError(f"could not add {entries[0].object_id!r} to the manifest")

    def _settle(self, ds, entries: list[Entry]) -> None:
        """Other commits landed between our check and our commit: the first row wins."""
        mine = max(f.fragment_id for f in ds.get_fragments())  # the newest fragment at our version
        oids = [e.object_id for e in entries]
        rows = ds.scanner(columns=["object_id"], filter=_in_list(oids),
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
            self.catch_up(self._open())
            raise Exists(self._entries.get(lost[0]) or entries[0])
        self.catch_up(ds)

    def _remove_fragment(self, ds, fragment_id: int, oid: str) -> None:
        from lance.dataset import LanceDataset, LanceOperation

        op = LanceOperation.Delete(updated_fragments=[], deleted_fragment_ids=[fragment_id],
                                   predicate=f"object_id = {_literal(oid)}")
        LanceDataset.commit(ds, op, read_version=ds.version, storage_options=self.storage_options)

    def delete(self, oids: list[str]) -> int:
        """Remove the entries of ``oids``; the number of rows this call removed.

        Only the fragments holding those rows get new deletions (:meth:`_deletion`), so
        the cost of a delete does not grow with the table.  A delete commits against the
        version it checked; one that lost the race to another delete of the same fragment
        or to a compaction checks again, so of two racing deletes of one entry exactly one
        counts it: the caller that gets 0 lost (the entry was already gone).
        """
        from lance.dataset import LanceDataset

        if not oids:
            return 0
        self._writable()
        with self._lock:
            for attempt in range(_MAX_ATTEMPTS):
                self.refresh()
                present = [o for o in dict.fromkeys(oids) if o in self._entries]
                if not present:  # the loaded version is the latest: there is nothing to remove
                    return 0
                base = self._version
                ds = self._private()
                try:
                    removed, op = self._deletion(ds, present)
                    if op is not None:
                        # through our dataset, not the URI: Lance reuses its loaded manifest
                        ds = LanceDataset.commit(ds, op, read_version=base, storage_options=self.storage_options)
                    else:  # where the rows live is not known: Lance scans the table for them
                        removed = int(ds.delete(_in_list(present))["num_deleted_rows"])
                except OSError as e:  # another delete of those fragments or a compaction landed first
                    if not _lost_commit_race(e) or attempt == _MAX_ATTEMPTS - 1:
                        raise
                    continue
                if ds.version == base + 1:
                    self._ds, self._version = ds, ds.version
                    for oid in present:
                        self._drop(oid)
                else:  # (committed on top of other processes' commits)
                    self.catch_up(self._open())
                self.upkeep.after_commit(self._version)
                return removed

    def _deletion(self, ds, oids: list[str]) -> tuple[int, object]:
        """The Delete operation removing the rows of ``oids`` (all present) from the
        fragments holding them (:func:`_fragment_deletion`), and the rows it removes; (0,
        None) when where they live is not known: rows sharing an object_id, or a row of a
        fragment not tracked (then Lance scans)."""
        groups: dict[str, list[str]] = {}
        for oid in oids:
            key = None if self._duplicates else self._where.get(oid)
            if key is None:
                return 0, None
            groups.setdefault(key, []).append(oid)
        removed, op = _fragment_deletion(ds, groups, self._fragment_ids)
        if op is not None and removed != len(oids):  # our record of where rows live is wrong
            log.warning("manifest rows of %s were not where %s recorded them: scanning instead", oids[:3], self.uri)
            return 0, None
        return removed, op

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

    def _put(self, oid: str, row: str, fragment_key: str | None) -> str:
        """Hold one entry, given as stored (:func:`_row`: its metadata JSON dumped once, by
        the caller that writes or read it); its kind."""
        # (a bulk declaration calls this per table: no SortedList built as a default, no oid split twice)
        kind, _, location = _fields(row)
        self._entries.add_row(oid, row)
        self._where[oid] = fragment_key
        if self._other_dirs is not None:
            indexes.count_dir(self._other_dirs, oid, location, +1)
        if self._children is not None:
            parent, _, name = oid.rpartition(ID_DELIMITER)
            indexes.add_child(self._children, (parent, kind), name)
        return kind

    def _drop(self, oid: str) -> None:
        entry = self._entries.pop(oid)
        self._where.pop(oid, None)
        if entry is None:
            return
        if entry.kind == TABLE_VERSION and self._versions_here:
            self._versions_here = [e for e in self._versions_here if e.object_id != oid]
        if self._other_dirs is not None:
            indexes.count_dir(self._other_dirs, oid, entry.location, -1)
        if self._children is not None and (names := self._children.get((entry.parent, entry.kind))) is not None:
            names.discard(entry.name)

    # -- upkeep (:mod:`.upkeep`): what its compactions and cleanups read and commit ----
    @property
    def writers_lock(self) -> threading.RLock:
        """The lock every write of this manifest holds; upkeep commits under it too."""
        return self._lock

    def loaded_copy(self):
        """A dataset object of upkeep's own at the loaded version (under the writers' lock),
        or None when nothing is loaded yet."""
        with self._lock:
            return None if self._ds is None else self._private()

    def compaction_base(self):
        """(dataset of the latest version, whether entries are duplicated) to plan a
        compaction on, under the writers' lock; None when nothing is loaded yet."""
        with self._lock:
            if self._ds is None:
                return None
            self.refresh()
            return self._private(), self._duplicates

    def commit_rewrite(self, done: compaction.Rewrite):
        """Commit a compaction's rewrite on top of the latest version (the caller holds the
        writers' lock); (the new dataset, the one it was committed on).  Raises, with
        nothing committed, when a fragment it rewrites changed since the plan: its files
        are then the caller's to discard.  :meth:`adopt_rewrite` takes it as loaded."""
        self.refresh()
        if self._version != done.version and not done.unchanged_in(self._ds.get_fragments()):
            raise ConcurrentModificationError("a fragment it rewrites changed since the plan")
        base = self._private()
        return done.commit(base), base

    def adopt_rewrite(self, new_ds, done: compaction.Rewrite, base) -> None:
        """After ``done`` was committed as ``new_ds`` on top of ``base`` (under the writers'
        lock): the loaded version."""
        if self._duplicates or new_ds.version != base.version + 1:  # or another process committed in between
            self.catch_up(new_ds)
            return
        # the same entries, fewer files: the rewritten rows live in the fragments written
        self._ds, self._version = new_ds, new_ds.version
        for key in done.replaced_files():  # a fragment's key is its first file
            self._fragment_ids.pop(key, None)
        for fragment_id, metadata, oids in done.placed():
            self._fragment_ids[key := compaction.fragment_key(metadata)] = fragment_id
            self._where.update(dict.fromkeys(oids, key))

    def compact(self) -> None:
        """Compact now, on this thread (:meth:`.upkeep.Upkeep.compact`)."""
        self.upkeep.compact()

    def wait_for_upkeep(self) -> None:
        """Return when the compactions and cleanups due so far are done (tests, benchmarks)."""
        self.upkeep.wait()


def table_bytes(uri: str, storage_options: dict | None) -> int:
    """Bytes a manifest table occupies (for the benchmarks and tests)."""
    import pyarrow.fs as pafs

    fs, path = storage.filesystem(uri, storage_options)
    infos = fs.get_file_info(pafs.FileSelector(path, recursive=True, allow_not_found=True))
    return sum(i.size or 0 for i in infos if i.type == pafs.FileType.File)


class Children(SortedNames):
    """A live view of one (parent, kind) listing of a :class:`Manifest`: each read takes
    the manifest's lock (writers change the sorted list in place) and copies only what it
    returns."""

    def __init__(self, manifest: Manifest, key: tuple[str, str]):
        self._manifest, self._key = manifest, key

    def page(self, after: str | None, limit: int | None) -> tuple[list[str], bool]:
        with self._manifest.listing(self._key) as names:
            if not names:
                return [], False
            start = names.bisect_right(after) if after is not None else 0
            stop = len(names) if limit is None else min(start + limit, len(names))
            return list(names.islice(start, stop)), stop < len(names)

    def __iter__(self) -> Iterator[str]:
        return iter(self.page(None, None)[0])

    def __len__(self) -> int:
        with self._manifest.listing(self._key) as names:
            return len(names or ())

    def __contains__(self, name: object) -> bool:
        with self._manifest.listing(self._key) as names:
            return name in (names or ())
