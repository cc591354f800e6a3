"""One SparkSession (local[2]) for every Spark test: starting one costs ~10 s."""

from __future__ import annotations

import os

import pytest

pytest.importorskip("pyspark", reason="the Spark tests need the 'spark' extra (pyspark)")


@pytest.fixture(scope="session")
def spark():
    from lance_ns.spark import build_session

    session = build_session("local[2]", "lance-ns-tests", {"spark.sql.session.timeZone": "UTC"})
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture
def lake(tmp_path):
    """A directory namespace on local disk, as Spark options and a client."""
    import lance_ns

    root = str(tmp_path / "lake")
    options = {"impl": "dir", "dir.root": root}
    return options, lance_ns.from_config(options)


def _need_java() -> None:
    import shutil

    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("no Java runtime: a Spark cluster needs one")


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory):
    """A standalone master and two workers, each its own JVM (tests/servers/spark_cluster.py)."""
    _need_java()
    from tests.servers.spark_cluster import SparkStandalone

    with SparkStandalone(tmp_path_factory.mktemp("spark-cluster")) as cluster:
        yield cluster
