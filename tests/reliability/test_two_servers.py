"""Two REST servers on one directory root: exactly one winner per conflict,
no 5xx, nothing acknowledged missing (see stress.py)."""

from __future__ import annotations

import os

import pytest

from .stress import run

SLOTS = int(os.environ.get("LANCE_NS_STRESS_SLOTS", "4"))


@pytest.mark.slow  # two server processes and a few hundred requests: ~30-60 s
def test_two_servers_one_root(tmp_path):
    report = run(str(tmp_path / "root"), SLOTS, threads=8)
    assert not report.problems, "\n".join(report.problems)
    assert report.conflicts >= SLOTS * 7
