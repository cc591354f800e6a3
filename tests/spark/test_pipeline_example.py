"""The README's main job, run as a user would: a fresh process and JVM.

A ``python3`` that fails is put first on PATH: Spark starts its workers with
``python3`` from PATH unless told otherwise, so the job only passes if the
workers run the driver's interpreter (``lance_ns.spark.build_session``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import lance_ns
from lance_namespace import ListTablesRequest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "pipeline.py"


def test_pipeline_example_runs_on_the_drivers_interpreter(tmp_path):
    bad_bin = tmp_path / "bin"
    bad_bin.mkdir()
    for name in ("python3", "python"):
        shim = bad_bin / name
        shim.write_text("#!/bin/sh\necho 'wrong interpreter' >&2\nexit 3\n")
        shim.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_")}
    env["PATH"] = f"{bad_bin}{os.pathsep}{env.get('PATH', '')}"
    root = tmp_path / "lake"
    proc = subprocess.run(
        [sys.executable, str(EXAMPLE), "--root", str(root), "--rows", "20000"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    assert "check: OK" in proc.stdout
    assert "analytics.events: 20000 rows" in proc.stdout
    ns = lance_ns.connect("dir", {"root": str(root)})
    assert ns.list_tables(ListTablesRequest(id=["analytics"])).tables == ["daily_totals", "events"]
