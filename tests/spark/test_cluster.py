"""The pipeline example on a real Spark standalone cluster.

A master and two workers, each its own JVM (``spark_cluster``, see
tests/servers/spark_cluster.py); the driver runs in a process of its own
(tests/spark/remote_drivers.py), so the executors are JVMs the workers start,
which fetch the bridge jar the driver ships and start their own Python workers.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import lance
import pytest

import lance_ns

pytestmark = pytest.mark.slow

DRIVERS = Path(__file__).with_name("remote_drivers.py")


def run_driver(*args: str, timeout: float = 300) -> dict:
    """Run a driver of remote_drivers.py; its RESULT line, parsed."""
    proc = subprocess.run([sys.executable, str(DRIVERS), *args], capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, proc.stdout[-3000:] + proc.stderr[-6000:]
    return json.loads(lines[-1].removeprefix("RESULT "))


def test_pipeline_runs_on_a_standalone_cluster(spark_cluster, tmp_path):
    root = tmp_path / "lake"
    result = run_driver("cluster", spark_cluster.url, str(root), "20000")

    # tasks ran in two executor JVMs, neither of them the driver's, each with
    # Python workers of its own (processes under that executor)
    tasks = result["tasks"]
    executor_jvms = {task["jvm_pid"] for task in tasks}
    assert None not in executor_jvms, tasks
    assert len(executor_jvms) == 2 and result["driver_jvm_pid"] not in executor_jvms, tasks
    assert len({task["executor_id"] for task in tasks}) == 2, tasks
    assert result["driver_pid"] not in {task["python_pid"] for task in tasks}

    assert result["pipeline_exit"] == 0  # the example's own check: row count and total spent

    # each executor fetched the bridge jar the driver shipped into its work directory
    for worker in range(2):
        executor_dirs = list((spark_cluster.worker_dir(worker) / result["app_id"]).iterdir())
        assert len(executor_dirs) == 1, executor_dirs
        fetched = [p.name for p in executor_dirs[0].iterdir() if p.suffix == ".jar"]
        assert any(name.startswith("lance-ns-spark-") for name in fetched), fetched

    # both executors wrote fragments of each table, and the driver committed each
    # write job once
    ns = lance_ns.connect("dir", {"root": str(root)})
    events = lance.dataset(namespace_client=ns, table_id=["analytics", "events"])
    assert events.count_rows() == 20000
    assert len(events.get_fragments()) >= 2
    for table in ("events", "daily_totals"):
        dataset = lance.dataset(namespace_client=ns, table_id=["analytics", table])
        assert [v["version"] for v in dataset.versions()] == [1], table
