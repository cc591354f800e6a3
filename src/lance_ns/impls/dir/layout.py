"""The directory namespace's files: names, markers and small file operations.

The layout is pylance's own ``lance.namespace.DirectoryNamespace`` (Rust):

* ``<root>/<name>.lance``: a root-level table (found by listing the root);
* ``<root>/<hash8>_<ns$...$name>``: a table of a nested namespace, found
  through the ``__manifest`` table (its ``location`` column, relative to root);
* ``<table dir>/.lance-reserved``: a declared table (no data yet);
* ``<table dir>/.lance-deregistered``: a root-level table taken out of the
  namespace while its data stays;
* ``<root>/<name>/``: the seed spec's bare table directories, recognised too;
* ``<root>/_lance_ns/``: lance-ns's own files (the version history of
  implementation-managed tables), which no pylance client reads.

File access goes through :class:`Files`: ``os`` on local disk (fast, with
``O_EXCL`` for create-if-absent) and ``pyarrow.fs`` for object stores.
"""

from __future__ import annotations

import logging
import os
import random
import shutil
import subprocess
import sys
from urllib.parse import urlparse

from ... import storage
from . import small_files

MANIFEST_DIR = "__manifest"
#: lance-ns's own Lance table of the published versions of implementation-managed tables,
#: kept out of ``__manifest`` (pylance's DirectoryNamespace refuses rows it does not know);
#: pylance lists only ``<name>.lance`` root directories, and ours never a ``_``-prefixed one
VERSIONS_STORE_DIR = "_lance_ns/table_versions"
TABLE_SUFFIX = ".lance"
RESERVED = ".lance-reserved"
DEREGISTERED = ".lance-deregistered"
#: in a root table's directory registered without the manifest (where no entry can record
#: its owner): the data is not lance-ns's, and a drop keeps it
REGISTERED = ".lance-ns-registered"
#: Empty: the spec names the marker files, not their content, and pylance (which writes
#: "reserved") tests only that they exist.  An empty file costs the disk an inode; eight
#: bytes cost a data block as well, which took a bulk declaration at 1M tables from ~15k
#: markers/s to ~9k/s here (ext4).
MARKER_BODY = b""
VERSIONS_DIR = "_versions"
#: the manifest's object_id delimiter; names must not contain it
ID_DELIMITER = "$"


def object_id(parts: list[str]) -> str:
    return ID_DELIMITER.join(parts)


def nested_dir_name(oid: str) -> str:
    """A fresh directory name for a nested table, as pylance makes them.

    The random prefix spreads object-store keys and keeps a re-created table
    from landing in a half-deleted old directory.
    """
    return f"{random.getrandbits(32):08x}_{oid}"  # (secrets' getrandom call was 9% of a bulk declare)


is_local = storage.is_local


#: concurrent small writes to an object store (Files.write_many)
_WRITE_THREADS = 8
#: from this many marker files a bulk declaration on local disk writes them from a helper
#: process (:class:`MarkerWriter`); below it, starting one (~12 ms) costs more than it saves
HELPER_MARKERS = 1_000
#: how many helper processes write them (:class:`MarkerWriter`)
MARKER_HELPERS = 2

log = logging.getLogger(__name__)


class Files:
    """Small file operations relative to absolute locations."""

    def __init__(self, root: str, storage_options: dict[str, str]):
        self.root = root
        self.local = is_local(root)
        self.storage_options = storage_options
        self._fs = None

    # -- pyarrow.fs (object stores) ------------------------------------------
    def _remote(self, location: str):
        if self._fs is None:
            self._fs, _ = storage.filesystem(location, self.storage_options)
        parsed = urlparse(location)
        return self._fs, (parsed.netloc + parsed.path).rstrip("/")

    def local_path(self, location: str) -> str:
        """The path of a location on this machine's disk (of a local root)."""
        return urlparse(location).path if location.startswith("file://") else location

    # -- operations ------------------------------------------------------------
    def list_dir(self, location: str) -> list[tuple[str, bool]]:
        """(name, is_dir) of the direct children; [] when missing."""
        if self.local:
            try:
                with os.scandir(self.local_path(location)) as it:
                    return [(e.name, e.is_dir()) for e in it]
            except (FileNotFoundError, NotADirectoryError):
                return []
        import pyarrow.fs as pafs

        fs, path = self._remote(location)
        try:
            infos = fs.get_file_info(pafs.FileSelector(path, allow_not_found=True))
        except FileNotFoundError:
            return []
        return [(i.base_name, i.type == pafs.FileType.Directory) for i in infos]

    def kind(self, location: str) -> str | None:
        """'dir', 'file' or None."""
        if self.local:
            p = self.local_path(location)
            if os.path.isdir(p):
                return "dir"
            return "file" if os.path.exists(p) else None
        import pyarrow.fs as pafs

        fs, path = self._remote(location)
        t = fs.get_file_info(path).type
        if t == pafs.FileType.Directory:
            return "dir"
        if t == pafs.FileType.File:
            return "file"
        return None

    def exists(self, location: str) -> bool:
        return self.kind(location) is not None

    def write(self, location: str, data: bytes, exclusive: bool = False) -> bool:
        """Write a small file; with ``exclusive`` only if absent (False if it was there).

        Exclusive creation is atomic on local disk (O_EXCL); on object stores it
        is check-then-put, so callers needing one winner decide it elsewhere
        (the manifest's conditional commit).
        """
        if self.local:
            return small_files.write(self.local_path(location), data, exclusive)
        if exclusive and self.exists(location):
            return False
        fs, path = self._remote(location)
        with fs.open_output_stream(path) as out:
            out.write(data)
        return True

    def write_many(self, locations: list[str], data: bytes) -> None:
        """Write one small file at each location (a bulk declaration's markers, overwritten
        if there). On an object store by a pool of threads: each is a small request whose
        latency, not CPU, is the cost. On local disk in turn, with the fewest system calls:
        threads only contend for the parent directory's lock (measured: 10.7k markers/s
        from one thread, 7.9k/s from eight)."""
        if not self.local:
            from concurrent.futures import ThreadPoolExecutor

            def write(chunk):
                for location in chunk:
                    self.write(location, data)

            with ThreadPoolExecutor(_WRITE_THREADS) as pool:
                list(pool.map(write, [locations[i::_WRITE_THREADS] for i in range(_WRITE_THREADS)]))
            return
        for location in locations:
            small_files.write(self.local_path(location), data)

    def marker_writer(self, count: int, data: bytes) -> "MarkerWriter":
        """Where a bulk declaration of ``count`` tables writes its marker files, fed as
        the tables are planned (:class:`MarkerWriter`)."""
        return MarkerWriter(self, data, helper=self.local and count >= HELPER_MARKERS)

    def delete_file(self, location: str) -> None:
        if self.local:
            try:
                os.remove(self.local_path(location))
            except (FileNotFoundError, NotADirectoryError):  # (a file where a directory of the path would be)
                pass
            return
        fs, path = self._remote(location)
        try:
            fs.delete_file(path)
        except FileNotFoundError:
            pass

    def delete_tree(self, location: str) -> None:
        if self.local:
            shutil.rmtree(self.local_path(location), ignore_errors=True)
            return
        storage.delete_location(location, self.storage_options)

    def has_versions(self, location: str) -> bool:
        """Whether a table directory holds Lance data (any committed version)."""
        return any(not d for _, d in self.list_dir(storage.join(location, VERSIONS_DIR)))


class MarkerWriter:
    """The marker files of a bulk declaration: ``add`` each as its table is planned,
    ``finish`` once the entries are committed (raises if one could not be written),
    ``abandon`` when the declaration failed (removes those written).

    On local disk a bulk is bound by the kernel's work of creating a directory and a file
    (~90 us each here, nearly all system time) and by Python's planning and commit.  A
    thread does not overlap them: after each system call it must take back the GIL the
    planning holds.  Helper processes do: they write the markers as this one plans them,
    so a bulk costs the longer of the two, not their sum (measured on tmpfs, 20,000
    markers beside a Python loop standing in for the planning: 26k/s written after it,
    20-27k/s by a thread, 41-46k/s by a helper).  Two helpers, not one: the creations
    in the root serialize on its lock, but each marker goes into a directory of its own,
    and one helper fed by a planning process on the other core fell to 0.7 of what it
    did alone (ext4 here, 20,000 markers: one process 11.2-13.7k/s, two 17.7-18.3k/s;
    bulk declarations into 50,000 tables, alternating: one helper 5.6-8.8k/s, two
    9.3-10.4k/s; a run of two, three and four was too noisy to rank them, and two
    leave the planning a core on a 2-core machine).
    The spec's DeclareTable writes the marker before the manifest row; a bulk's markers
    are all written before it returns, and an entry whose marker failed is withdrawn.
    Elsewhere (object stores, small batches) they are written at ``finish``, by
    :meth:`Files.write_many`."""

    def __init__(self, files: Files, data: bytes, helper: bool):
        self.files, self.data = files, data
        self.locations: list[str] = []
        self._procs = self._start() if helper else []
        self._broken = False  # a helper stopped reading: its error is told by finish()

    def _start(self) -> list:
        procs = []
        for _ in range(MARKER_HELPERS):
            try:
                procs.append(subprocess.Popen([sys.executable, "-I", "-S", small_files.__file__, self.data.decode()],
                                              stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
            except OSError as e:  # no interpreter to start: the ones started (or finish()) write them
                log.debug("marker helper not started (%s)", e)
                break
        return procs

    def add(self, table_location: str) -> None:
        self.locations.append(table_location)
        if self._procs and not self._broken:
            # (a local path: joined by hand, a bulk joins thousands)
            marker = self.files.local_path(table_location).rstrip("/") + "/" + RESERVED
            try:  # in turn: each helper's markers are in directories of their own
                self._procs[len(self.locations) % len(self._procs)].stdin.write(os.fsencode(marker) + b"\0")
            except BrokenPipeError:
                self._broken = True

    def finish(self) -> None:
        if not self._procs:
            self.files.write_many([storage.join(location, RESERVED) for location in self.locations], self.data)
            return
        error = self._stop()
        if error is not None:  # its errno kept: a name too long for the disk is the caller's error (13)
            code, _, message = error.partition(" ")
            raise OSError(int(code) if code.isdigit() else 0,
                          f"writing the marker files of a bulk declaration failed: {message or error}")

    def _stop(self) -> str | None:
        """Wait for the helpers; the first error one told (the last line it printed), or None."""
        procs, self._procs, errors = self._procs, [], []
        for proc in procs:
            try:
                proc.stdin.close()
            except BrokenPipeError:
                pass
        for proc in procs:
            err = proc.stderr.read().decode(errors="replace").strip()
            if proc.wait() != 0:
                errors.append(err.splitlines()[-1] if err else f"0 a helper exited with {proc.returncode}")
        return errors[0] if errors else None

    def abandon(self) -> None:
        """Remove the markers of a declaration that failed, and the directories they made
        (a directory holding anything else stays)."""
        self._stop()
        for location in self.locations:
            self.files.delete_file(storage.join(location, RESERVED))
            if self.files.local:
                try:
                    os.rmdir(self.files.local_path(location))
                except OSError:
                    pass
