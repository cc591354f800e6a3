"""A manifest table's upkeep: its compactions and version cleanups, off the write path.

Every ``compact_every`` versions a compaction is due (:mod:`.compaction` says what it
rewrites), every ``retain_versions`` a cleanup of old versions.  Both run on a thread
started by the write that made them due, so that write answers first: a compaction
rewrites the trailing run and each fragment that lost a tenth of its rows (8,192 to
16,383 rows, ~30-45 ms each), and was the p99 of declares and deregistrations at a
million tables while it ran inside them.

A compaction writes its fragments without the writers' lock and commits under it, on
top of what they did meanwhile (:meth:`Upkeep.compact`).  It works on the
manifest's state through the methods the manifest keeps for it (its writers' lock, a copy
of the loaded version, a rewrite committed and adopted).
"""

from __future__ import annotations

import contextlib
import logging
import threading

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
        ds = m.loaded_copy()  # a copy of its own: readers use the manifest's unlocked
        if ds is not None:
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
        with m.writers_lock if hold else contextlib.nullcontext():
            try:
                base = m.compaction_base()  # plan on the latest version
            except Exception as e:  # upkeep must never fail the write that triggered it
                log.info("manifest compaction of %s skipped: %s", m.uri, e)
                return
            if base is None:
                return
            ds, duplicates = base
            try:
                done = compaction.prepare(ds, m.uri, m.storage_options, duplicates)
            except Exception as e:
                log.info("manifest compaction of %s skipped: %s", m.uri, e)
                return
            if done is None:  # nothing to rewrite: the old versions go all the same
                cleanup(ds, m.retain_versions)
                return
            with m.writers_lock:
                committed = self._commit(done)
        if committed is not None:
            cleanup(committed, m.retain_versions)

    def _commit(self, done: compaction.Rewrite):
        """Commit ``done`` on top of the latest version (under the writers' lock); the new
        dataset, or None when it was given up (its files removed)."""
        m = self.manifest
        try:
            new_ds, base = m.commit_rewrite(done)
        except Exception as e:  # noqa: BLE001 - the next interval compacts instead
            done.discard()
            self.given_up += 1
            log.info("manifest compaction of %s given up: %s", m.uri, e)
            return None
        self.given_up = 0
        m.adopt_rewrite(new_ds, done, base)
        return new_ds


def cleanup(ds, retain_versions: int) -> None:
    """All but the newest ``retain_versions`` versions removed.  Every read checks which
    version is latest, which lists ``_versions/`` (~0.7 us a file on local disk: 18 us with
    5 files, 86 us with 100); a root grown by sealed bulk fragments compacts nothing, and
    before this ran between compactions too its versions piled up (a describe at 1M tables
    cost 2.4x its cost at 1k)."""
    try:
        # Readers lagging further behind than this reopen and retry (see ManifestView.load).
        ds.cleanup_old_versions(retain_versions=retain_versions, error_if_tagged_old_versions=False)
    except Exception as e:  # noqa: BLE001 - old versions are only space
        log.warning("manifest cleanup of %s failed: %s", ds.uri, e)
