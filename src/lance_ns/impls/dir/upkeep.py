"""A manifest table's upkeep: its compactions and version cleanups, off the write path.

Every ``compact_every`` versions a compaction is due (:mod:`.compaction` says what it
rewrites), every ``retain_versions`` a cleanup of old versions.  Both run on a thread
started by the write that made them due, so that write answers first: a compaction
rewrites the trailing run and each fragment that lost a tenth of its rows (8,192 to
16,383 rows, ~30-45 ms each), and was the p99 of declares and deregistrations at a
million tables while it ran inside them.

A compaction writes its fragments without the writers' lock and commits under it, on
top of what they did meanwhile (:meth:`Upkeep.compact`).  It works on the
manifest's own state (its lock, loaded version and dataset objects): this module is the
manifest's, split off to keep each a size one can read.
"""

from __future__ import annotations

import contextlib
import logging
import threading

from ...errors import ConcurrentModificationError
from . import compaction

log = logging.getLogger(__name__)

#: what is due, the larger including the smaller
_CLEAN_UP, _COMPACT = 1, 2
#: compactions given up in a row (writers changed more than appends meanwhile) before the
#: next one holds the writers' lock throughout
GIVE_UPS = 3


class Upkeep:
    def __init__(self, manifest):
        self.manifest = manifest
        self._lock = threading.Lock()  # taken after the manifest's lock, never before it
        self._thread: threading.Thread | None = None  # the running compaction or cleanup
        self._due = 0  # _CLEAN_UP or _COMPACT: what the running thread does next
        self.given_up = 0  # compactions given up in a row

    def after_commit(self, version: int) -> None:
        """Called by each write (under the manifest's lock) with the version it committed:
        start what that version makes due, on a thread (at most one runs; what becomes due
        while it runs, it runs next)."""
        m = self.manifest
        compact = bool(m.compact_every) and version % m.compact_every == 0
        if not compact and version % m.retain_versions:
            return
        with self._lock:
            self._due = max(self._due, _COMPACT if compact else _CLEAN_UP)
            if self._thread is None:
                # not a daemon: an exiting interpreter lets it finish (else its files stay behind,
                # or, inside Lance when the interpreter finalizes, it aborts the process).  Said
                # outright: a thread inherits the flag of the one starting it, and a write called
                # back by pylance runs on a pool thread started from pylance's own (a daemon)
                self._thread = threading.Thread(target=self._run, name=f"manifest upkeep {m.uri}", daemon=False)
                self._thread.start()

    def _run(self) -> None:
        while True:
            with self._lock:
                due, self._due = self._due, 0
                if not due:
                    self._thread = None
                    return
            try:
                if due == _COMPACT:
                    self.compact()
                else:
                    self.clean_up()
            except Exception as e:  # noqa: BLE001 - upkeep never fails a write; the next one tries again
                log.warning("manifest upkeep of %s failed: %s", self.manifest.uri, e)

    def wait(self) -> None:
        """Return when what was due so far is done."""
        while (thread := self._thread) is not None:
            thread.join()

    def clean_up(self) -> None:
        m = self.manifest
        with m._lock:
            if m._ds is None:
                return
            ds = m._private()  # private: readers use m._ds unlocked
        cleanup(ds, m.retain_versions)

    def compact(self) -> None:
        """Merge the small fragments and rewrite those that lost many rows, then remove all
        but the newest ``retain_versions`` versions.

        The rewrite is written without the manifest's lock, so writers go on meanwhile, and
        committed under it on top of what they changed.  A delete of a row it rewrites (or
        another process's compaction) makes it give up; after ``GIVE_UPS`` in a row the
        next one holds the lock throughout, so steady deletes cannot starve it (the writers
        then wait for it: it rewrites the trailing run and the fragments that lost a tenth
        of their rows, ~30-45 ms each)."""
        m = self.manifest
        hold = self.given_up >= GIVE_UPS
        with m._lock if hold else contextlib.nullcontext():
            with m._lock:
                if m._ds is None:
                    return
                try:
                    m.refresh()  # plan on the latest version
                    ds, duplicates = m._private(), m._duplicates
                except Exception as e:  # upkeep must never fail the write that triggered it
                    log.info("manifest compaction of %s skipped: %s", m.uri, e)
                    return
            try:
                done = compaction.prepare(ds, m.uri, m.storage_options, duplicates)
            except Exception as e:
                log.info("manifest compaction of %s skipped: %s", m.uri, e)
                return
            if done is None:  # nothing to rewrite: the old versions go all the same
                cleanup(ds, m.retain_versions)
                return
            with m._lock:
                committed = self._commit(done)
        if committed is not None:
            cleanup(committed, m.retain_versions)

    def _commit(self, done: compaction.Rewrite):
        """Commit ``done`` on top of the latest version (under the manifest's lock); the new
        dataset, or None when it was given up (its files removed)."""
        m = self.manifest
        try:
            m.refresh()
            if m._version != done.version and not done.unchanged_in(m._ds.get_fragments()):
                raise ConcurrentModificationError("a fragment it rewrites changed since the plan")
            base = m._private()
            new_ds = done.commit(base)
        except Exception as e:  # noqa: BLE001 - the next interval compacts instead
            done.discard()
            self.given_up += 1
            log.info("manifest compaction of %s given up: %s", m.uri, e)
            return None
        self.given_up = 0
        self._adopt(new_ds, done, base)
        return new_ds

    def _adopt(self, new_ds, done: compaction.Rewrite, base) -> None:
        """After ``done`` was committed as ``new_ds`` on top of ``base``, the manifest's
        loaded version (under its lock)."""
        m = self.manifest
        if m._duplicates or new_ds.version != base.version + 1:  # or another process committed in between
            m.catch_up(new_ds)
            return
        # the same entries, fewer files: the rewritten rows live in the fragments written
        m._ds, m._version = new_ds, new_ds.version
        for key in done.replaced_files():  # a fragment's key is its first file
            m._fragment_ids.pop(key, None)
        for fragment_id, metadata, oids in done.placed():
            m._fragment_ids[key := compaction.fragment_key(metadata)] = fragment_id
            m._where.update(dict.fromkeys(oids, key))


def cleanup(ds, retain_versions: int) -> None:
    """All but the newest ``retain_versions`` versions removed.  Every read checks which
    version is latest, which lists ``_versions/`` (~0.7 us a file on local disk: 18 us with
    5 files, 86 us with 100); a root grown by sealed bulk fragments compacts nothing, and
    before this ran between compactions too its versions piled up (a describe at 1M tables
    cost 2.4x its cost at 1k)."""
    try:
        # Readers lagging further behind than this reopen and retry (see Manifest._load).
        ds.cleanup_old_versions(retain_versions=retain_versions, error_if_tagged_old_versions=False)
    except Exception as e:  # noqa: BLE001 - old versions are only space
        log.warning("manifest cleanup of %s failed: %s", ds.uri, e)
