"""A directory's stamp: one stat() in place of a listing, only when a listing would find the same."""

from __future__ import annotations

import os
import time

import pytest

from lance_ns import directory_stamp
from lance_ns.directory_stamp import STAMPED_FILESYSTEMS, DirectoryStamp, filesystem_type, stamps_hold

#: a window short enough for a test to wait out, still many clock ticks long
WINDOW_NS = 50_000_000

MOUNTINFO = """\
22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 0:25 / / rw,relatime - overlay overlay rw,lowerdir=/l,upperdir=/u
31 27 0:31 / /mnt/lake rw,relatime - nfs4 server:/lake rw,vers=4.2
32 31 0:32 / /mnt/lake/fast rw,relatime - ext4 /dev/sdb1 rw
33 27 0:33 / /mnt/with\\040space rw - fuse.s3fs s3fs rw
"""


@pytest.fixture
def short_window(monkeypatch):
    monkeypatch.setattr(directory_stamp, "RACY_NS", WINDOW_NS)


def still(seconds: float = WINDOW_NS * 2 / 1e9) -> None:
    """Let the directory's last change fall out of the window."""
    time.sleep(seconds)


def test_the_filesystem_is_the_longest_mount_point_holding_the_path():
    assert filesystem_type("/srv/x", MOUNTINFO) == "overlay"
    assert filesystem_type("/mnt/lake/t", MOUNTINFO) == "nfs4"
    assert filesystem_type("/mnt/lake/fast/t", MOUNTINFO) == "ext4"
    assert filesystem_type("/mnt/lakehouse", MOUNTINFO) == "overlay"  # a prefix of a name is no mount point
    assert filesystem_type("/mnt/with space/t", MOUNTINFO) == "fuse.s3fs"
    # stamps are trusted on local disks only: an NFS or FUSE stat() may be a cache's answer
    assert {"overlay", "ext4"} <= STAMPED_FILESYSTEMS and not {"nfs4", "fuse.s3fs", "cifs"} & STAMPED_FILESYSTEMS


def test_a_stamp_is_trusted_only_after_the_directory_was_still(tmp_path, short_window):
    stamp = DirectoryStamp(str(tmp_path), trusted=True)
    (tmp_path / "a").write_text("")
    token = stamp.before_listing()  # changed just now: a change in this same tick could go unseen
    stamp.after_listing(token, 1)
    assert not stamp.unchanged(1)
    still()
    token = stamp.before_listing()
    stamp.after_listing(token, 1)
    assert stamp.unchanged(1) and not stamp.unchanged(2)


@pytest.mark.parametrize("change", ["add", "remove", "rename in", "rename out", "subdirectory"])
def test_every_change_of_the_entries_is_seen(tmp_path, short_window, change):
    (tmp_path / "kept").write_text("")
    (tmp_path / "old").write_text("")
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.write_text("")
    directory = tmp_path
    still()
    stamp = DirectoryStamp(str(directory), trusted=True)
    stamp.after_listing(stamp.before_listing(), "listed")
    assert stamp.unchanged("listed")
    if change == "add":
        (directory / "new").write_text("")
    elif change == "remove":
        (directory / "old").unlink()
    elif change == "rename in":
        os.rename(outside, directory / "moved")
    elif change == "rename out":
        os.rename(directory / "old", outside.with_name(outside.name + "2"))
    else:
        (directory / "sub").mkdir()
    assert not stamp.unchanged("listed")


def test_a_file_written_in_place_is_no_change_of_the_directory(tmp_path, short_window):
    """(What a Lance commit never does: it adds a version file.  Shown so the stamp's reach is plain.)"""
    (tmp_path / "f").write_text("a")
    still()
    stamp = DirectoryStamp(str(tmp_path), trusted=True)
    stamp.after_listing(stamp.before_listing(), "listed")
    (tmp_path / "f").write_text("b")
    assert stamp.unchanged("listed")


def test_an_untrusted_filesystem_is_listed_every_time(tmp_path, short_window):
    still()
    stamp = DirectoryStamp(str(tmp_path), trusted=False)
    stamp.after_listing(stamp.before_listing(), "listed")
    assert not stamp.unchanged("listed")


def test_a_missing_directory_is_never_unchanged(tmp_path, short_window):
    stamp = DirectoryStamp(str(tmp_path / "absent"), trusted=True)
    stamp.after_listing(stamp.before_listing(), "listed")
    assert not stamp.unchanged("listed")


def test_this_machines_temporary_directories_are_trusted(tmp_path):
    """CI and the development machines keep tables on a local filesystem: the stamp is in use
    there (else the tests of the manifest's use of it prove nothing)."""
    kind = filesystem_type(str(tmp_path))
    if kind is None:
        pytest.skip("no /proc/self/mountinfo (not Linux): stamps are not used here")
    assert stamps_hold(str(tmp_path)) == (kind in STAMPED_FILESYSTEMS)
    assert kind in STAMPED_FILESYSTEMS, f"{tmp_path} is on {kind}"
