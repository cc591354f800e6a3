"""Registers lance-ns's Python data source in every Spark session, without
``lance_ns.spark.register(spark)``.

Spark (4.0+) looks for top-level modules named ``pyspark_*`` that define
``DefaultSource`` in the Python it runs (``spark.pyspark.python`` /
``PYSPARK_PYTHON``) on the first use of a Python data source, and registers
them by name.  This one is ``lance_python``: the source the bridge jar's
``lance`` format and ``lancens.spark.LanceCatalog`` tables write and stream
through, so a session with only the jar and a catalog configured (spark-sql,
a Spark Connect server, spark-submit) can write.  Nothing is imported until
Spark looks.
"""

from lance_ns.spark.datasource import LancePythonDataSource as DefaultSource

__all__ = ["DefaultSource"]
