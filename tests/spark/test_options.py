"""Options parsed once (lance_ns.spark.options), the namespace connection
cache, the bridge worker's version pinning, and register's warning for a
session without the jar.  No SparkSession: these run in seconds."""

from __future__ import annotations

import io
import warnings

import lance
import pyarrow as pa
import pytest

pytest.importorskip("pyspark")

from lance_ns.errors import InvalidInputError  # noqa: E402
from lance_ns.spark import bridge_worker, resolve as resolving  # noqa: E402
from lance_ns.spark import datasource as dsrc  # noqa: E402
from lance_ns.spark.options import SourceOptions  # noqa: E402

from .test_bridge_worker import Replies, frame  # noqa: E402


def test_options_are_parsed_once_with_their_types_and_any_case():
    opts = SourceOptions.parse(
        {
            "IMPL": "dir",
            "dir.root": "/r",
            "Storage.region": "eu",
            "table": "a/b",
            "DELIMITER": "/",
            "version": "3",
            "columns": " x, y ,",
            "batchsize": "100",
            "fragmentsperpartition": "2",
            "pushfilters": "TRUE",
            "readLatest": "true",
            "maxRowsPerFile": "10",
            "checkpointLocation": "/ck",
        }
    )
    assert opts.ns_config == {"impl": "dir", "dir.root": "/r"}  # the namespace's keys only
    assert opts.table_id() == ["a", "b"]
    assert opts.storage == {"region": "eu"}
    assert (opts.version, opts.columns, opts.batch_size, opts.fragments_per_partition) == (3, ["x", "y"], 100, 2)
    assert opts.push_filters is True and opts.max_rows_per_file == 10 and opts.stream_id == "/ck"
    assert opts.read_latest is False  # a fixed version is what it says
    plain = SourceOptions.parse({"path": "/t.lance"})
    assert (plain.ns_config, plain.table, plain.path) == (None, None, "/t.lance")
    assert plain.push_filters is None  # each read path's own default
    assert SourceOptions.parse({"path": "/t", "readLatest": "true"}).read_latest is True


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"version": "1", "tag": "t"}, "either 'version' or 'tag'"),
        ({"version": "x"}, "'version' must be an integer"),
        ({"pushFilters": "yes"}, "'pushFilters' must be true or false"),
        ({"columns": " , "}, "names no column"),
        ({"fragmentsPerPartition": "0"}, "at least 1"),
    ],
)
def test_bad_options_are_refused_when_parsed(bad, message):
    with pytest.raises(InvalidInputError, match=message):
        SourceOptions.parse({"path": "/t", **bad})


def test_named_configuration_without_the_impl_prefix(tmp_path, monkeypatch):
    """As the README writes one: ``root = "..."`` (issue 18: this failed with
    "DirectoryNamespace needs the 'root' property")."""
    lake = tmp_path / "lake"
    config = tmp_path / "config.toml"
    config.write_text(f'[namespaces.lake]\nimpl = "dir"\nroot = "{lake}"\n')
    monkeypatch.setenv("LANCE_NS_CONFIG", str(config))
    opts = SourceOptions.parse({"namespace": "lake", "table": "t"})
    assert opts.ns_config == {"impl": "dir", "dir.root": str(lake)}
    ref, declared = resolving.resolve(opts, create=True)
    assert declared and ref.uri.startswith(str(lake))
    lance.write_dataset(pa.table({"x": [1, 2]}), ref.uri)
    assert dsrc.LanceDataSource({"namespace": "lake", "table": "t"}).schema().fieldNames() == ["x"]
    # a prefixed spelling of the same property wins, as in load_namespace
    config.write_text(f'[namespaces.lake]\nimpl = "dir"\nroot = "/nowhere"\n"dir.root" = "{lake}"\n')
    assert SourceOptions.parse({"namespace": "lake"}).ns_config == {"impl": "dir", "dir.root": str(lake)}


@pytest.fixture
def closed_namespaces(monkeypatch):
    """Every namespace the cache opens, with the ones closed recorded."""
    import lance_ns.config

    opened, closed = [], []
    connect = lance_ns.config.from_config

    def recording(config):
        ns = connect(config)
        opened.append(ns)
        close = ns.close

        def close_and_record():
            closed.append(ns)
            close()

        ns.close = close_and_record
        return ns

    monkeypatch.setattr(lance_ns.config, "from_config", recording)
    resolving.close_namespaces()
    yield opened, closed
    resolving.close_namespaces()


def test_resolves_share_one_namespace_per_configuration(tmp_path, closed_namespaces):
    opened, closed = closed_namespaces
    a = {"impl": "dir", "dir.root": str(tmp_path / "a")}
    b = {"impl": "dir", "dir.root": str(tmp_path / "b")}
    for options in (a, b):
        lance.write_dataset(pa.table({"x": [1]}), resolving.resolve({**options, "table": "t"}, create=True)[0].uri)
    for _ in range(3):
        resolving.resolve({**a, "table": "t"})
        resolving.resolve({**b, "TABLE": "t"})
    assert len(opened) == 2  # one per configuration, not one per resolve
    assert resolving.cached_namespace(SourceOptions.parse(a).ns_config) is opened[0]
    resolving.close_namespaces()
    assert closed == opened


@pytest.fixture
def events(tmp_path):
    root = tmp_path / "lake"
    options = {"impl": "dir", "dir.root": str(root), "table": "t"}
    ref, _ = resolving.resolve(options, create=True)
    lance.write_dataset(pa.table({"id": pa.array(range(10))}), ref.uri, max_rows_per_file=5)
    return options, ref.uri


def _serve(*requests) -> Replies:
    out = io.BytesIO()
    bridge_worker.run(io.BytesIO(b"".join(frame(r) for r in requests)), out)
    return Replies(out.getvalue())


def test_worker_plans_at_the_version_its_schema_described(events):
    options, uri = events
    described = _serve({"op": "schema", "options": options}).frame()
    assert described["version"] == 1
    # a writer commits a new version, with a new column, between schema and plan
    lance.write_dataset(
        pa.table({"id": pa.array(range(10, 13)), "extra": pa.array(["a", "b", "c"])}), uri, mode="overwrite"
    )
    read_schema = described["schema"]
    planned = _serve({"op": "plan", "options": options, "schema": read_schema, "version": described["version"]}).frame()
    assert planned["version"] == 1 and planned["rows"] == 10 and len(planned["partitions"]) == 2
    got = []
    for partition in planned["partitions"]:
        replies = _serve({"op": "read", "partition": partition})
        assert replies.frame() == {"ok": True}
        got += replies.stream()["id"].to_pylist()
        assert replies.frame() == {}
    assert sorted(got) == list(range(10))
    # no pinned version (a user schema): the version the options select now
    latest = _serve({"op": "plan", "options": options, "schema": read_schema}).frame()
    assert latest["version"] == 2 and latest["rows"] == 3
    # readLatest: schema pins nothing, so every query plans at the latest version
    assert _serve({"op": "schema", "options": {**options, "readLatest": "true"}}).frame()["version"] is None
    # version/tag: pinned to what they name
    assert _serve({"op": "schema", "options": {**options, "version": "1"}}).frame()["version"] == 1


def test_worker_honours_push_filters_false(events):
    options, _ = events
    offered = [{"type": "GreaterThan", "attribute": ["id"], "value": 5}]
    assert _serve({"op": "filters", "options": options, "filters": offered}).frame() == {
        "sql": "(`id` > 5)",
        "pushed": [0],
    }
    off = {**options, "pushfilters": "false"}
    assert _serve({"op": "filters", "options": off, "filters": offered}).frame() == {"sql": None, "pushed": []}


def test_worker_reuses_and_then_closes_its_namespace(events, closed_namespaces):
    opened, closed = closed_namespaces
    options, _ = events
    replies = _serve(
        {"op": "schema", "options": options},
        {"op": "schema", "options": {**options, "Table": "t"}},
    )
    assert replies.frame()["version"] == replies.frame()["version"] == 1
    assert len(opened) == 1  # both requests used one connection
    assert closed == opened  # closed when the JVM closed the worker's stdin
    assert resolving._namespaces == {}


class _FakeSession:
    """Just the registration call register() makes: no JVM source named lance."""

    class dataSource:  # noqa: N801 - the attribute name pyspark uses
        registered: list = []

        @classmethod
        def register(cls, source):
            cls.registered.append(source.name())


def test_register_without_the_jar_warns_once_with_the_fix(monkeypatch):
    from lance_ns.spark import jar

    monkeypatch.setattr(dsrc, "_warned_python_path", False)
    monkeypatch.setattr(jar, "jar_path", lambda: "/cache/lance-ns-spark-0123.jar")
    with pytest.warns(UserWarning) as caught:
        assert dsrc.register(_FakeSession()) is False
    message = str(caught[0].message)
    assert "spark.jars='/cache/lance-ns-spark-0123.jar'" in message
    assert "spark.driver.extraJavaOptions" in message and "-Darrow.enable_unsafe_memory_access=true" in message
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dsrc.register(_FakeSession())  # once per process
    # no jar can be built here: the command that prints its path, and the JDK it needs
    monkeypatch.setattr(dsrc, "_warned_python_path", False)
    monkeypatch.setattr(jar, "jar_path", lambda: None)
    with pytest.warns(UserWarning, match="python -m lance_ns.spark.jar"):
        dsrc.register(_FakeSession())
    # turned off on purpose: silent
    monkeypatch.setattr(dsrc, "_warned_python_path", False)
    monkeypatch.setenv("LANCE_NS_SPARK_BRIDGE", "0")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dsrc.register(_FakeSession())
