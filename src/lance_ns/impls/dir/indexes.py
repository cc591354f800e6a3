"""What the manifest's in-memory view indexes besides its entries: the children of each
namespace, sorted, and the root directories entries live in.  Both are built from a
loaded manifest without a pass over every entry that costs a request seconds at a million
tables, and kept up to date by each change of the view (:class:`.view.ManifestView`).

* Children: (parent, kind) -> sorted names.  A parent of few children holds a
  :class:`FewNames` (a sorted list), a larger one a ``SortedList``: at 100,000 namespaces
  of 10 tables the index is 100,000 of them, and building a ``SortedList`` costs ~9 us
  against ~0.3 us for a list (the first listing or DropNamespace after a load waited
  2.5 s for the index there).
* Root directories: a directory of the root is *held* when an entry's location lies in
  it (it is then not a root table of its own: ``dir_listing_enabled``).  Nearly every
  entry lives in the directory named after it (``<name>.lance``, ``<hash8>_<object_id>``,
  a bare ``<name>``), which is found from the directory's name (:func:`owners`); only the
  others are counted (:class:`Counter`), so the view holds a few of them, not a
  million directory names (~130 MB, and 1.8 s to count on the first CreateNamespace
  after a load at 1M tables).
"""

from __future__ import annotations

import bisect
from collections import Counter
from typing import Callable, Iterator

import pyarrow as pa
import pyarrow.compute as pc
from sortedcontainers import SortedList

from .layout import ID_DELIMITER, TABLE_SUFFIX

#: from this many children a parent's names are a SortedList (O(log n) inserts at a
#: million; one SortedList chunk is 1,000 names, so below this a list is as quick)
MANY = 2_000
#: ``<hash8>_<object_id>``: a nested table's directory (layout.nested_dir_name)
_HASH = 8


class FewNames(list):
    """The sorted names of a parent's few children, with the part of ``SortedList``'s API
    the manifest uses (a list subclass: built at the cost of a list)."""

    __slots__ = ()

    def bisect_right(self, name: str) -> int:
        return bisect.bisect_right(self, name)

    def islice(self, start: int, stop: int) -> Iterator[str]:
        return iter(self[start:stop])

    def __contains__(self, name: object) -> bool:
        i = bisect.bisect_left(self, name)
        return i < len(self) and self[i] == name

    def add(self, name: str) -> None:
        bisect.insort(self, name)

    def discard(self, name: str) -> None:
        i = bisect.bisect_left(self, name)
        if i < len(self) and self[i] == name:
            del self[i]


def names_of(names: list[str]) -> FewNames | SortedList:
    """A parent's children as the index holds them (:data:`MANY` decides which)."""
    return FewNames(sorted(names)) if len(names) < MANY else SortedList(names)


def add_child(index: dict, key: tuple[str, str], name: str) -> None:
    names = index.get(key)
    if names is None:
        index[key] = FewNames([name])
    elif name not in names:
        names.add(name)
        if len(names) >= MANY and isinstance(names, FewNames):
            index[key] = SortedList(names)


def children_index(kinds: Iterator[tuple[str, str]]) -> dict[tuple[str, str], FewNames | SortedList]:
    """(parent, kind) -> the sorted names of those children, from (object_id, kind) pairs
    (grouped by kind first: no key tuple built and hashed per entry, half the time)."""
    by_kind: dict[str, dict[str, list[str]]] = {}
    for oid, kind in kinds:
        parent, _, name = oid.rpartition(ID_DELIMITER)
        groups = by_kind.get(kind)
        if groups is None:
            groups = by_kind[kind] = {}
        names = groups.get(parent)
        if names is None:
            groups[parent] = [name]
        else:
            names.append(name)
    return {(parent, kind): names_of(names) for kind, groups in by_kind.items() for parent, names in groups.items()}


def root_dir(location: str | None) -> str | None:
    """The root directory a relative location lies in (None: absolute, a URI or none)."""
    if not location or "://" in location or location.startswith("/"):
        return None
    return location.split("/", 1)[0]


def is_own(oid: str, directory: str) -> bool:
    """Whether ``directory`` is one named after the entry ``oid`` (:func:`owners` finds it)."""
    return (directory == oid or directory == oid + TABLE_SUFFIX
            or (directory[_HASH:_HASH + 1] == "_" and directory[_HASH + 1:] == oid))


def owners(directory: str) -> Iterator[str]:
    """The object ids a root directory of this name may be named after (:func:`is_own`)."""
    yield directory
    if directory.endswith(TABLE_SUFFIX):
        yield directory[: -len(TABLE_SUFFIX)]
    if directory[_HASH:_HASH + 1] == "_":
        yield directory[_HASH + 1:]


def holds(others: Counter, location_of: Callable[[str], str | None], directory: str) -> bool:
    """Whether an entry lives in root directory ``directory``: one of ``others``
    (:func:`other_dirs`), or one named after it (``location_of``: an object id's location,
    None when there is no such entry)."""
    return directory in others or any(root_dir(location_of(oid)) == directory for oid in owners(directory))


def count_dir(others: Counter, oid: str, location: str | None, change: int) -> None:
    """``others`` after the entry ``oid`` at ``location`` was added (+1) or removed (-1)."""
    directory = root_dir(location)
    if directory and not is_own(oid, directory):
        others[directory] += change
        if others[directory] <= 0:
            del others[directory]


def other_dirs(pairs: Iterator[tuple[str, str | None]]) -> Counter:
    """How many entries live in each root directory not named after them, from
    (object_id, location) pairs."""
    counts: Counter = Counter()
    for oid, location in pairs:
        count_dir(counts, oid, location, +1)
    return counts


def other_dirs_of_table(table: pa.Table) -> Counter:
    """:func:`other_dirs` of a manifest's rows, computed by Arrow (~0.1 s at 1M rows,
    against ~1 s for the same pass in Python); every row counts, so the caller uses it
    only when no two rows share an object_id."""
    oid, location = table.column("object_id"), table.column("location")
    relative = pc.and_kleene(pc.invert(pc.match_substring(location, "://")), pc.invert(pc.starts_with(location, "/")))
    relative = pc.and_kleene(relative, pc.not_equal(location, ""))
    first = pc.list_element(pc.split_pattern(location, "/", max_splits=1), 0)
    own = pc.or_kleene(pc.equal(first, oid), pc.equal(first, pc.binary_join_element_wise(oid, TABLE_SUFFIX, "")))
    hashed = pc.and_kleene(pc.equal(pc.utf8_slice_codeunits(first, _HASH, _HASH + 1), "_"),
                           pc.equal(pc.utf8_slice_codeunits(first, _HASH + 1), oid))
    others = pc.filter(first, pc.and_kleene(relative, pc.invert(pc.or_kleene(own, hashed))), null_selection_behavior="drop")
    if not len(others):
        return Counter()
    counted = pc.value_counts(others)
    return Counter(dict(zip(counted.field(0).to_pylist(), counted.field(1).to_pylist())))
