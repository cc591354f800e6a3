"""One SparkSession (local[2]) for every Spark test: starting one costs ~10 s."""

from __future__ import annotations

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
