"""How a manifest table (``__manifest``, or the version store) is compacted.

Small fragments are merged and those with deleted rows rewritten, every other fragment
is reused as it is: the cost of a compaction does not grow with the number of entries.

The trailing small fragments are merged like a binary counter (:func:`plan`: fragment
sizes double towards the oldest, so a row is rewritten about log n times, and never again
once its fragment holds ``SEALED_ROWS``).  The new list keeps the table's order and is
committed as an Overwrite against the version it was planned on, without retries: Lance
refuses it if anything committed in between, and a compaction that raced a commit waits
for the next interval.  (Not Lance's own compaction: its Rewrite is accepted next to a
concurrent append and puts the merged rows after it, so a losing duplicate appended
meanwhile would come first, and "the first row wins" would hand the name to the loser.)
Lance takes a fragment into an Overwrite only without a deletion file, hence dirty
fragments are rewritten; with duplicates present everything is (in order, the later rows
dropped).
"""

from __future__ import annotations

import pyarrow as pa

from ... import storage

#: a fragment of this many rows is not merged again: a compaction rewrites about this
#: many rows, and this many per fragment with deleted rows, whatever the number of tables
SEALED_ROWS = 8_192


def plan(fragments: list, everything: bool = False) -> list[bool] | None:
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


def first_rows(rows: pa.Table) -> pa.Table:
    """The rows whose object_id was not seen before, in table order ("the first row wins")."""
    first: dict[str, int] = {}
    for i, oid in enumerate(rows.column("object_id").to_pylist()):
        first.setdefault(oid, i)
    return rows.take(sorted(first.values())) if len(first) < rows.num_rows else rows


def rewrite(ds, uri: str, storage_options: dict | None, duplicates: bool):
    """Compact ``ds`` (a dataset object of the caller's own, at the version it plans on):
    None when nothing is worth a commit, else the committed dataset and, per group of
    rewritten rows, (their object_ids, the fragments they were written to, in order).
    On failure the files it wrote are removed and the error raised."""
    import lance
    from lance.dataset import LanceDataset, LanceOperation

    fragments = ds.get_fragments()
    keep = plan(fragments, everything=duplicates)
    if keep is None:
        return None
    listed, pending, written = [], [], []
    moved: list[tuple[pa.ChunkedArray, list]] = []

    def rewrite_pending():
        if not pending:
            return
        rows = ds.scanner(fragments=pending, scan_in_order=True).to_table()
        rows = first_rows(rows) if duplicates else rows
        if rows.num_rows:
            new = lance.fragment.write_fragments(
                rows, uri, schema=ds.schema, data_storage_version=ds.data_storage_version,
                max_rows_per_file=SEALED_ROWS, storage_options=storage_options)
            written.extend(new)
            listed.extend(new)
            moved.append((rows.column("object_id"), new))
        pending.clear()

    try:
        for fragment, kept in zip(fragments, keep):
            if kept:
                rewrite_pending()
                listed.append(fragment.metadata)
            else:
                pending.append(fragment)
        rewrite_pending()
        new_ds = LanceDataset.commit(uri, LanceOperation.Overwrite(ds.schema, listed), read_version=ds.version,
                                     max_retries=0, storage_options=storage_options)
    except BaseException:
        storage.remove_data_files(uri, storage_options, written)
        raise
    return new_ds, moved
