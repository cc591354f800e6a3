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


# ------------------------------------------------------------- SQL catalogs
#
# Catalogs of lancens.spark.LanceCatalog, added to the one session at run
# time (Spark loads a catalog on its first use): a directory namespace, our
# REST server in front of a real Hive Metastore, and the metastore directly.


class Catalog:
    """A catalog configured in the session: its name and a lance-ns client
    of the same namespace (to check what Spark did through pylance), and the
    directory its tables' data goes to (behind a REST server too)."""

    def __init__(self, spark, name: str, properties: dict[str, str], client, root: str | None = None):
        from lance_ns.spark.session import catalog_conf

        self.name, self.properties, self.client, self.root = name, properties, client, root
        for key, value in catalog_conf({name: properties}).items():
            spark.conf.set(key, value)


@pytest.fixture(scope="session")
def _catalogs(spark, tmp_path_factory):
    import contextlib

    import lance_ns
    from lance_ns.spark.catalog import catalog_config

    made: dict[str, Catalog] = {}
    with contextlib.ExitStack() as stack:

        def get(kind: str) -> Catalog:
            if kind in made:
                return made[kind]
            root = tmp_path_factory.mktemp(f"catalog-{kind}")
            if kind == "dir":
                props = {"impl": "dir", "root": str(root)}
            else:
                from tests.services.hms import shared_metastore

                hive = {"impl": "hive2", "uri": shared_metastore().uri, "root": str(root)}
                if kind == "hms":
                    props = hive
                else:  # our REST server serving the Hive Metastore namespace
                    from lance_ns.server import run_server_in_thread

                    served = stack.enter_context(lance_ns.from_config(catalog_config(hive)))
                    server = stack.enter_context(run_server_in_thread(served))
                    props = {"impl": "rest", "uri": server.url}
            client = lance_ns.from_config(catalog_config(props))
            stack.callback(client.close)
            made[kind] = Catalog(spark, f"lance_{kind}", props, client, str(root))
            return made[kind]

        yield get


@pytest.fixture(params=["dir", pytest.param("rest", marks=pytest.mark.slow), pytest.param("hms", marks=pytest.mark.slow)])
def catalog(request, _catalogs) -> Catalog:
    """Each SQL catalog kind (dir; REST -> Hive Metastore; Hive Metastore)."""
    return _catalogs(request.param)


@pytest.fixture
def db(spark, catalog):
    """A fresh namespace in ``catalog``, as ``<catalog>.<db>``; dropped after."""
    import uuid

    name = f"{catalog.name}.db{uuid.uuid4().hex[:8]}"
    spark.sql(f"CREATE NAMESPACE {name}")
    yield name
    spark.sql(f"DROP NAMESPACE IF EXISTS {name} CASCADE")
