"""Fixtures shared across test folders."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def lance_ns_wheel(tmp_path_factory):
    """The package as a wheel, built once for every install test of the session."""
    from tests.packaging.install import build_wheel

    return build_wheel(tmp_path_factory.mktemp("wheel"))
