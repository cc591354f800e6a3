"""Build a SparkSession set up for the ``lance`` data source.

The settings here are the ones a Python data source needs to work at all or
to start fast; each is explained where it is set.
"""

from __future__ import annotations

import os
import sys
from typing import Mapping


def python_env() -> None:
    """Make Spark's Python workers run this interpreter.

    Spark starts workers with ``PYSPARK_PYTHON`` or else whatever ``python3``
    is on PATH; outside the user's venv that interpreter has no ``lance`` and
    every task fails.  An explicit user setting is kept.
    """
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    # Spark warns (and may pick a wrong interface) when the hostname resolves
    # to a loopback address; binding locally is what local mode needs.
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")


#: Spark settings applied unless the caller overrides them.
DEFAULT_CONF: dict[str, str] = {
    # pushFilters is only called with this on; a reader defining pushFilters
    # fails every read when it is off, so the source requires it.
    "spark.sql.python.filterPushdown.enabled": "true",
    # The C1 JIT alone halves JVM start time; local jobs never warm up C2.
    "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1",
    "spark.ui.enabled": "false",
    "spark.sql.shuffle.partitions": "4",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
}


def build_session(
    master: str = "local[2]",
    app_name: str = "lance-ns",
    conf: Mapping[str, str] | None = None,
):
    """A SparkSession (created or reused) with the ``lance`` source registered."""
    python_env()
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master(master).appName(app_name)
    settings = dict(DEFAULT_CONF)
    settings["spark.pyspark.python"] = os.environ["PYSPARK_PYTHON"]
    settings["spark.pyspark.driver.python"] = os.environ["PYSPARK_DRIVER_PYTHON"]
    settings.update(conf or {})
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    from .datasource import register

    register(spark)
    return spark
