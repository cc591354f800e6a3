"""The repository's tracked files, for the tests that read docs and sources."""

from __future__ import annotations

import shutil
import subprocess
from functools import lru_cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@lru_cache(maxsize=1)
def tracked_files() -> tuple[str, ...]:
    """Repository-relative paths of every tracked file (skips outside a git checkout, e.g. an sdist)."""
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout: the tracked-file list comes from `git ls-files`")
    out = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO, check=True, capture_output=True
    ).stdout.decode()
    return tuple(p for p in out.split("\0") if p)


def tracked_text(path: str) -> str | None:
    """The file's text, or None for a binary (non-UTF-8 or NUL-carrying) or deleted file."""
    try:
        data = (REPO / path).read_bytes()
    except FileNotFoundError:  # deleted in the work tree, not yet committed
        return None
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None
