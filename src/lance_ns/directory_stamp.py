"""Whether a local directory's entries changed since it was last read, from one ``stat()``.

A directory's mtime and ctime move whenever an entry is added to it, renamed into or out
of it, or removed.  So a reader that notes them before it lists the directory can later
tell, by one ``stat()`` (~1 us), that a new listing would find the same entries: the
manifest's check of its latest version is a listing of ``_versions/`` (~11 us alone, ~25 us
of CPU under a loaded server), and the root's tables a listing of the root.

Two things can make a stamp lie, and both are ruled out rather than hoped away:

* **A change in the same clock tick as the read.**  File times come from a clock that
  ticks coarsely (a few milliseconds), so a change landing in the tick a listing was
  made in may leave the times as they were.  A stamp is trusted only when the directory
  had not changed for :data:`RACY_NS` before the listing began (git's reasoning for its
  "racily clean" index entries): any later change then has a newer time.  A directory
  that changes all the time is simply listed every time, as without a stamp.
* **A filesystem whose ``stat()`` is not the disk's.**  NFS and SMB clients answer it from
  an attribute cache for seconds, FUSE filesystems (object stores mounted as files) may not
  move a directory's times at all.  Stamps are used only on the local filesystems named in
  :data:`STAMPED_FILESYSTEMS`, as ``/proc/self/mountinfo`` says; anywhere else (and off
  Linux) the directory is listed every time.

What is left: a system clock stepped back by more than :data:`RACY_NS` could give a later
change the very times (to the nanosecond, mtime and ctime alike) of the one recorded; the
next change after that is seen again.
"""

from __future__ import annotations

import functools
import os
import time
from typing import Any, Hashable

#: a listing is trusted only when the directory's last change is at least this much older
#: (file times tick coarsely: a change in a listing's own tick may not move them)
RACY_NS = 1_000_000_000
#: local filesystems whose directory times move with every entry change and whose stat()
#: answers from the disk (mountinfo's type; "overlay": containers' root filesystem)
STAMPED_FILESYSTEMS = frozenset({"ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "overlay", "zfs", "f2fs"})


def _mounts(mountinfo: str) -> list[tuple[str, str]]:
    """(mount point, filesystem type) of each line of ``/proc/self/mountinfo``."""
    mounts = []
    for line in mountinfo.splitlines():
        left, sep, right = line.partition(" - ")
        fields = left.split()
        if not sep or len(fields) < 5 or not right:
            continue
        point = fields[4].encode().decode("unicode_escape")  # (mountinfo escapes spaces as \040)
        mounts.append((point, right.split()[0]))
    return mounts


def filesystem_type(path: str, mountinfo: str | None = None) -> str | None:
    """The type of the filesystem ``path`` lies on (its longest mount point), None where
    that cannot be told (no ``/proc``: not Linux)."""
    if mountinfo is None:
        try:
            with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as f:
                mountinfo = f.read()
        except OSError:
            return None
    path = os.path.realpath(path)
    best, found = -1, None
    for point, kind in _mounts(mountinfo):
        inside = path == point or path.startswith(point.rstrip("/") + "/")
        if inside and len(point) > best:
            best, found = len(point), kind
    return found


@functools.lru_cache(maxsize=256)
def stamps_hold(path: str) -> bool:
    """Whether a directory at ``path`` (or the nearest existing parent) is on a filesystem
    whose directory stamps can be trusted (:data:`STAMPED_FILESYSTEMS`)."""
    while not os.path.exists(path) and os.path.dirname(path) != path:
        path = os.path.dirname(path)
    return filesystem_type(path) in STAMPED_FILESYSTEMS


class DirectoryStamp:
    """One directory's stamp: :meth:`unchanged` tells, by one ``stat()``, whether the
    directory is as it was when the listing that gave ``what`` was made."""

    def __init__(self, path: str, trusted: bool | None = None):
        self.path = path
        #: whether this filesystem's stamps may be trusted at all (:func:`stamps_hold`)
        self.trusted = stamps_hold(path) if trusted is None else trusted
        self._seen: tuple[Any, Hashable] | None = None  # (stamp, what the listing gave)

    def read(self) -> tuple | None:
        """The directory's stamp now (None: it is not there)."""
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_size, st.st_dev

    def unchanged(self, what: Hashable) -> bool:
        """Whether a listing now would find what the one recorded with ``what`` found."""
        seen = self._seen
        return seen is not None and seen[1] == what and seen[0] == self.read()

    def before_listing(self) -> tuple[tuple | None, int]:
        """Taken just before the directory is listed: hand it to :meth:`after_listing`."""
        return (self.read() if self.trusted else None), time.time_ns()

    def after_listing(self, token: tuple[tuple | None, int], what: Hashable) -> None:
        """The listing begun at ``token`` gave ``what``: recorded, if the directory had been
        still for :data:`RACY_NS` before it began (else forgotten: the next read lists)."""
        stamp, started = token
        if stamp is not None and max(stamp[0], stamp[1]) < started - RACY_NS:
            self._seen = (stamp, what)
        else:
            self._seen = None
