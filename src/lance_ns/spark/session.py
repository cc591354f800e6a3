"""Build a SparkSession set up for the ``lance`` data source.

The settings here are the ones a Python data source needs to work at all or
to start fast; each is explained where it is set.
"""

from __future__ import annotations

import os
import sys
from typing import Mapping

from .settings import ARROW_FLAGS


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
    # Spark 4 checks an Arrow batch's byte size after every row it adds
    # whenever this limit is below Int.MaxValue (ArrowWriter.sizeInBytes walks
    # every vector); that check was half the cost of handing rows to the
    # writer's Python workers (1M rows: 1.05 s -> 0.48 s, benchmarks/
    # bench_spark.py).  Int.MaxValue turns the check off; batches are still
    # bounded by spark.sql.execution.arrow.maxRecordsPerBatch (10,000 rows).
    "spark.sql.execution.arrow.maxBytesPerBatch": str(2**31 - 1),
    # ParallelGC suits short batch jobs on few cores better than G1 (reads of
    # both Lance and parquet ~10-20% faster here).  The full tiered JIT is
    # kept: C1-only (-XX:TieredStopAtLevel=1) starts ~1 s sooner but runs the
    # per-row code that Python sources depend on 1.5-2x slower.
    #
    # The Arrow flags: the lance format's JVM read path hands Spark Arrow
    # vectors, and Arrow Java checks bounds (and nulls) on every value get
    # unless told otherwise; Spark's generated code checks nulls itself and
    # the buffers come whole from pyarrow's IPC writer.  sum(x) over 5M rows:
    # 0.56 s -> 0.34 s (benchmarks/bench_spark.py).  Read once, at class load.
    "spark.driver.extraJavaOptions": f"-XX:+UseParallelGC {ARROW_FLAGS}",
    "spark.executor.extraJavaOptions": ARROW_FLAGS,
    # local[2] only: not printed for spark-submit (python -m lance_ns.spark.bridge)
    "spark.ui.enabled": "false",
    "spark.sql.shuffle.partitions": "4",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
}


#: the Spark SQL catalog class of the bridge jar (``bridge/LanceCatalog.java``)
CATALOG_CLASS = "lancens.spark.LanceCatalog"
#: the SQL extension of the bridge jar (``bridge/LanceSqlExtensions.java``): lance-spark's
#: statements (indexes, OPTIMIZE, VACUUM, tags, branches) and search table functions
EXTENSIONS_CLASS = "lancens.spark.LanceSqlExtensions"


def with_extensions(settings: dict[str, str]) -> dict[str, str]:
    """``settings`` with the lance SQL extension added to ``spark.sql.extensions`` (others kept)."""
    given = [c.strip() for c in settings.get("spark.sql.extensions", "").split(",") if c.strip()]
    return {**settings, "spark.sql.extensions": ",".join(given + [c for c in [EXTENSIONS_CLASS] if c not in given])}


def catalog_conf(catalogs: Mapping[str, Mapping[str, object]]) -> dict[str, str]:
    """Spark settings for lance catalogs: ``{"lake": {"impl": "dir", "root":
    "/d"}}`` -> ``spark.sql.catalog.lake=lancens.spark.LanceCatalog``,
    ``spark.sql.catalog.lake.impl=dir``, ``spark.sql.catalog.lake.root=/d``.
    Properties are the impl's, without its prefix (or ``config`` naming a
    lance-ns configuration); see :mod:`.catalog`."""
    conf = {}
    for name, properties in catalogs.items():
        conf[f"spark.sql.catalog.{name}"] = CATALOG_CLASS
        for key, value in properties.items():
            conf[f"spark.sql.catalog.{name}.{key}"] = str(value).lower() if isinstance(value, bool) else str(value)
    return conf


#: DEFAULT_CONF keys that suit build_session's local sessions, not a cluster's
LOCAL_ONLY = ("spark.ui.enabled", "spark.sql.shuffle.partitions")


def submit_conf(catalogs: Mapping[str, Mapping[str, object]] | None = None, jar: str | None = None) -> dict[str, str]:
    """The settings a session of the user's own (spark-submit,
    spark-defaults.conf, ``SparkSession.builder``) needs for lance: the
    bridge jar (the JVM read path and the catalogs), the catalogs, Spark's
    Python, and :data:`DEFAULT_CONF` but the local-only keys."""
    settings = {k: v for k, v in DEFAULT_CONF.items() if k not in LOCAL_ONLY}
    settings["spark.pyspark.python"] = os.environ.get("PYSPARK_PYTHON", sys.executable)
    settings.update(catalog_conf(catalogs or {}))
    if jar:
        settings["spark.jars"] = jar
    return with_extensions(settings)


def _bridge_jar() -> str | None:
    """The JVM read path's jar, or None (with a warning) when it cannot be
    built here: the session then works, with the Python source's reads."""
    import warnings

    from .jar import jar_path

    try:
        return jar_path()
    except (OSError, RuntimeError) as exc:  # an unwritable cache, javac refusing the sources
        warnings.warn(f"lance: no JVM path, reads and writes use the Python source ({exc})", stacklevel=3)
        return None


def build_session(
    master: str = "local[2]",
    app_name: str = "lance-ns",
    conf: Mapping[str, str] | None = None,
    catalogs: Mapping[str, Mapping[str, object]] | None = None,
):
    """A SparkSession (created or reused) with the ``lance`` source registered
    and, for each of ``catalogs`` (name -> properties, see :func:`catalog_conf`),
    a Spark SQL catalog: ``build_session(catalogs={"lake": {"impl": "dir",
    "root": "/data/lake"}})`` then ``spark.sql("SELECT * FROM lake.db.t")``."""
    python_env()
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master(master).appName(app_name)
    settings = {**DEFAULT_CONF, **submit_conf(catalogs)}
    settings["spark.pyspark.driver.python"] = os.environ["PYSPARK_DRIVER_PYTHON"]
    settings.update(conf or {})
    jar = _bridge_jar()
    if catalogs and jar is None:
        raise RuntimeError(
            "lance catalogs need the lance-ns bridge jar: the one built with the package for this "
            "Spark minor, or one a JDK's javac builds here (and LANCE_NS_SPARK_BRIDGE not set to 0); "
            "`python -m lance_ns.spark.jar` says which is missing"
        )
    if jar is not None:
        # the JVM read path of the lance format (see .jar), the catalog and the SQL extension;
        # the Python source stays registered as lance_python
        settings["spark.jars"] = ",".join(j for j in (settings.get("spark.jars"), jar) if j)
    else:
        settings["spark.sql.extensions"] = ",".join(
            c for c in settings.get("spark.sql.extensions", "").split(",") if c.strip() and c != EXTENSIONS_CLASS)
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    from .datasource import register

    register(spark, warn=False)  # a jar that failed to build has warned above
    return spark
