"""How a manifest table (``__manifest``, or the version store) is compacted.

Small fragments are merged and those with deleted rows rewritten, every other fragment
is reused as it is: the cost of a compaction does not grow with the number of entries.

The trailing small fragments are merged like a binary counter (:func:`plan`: fragment
sizes double towards the oldest, so a row is rewritten about log n times, and never again
once its fragment holds ``SEALED_ROWS``).

A compaction is written first (:func:`prepare`, the costly part: no lock held, so the
namespace's writers go on meanwhile) and committed after (:meth:`Rewrite.commit`): an
Overwrite of the new list followed by the fragments appended since the plan, against the
latest version, without retries.  The table's order is kept (merged rows stay where their
fragments were, appended ones after), so "the first row wins" still names the winner;
anything else that changed since the plan (a delete, another compaction), or any commit
landing during the commit itself, and it is given up and its files removed.  (Not Lance's
own compaction: its Rewrite is accepted next to a concurrent append and puts the merged
rows after it, so a losing duplicate appended meanwhile would come first, and "the first
row wins" would hand the name to the loser.)  Lance takes a fragment into an Overwrite only
without a deletion file, hence dirty fragments are rewritten; with duplicates present
everything is (in order, the later rows dropped).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import pyarrow as pa

from ... import storage

#: a fragment of this many rows is not merged again: a compaction rewrites about this
#: many rows, and up to twice this many per fragment with deleted rows (appends and
#: rewrites write fragments of SEALED_ROWS to twice that: rows_per_file), whatever the
#: number of tables
SEALED_ROWS = 8_192


def file_path(data_file) -> str:
    # pylance 14's DataFile.path builds a class on every call (~25 us); a delete at a
    # million tables reads ~120 of them, so the stored attribute is read when there
    return getattr(data_file, "_path", None) or data_file.path


@functools.cache
def _plain_path_data_file() -> tuple[type, type]:
    """pylance's DataFile, and a subclass whose ``path`` is the stored string (as
    :func:`file_path` reads it): Lance reads ``path`` for each file of an Overwrite (~6 ms
    of a compaction's commit, under the writers' lock, at a million tables)."""
    from lance.fragment import DataFile

    class PlainPathDataFile(DataFile):
        @property
        def path(self) -> str:
            return self._path

    return DataFile, PlainPathDataFile


def _with_plain_paths(listed: list) -> list:
    """``listed`` (fragment metadata of the caller's own), its data files' ``path`` made cheap."""
    original, plain = _plain_path_data_file()
    for meta in listed:
        for data_file in meta.files:
            if type(data_file) is original and hasattr(data_file, "_path"):
                data_file.__class__ = plain
    return listed


def _identity(fragment) -> tuple:
    """What a fragment holds: its id, data files, rows and deleted rows (pylance's
    merge_insert rewrites a fragment under the same id: the files tell)."""
    meta = fragment.metadata
    d = meta.deletion_file
    return (fragment.fragment_id, tuple(map(file_path, meta.files)), meta.physical_rows,
            None if d is None else (d.id, d.read_version, d.num_deleted_rows))


def identities(fragments: list) -> list[tuple]:
    return [_identity(f) for f in fragments]


def appended_since(loaded: list[tuple], fragments: list) -> list | None:
    """The fragments of a newer version (``fragments``) appended after those of an older
    one (``loaded``: their :func:`identities`), when that is all that changed: every
    loaded fragment still there, first, with the same deletions; None otherwise."""
    if identities(fragments[: len(loaded)]) != loaded:
        return None
    return fragments[len(loaded):]


def rows_per_file(rows: int) -> int:
    """The ``max_rows_per_file`` of an append of ``rows``: as many fragments as it holds
    SEALED_ROWS, of equal size (10,000 rows: one fragment, not 8,192 and 1,808).  A
    remainder fragment of a bulk append is never merged (it is not the trailing run
    after the next append), and every fragment costs each commit: Lance's manifest
    lists them all (an Overwrite ~40 us each)."""
    files = max(rows // SEALED_ROWS, 1)
    return -(-rows // files)


def plan(fragments: list, everything: bool = False) -> list[bool] | None:
    """Which fragments a compaction keeps as they are (True) and which it rewrites,
    or None when nothing is worth a commit.

    Rewritten: the trailing run (from the newest fragment back, an older one joins
    while it holds no more rows than those gathered after it and is not sealed: a
    binary counter), every fragment with a deletion file (an Overwrite takes none, so
    no fewer can be), or, with ``everything``, all of them."""
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


def first_rows(rows: pa.Table) -> pa.Table:
    """The rows whose object_id was not seen before, in table order ("the first row wins")."""
    first: dict[str, int] = {}
    for i, oid in enumerate(rows.column("object_id").to_pylist()):
        first.setdefault(oid, i)
    return rows.take(sorted(first.values())) if len(first) < rows.num_rows else rows


@dataclass
class Rewrite:
    """A compaction written but not committed (:func:`prepare`): the new fragment list of
    the version it was planned on, and per group of rewritten rows (their object_ids, the
    fragments they were written to, in order)."""

    schema: object
    version: int  # the version planned on
    planned: list[tuple]  # its fragments' identities (to check what changed since)
    listed: list
    moved: list[tuple[pa.ChunkedArray, list]]
    written: list
    uri: str
    storage_options: dict | None

    def commit(self, appended: list, base):
        """Commit as an Overwrite on top of ``base`` (a dataset object of the caller's own, at
        the latest version), the planned version followed by the fragments ``appended``
        since (listed after the rewritten ones, so the table's order is kept: the caller
        checked that nothing else changed).  No retries: Lance refuses it if anything
        committed after ``base``.  Committed through ``base``, not the URI: Lance reuses
        its loaded manifest instead of reading it again."""
        from lance.dataset import LanceDataset, LanceOperation

        listed = _with_plain_paths(self.listed + [f.metadata for f in appended])
        return LanceDataset.commit(base, LanceOperation.Overwrite(self.schema, listed), read_version=base.version,
                                   max_retries=0, storage_options=self.storage_options)

    def discard(self) -> None:
        storage.remove_data_files(self.uri, self.storage_options, self.written)


def prepare(ds, uri: str, storage_options: dict | None, duplicates: bool) -> Rewrite | None:
    """Plan a compaction of ``ds`` (a dataset object of the caller's own, at the version
    it plans on) and write the rewritten fragments: None when nothing is worth a commit.
    This is the costly part (it reads and writes up to ``SEALED_ROWS`` rows per rewritten
    fragment) and needs no lock; on failure the files it wrote are removed and the error raised."""
    import lance

    fragments = ds.get_fragments()
    keep = plan(fragments, everything=duplicates)
    if keep is None:
        return None
    done = Rewrite(ds.schema, ds.version, identities(fragments), [], [], [], uri, storage_options)
    pending: list = []

    def rewrite_pending():
        if not pending:
            return
        rows = ds.scanner(fragments=pending, scan_in_order=True).to_table()
        rows = first_rows(rows) if duplicates else rows
        if rows.num_rows:
            new = lance.fragment.write_fragments(
                rows, uri, schema=ds.schema, data_storage_version=ds.data_storage_version,
                max_rows_per_file=rows_per_file(rows.num_rows), storage_options=storage_options)
            done.written.extend(new)
            done.listed.extend(new)
            done.moved.append((rows.column("object_id"), new))
        pending.clear()

    try:
        for fragment, kept in zip(fragments, keep):
            if kept:
                rewrite_pending()
                done.listed.append(fragment.metadata)
            else:
                pending.append(fragment)
        rewrite_pending()
    except BaseException:
        done.discard()
        raise
    return done
