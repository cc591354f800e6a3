"""Fixtures for the ``lance-ns`` command tests: run ``main([...])`` in-process."""

from __future__ import annotations

import io
import json
import os
from dataclasses import dataclass

import pytest

from lance_ns.cli import main


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch, tmp_path):
    """No LANCE_NS_* variable or user config file leaks into a test."""
    for key in list(os.environ):
        if key.startswith("LANCE_NS"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("LANCE_NS_CONFIG", str(tmp_path / "absent-config.toml"))
    monkeypatch.delenv("FORCE_COLOR", raising=False)


@dataclass
class Result:
    rc: int
    out: str
    err: str

    def json(self):
        return json.loads(self.out)


def run_cli(*argv: str) -> Result:
    """``lance-ns ARGS`` in-process: exit code, stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    rc = main([str(a) for a in argv], stdout=out, stderr=err)
    return Result(rc, out.getvalue(), err.getvalue())


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture
def lake(tmp_path):
    """Connection options for a fresh directory namespace."""
    root = tmp_path / "lake"
    root.mkdir()
    return ["--impl", "dir", "--prop", f"root={root}"]
