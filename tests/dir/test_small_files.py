"""small_files: the marker files of declarations, with the fewest system calls."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from lance_ns.impls.dir import small_files


@pytest.fixture
def mknods(monkeypatch):
    """The paths small_files made with mknod."""
    made, plain = [], os.mknod
    monkeypatch.setattr(small_files.os, "mknod", lambda path, *a, **k: made.append(path) or plain(path, *a, **k))
    return made


def test_an_empty_marker_is_made_by_mknod_with_its_directory(tmp_path, mknods):
    path = str(tmp_path / "t.lance" / ".lance-reserved")
    assert small_files.write(path, b"") is True
    assert mknods == [path] and open(path, "rb").read() == b"" and os.path.isfile(path)


def test_exclusive_and_overwriting_writes_of_an_existing_marker(tmp_path, mknods):
    path = tmp_path / "t.lance" / ".lance-reserved"
    path.parent.mkdir()
    path.write_bytes(b"reserved")  # as pylance writes it
    assert small_files.write(str(path), b"", exclusive=True) is False
    assert path.read_bytes() == b"reserved", "an exclusive write leaves what is there"
    assert small_files.write(str(path), b"") is True
    assert path.read_bytes() == b"", "an overwrite leaves what it was asked to write"


def test_where_mknod_is_refused_the_file_is_opened_and_closed(tmp_path, monkeypatch):
    def refused(*args, **kwargs):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(small_files.os, "mknod", refused)
    path = tmp_path / "t.lance" / ".lance-reserved"
    assert small_files.write(str(path), b"") is True and path.read_bytes() == b""
    assert small_files.write(str(path), b"", exclusive=True) is False
    assert small_files.write(str(tmp_path / "u" / "m"), b"body") is True and (tmp_path / "u" / "m").read_bytes() == b"body"


def test_the_helper_opens_each_parent_once_and_makes_missing_parents_whole(tmp_path, monkeypatch):
    root = tmp_path / "root"
    root.mkdir()
    opened, plain_open = [], os.open
    monkeypatch.setattr(small_files.os, "open", lambda path, flags, *a, **k: (
        opened.append(path) if flags & os.O_DIRECTORY else None) or plain_open(path, flags, *a, **k))
    parents = small_files.Parents()
    for i in range(5):
        parents.write(os.fsencode(root / f"t{i}" / ".lance-reserved"), b"")
    parents.write(os.fsencode(root / "deep" / "er" / "x" / ".lance-reserved"), b"")  # its parent is missing
    assert opened == [os.fsencode(root), os.fsencode(root / "deep" / "er")]
    assert sorted(p.name for p in root.iterdir()) == ["deep", "t0", "t1", "t2", "t3", "t4"]
    assert all((root / f"t{i}" / ".lance-reserved").read_bytes() == b"" for i in range(5))
    assert (root / "deep" / "er" / "x" / ".lance-reserved").is_file()


def test_the_helper_process_writes_every_path_and_tells_the_errno_of_a_failure(tmp_path):
    (tmp_path / "blocked").write_text("a file where a directory would go")
    paths = [tmp_path / "a" / ".lance-reserved", tmp_path / "b" / "c" / ".lance-reserved"]
    feed = b"".join(os.fsencode(p) + b"\0" for p in paths)
    run = subprocess.run([sys.executable, "-I", "-S", small_files.__file__, ""], input=feed, capture_output=True)
    assert run.returncode == 0, run.stderr
    assert all(p.read_bytes() == b"" for p in paths)
    bad = os.fsencode(tmp_path / "blocked" / ".lance-reserved") + b"\0"
    run = subprocess.run([sys.executable, "-I", "-S", small_files.__file__, ""], input=bad, capture_output=True)
    assert run.returncode == 1 and run.stderr.decode().strip().splitlines()[-1].startswith("20 ")  # ENOTDIR
