"""The ``__manifest`` Lance table: pylance's catalog of nested namespaces and tables.

Same schema and rows as pylance's Rust ``DirectoryNamespace`` writes
(``object_id`` = names joined by ``$``, ``object_type`` = ``table`` or
``namespace``, ``location`` relative to the root, ``metadata`` = JSON
properties), so either implementation reads the other's manifest.

Where this one differs is how it keeps the table:

* reads come from an in-memory copy that is brought up to date only when the
  table's latest version moved (one cheap version check per call), by reading
  the fragments another process's commit changed (:meth:`.view.ManifestView.follow`),
  so paging and describe never re-scan it.  That check is a listing of ``_versions/``: on
  local disk a directory read (skipped, for reads, while one ``stat()`` shows the directory
  unchanged since the last: :mod:`lance_ns.directory_stamp`), on object storage a LIST request; ``staleness``
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
import json
import logging
import os
import threading
import time
import weakref
from typing import Callable, Iterator

import pyarrow as pa

from ... import storage
from ...base import loop_turn, refuse_blocking
from ...datasets import sql_string
from ...directory_stamp import DirectoryStamp
from ...errors import ConcurrentModificationError, UnsupportedOperationError
from ...paging import SortedNames
from . import compaction
from .layout import MANIFEST_DIR
from .upkeep import Upkeep
from .view import Entry, ManifestView, id_in, is_missing, row_of, scan_one

log = logging.getLogger(__name__)

SCHEMA = pa.schema(
    [
        pa.field("object_id", pa.string(), False, metadata={"lance-schema:unenforced-primary-key:position": "0"}),
        pa.field("object_type", pa.string(), False),
        pa.field("location", pa.string()),
        pa.field("metadata", pa.string()),
        pa.field("base_objects", pa.list_(pa.field("object_id", pa.string()))),
    ]
)
_MAX_ATTEMPTS = 20
#: from this many rows a new process answers its first read of one entry by a scan for
#: that row while the manifest loads on a thread (below it, loading it all is as quick)
COLD_LOOKUP_ROWS = 50_000


class Exists(Exception):
    """The object_id is taken (carries the existing entry)."""

    def __init__(self, entry: Entry):
        super().__init__(entry.object_id)
        self.entry = entry


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


def _lost_commit_race(exc: Exception) -> bool:
    """Whether a commit failed because another commit landed first (then re-check and retry):
    a retryable conflict, an operation that cannot follow a concurrent Overwrite (pylance's)
    or compaction, or a version the commit had to read removed by another process's upkeep
    in the meantime (seen as "_versions/<n>.manifest" not found, with 4 processes declaring
    and compacting every 8 versions: Lance reads old versions before it writes its own
    manifest, the commit's last step, so nothing of this attempt landed)."""
    if not isinstance(exc, OSError):
        return False
    text = str(exc).lower()
    return ("conflict" in text or "incompatible transaction" in text
            or (is_missing(exc) and f"{MANIFEST_DIR}/_versions/" in text))


def _latest_version(ds, attempts: int = 3) -> int:
    """``ds.latest_version``, asked again when the manifest it found was removed before it was
    read (another process's upkeep commits and cleans up old versions meanwhile: seen once,
    under load, as "_versions/136.manifest was not found" during a rename race)."""
    for attempt in range(attempts):
        try:
            return ds.latest_version
        except OSError as e:
            if attempt == attempts - 1 or not is_missing(e):
                raise
    raise AssertionError("unreachable")



class Manifest:
    """A manifest table kept: when its in-memory :class:`~.view.ManifestView` is checked
    against the table and brought forward, and every commit to it (inserts, deletes, the
    upkeep's rewrites), each against the version it checked.  The view is read through
    this class's methods; the lock here guards it and every commit."""

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
        #: the entries at the version loaded (replaced whole by a full load, moved in place otherwise)
        self.view = ManifestView()
        #: seconds a read may rely on the last version check (0: every read checks)
        self.staleness = max(float(staleness), 0.0)
        self._checked_at = float("-inf")  # time.monotonic() of the last version check
        #: on object storage the version check is a LIST request: never made on the server's event loop
        self.remote = remote
        #: on local disk, the stamp of ``_versions/``: a read that finds it unchanged since the
        #: last version check needs no listing (:mod:`lance_ns.directory_stamp` says when that holds)
        self._versions_stamp = None if remote else DirectoryStamp(os.path.join(self.uri, "_versions"))
        self._checked_once = threading.local()  # one_check(): this thread's reads check no more
        #: the server event loop's turn (lance_ns.base.loop_turn) that checked last, if any
        self._checked_in_turn: object | None = None
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

    # -- keeping the view current ---------------------------------------------------
    @property
    def version(self) -> int:
        return self.view.version

    def current(self) -> None:
        """Before a read: :meth:`refresh`, unless the last check is younger than ``staleness``,
        this thread is inside :meth:`one_check`, or this turn of the REST server's event loop
        has checked already (:func:`lance_ns.base.loop_turn`: every read of the turn was sent
        before that check)."""
        if getattr(self._checked_once, "on", False):
            return
        turn = loop_turn()
        if turn is not None and turn is self._checked_in_turn:
            return
        if self.staleness and time.monotonic() - self._checked_at < self.staleness:
            return
        if self.remote:
            refuse_blocking("checking __manifest's latest version on object storage")
        stamp, view = self._versions_stamp, self.view
        if stamp is not None and view.ds is not None and stamp.unchanged(view.version):
            self._after_check()  # no version committed since the last check: nothing to list
        else:
            token = None if stamp is None else stamp.before_listing()
            self.refresh()
            if token is not None:
                stamp.after_listing(token, self.view.version)
        self._checked_in_turn = turn

    def generation(self) -> int:
        """The view's :attr:`~.view.ManifestView.generation` after a read's version check
        (:meth:`current`): the same number only while every read answers the same.  A view
        never loaded is not checked: every read of it loads it first, off the event loop,
        and the view loaded has a number of its own."""
        view = self.view
        if view.ds is None:
            return view.generation
        self.current()
        return self.view.generation

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
        """Bring the view to the table's latest version (cheap when unchanged)."""
        self._checked_at = time.monotonic()  # when the check started: what it sees is at least this new
        view = self.view
        # the common case, checked without the lock so that threads describe in parallel
        if view.ds is not None and _latest_version(view.ds) == view.version:
            self._after_check()
            return
        refuse_blocking("reading a new version of __manifest")
        with self._lock:
            if self.view.ds is None:
                ds = self._open()
                if ds is not None:
                    self._load(ds)
            elif _latest_version(self.view.ds) != self.view.version:
                self.catch_up(self._open())
        self._after_check()

    def _after_check(self) -> None:
        """After each version check: version rows of an earlier release still here are moved out
        (:meth:`_move_out_versions`; a move that failed is tried again at the next check)."""
        if self.move_versions_to is not None and not self._moving and self.view.versions_here:
            self._move_out_versions()

    def _move_out_versions(self) -> None:
        """Rows of TABLE_VERSION (lance-ns releases before 0.2 kept the history of managed
        tables in ``__manifest``) go to ``move_versions_to`` first, then leave this table,
        so that pylance's DirectoryNamespace, which refuses object types it does not know,
        can write this root again.  Copy, then delete: a failure in between leaves the rows
        in both places, and the next load moves them again (the copy skips what is there)."""
        refuse_blocking("moving version rows out of __manifest")
        with self._lock:
            rows = list(self.view.versions_here)
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
            if is_missing(e):
                return None
            raise

    def _load(self, ds, abandon: threading.Event | None = None) -> None:
        """The view made anew from all of ``ds`` (``abandon`` set: stop, changing nothing)."""
        started = time.perf_counter()
        view = ManifestView.load(ds, self._open, self.move_versions_to is not None, abandon)
        if view is None:
            return
        self.view = view
        # INFO: at a million entries a whole load holds this process's writers up for seconds,
        # and after the first it means a change could not be read by its fragments alone
        log.info("%s: version %d loaded whole, %d entries in %.2f s", self.uri, view.version, len(view.entries),
                 time.perf_counter() - started)

    def catch_up(self, ds) -> None:
        """The view brought to ``ds``, a newer version: by the fragments changed, else whole."""
        if not self.view.follow(ds, self.uri):
            self._load(ds)

    @contextlib.contextmanager
    def _reading(self):
        """The lock, for a read of the view; on the server's event loop a lock a commit
        holds is not waited for (WouldBlock: the read runs on a thread instead)."""
        if not self._lock.acquire(blocking=False):
            refuse_blocking("waiting for a commit to __manifest")
            self._lock.acquire()
        try:
            yield self.view
        finally:
            self._lock.release()

    # -- reading ---------------------------------------------------------------------
    def get(self, oid: str) -> Entry | None:
        if self.view.ds is None and self.cold_lookups:
            found = self._cold_get(oid)
            if found is not _UNANSWERED:
                return found
        self.current()
        return self.view.get(oid)

    def _cold_get(self, oid: str):
        """A new process's first read of one entry.  On a large manifest it is answered by a
        scan for its row alone while the whole manifest loads on a thread of its own (a
        million rows take seconds; a Spark executor or a server worker that starts to
        describe a table need not wait for them); a small one is loaded at once.
        ``_UNANSWERED`` when another thread is loading it."""
        refuse_blocking("reading __manifest for the first time")
        with self._lock:
            if self.view.ds is not None or (self._loader is not None and self._loader.is_alive()):
                return _UNANSWERED
            ds = self._open()
            if ds is None:
                return None
            if sum(f.metadata.num_rows for f in ds.get_fragments()) < COLD_LOOKUP_ROWS:
                self._load(ds)  # loading it all costs about what the scan would: no thread
                self._checked_at = time.monotonic()
                return self.view.get(oid)
            found = scan_one(ds, oid)
            _BACKGROUND_LOADS.add(self)
            self._loader = threading.Thread(target=self._load_in_background, name="lance-ns-manifest-load",
                                            daemon=True)
            self._loader.start()
        return found

    def abandon_background_load(self) -> None:
        """Make a background load stop at its next step (interpreter exit)."""
        self._abandon.set()

    def wait_for_background_load(self, timeout: float) -> None:
        if self._loader is not None:
            self._loader.join(timeout)

    def _load_in_background(self) -> None:
        try:
            with self._lock:
                ds = self._open() if self.view.ds is None and not self._abandon.is_set() else None
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
        with self._reading() as view:
            yield view.index().get(key)

    def descendants(self, prefix: str) -> list[Entry]:
        """Every entry inside the namespace ``prefix`` (an object_id), at any depth: walked
        through the children index, so a DropNamespace costs what the namespace holds, not
        what the manifest holds (a scan of every entry took 254 ms at 100,000 namespaces)."""
        self.current()
        with self._reading() as view:
            return view.descendants(prefix)

    def with_prefix(self, prefix: str, kind: str) -> list[Entry]:
        """The entries of ``kind`` whose object_id starts with ``prefix``, by object_id."""
        self.current()
        with self._reading() as view:
            return view.under_prefix(kind, prefix)

    def entries(self, kind: str) -> list[Entry]:
        """Every entry of ``kind`` (TABLE or NAMESPACE)."""
        self.current()
        with self._reading() as view:
            return list(view.of_kind(kind))

    def holds_dir(self, directory: str) -> bool:
        """Whether an entry's location lies in the root directory ``directory`` (it is then
        not a table of its own), as of the loaded version: callers check it with
        :meth:`current` first, once for many directories."""
        with self._reading() as view:
            return view.holds_dir(directory)

    # -- committing ----------------------------------------------------------------
    def _ensure_table(self) -> None:
        """Create the (empty) table on the first write, unless another process did.

        ``write_dataset(mode="create")`` would not do: Lance re-applies a create that
        loses a race as an Overwrite of the winner's version, and every entry the
        winner had committed meanwhile would be gone (two servers taking their first
        writes on a fresh root).  Version 1 is committed without retries instead: its
        manifest is created only if absent (a hard link on local disk, a conditional
        PUT on object storage), so a loser fails and reads the winner's table."""
        if self.view.ds is not None:
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

        metadata = [json.dumps(e.properties, sort_keys=True) if e.properties else None for e in entries]
        table = pa.table(
            {
                "object_id": [e.object_id for e in entries],
                "object_type": [e.kind for e in entries],
                "location": [e.location for e in entries],
                "metadata": metadata,
                "base_objects": pa.nulls(len(entries), SCHEMA.field("base_objects").type),
            },
            schema=SCHEMA,
        )
        self._writable()
        with self._lock:
            self._ensure_table()
            for attempt in range(_MAX_ATTEMPTS):
                self.refresh()
                view = self.view
                for entry in entries:
                    held = view.get(entry.object_id)
                    if held is not None:
                        raise Exists(held)
                base = view.version
                try:
                    # an append based on the version checked above (one data file + one commit)
                    ds = lance.write_dataset(table, self._private(), mode="append", storage_options=self.storage_options,
                                             max_rows_per_file=compaction.rows_per_file(len(entries)))
                except OSError as e:  # another commit landed first: check again
                    if not _lost_commit_race(e) or attempt == _MAX_ATTEMPTS - 1:
                        raise
                    continue
                if ds.version == base + 1:  # nothing committed in between: ours are the only rows
                    view.appended(ds, [(e.object_id, row_of(e.kind, e.location, meta))
                                       for e, meta in zip(entries, metadata)])
                else:
                    self._settle(ds, entries)
                self.upkeep.after_commit(self.view.version)
                return
        raise ConcurrentModificationError(f"could not add {entries[0].object_id!r} to the manifest")

    def _settle(self, ds, entries: list[Entry]) -> None:
        """Other commits landed between our check and our commit: the first row wins."""
        mine = max(f.fragment_id for f in ds.get_fragments())  # the newest fragment at our version
        oids = [e.object_id for e in entries]
        rows = ds.scanner(columns=["object_id"], filter=id_in(oids),
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
            raise Exists(self.view.get(lost[0]) or entries[0])
        self.catch_up(ds)

    def _remove_fragment(self, ds, fragment_id: int, oid: str) -> None:
        from lance.dataset import LanceDataset, LanceOperation

        op = LanceOperation.Delete(updated_fragments=[], deleted_fragment_ids=[fragment_id],
                                   predicate=f"object_id = {sql_string(oid)}")
        LanceDataset.commit(ds, op, read_version=ds.version, storage_options=self.storage_options)

    def delete(self, oids: list[str]) -> int:
        """Remove the entries of ``oids``; the number of rows this call removed.

        Only the fragments holding those rows get new deletions (:meth:`.view.ManifestView.deletion`),
        so the cost of a delete does not grow with the table.  A delete commits against the
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
                view = self.view
                present = [o for o in dict.fromkeys(oids) if o in view]
                if not present:  # the loaded version is the latest: there is nothing to remove
                    return 0
                base = view.version
                ds = self._private()
                try:
                    removed, op = view.deletion(ds, present)
                    if op is not None:
                        # through our dataset, not the URI: Lance reuses its loaded manifest
                        ds = LanceDataset.commit(ds, op, read_version=base, storage_options=self.storage_options)
                    else:  # where the rows live is not known: Lance scans the table for them
                        removed = int(ds.delete(id_in(present))["num_deleted_rows"])
                except OSError as e:  # another delete of those fragments or a compaction landed first
                    if not _lost_commit_race(e) or attempt == _MAX_ATTEMPTS - 1:
                        raise
                    continue
                if ds.version == base + 1:
                    view.removed(ds, present)
                else:  # (committed on top of other processes' commits)
                    self.catch_up(self._open())
                self.upkeep.after_commit(self.view.version)
                return removed

    def _private(self):
        """A dataset object of our own at the loaded version, for a call that mutates it.

        The view's ``ds`` is read by other threads without the lock (``refresh``);
        a mutating call on it (``delete``, compaction) would make those reads
        fail with PyO3's "Already mutably borrowed".  So the shared object is
        only ever read, and replaced, never changed in place.
        """
        view = self.view
        try:
            return view.ds.checkout_version(view.version)
        except Exception as e:  # that version was cleaned up by another process's compaction
            if not is_missing(e):
                raise
            return self._open()

    # -- upkeep (:mod:`.upkeep`): what its compactions and cleanups read and commit ----
    @property
    def writers_lock(self) -> threading.RLock:
        """The lock every write of this manifest holds; upkeep commits under it too."""
        return self._lock

    def loaded_copy(self):
        """A dataset object of upkeep's own at the loaded version (under the writers' lock),
        or None when nothing is loaded yet."""
        with self._lock:
            return None if self.view.ds is None else self._private()

    def compaction_base(self):
        """(dataset of the latest version, whether entries are duplicated) to plan a
        compaction on, under the writers' lock; None when nothing is loaded yet."""
        with self._lock:
            if self.view.ds is None:
                return None
            self.refresh()
            return self._private(), self.view.duplicates

    def commit_rewrite(self, done: compaction.Rewrite):
        """Commit a compaction's rewrite on top of the latest version (the caller holds the
        writers' lock); (the new dataset, the one it was committed on).  Raises, with
        nothing committed, when a fragment it rewrites changed since the plan: its files
        are then the caller's to discard.  :meth:`adopt_rewrite` takes it as loaded."""
        self.refresh()
        view = self.view
        if view.version != done.version and not done.unchanged_in(view.ds.get_fragments()):
            raise ConcurrentModificationError("a fragment it rewrites changed since the plan")
        base = self._private()
        return done.commit(base), base

    def adopt_rewrite(self, new_ds, done: compaction.Rewrite, base) -> None:
        """After ``done`` was committed as ``new_ds`` on top of ``base`` (under the writers'
        lock): the loaded version."""
        if new_ds.version != base.version + 1 or not self.view.rewritten(new_ds, done):
            self.catch_up(new_ds)  # another process committed in between, or duplicates: read it

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
