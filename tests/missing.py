"""What a test does when a tool it needs is not on the machine.

On a developer's machine it skips, saying what to install.  In CI (``.ci/run`` sets
``LANCE_NS_CI=1``) it fails: CI installs everything the suite uses, so a tool missing
there is a broken CI, and a skipped test would look exactly like one that does not apply.
The one exception is an artifact a registry refuses to serve (Maven Central refusing the
Unity Catalog OSS server here): CI cannot install that, and its skip says so.
"""

from __future__ import annotations

import os
from typing import NoReturn

import pytest

#: set by .ci/run
IN_CI = os.environ.get("LANCE_NS_CI") == "1"


def missing(what: str, install: str) -> NoReturn:
    """Skip (a developer's machine) or fail (CI) for the missing ``what``; ``install`` says how to get it."""
    if IN_CI:
        pytest.fail(f"CI lacks {what}, which the suite uses ({install})", pytrace=False)
    pytest.skip(f"{what} is missing on this machine: {install}")
