"""How a manifest table (``__manifest``, or the version store) is compacted.

Small fragments are merged and those with many deleted rows rewritten, every other
fragment is left as it is, deletions included: the cost of a compaction does not grow
with the number of entries, nor with deletions spread over the whole table.

The trailing small fragments are merged like a binary counter (:func:`plan`: fragment
sizes double towards the oldest, so a row is rewritten about log n times, and never again
once its fragment holds ``SEALED_ROWS``); a fragment is rewritten for its deletions once
``DIRTY_SHARE`` of its rows are gone (Lance's own default for materializing deletions);
fragments deletions shrank under half of ``SEALED_ROWS`` are merged with their neighbours
(:func:`_merge_shrunk`), so the fragments stay as many as the rows held need.

A compaction is written first (:func:`prepare`, the costly part: no lock held, so the
namespace's writers go on meanwhile) and committed after (:meth:`Rewrite.commit`) as
Lance's Update, in place: each run of rewritten fragments becomes the fragment(s) written
for it, under its first ids, where it was; the rest of the run's ids are removed.  The
table's order is kept whatever lands meanwhile (an append goes after everything, as it
would have), so "the first row wins" still names the winner of a racing declare.  Every
other fragment is Lance's to keep, with the deletions other writers make meanwhile (Lance
rebases the commit over them); a delete from a rewritten fragment since the plan makes it
give up (Lance refuses one landing during the commit itself), and its files are removed.

Not an Overwrite (it takes no fragment with a deletion file, so every compaction had to
rewrite every fragment with a deleted row: at a million tables, spread deregistrations
made that about every row, ~2 s of writers held up), nor Lance's own compaction (its
Rewrite, like an Update's new fragments, goes after a concurrent append: a racing loser's
duplicate appended meanwhile would come first and take the name).  With duplicates
present everything is rewritten (in order, the later rows dropped).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterator
from dataclasses import dataclass

import pyarrow as pa

from ... import storage

#: a fragment written with this many rows (deletions since do not count) is not merged
#: again, only rewritten for its deletions (DIRTY_SHARE): a compaction rewrites about this
#: many rows, and up to twice this many per fragment with many deleted rows (appends and
#: rewrites write fragments of SEALED_ROWS to twice that: rows_per_file), whatever the
#: number of tables
SEALED_ROWS = 8_192
#: the share of a fragment's rows deleted before a compaction rewrites it for them
DIRTY_SHARE = 0.1
#: rows of shrunk fragments (see :func:`plan`) one compaction merges at most, so that a root
#: full of them (one grown before this rule, or after a mass deregistration) catches up over
#: several compactions, each as costly as any other
SHRUNK_MERGE_ROWS = 2 * SEALED_ROWS


def file_path(data_file) -> str:
    # pylance 14's DataFile.path builds a class on every call (~25 us); a delete at a
    # million tables reads ~120 of them, so the stored attribute is read when there
    return getattr(data_file, "_path", None) or data_file.path


def fragment_key(metadata) -> str:
    """What names a fragment across versions: its first data file (pylance's Overwrite of
    the whole manifest renumbers every fragment it keeps, but keeps their files)."""
    return file_path(metadata.files[0])


def files_of(fragment) -> tuple:
    """The paths of a fragment's data files: one fragment's rows, whatever its deletions."""
    return tuple(map(file_path, fragment.metadata.files))


def _identity(fragment) -> tuple:
    """What a fragment holds: its id, data files, rows and deleted rows (pylance's
    merge_insert rewrites a fragment under the same id: the files tell)."""
    meta = fragment.metadata
    d = meta.deletion_file
    return (fragment.fragment_id, files_of(fragment), meta.physical_rows,
            None if d is None else (d.id, d.read_version, d.num_deleted_rows))


def changes_since(loaded: list, fragments: list) -> tuple[list, list]:
    """(the fragments of a loaded version no longer in a newer one, the newer one's
    fragments not in the loaded one), by what each holds (:func:`_identity`): an append
    adds fragments, a delete replaces one by itself with more deletions, a compaction
    replaces a run by the fragment(s) written for it, pylance's Overwrite replaces all."""
    was = {_identity(f): f for f in loaded}  # (each fragment's identity built once: ids make them unique)
    now = {_identity(f): f for f in fragments}
    return [f for i, f in was.items() if i not in now], [f for i, f in now.items() if i not in was]


def rows_per_file(rows: int) -> int:
    """The ``max_rows_per_file`` of an append of ``rows``: as many fragments as it holds
    SEALED_ROWS, of equal size (10,000 rows: one fragment, not 8,192 and 1,808).  A
    remainder fragment of a bulk append is never merged (it is not the trailing run
    after the next append), and every fragment costs each commit: Lance's manifest
    lists them all."""
    files = max(rows // SEALED_ROWS, 1)
    return -(-rows // files)


def rows_per_rewritten_file(rows: int, fragments: int) -> int:
    """The ``max_rows_per_file`` of the rewrite of a run of ``fragments`` holding ``rows``:
    as :func:`rows_per_file`, but never more fragments than the run had (each written
    fragment takes one of the run's ids)."""
    return max(rows_per_file(rows), -(-rows // fragments))


def _sealed(meta) -> bool:
    """Whether a fragment was written with SEALED_ROWS rows or more (deletions since do not
    unseal it: a trailing run would then walk on through every fragment that lost a row,
    the whole table)."""
    return meta.physical_rows >= SEALED_ROWS


def _shrunk(meta) -> bool:
    """Whether deletions (or the rewrite for them) left a fragment under half of SEALED_ROWS."""
    return meta.num_rows < SEALED_ROWS // 2


def _worth_rewriting(meta) -> bool:
    """Whether a fragment has lost DIRTY_SHARE of its rows to deletions."""
    return meta.deletion_file is not None and meta.num_rows <= (1 - DIRTY_SHARE) * meta.physical_rows


def plan(fragments: list, everything: bool = False) -> list[bool] | None:
    """Which fragments a compaction keeps as they are (True) and which it rewrites,
    or None when nothing is worth a commit.

    Rewritten: the trailing run (from the newest fragment back, an older one joins
    while it holds no more rows than those gathered after it and is not sealed: a
    binary counter), every fragment that lost DIRTY_SHARE of its rows (any fewer
    deletions stay where they are, as Lance's deletion files), shrunk fragments
    beside each other or beside one rewritten anyway (:func:`_merge_shrunk`), or,
    with ``everything``, all of them."""
    if everything:
        return [False] * len(fragments)
    keep = [not _worth_rewriting(f.metadata) for f in fragments]
    gathered = run = 0
    for i in range(len(fragments) - 1, -1, -1):
        rows = fragments[i].metadata.num_rows
        if _sealed(fragments[i].metadata) or (run and rows > gathered):
            break
        keep[i] = False
        gathered += rows
        run += 1
    if run == 1 and not _worth_rewriting(fragments[-1].metadata):
        keep[-1] = True  # one small fragment on its own: merging it changes nothing
    # (the binary counter's young fragments come after the newest sealed one: not shrunk, growing)
    newest_sealed = max((i for i, f in enumerate(fragments) if _sealed(f.metadata)), default=0)
    _merge_shrunk(fragments[:newest_sealed], keep)
    return None if all(keep) else keep


def _merge_shrunk(older: list, keep: list[bool]) -> None:
    """Mark for rewriting (in ``keep``) the shrunk fragments among ``older`` (those before the
    newest sealed fragment) that a merge makes fewer: a fragment is shrunk when deletions left
    it under half of SEALED_ROWS.  Deletions shrink sealed fragments for good (a rewrite for them
    writes fewer rows, and nothing else merges them): under steady deregistrations a
    namespace would keep a fragment for every SEALED_ROWS rows it ever held, not for every
    SEALED_ROWS it holds, and every commit lists every fragment.  A run of two or more, or
    one beside a fragment rewritten anyway, is rewritten with its neighbours (a run of
    rewritten fragments becomes as few fragments as :func:`rows_per_rewritten_file` makes of it),
    up to SHRUNK_MERGE_ROWS rows per compaction."""
    budget, i = SHRUNK_MERGE_ROWS, 0
    while i < len(older):
        if not _shrunk(older[i].metadata):
            i += 1
            continue
        end = i
        while end < len(older) and _shrunk(older[end].metadata):
            end += 1
        beside_a_rewrite = (i > 0 and not keep[i - 1]) or (end < len(keep) and not keep[end])
        if end - i >= 2 or beside_a_rewrite:
            for k in range(i, end):
                rows = older[k].metadata.num_rows
                if rows > budget:
                    return
                budget -= rows
                keep[k] = False
        i = end


def first_rows(rows: pa.Table) -> pa.Table:
    """The rows whose object_id was not seen before, in table order ("the first row wins")."""
    first: dict[str, int] = {}
    for i, oid in enumerate(rows.column("object_id").to_pylist()):
        first.setdefault(oid, i)
    return rows.take(sorted(first.values())) if len(first) < rows.num_rows else rows


@dataclass
class Rewrite:
    """A compaction written but not committed (:func:`prepare`): the fragments it rewrites
    (as planned), and per run of them, their ids, the fragments written for them and the
    object_ids of their rows, in order."""

    version: int  # the version planned on
    rewritten: dict[int, tuple]  # fragment id -> identity (to check what changed since)
    runs: list[tuple[list[int], list, pa.ChunkedArray]]
    uri: str
    storage_options: dict | None

    @property
    def written(self) -> list:
        return [meta for _, written, _ in self.runs for meta in written]

    def replaced_files(self) -> list[str]:
        """The first data file of each rewritten fragment (what names it across versions)."""
        return [files[0] for _, files, _, _ in self.rewritten.values()]

    def placed(self) -> Iterator[tuple[int, object, list[str]]]:
        """Each fragment written: the id it takes, its metadata, the object_ids of its rows."""
        for ids, written, oids in self.runs:
            rows = iter(oids.to_pylist())
            for fragment_id, metadata in zip(ids, written):  # in order, physical_rows each
                yield fragment_id, metadata, list(itertools.islice(rows, metadata.physical_rows))

    def unchanged_in(self, fragments: list) -> bool:
        """Whether every rewritten fragment is in ``fragments`` (a newer version's) as planned:
        a delete of one of its rows since, or another compaction, and the commit would lose
        or duplicate rows."""
        by_id = {f.fragment_id: f for f in fragments}
        return all(fid in by_id and _identity(by_id[fid]) == planned for fid, planned in self.rewritten.items())

    def commit(self, base):
        """Commit in place on top of ``base`` (a dataset object of the caller's own, at the
        latest version): each run's first ids hold what was written for it, its other ids
        go.  No retries: Lance refuses it when a commit landing meanwhile deleted from a
        rewritten fragment, and rebases it over any other (an append stays after)."""
        from lance.dataset import LanceDataset, LanceOperation

        updated, removed = [], []
        for ids, written, _ in self.runs:
            updated += [dataclasses.replace(meta, id=fid) for fid, meta in zip(ids, written)]
            removed += ids[len(written):]
        op = LanceOperation.Update(removed_fragment_ids=removed, updated_fragments=updated)
        return LanceDataset.commit(base, op, read_version=base.version, max_retries=0,
                                   storage_options=self.storage_options)

    def discard(self) -> None:
        storage.remove_data_files(self.uri, self.storage_options, self.written)


def prepare(ds, uri: str, storage_options: dict | None, duplicates: bool) -> Rewrite | None:
    """Plan a compaction of ``ds`` (a dataset object of the caller's own, at the version
    it plans on) and write the rewritten rows: None when nothing is worth a commit.  This
    is the costly part (it reads and writes the trailing run, under twice ``SEALED_ROWS``
    rows, and each fragment that lost many rows) and needs no lock; on failure the files
    it wrote are removed and the error raised."""
    import lance

    fragments = ds.get_fragments()
    keep = plan(fragments, everything=duplicates)
    if keep is None:
        return None
    done = Rewrite(ds.version, {f.fragment_id: _identity(f) for f, kept in zip(fragments, keep) if not kept}, [],
                   uri, storage_options)
    runs = [[f for f, _ in run] for kept, run in itertools.groupby(zip(fragments, keep), key=lambda p: p[1])
            if not kept]
    try:
        for run in runs:
            rows = ds.scanner(fragments=run, scan_in_order=True).to_table()
            rows = first_rows(rows) if duplicates else rows
            written = []
            if rows.num_rows:
                written = lance.fragment.write_fragments(
                    rows, uri, schema=ds.schema, data_storage_version=ds.data_storage_version,
                    max_rows_per_file=rows_per_rewritten_file(rows.num_rows, len(run)),
                    storage_options=storage_options)
            done.runs.append(([f.fragment_id for f in run], written, rows.column("object_id")))
    except BaseException:
        done.discard()
        raise
    return done
