"""A small file written into a directory made for it, with the fewest system calls (a
bulk declaration writes thousands of marker files).

Standard library only: run as a script (``python -I -S small_files.py BODY``) this file
is the helper process of :class:`.layout.MarkerWriter`, which must start in milliseconds.
"""

from __future__ import annotations

import os
import stat
import sys

#: An empty file made by mknod, not opened and closed: no descriptor to make and release
#: (one process, 20,000 markers into a directory of 1M: 14-16k/s against 11-14k/s).
#: Where mknod is refused (a system that wants privilege for it), open and close.
_MKNOD = hasattr(os, "mknod")


def write(path: str | bytes, data: bytes, exclusive: bool = False, dir_fd: int | None = None) -> bool:
    """Write ``data`` at ``path`` (relative to ``dir_fd`` if given), making its directory;
    with ``exclusive`` only if the file is absent (False if it was there), else
    overwriting it."""
    try:
        os.mkdir(os.path.dirname(path), dir_fd=dir_fd)
    except FileExistsError:
        pass
    except FileNotFoundError:  # a parent missing too (a nested location)
        if dir_fd is not None:
            raise
        os.makedirs(os.path.dirname(path), exist_ok=True)
    if not data and _MKNOD:
        try:
            os.mknod(path, 0o644 | stat.S_IFREG, dir_fd=dir_fd)
            return True
        except FileExistsError:
            if exclusive:
                return False
        except PermissionError:
            pass
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | (os.O_EXCL if exclusive else os.O_TRUNC), 0o644, dir_fd=dir_fd)
    except FileExistsError:
        return False
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)
    return True


class Parents:
    """Open descriptors of the directories the table directories are made in (most often
    one: the root): a call relative to one does not walk the whole path again."""

    def __init__(self):
        self._fds: dict[bytes, int | None] = {}

    def write(self, path: bytes, data: bytes) -> None:
        """``path``: absolute, normalised (``/parent/leaf/name``)."""
        # rpartition, not os.path.split: a helper's own time per marker was 18 us of ~110 (kernel's included)
        table_dir, _, name = path.rpartition(b"/")
        parent, _, leaf = table_dir.rpartition(b"/")
        fd = self._fds.get(parent, _UNOPENED)
        if fd is _UNOPENED:
            try:
                fd = os.open(parent or b"/", os.O_RDONLY | os.O_DIRECTORY)
            except OSError:  # (missing: the whole path is made, below)
                fd = None
            self._fds[parent] = fd
        if fd is None:
            write(path, data)
        elif not data and _MKNOD:  # the common case inline: mkdir and mknod, nothing else
            try:
                os.mkdir(leaf, dir_fd=fd)
            except FileExistsError:
                pass
            try:
                os.mknod(leaf + b"/" + name, 0o644 | stat.S_IFREG, dir_fd=fd)
            except (FileExistsError, PermissionError):  # (truncated, as write() does; or no mknod)
                write(leaf + b"/" + name, data, dir_fd=fd)
        else:
            write(leaf + b"/" + name, data, dir_fd=fd)


_UNOPENED = object()


def serve(data: bytes) -> None:
    """The helper: ``data`` written at each NUL-separated path read from stdin, as they
    come.  An OSError is told as "errno message" on stderr's last line, exit status 1."""
    stdin, tail, parents = sys.stdin.buffer, b"", Parents()
    try:
        while chunk := stdin.read1(1 << 16):
            *paths, tail = (tail + chunk).split(b"\0")
            for path in paths:
                parents.write(path, data)
    except OSError as e:
        sys.stderr.write(f"\n{e.errno or 0} {e}\n")
        sys.exit(1)


if __name__ == "__main__":
    serve(sys.argv[1].encode())
