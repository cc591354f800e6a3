"""The in-memory view of a manifest table (:mod:`.manifest`): its entries at one version.

A :class:`ManifestView` holds what a version of ``__manifest`` (or of the version store,
the same schema) says: every entry by object_id, the fragment each entry's row lives in
(so a delete rewrites one fragment's deletions rather than scanning the table), and the
indexes listings and location checks use.  It is read here and moved here to a newer
version: loaded whole (:meth:`ManifestView.load`), brought forward by the fragments
another process's commit changed (:meth:`ManifestView.follow`), or by a commit of this
process (:meth:`ManifestView.appended`, :meth:`~ManifestView.removed`,
:meth:`~ManifestView.rewritten`).  When to do which, and every commit, is the
:class:`~.manifest.Manifest`'s job, as is the lock that guards the view.
"""

from __future__ import annotations

import functools
import itertools
import json
import logging
from collections import Counter
from typing import Callable, Iterator, NamedTuple

import pyarrow as pa
import pyarrow.compute as pc
from sortedcontainers import SortedList

from ...datasets import sql_string
from ...gc_pause import gc_paused
from . import compaction, indexes
from .layout import ID_DELIMITER

log = logging.getLogger(__name__)

TABLE = "table"
NAMESPACE = "namespace"
#: a published version of an implementation-managed table: a row of lance-ns's version
#: store (layout.VERSIONS_STORE_DIR), never of ``__manifest``, whose pylance readers
#: refuse object types they do not know (rows of earlier releases are moved out on load)
TABLE_VERSION = "table_version"
#: the columns a view reads of a manifest table (its ``base_objects`` are never used)
READ_COLUMNS = ["object_id", "object_type", "location", "metadata"]
#: every view's states numbered in one sequence (:attr:`ManifestView.generation`)
_GENERATIONS = itertools.count(1)


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
    one string, ``kind NUL metadata-JSON NUL location`` (:func:`row_of`), handed out as
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
        """Add an entry as stored (:func:`row_of`)."""
        self._rows[oid] = row

    def row(self, oid: str) -> str | None:
        """An entry as stored (:func:`row_of`), or None."""
        return self._rows.get(oid)

    def pop(self, oid: str) -> Entry | None:
        row = self._rows.pop(oid, None)
        return None if row is None else _entry(oid, row)

    def of_kind(self, kind: str) -> Iterator[Entry]:
        """The entries of ``kind``."""
        head = kind + _NUL
        return (_entry(oid, row) for oid, row in self._rows.items() if row.startswith(head))

    def ids(self) -> Iterator[str]:
        """Every entry's object_id (in no order)."""
        return iter(self._rows)

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


def row_of(kind: str, location: str | None, metadata: str | None) -> str:
    """An entry as :class:`Entries` stores it.  The location last: a NUL in one (none this
    namespace writes has one) cannot shift the fields; JSON text holds none; a kind is a
    word (table, namespace, table_version)."""
    return f"{kind}{_NUL}{metadata or ''}{_NUL}{location or ''}"


def _fields(row: str) -> list[str]:
    """[kind, metadata JSON, location] of a row as :class:`Entries` stores it (:func:`row_of`)."""
    return row.split(_NUL, 2)


def _entry(oid: str, row: str) -> Entry:
    kind, metadata, location = _fields(row)
    pairs = _metadata_pairs(metadata) if metadata else None
    return Entry(oid, kind, location or None, None if pairs is None else dict(pairs))


#: the entries read under a prefix (a table's rows of the version store, read whole several
#: times a commit), each built once per row and shared: their one reader (the version history)
#: never changes them
_shared_entry = functools.lru_cache(maxsize=8192)(_entry)


@functools.lru_cache(maxsize=4096)
def _metadata_pairs(raw: str) -> tuple | None:
    """A row's metadata JSON parsed, for the tables read again and again (a describe of
    one: ~1 us against 4.5 us parsed each time)."""
    parsed = _parse_metadata(raw)
    return None if parsed is None else tuple(parsed.items())


def _parse_metadata(raw: str | None) -> dict | None:
    if not raw:
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else None


def id_in(oids: list[str]) -> str:
    """The filter matching the rows of ``oids``."""
    return "object_id IN (" + ", ".join(map(sql_string, oids)) + ")"


def is_missing(exc: Exception) -> bool:
    """Whether Lance failed for a file or table that is not there (it has no type of its own for it)."""
    text = str(exc).lower()
    return "not found" in text or "does not exist" in text or "no such file" in text



def _rows(table: pa.Table, fragment_keys: dict[int, str]) -> Iterator[tuple[str, str, str | None]]:
    """The rows of ``table`` (``READ_COLUMNS`` and ``_rowaddr``) in table order, each as
    (object_id, the row as :class:`Entries` stores it, the key of the fragment it lives
    in; ``fragment_keys``: fragment id -> key), a batch's columns at a time (so a load's
    peak memory stays near the entries it builds).  No Entry is built on the way: at a
    load, building one and storing it took 3.5x the time of storing the row (1M rows:
    2.3 s against 0.7 s); the metadata is parsed when an entry is read, not here."""
    for batch in table.to_batches():
        keys = _keys_of(batch.column("_rowaddr"), fragment_keys)
        for oid, kind, location, meta, key in zip(*(batch.column(c).to_pylist() for c in READ_COLUMNS), keys):
            yield oid, row_of(kind, location, meta), key


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
        if not is_missing(e):
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
        table = ds.scanner(columns=READ_COLUMNS, fragments=written, scan_in_order=True,
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
        after = fragment.delete(id_in(group))
        if after is None:  # no row left: the fragment goes
            emptied.append(fragment.fragment_id)
            removed += before
        else:
            updated.append(after)
            removed += before - after.num_rows
    oids = [oid for group in groups.values() for oid in group]
    return removed, LanceOperation.Delete(updated_fragments=updated, deleted_fragment_ids=emptied,
                                          predicate=id_in(oids))


def scan_one(ds, oid: str) -> Entry | None:
    """The entry of ``oid`` in ``ds`` by a scan for its first row alone (a cold lookup)."""
    rows = ds.scanner(columns=READ_COLUMNS, filter=f"object_id = {sql_string(oid)}", scan_in_order=True,
                      with_row_address=True, limit=1).to_table()
    return next((_entry(oid, row) for oid, row, _ in _rows(rows, {})), None)


class ManifestView:
    """The entries of a manifest table at one version (``ds``; before any: None, version 0).

    Besides the entries it keeps where each entry's row lives (object_id -> the key,
    :func:`.compaction.fragment_key`, of its fragment) and each fragment's id at this
    version, so a delete rewrites one fragment's deletions, not a scan of the whole table;
    and, built when first asked for, the children index listings page through and the
    count of entries living in directories not named after them (:mod:`.indexes`).

    One entry (:meth:`get`, ``in``) may be read without a lock: a change is a dict's
    single assignment or removal.  Everything else, reads and every change, runs under
    the lock of the :class:`~.manifest.Manifest` holding the view, which alone moves it.
    A full load makes a new view (:meth:`load`) that the manifest puts in this one's place.
    """

    def __init__(self, ds=None, track_versions: bool = False, entries: Entries | None = None,
                 where: dict[str, str | None] | None = None, fragment_ids: dict[str, int] | None = None,
                 duplicates: bool = False, other_dirs: Counter | None = None):
        self.ds = ds
        self.version = 0 if ds is None else ds.version
        self.entries = Entries() if entries is None else entries
        #: whether rows of TABLE_VERSION are listed in ``versions_here`` (to be moved out)
        self.track_versions = track_versions
        self.versions_here: list[Entry] = list(self.entries.of_kind(TABLE_VERSION)) if track_versions else []
        #: whether this version holds rows sharing an object_id (a racing loser's row not yet
        #: backed out): which is first is then the table order's, and compaction must keep it
        self.duplicates = duplicates
        self._where: dict[str, str | None] = {} if where is None else where
        #: fragment key -> fragment id at this version: a delete's hint (:func:`_fragment_of`)
        self._fragment_ids: dict[str, int] = {} if fragment_ids is None else fragment_ids
        #: (parent, kind) -> sorted names, built on the first listing after a load and kept up
        #: to date by every change (O(log n) each)
        self._children: dict | None = None
        #: root directory -> entries living in it that are not named after it (None: to be counted)
        self._other_dirs = other_dirs
        #: every object_id in order, for the entries under a prefix (a table's rows of the version
        #: store: a scan of every table's would cost what the store holds); built on the first
        #: such read, kept up to date by every change (O(log n) each)
        self._ordered: SortedList | None = None
        #: a number no other state of any view has had: new after each change (:meth:`_changed`)
        self.generation = next(_GENERATIONS)

    # -- made and moved ------------------------------------------------------------------
    @classmethod
    @gc_paused()  # a million entries built in a row
    def load(cls, ds, reopen: Callable[[], object], track_versions: bool = False,
             abandon=None) -> "ManifestView | None":
        """A view of all of ``ds``, read whole; None when ``abandon`` (an Event) was set meanwhile.
        ``reopen()`` gives the table at its latest version when a concurrent cleanup removed the
        files of ``ds`` while they were read."""
        for attempt in range(3):
            try:
                keys = _fragment_keys(ds.get_fragments())
                table = ds.to_table(columns=READ_COLUMNS, with_row_address=True)
                break
            except Exception as e:  # a concurrent cleanup removed an old version's files
                if attempt == 2 or not is_missing(e):
                    raise
                ds = reopen()
        entries, where = Entries(), {}
        for i, (oid, row, key) in enumerate(_rows(table, keys)):
            if oid not in entries:  # the first row of an object_id wins (see manifest's docstring)
                entries.add_row(oid, row)
                where[oid] = key
            if abandon is not None and not i % 65_536 and abandon.is_set():
                return None
        duplicates = len(entries) < table.num_rows
        # (with duplicates, a losing row's directory must not count: counted from the entries)
        other_dirs = None if duplicates else indexes.other_dirs_of_table(table)
        return cls(ds, track_versions, entries, where, {key: fragment_id for fragment_id, key in keys.items()},
                   duplicates, other_dirs)

    @gc_paused()  # (tens of thousands of rows read in a row)
    def follow(self, ds, uri: str = "") -> bool:
        """Move to ``ds``, a newer version another process committed, reading only the
        fragments changed since this one (:func:`.compaction.changes_since`); False, changing
        nothing, where a full load must do (:func:`_change_or_why`)."""
        if self.ds is None or ds is None:
            return False
        gone, new = compaction.changes_since(self.ds.get_fragments(), ds.get_fragments())
        change = _change_or_why(self.ds, gone, ds, new, self.entries, self._where, self.duplicates)
        if isinstance(change, str):
            log.debug("%s: version %d -> %d to be loaded whole: %s", uri, self.version, ds.version, change)
            return False
        self.duplicates |= change.duplicates  # (appended after every row held: those held win)
        for oid in change.dropped:
            self._forget(oid)
        self._where.update(change.moved)
        for oid, row, key in change.added:
            if self._hold(oid, row, key) == TABLE_VERSION and self.track_versions:
                self.versions_here.append(_entry(oid, row))
        for fragment in gone:
            self._fragment_ids.pop(compaction.fragment_key(fragment.metadata), None)
        _fragment_keys(new, self._fragment_ids)
        log.debug("%s: version %d -> %d read by the fragments it changed (%d gone, %d new): %d entries dropped, %d added",
                  uri, self.version, ds.version, len(gone), len(new), len(change.dropped), len(change.added))
        self.ds, self.version = ds, ds.version
        self._changed()
        return True

    def appended(self, ds, rows: list[tuple[str, str]]) -> None:
        """This process appended ``rows`` ((object_id, row as :func:`row_of` makes it)) in
        one commit, ``ds``, the version right after this one: they are held."""
        self.ds, self.version = ds, ds.version
        for (oid, row), key in zip(rows, _appended_keys(ds, len(rows), self._fragment_ids)):
            self._hold(oid, row, key)
        self._changed()

    def removed(self, ds, oids: list[str]) -> None:
        """This process removed the rows of ``oids`` in one commit, ``ds``, the version right after this one."""
        self.ds, self.version = ds, ds.version
        for oid in oids:
            self._forget(oid)
        self._changed()

    def rewritten(self, ds, done: compaction.Rewrite) -> bool:
        """A compaction's rewrite ``done`` was committed as ``ds``: the same entries in fewer
        files.  False, changing nothing, where it must be followed instead (:meth:`follow`):
        a version came in between, or rows share an object_id (their order is the table's)."""
        if self.duplicates or ds.version != self.version + 1:
            return False
        self.ds, self.version = ds, ds.version
        for key in done.replaced_files():  # a fragment's key is its first file
            self._fragment_ids.pop(key, None)
        for fragment_id, metadata, oids in done.placed():
            key = compaction.fragment_key(metadata)
            self._fragment_ids[key] = fragment_id
            self._where.update(dict.fromkeys(oids, key))
        self._changed()
        return True

    def _changed(self) -> None:
        """The last step of every change: a new :attr:`generation`.  Last, so that a reader
        on another thread that reads the generation, then entries in the middle of a change,
        then the generation again finds it unchanged and the entries it read newer than the
        number it holds, never older (a REST server keeps an answer under the number it read
        before and after: lance_ns.server.app)."""
        self.generation = next(_GENERATIONS)

    def _hold(self, oid: str, row: str, fragment_key: str | None) -> str:
        """Hold one entry, given as stored (:func:`row_of`: its metadata JSON dumped once, by
        the caller that writes or read it); its kind."""
        # (a bulk declaration calls this per table: no SortedList built as a default, no oid split twice)
        kind, _, location = _fields(row)
        if self._ordered is not None and oid not in self.entries:
            self._ordered.add(oid)
        self.entries.add_row(oid, row)
        self._where[oid] = fragment_key
        if self._other_dirs is not None:
            indexes.count_dir(self._other_dirs, oid, location, +1)
        if self._children is not None:
            parent, _, name = oid.rpartition(ID_DELIMITER)
            indexes.add_child(self._children, (parent, kind), name)
        return kind

    def _forget(self, oid: str) -> None:
        entry = self.entries.pop(oid)
        self._where.pop(oid, None)
        if entry is None:
            return
        if self._ordered is not None:
            self._ordered.discard(oid)
        if entry.kind == TABLE_VERSION and self.versions_here:
            self.versions_here = [e for e in self.versions_here if e.object_id != oid]
        if self._other_dirs is not None:
            indexes.count_dir(self._other_dirs, oid, entry.location, -1)
        if self._children is not None:
            names = self._children.get((entry.parent, entry.kind))
            if names is not None:
                names.discard(entry.name)

    # -- a delete's plan -------------------------------------------------------------------
    def deletion(self, ds, oids: list[str]) -> tuple[int, object]:
        """The Delete operation removing the rows of ``oids`` (all held) from the fragments of
        ``ds`` (this version, a dataset object of the caller's) holding them
        (:func:`_fragment_deletion`), and the rows it removes; (0, None) when where they live
        is not known: rows sharing an object_id, or a row of a fragment not tracked (then Lance
        scans)."""
        groups: dict[str, list[str]] = {}
        for oid in oids:
            key = None if self.duplicates else self._where.get(oid)
            if key is None:
                return 0, None
            groups.setdefault(key, []).append(oid)
        removed, op = _fragment_deletion(ds, groups, self._fragment_ids)
        if op is not None and removed != len(oids):  # our record of where rows live is wrong
            log.warning("manifest rows of %s were not where the view recorded them: scanning instead", oids[:3])
            return 0, None
        return removed, op

    # -- reading -------------------------------------------------------------------------
    def __contains__(self, oid: str) -> bool:
        return oid in self.entries

    def get(self, oid: str) -> Entry | None:
        return self.entries.get(oid)

    def index(self) -> dict:
        """The children index: (parent, kind) -> sorted names, built once per load."""
        if self._children is None:
            with gc_paused():  # (a million names in a row)
                self._children = indexes.children_index(self.entries.kinds())
        return self._children

    def descendants(self, prefix: str) -> list[Entry]:
        """Every entry inside the namespace ``prefix`` (an object_id), at any depth: walked
        through the children index, so it costs what the namespace holds, not what the view does."""
        if not prefix:
            return []
        index, found, parents = self.index(), [], [prefix]
        while parents:
            parent = parents.pop()
            for kind in (NAMESPACE, TABLE, TABLE_VERSION):  # (a table's: rows of older releases)
                for name in index.get((parent, kind), ()):
                    oid = parent + ID_DELIMITER + name
                    found.append(self.entries[oid])
                    parents.append(oid)
        return found

    def of_kind(self, kind: str) -> Iterator[Entry]:
        """The entries of ``kind`` (in no order)."""
        return self.entries.of_kind(kind)

    def under_prefix(self, kind: str, prefix: str) -> list[Entry]:
        """The entries of ``kind`` whose object_id starts with ``prefix``, by object_id: read
        from the ordered ids, so it costs what lies under the prefix."""
        if self._ordered is None:
            with gc_paused():
                self._ordered = SortedList(self.entries.ids())
        found = []
        for oid in self._ordered.irange(minimum=prefix):
            if not oid.startswith(prefix):
                break
            entry = _shared_entry(oid, self.entries.row(oid))
            if entry.kind == kind:
                found.append(entry)
        return found

    def holds_dir(self, directory: str) -> bool:
        """Whether an entry's location lies in the root directory ``directory``."""
        if self._other_dirs is None:
            self._other_dirs = indexes.other_dirs(self.entries.located())
        return indexes.holds(self._other_dirs, self.entries.location, directory)
