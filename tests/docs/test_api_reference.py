"""The API reference (`make docs`: mkdocs + mkdocstrings over the docstrings) builds with
warnings as errors and documents the public API."""

from __future__ import annotations

import pytest

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def build(config: Path, site: Path, strict: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict" if strict else "--no-strict", "-f", str(config), "-d", str(site)],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )


@pytest.mark.slow  # a fresh process or a whole build: not in the quick loop
def test_api_reference_builds_without_warnings(tmp_path):
    done = build(REPO / "mkdocs.yml", tmp_path / "site")
    assert done.returncode == 0, done.stderr
    assert "WARNING" not in done.stderr, done.stderr
    pages = {p: (tmp_path / "site" / p / "index.html").read_text() for p in ("", "config", "backends", "server", "spark", "errors")}
    for page, anchors in {
        "": ["lance_ns.connect", "lance_ns.load_namespace"],
        "config": ["lance_ns.config.from_config", "lance_ns.config.named_config"],
        "backends": ["lance_ns.impls.dir.DirectoryNamespace", "lance_ns.impls.glue", "lance_ns.impls.glue.GlueNamespace", "lance_ns.impls.registered_name"],
        "server": ["lance_ns.server.running.run_server_in_thread", "lance_ns.server.app.create_app"],
        "spark": ["lance_ns.spark.build_session"],
        "errors": ["lance_ns.errors", "lance_ns.identifiers.parse_id"],
    }.items():
        for anchor in anchors:
            assert f'id="{anchor}"' in pages[page], (page, anchor)


@pytest.mark.slow  # a fresh process or a whole build: not in the quick loop
def test_a_docstring_warning_fails_the_build(tmp_path):
    """--strict: a docstring griffe warns about (a parameter the signature lacks) fails the build."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "sample.py").write_text(
        'def f(a):\n    """Do it.\n\n    Args:\n        b: not a parameter of f.\n    """\n'
    )
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# x\n\n::: sample.f\n")
    config = tmp_path / "mkdocs.yml"
    config.write_text(
        (REPO / "mkdocs.yml").read_text().split("nav:")[0].replace("docs_dir: docs/api", f"docs_dir: {tmp_path / 'docs'}")
        + f"plugins:\n  - mkdocstrings:\n      handlers:\n        python:\n          paths: [{tmp_path / 'src'}]\n"
    )
    done = build(config, tmp_path / "site")
    assert done.returncode != 0
    assert "WARNING" in done.stderr and "'b'" in done.stderr, done.stderr
    assert build(config, tmp_path / "site2", strict=False).returncode == 0  # the same warning passes without strict
