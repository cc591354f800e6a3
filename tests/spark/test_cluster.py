"""Spark beyond local mode: a real standalone cluster and a Spark Connect server.

``spark_cluster``: a master and two workers, each its own JVM; ``spark_connect``:
a Spark Connect server with the ``lake`` catalog configured (both in
tests/services/spark_cluster.py, started once per test session on first use).
The drivers run in processes of their own (tests/spark/remote_drivers.py), so
on the cluster the executors are JVMs the workers start, which fetch the bridge
jar the driver ships and start their own Python workers.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import lance
import pytest

import lance_ns
from tests.missing import missing

# ~1 min on an idle machine; generous limits since several JVMs and Python workers start
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1500)]

DRIVERS = Path(__file__).with_name("remote_drivers.py")


def _need_java() -> None:
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        missing("a Java runtime (a Spark cluster needs one)", "apt-get install -y openjdk-17-jre-headless")


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory):
    _need_java()
    from tests.services.spark_cluster import SparkStandalone

    with SparkStandalone(tmp_path_factory.mktemp("spark-cluster")) as cluster:
        yield cluster


@pytest.fixture(scope="session")
def spark_connect(tmp_path_factory, spark_cluster):
    """A Spark Connect server whose catalog ``lake`` is a directory namespace,
    a driver on the standalone cluster: its SQL runs on the workers' executors.
    It holds the cluster's cores while it lives, so tests using it come after
    the other cluster tests (file order)."""
    _need_java()
    from lance_ns.spark.jar import jar_path
    from lance_ns.spark.session import submit_conf
    from tests.services.spark_cluster import SparkConnectServer

    root = tmp_path_factory.mktemp("connect-lake")
    # what `python -m lance_ns.spark.bridge --catalog lake impl=dir root=...` prints
    conf = {**submit_conf({"lake": {"impl": "dir", "root": str(root)}}), "spark.sql.session.timeZone": "UTC"}
    conf.update({"spark.executor.memory": "512m", "spark.cores.max": "2"})  # two 1 GiB, 1-core workers
    workdir = tmp_path_factory.mktemp("spark-connect")
    with SparkConnectServer(workdir, conf, [jar_path()], master=spark_cluster.url) as server:
        server.lake = root
        yield server


def run_driver(*args: str, timeout: float = 900) -> dict:
    """Run a driver of remote_drivers.py; its RESULT line, parsed."""
    proc = subprocess.run([sys.executable, str(DRIVERS), *args], capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, proc.stdout[-3000:] + proc.stderr[-6000:]
    return json.loads(lines[-1].removeprefix("RESULT "))


def versions(ns, table: list[str]) -> list[tuple[int, int]]:
    """(version, rows) of each version of a table, read by pylance through the namespace."""
    dataset = lance.dataset(namespace_client=ns, table_id=table)
    return [(v["version"], dataset.checkout_version(v["version"]).count_rows()) for v in dataset.versions()]


def test_catalog_reads_and_writes_on_a_standalone_cluster(spark_cluster, tmp_path):
    root = tmp_path / "lake"
    rows = 2000
    result = run_driver("cluster", spark_cluster.url, str(root), str(rows))

    # tasks ran in two executor JVMs, neither of them the driver's, each with
    # Python workers of its own (processes under that executor)
    tasks = result["tasks"]
    executor_jvms = {task["jvm_pid"] for task in tasks}
    assert None not in executor_jvms, tasks
    assert len(executor_jvms) == 2 and result["driver_jvm_pid"] not in executor_jvms, tasks
    assert len({task["executor_id"] for task in tasks}) == 2, tasks
    assert result["driver_pid"] not in {task["python_pid"] for task in tasks}

    # each executor fetched the bridge jar the driver shipped into its work directory
    for worker in range(2):
        fetched = [p.name for p in (spark_cluster.worker_dir(worker) / result["app_id"]).glob("*/*.jar")]
        assert any(name.startswith("lance-ns-spark-") for name in fetched), fetched

    # the query through the catalog read every row the write job wrote, and a stream copied them
    # (the JVM path's LanceStream and LanceWrite, on the executors)
    assert result["read"] == [rows, sum(i * 0.5 for i in range(rows))]
    assert result["streamed"] == result["read"] and result["stream_source"].startswith("LanceStream("), result

    # CREATE TABLE committed an empty version, and the write job one more with
    # all its rows, from its two tasks' fragments
    ns = lance_ns.connect("dir", {"root": str(root)})
    assert versions(ns, ["analytics", "events"]) == [(1, 0), (2, rows)]
    assert len(lance.dataset(namespace_client=ns, table_id=["analytics", "events"]).get_fragments()) == 2


def test_spark_connect_client_runs_sql_through_the_catalog(spark_connect):
    remote = run_driver("connect", spark_connect.url)

    # the answers of the same statements in a classic session (tests/spark/test_catalog.py
    # runs such statements on every catalog kind locally)
    assert remote["session"] == "pyspark.sql.connect.session" and remote["register"] is True
    assert remote["results"] == {
        "select": [[1, "a", 0.5], [2, "b", None], [3, None, 2.5], [4, "d", 4.0]],
        "count": [[4]],
        "tables": [["t"]],
    }

    # pylance reads the table the Connect client wrote, through the namespace
    ns = lance_ns.connect("dir", {"root": str(spark_connect.lake)})
    table = lance.dataset(namespace_client=ns, table_id=["db", "t"]).to_table().sort_by("id")
    assert [list(row.values()) for row in table.to_pylist()] == remote["results"]["select"]


def test_spark_connect_sql_runs_on_the_cluster(spark_connect, spark_cluster):
    """The Connect server's queries run in executor JVMs the workers started
    (each fetched the bridge jar), not in the server's own process."""
    placed = run_driver("connect_where", spark_connect.url)
    assert placed["rows"] == [0, 1, 2, 3]  # the catalog table the client created, read back
    executor_jvms = {task["jvm_pid"] for task in placed["tasks"]}
    assert None not in executor_jvms and spark_connect.server.pid not in executor_jvms, placed
    apps = [a for a in spark_cluster.status()["activeapps"] if a["name"] == "Spark Connect server"]
    assert len(apps) == 1 and apps[0]["cores"] >= 1, spark_cluster.status()["activeapps"]
    fetched = [p.name for p in spark_cluster.workdir.glob(f"worker-*/{apps[0]['id']}/*/*.jar")]
    assert any(name.startswith("lance-ns-spark-") for name in fetched), fetched
