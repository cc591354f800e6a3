"""Fresh installs of the package for the install tests, fast: the wheel is built once per test
session, and virtual environments are made and filled by ``uv`` (hard links from its cache
instead of pip unpacking pylance, pyarrow and friends into each venv: a fresh install takes
seconds rather than minutes).  ``uv`` resolves from the same package index pip does."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from uv import find_uv_bin

REPO = Path(__file__).resolve().parents[2]
UV = find_uv_bin()


def run(args, env=None, timeout=600, check=True) -> subprocess.CompletedProcess:
    done = subprocess.run([str(a) for a in args], capture_output=True, text=True, env=env, timeout=timeout)
    if check:
        assert done.returncode == 0, (args, done.stdout[-3000:], done.stderr[-3000:])
    return done


def clean_env() -> dict[str, str]:
    """This process's environment without what would leak our venv or work tree into another."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}


def build_wheel(dest: Path) -> Path:
    """The package built into a wheel from a copy of the sources (the build leaves no trace in the repo)."""
    src = dest / "source"
    src.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(REPO / name, src / name)
    # (the Spark bridge jars an editable install built in the work tree are left out: the
    # build makes its own, as it does on a machine that never had the work tree)
    shutil.copytree(REPO / "src", src / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "*.jar"))
    dist = dest / "dist"
    run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--disable-pip-version-check", "-w", dist, src])
    (built,) = dist.glob("lance_ns-*.whl")
    return built


def fresh_venv(path: Path, requirement: str | list[str], python: str = sys.executable) -> Path:
    """A new venv of ``python`` at ``path`` with only ``requirement`` (one or a list, and their
    dependencies) installed; returns its bin directory."""
    env = clean_env()
    requirements = [requirement] if isinstance(requirement, str) else list(requirement)
    run([UV, "venv", "-q", "--python", python, path], env=env, timeout=300)
    run([UV, "pip", "install", "-q", "--python", path / "bin" / "python", *requirements], env=env, timeout=900)
    return path / "bin"


def installed(bin_dir: Path) -> str:
    """``name==version`` lines, lower-cased, of what a venv holds."""
    done = run([UV, "pip", "list", "-q", "--python", bin_dir / "python", "--format=freeze"], env=clean_env())
    return done.stdout.lower()
