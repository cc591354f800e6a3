"""Every claimed Python works: the package (built as a wheel, as pip would) is installed into a
fresh venv of the oldest and of the newest claimed interpreter present on this machine, which
runs a round trip (tests/packaging/roundtrip.py).  The claimed versions are the pyproject's
``Programming Language :: Python :: 3.X`` classifiers.  Installs go through ``uv`` and its
cache (tests/packaging/install.py): seconds per interpreter after the first run."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import pytest

from .install import clean_env, fresh_venv

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
ROUNDTRIP = Path(__file__).with_name("roundtrip.py")


def claimed_versions() -> list[tuple[int, int]]:
    classifiers = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["classifiers"]
    found = (re.fullmatch(r"Programming Language :: Python :: 3\.(\d+)", c) for c in classifiers)
    return sorted((3, int(m.group(1))) for m in found if m)


def candidates(version: tuple[int, int]) -> list[str]:
    """Where an interpreter of ``version`` may be: PATH, then pyenv's versions (newest patch first)."""
    name = "python%d.%d" % version
    pyenv_root = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")
    pyenv = sorted(pyenv_root.glob("versions/%d.%d.*/bin/%s" % (*version, name)), reverse=True)
    return [p for p in [shutil.which(name), *map(str, pyenv)] if p]


@lru_cache(maxsize=None)
def interpreter(version: tuple[int, int]) -> str | None:
    """A working interpreter of ``version`` with venv, or None (a pyenv shim of a version that
    is installed but not selected fails, so each candidate is run)."""
    for exe in candidates(version):
        probe = subprocess.run(
            [exe, "-c", "import sys, venv; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True, text=True, timeout=60,
        )
        if probe.returncode == 0 and probe.stdout.strip() == "%d.%d" % version:
            return exe
    return None


@pytest.mark.parametrize("which", ["oldest", "newest"])
def test_installs_and_round_trips_on_claimed_python(which, lance_ns_wheel, tmp_path):
    claimed = claimed_versions()
    present = [v for v in claimed if interpreter(v)]
    label = ", ".join("%d.%d" % v for v in claimed)
    if not present:
        pytest.skip(f"none of the claimed Pythons ({label}) is on PATH or under $PYENV_ROOT/versions")
    if which == "newest" and len(present) == 1:
        pytest.skip("only one claimed Python (%d.%d) is present; the 'oldest' case covers it" % present[0])
    version = present[0] if which == "oldest" else present[-1]
    absent = [v for v in claimed if v not in present]
    if absent:
        print("claimed but absent here:", ", ".join("%d.%d" % v for v in absent))

    venv = tmp_path / "venv"
    python = str(fresh_venv(venv, f"{lance_ns_wheel}[server,rest]", interpreter(version)) / "python")
    env = clean_env()

    work = tmp_path / "work"
    work.mkdir()
    done = subprocess.run(
        [python, str(ROUNDTRIP), str(work)], cwd=work, capture_output=True, text=True, timeout=300, env=env,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    ok = done.stdout.strip().splitlines()[-1].split()
    assert ok[:3] == ["round", "trip", "ok"] and ok[3] == "%d.%d" % version, done.stdout
    assert Path(ok[4]).is_relative_to(venv), ok[4]  # the installed wheel, not the work tree


def test_the_wheel_carries_the_spark_bridge_jar_of_every_supported_minor(lance_ns_wheel):
    """Built with the wheel from the sources in it: a JRE-only machine installing the wheel runs
    the JVM path (tests/spark/test_supported_range.py runs it on a JRE)."""
    import zipfile

    from lance_ns.spark import jar

    with zipfile.ZipFile(lance_ns_wheel) as wheel:
        for minor in jar.SPARK_RELEASES:
            name = f"lance_ns/spark/lance-ns-spark-{minor}.jar"
            assert name in wheel.namelist(), f"the wheel has no {name}"
            with zipfile.ZipFile(wheel.open(name)) as bridge:
                assert "lancens/spark/LanceProvider.class" in bridge.namelist()
                assert bridge.read("META-INF/lance-ns/sources.sha256").decode().strip() == jar.sources_digest()
