"""A small file written into a directory made for it, with the fewest system calls (a
bulk declaration writes thousands of marker files).

Standard library only: run as a script (``python -I -S small_files.py BODY``) this file
is the helper process of :class:`.layout.MarkerWriter`, which must start in milliseconds.
"""

from __future__ import annotations

import os
import sys


def write(path: str | bytes, data: bytes, exclusive: bool = False) -> bool:
    """Write ``data`` at ``path``, making its directory; with ``exclusive`` only if the file
    is absent (False if it was there), else overwriting it."""
    try:
        os.mkdir(os.path.dirname(path))
    except FileExistsError:
        pass
    except FileNotFoundError:  # a parent missing too (a nested location)
        os.makedirs(os.path.dirname(path), exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | (os.O_EXCL if exclusive else os.O_TRUNC), 0o644)
    except FileExistsError:
        return False
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)
    return True


def serve(data: bytes) -> None:
    """The helper: ``data`` written at each NUL-separated path read from stdin, as they
    come.  An OSError is told as "errno message" on stderr's last line, exit status 1."""
    stdin, tail = sys.stdin.buffer, b""
    try:
        while chunk := stdin.read1(1 << 16):
            *paths, tail = (tail + chunk).split(b"\0")
            for path in paths:
                write(path, data)
    except OSError as e:
        sys.stderr.write(f"\n{e.errno or 0} {e}\n")
        sys.exit(1)


if __name__ == "__main__":
    serve(sys.argv[1].encode())
