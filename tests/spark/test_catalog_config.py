"""The SQL catalog's configuration, without Spark: properties -> a lance-ns
connection, the Spark settings build_session and ``python -m
lance_ns.spark.bridge`` give, and the static registration of the source."""

from __future__ import annotations

import pkgutil

import pytest

from lance_ns.errors import InvalidInputError
from lance_ns.spark import catalog
from lance_ns.spark.session import CATALOG_CLASS, catalog_conf, submit_conf


def test_catalog_properties_are_the_impls_without_prefix():
    assert catalog.catalog_config({"impl": "dir", "root": "/lake", "storage.region": "x"}) == {
        "impl": "dir",
        "dir.root": "/lake",
        "dir.storage.region": "x",
    }
    # a prefixed spelling is accepted too, and wins over the plain one
    assert catalog.catalog_config({"impl": "rest", "uri": "http://a", "rest.uri": "http://b"}) == {
        "impl": "rest",
        "rest.uri": "http://b",
    }
    # a class path's prefix is its class name, as everywhere else in lance-ns
    assert catalog.catalog_config({"impl": "lance_ns.impls.dir:DirectoryNamespace", "root": "/l"}) == {
        "impl": "lance_ns.impls.dir:DirectoryNamespace",
        "DirectoryNamespace.root": "/l",
    }


def test_catalog_from_a_named_configuration(tmp_path, monkeypatch):
    config = tmp_path / "config.toml"
    config.write_text(f'[namespaces.lake]\nimpl = "dir"\nroot = "{tmp_path}"\n')
    monkeypatch.setenv("LANCE_NS_CONFIG", str(config))
    assert catalog.catalog_config({"config": "lake"}) == {"impl": "dir", "dir.root": str(tmp_path)}
    # a property set beside the name overrides the named one
    assert catalog.catalog_config({"config": "lake", "root": "/other"})["dir.root"] == "/other"
    with pytest.raises(InvalidInputError, match="different impl"):
        catalog.catalog_config({"config": "lake", "impl": "rest"})


def test_a_catalog_without_impl_or_config_says_what_to_set():
    with pytest.raises(InvalidInputError, match=r"spark.sql.catalog.<name>.impl"):
        catalog.catalog_config({"root": "/lake"})


def test_the_catalog_answers_through_the_namespace(tmp_path):
    """The worker's calls, in process: the same answers the JVM gets."""
    props = {"impl": "dir", "root": str(tmp_path)}
    call = lambda name, **args: catalog.call({"call": name, "catalog": props, "args": args})  # noqa: E731
    call("create_namespace", namespace=["db"], properties={"k": "v"})
    assert call("list_namespaces", namespace=[]) == {"namespaces": [["db"]]}
    assert call("namespace_metadata", namespace=["db"])["properties"]["k"] == "v"
    schema = '{"type":"struct","fields":[{"name":"x","type":"long","nullable":true,"metadata":{}}]}'
    made = call("create_table", table=["db", "t"], schema=schema, properties={"team": "a"})
    assert made["options"]["table"] == "db.t" and made["options"]["dir.root"] == str(tmp_path)
    assert made["properties"]["team"] == "a" and made["properties"]["provider"] == "lance"
    assert call("list_tables", namespace=["db"]) == {"tables": ["t"]}
    from lance_ns.errors import NamespaceNotEmptyError

    with pytest.raises(NamespaceNotEmptyError):
        call("drop_namespace", namespace=["db"], cascade=False)
    assert call("drop_table", table=["db", "t"], purge=False) == {"dropped": True}
    assert call("drop_table", table=["db", "t"], purge=False) == {"dropped": False}
    assert call("drop_namespace", namespace=["db"], cascade=True) == {"dropped": True}
    with pytest.raises(InvalidInputError, match="unknown catalog call"):
        call("nope")


def test_identifiers_with_dots_get_another_delimiter():
    assert catalog.table_options({"impl": "memory"}, ["a.b", "t"])["delimiter"] == "/"


def test_catalog_settings():
    conf = catalog_conf({"lake": {"impl": "dir", "root": "/l"}, "prod": {"config": "prod"}})
    assert conf == {
        "spark.sql.catalog.lake": CATALOG_CLASS,
        "spark.sql.catalog.lake.impl": "dir",
        "spark.sql.catalog.lake.root": "/l",
        "spark.sql.catalog.prod": CATALOG_CLASS,
        "spark.sql.catalog.prod.config": "prod",
    }
    settings = submit_conf({"lake": {"impl": "dir", "root": "/l"}}, "/x.jar")
    assert settings["spark.jars"] == "/x.jar" and settings["spark.sql.catalog.lake.root"] == "/l"
    assert "spark.ui.enabled" not in settings  # local-only settings are build_session's


def test_bridge_command_prints_spark_submit_arguments(capsys, monkeypatch):
    from lance_ns.spark import jar
    from lance_ns.spark.bridge.__main__ import main

    monkeypatch.setattr(jar, "jar_path", lambda: "/cache/lance-ns-spark.jar")
    assert main(["--catalog", "lake", "impl=dir", "root=/data/lake"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "--jars /cache/lance-ns-spark.jar"
    assert "--conf spark.sql.catalog.lake=lancens.spark.LanceCatalog" in out
    assert "--conf spark.sql.catalog.lake.root=/data/lake" in out
    assert main(["--catalog", "lake", "config=prod", "--defaults"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "spark.jars /cache/lance-ns-spark.jar" and "spark.sql.catalog.lake.config prod" in out
    with pytest.raises(SystemExit):
        main(["--catalog", "lake", "root=/x"])  # neither impl nor config


def test_spark_finds_the_python_source_by_itself():
    """Spark registers DefaultSource of every top-level pyspark_* module
    (pyspark.sql.worker.lookup_data_sources): lance_python, without register()."""
    assert "pyspark_lance_ns" in {m.name for m in pkgutil.iter_modules()}
    import pyspark_lance_ns

    assert pyspark_lance_ns.DefaultSource.name() == "lance_python"


def test_register_keeps_the_statically_registered_source(spark):
    """register() does not register lance_python again over the source Spark
    found by itself (which made every session log that it 'replaced a
    statically registered data source')."""
    from lance_ns.spark import register

    manager = spark._jsparkSession.sessionState().dataSourceManager()
    identity = spark._jvm.java.lang.System.identityHashCode
    assert manager.dataSourceExists("lance_python")
    before = identity(manager.lookupDataSource("lance_python"))
    assert register(spark) is True  # the jar's lance, and lance_python kept
    assert identity(manager.lookupDataSource("lance_python")) == before
