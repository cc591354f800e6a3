"""PySpark integration: the ``lance`` data source, SQL views, a session helper.

    from lance_ns.spark import build_session
    spark = build_session()                      # registers the source
    df = spark.read.format("lance").option("impl", "dir") \\
        .option("dir.root", "/lake").load("db.events")

Importing this package needs pyspark (``pip install 'lance-ns[spark]'``).
"""

from .datasource import LanceDataSource, register
from .metadata import count
from .session import build_session, python_env
from .sql import register_views

__all__ = ["LanceDataSource", "build_session", "count", "python_env", "register", "register_views"]
