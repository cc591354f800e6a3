"""Pieces of the Spark source that need no SparkSession."""

from __future__ import annotations

import os
from pathlib import Path

import lance
import numpy as np
import pyarrow as pa
import pytest
from lance_namespace import CreateNamespaceRequest, DescribeTableRequest

from lance_ns.errors import InvalidInputError, TableNotFoundError
from lance_ns.spark import datasource as dsrc
from lance_ns.spark import planning
from lance_ns.spark.options import SourceOptions
from lance_ns.spark.resolve import resolve


def test_aligned_copies_only_misaligned_batches():
    raw = pa.py_buffer(b"\0" + np.arange(10, dtype="int64").tobytes())[1:]
    odd = pa.record_batch([pa.Array.from_buffers(pa.int64(), 10, [None, raw])], names=["a"])
    assert odd.column(0).buffers()[1].address % 8 == 1
    fixed = dsrc.aligned(odd)
    assert fixed.column(0).buffers()[1].address % 8 == 0
    assert fixed.equals(odd)
    dec = pa.py_buffer(b"\0" * 8 + pa.array([1, 2], pa.decimal128(20, 1)).buffers()[1].to_pybytes())[8:]
    dec_batch = pa.record_batch([pa.Array.from_buffers(pa.decimal128(20, 1), 2, [None, dec])], names=["d"])
    if dec_batch.column(0).buffers()[1].address % 16:  # 8 mod 16: fine for int64, not for decimal128
        assert dsrc.aligned(dec_batch).column(0).buffers()[1].address % 16 == 0
    fine = pa.record_batch([pa.array([1, 2])], names=["a"])
    assert dsrc.aligned(fine) is fine


def test_conform_casts_reorders_and_sets_nullability():
    batch = pa.record_batch(
        [pa.array(["x"], pa.large_string()), pa.array([1], pa.int64())],
        schema=pa.schema([pa.field("s", pa.large_string()), pa.field("a", pa.int64(), nullable=False)]),
    )
    target = pa.schema([pa.field("a", pa.int64()), pa.field("s", pa.string())])
    out = planning.conform(batch, target)
    assert out.schema.equals(target)
    assert out.to_pylist() == [{"a": 1, "s": "x"}]


def test_read_batches_hold_about_a_fixed_number_of_bytes(tmp_path):
    narrow = pa.schema([("x", pa.float64())])
    wide = pa.schema([("v", pa.list_(pa.float32(), 1536)), ("id", pa.int64())])
    assert planning.batch_rows(narrow) == planning.MAX_BATCH_ROWS
    assert planning.batch_rows(wide) * (1536 * 4 + 8) <= planning.BATCH_BYTES
    assert planning.MIN_BATCH_ROWS <= planning.batch_rows(wide) < planning.batch_rows(narrow)
    # a scan uses it unless batchSize is given, and yields every row once
    n = planning.MAX_BATCH_ROWS + 10
    lance.write_dataset(pa.table({"x": np.arange(n, dtype="float64")}), str(tmp_path / "t"))
    for options, sizes in (({}, [planning.MAX_BATCH_ROWS, 10]), ({"batchSize": "100000"}, [100000, 100000, 62154])):
        source = dsrc.LanceDataSource({"path": str(tmp_path / "t"), **options})
        reader = source.reader(source.schema())
        got = [b.num_rows for p in reader.partitions() for b in reader.read(p)]
        assert got == sizes


def test_only_spark_workers_exempt_imports_from_gc(monkeypatch):
    import gc

    monkeypatch.delenv("SPARK_PYTHON_RUNTIME", raising=False)
    dsrc._freeze_imports()
    assert gc.get_freeze_count() == 0  # a driver or user process is left alone
    monkeypatch.setenv("SPARK_PYTHON_RUNTIME", "PYTHON_WORKER")
    try:
        dsrc._freeze_imports()
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def test_namespace_config_matches_prefix_case_insensitively():
    cfg = SourceOptions.parse({"impl": "lance.namespace.DirectoryNamespace", "directorynamespace.root": "/r"}).ns_config
    assert cfg["DirectoryNamespace.root"] == "/r"
    assert SourceOptions.parse({"path": "/x"}).ns_config is None


def test_resolve_path_and_storage_options():
    ref, declared = resolve({"path": "s3://b/t.lance", "storage.region": "us-east-1"})
    assert (ref.uri, ref.storage_options, ref.table_id, declared) == ("s3://b/t.lance", {"region": "us-east-1"}, None, False)
    with pytest.raises(InvalidInputError):
        resolve({})


def test_resolve_through_namespace_declares_only_on_create(tmp_path):
    options = {"impl": "dir", "dir.root": str(tmp_path)}
    with pytest.raises(TableNotFoundError):
        resolve({**options, "table": "t"})
    ref, declared = resolve({**options, "path": "t"}, create=True)
    assert declared and ref.table_id == ["t"] and ref.ns_config["impl"] == "dir"
    again, declared_again = resolve({**options, "path": "t"}, create=True)
    assert again.uri == ref.uri and not declared_again
    with pytest.raises(InvalidInputError):
        resolve({**options, "table": "../escape"})


def _stream_writer(tmp_path, stream_id="q1"):
    from pyspark.sql.types import LongType, StructField, StructType

    options = {"impl": "dir", "dir.root": str(tmp_path), "table": "s", "streamId": stream_id}
    return dsrc.LanceDataSource(options).streamWriter(StructType([StructField("id", LongType())]), False)


def test_stream_sink_is_idempotent_per_batch(tmp_path):
    writer = _stream_writer(tmp_path)
    batch = pa.record_batch([pa.array([1, 2, 3], pa.int64())], names=["id"])
    msg0 = writer.write(iter([batch]))
    writer.commit([msg0], 0)
    msg1 = writer.write(iter([batch]))
    writer.commit([msg1], 1)
    uri = writer.spec.ref.uri
    assert lance.dataset(uri).count_rows() == 6
    # a replay of batch 1 (after a crash between commit and checkpoint) commits nothing
    replay = writer.write(iter([batch]))
    writer.commit([replay], 1)
    ds = lance.dataset(uri)
    assert ds.version == 2 and ds.count_rows() == 6
    data_files = {p.name for p in Path(uri).glob("data/*.lance")}
    live = {f.path for frag in ds.get_fragments() for f in frag.data_files()}
    assert data_files == live  # the replay's files were deleted
    # another stream writing the same table is not confused with this one
    other = _stream_writer(tmp_path, "q2")
    other.commit([other.write(iter([batch]))], 0)
    assert lance.dataset(uri).count_rows() == 9
    assert dsrc.last_batch_id(writer.spec.ref, "q1") == 1
    assert dsrc.last_batch_id(writer.spec.ref, "q2") == 0


def test_stream_sink_needs_a_stream_id(tmp_path):
    from pyspark.sql.types import LongType, StructField, StructType

    source = dsrc.LanceDataSource({"impl": "dir", "dir.root": str(tmp_path), "table": "s"})
    with pytest.raises(InvalidInputError, match="streamId"):
        source.streamWriter(StructType([StructField("id", LongType())]), False)


def test_worker_imports_stay_light():
    # Every fresh Spark Python worker imports the source's module to unpickle
    # readers and writers; lance_namespace (and its generated REST client,
    # ~1.7 s) must not come with it.
    import subprocess
    import sys

    code = (
        "import sys, lance_ns.spark.datasource, lance_ns.spark.jobfiles, lance_ns;"
        "heavy = [m for m in ('lance_namespace', 'lance_namespace_urllib3_client', 'lance_ns.config') if m in sys.modules];"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""


def test_bridge_jar_is_built_once_and_is_optional(tmp_path, monkeypatch):
    """Without a jar built with the package for this Spark (a pyspark outside the supported
    minors, or Java sources edited since), the jar is compiled here with javac, once."""
    import zipfile

    from lance_ns.spark import jar as bridge_jar

    monkeypatch.setattr(bridge_jar, "PACKAGED", tmp_path / "no-packaged-jars")
    monkeypatch.setenv("LANCE_NS_CACHE", str(tmp_path / "cache"))
    jar = bridge_jar.jar_path()
    assert jar is not None and jar.startswith(str(tmp_path / "cache")), "CI has a JDK: the bridge must build"
    names = zipfile.ZipFile(jar).namelist()
    assert "lancens/spark/LanceProvider.class" in names
    service = zipfile.ZipFile(jar).read("META-INF/services/org.apache.spark.sql.sources.DataSourceRegister")
    assert service.decode().strip() == bridge_jar.PROVIDER
    built = os.stat(jar).st_mtime_ns
    assert bridge_jar.jar_path() == jar and os.stat(jar).st_mtime_ns == built  # cached
    monkeypatch.setenv("LANCE_NS_SPARK_BRIDGE", "0")
    assert bridge_jar.jar_path() is None
    # no JDK and nothing cached: no jar, and the lance format stays pure Python
    monkeypatch.delenv("LANCE_NS_SPARK_BRIDGE")
    monkeypatch.setenv("LANCE_NS_CACHE", str(tmp_path / "empty"))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert bridge_jar.jar_path() is None


def test_a_packaged_jar_is_used_only_while_built_from_the_sources_beside_it(tmp_path, monkeypatch):
    import shutil

    import pyspark

    from lance_ns.spark import jar as bridge_jar

    minor = bridge_jar.spark_minor(pyspark.__version__)
    packaged = bridge_jar.packaged_jar(minor)
    assert packaged is not None, "make install builds the package's jars (setup.py)"
    monkeypatch.setenv("LANCE_NS_CACHE", str(tmp_path / "cache"))
    assert bridge_jar.jar_path() == str(packaged)
    # the same jar beside sources edited since it was built: not used (javac builds a current one)
    sources = tmp_path / "bridge"
    shutil.copytree(bridge_jar.SOURCES, sources)
    (sources / "LanceProvider.java").write_text((sources / "LanceProvider.java").read_text() + "\n// edited\n")
    monkeypatch.setattr(bridge_jar, "SOURCES", sources)
    assert bridge_jar.packaged_jar(minor) is None
    rebuilt = bridge_jar.jar_path()
    assert rebuilt is not None and rebuilt.startswith(str(tmp_path / "cache"))
    assert bridge_jar.packaged_jar("3.5") is None  # a minor the package was not built for


def test_a_bridge_that_cannot_be_built_warns_and_falls_back(tmp_path, monkeypatch):
    from lance_ns.spark import jar, session

    monkeypatch.setattr(jar, "PACKAGED", tmp_path / "no-packaged-jars")  # (a pyspark the package has none for)
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    monkeypatch.setenv("LANCE_NS_CACHE", str(blocker / "cache"))  # cannot be created
    with pytest.warns(UserWarning, match="no JVM path"):
        assert session._bridge_jar() is None


# ---------------------------------------------------------- staged CTAS / RTAS (.staging)

_STAGED_SCHEMA = '{"type":"struct","fields":[{"name":"n","type":"long","nullable":true,"metadata":{}}]}'


def _staged_job(reply: dict, values: list[int]):
    """The write job of a staged table with its one task run (its fragment written and
    recorded): the job's writer and the task's commit message."""
    import json

    from pyspark.sql.types import StructType

    writer = dsrc.LanceDataSource(reply["options"]).writer(StructType.fromJson(json.loads(_STAGED_SCHEMA)), False)
    return writer, writer.write(iter([pa.record_batch([pa.array(values, pa.int64())], names=["n"])]))


@pytest.fixture
def staging_catalog(tmp_path):
    """A directory catalog's properties (as Spark gives them) and a client of its namespace."""
    import lance_ns

    catalog = {"impl": "dir", "root": str(tmp_path / "lake")}
    ns = lance_ns.connect("dir", {"root": catalog["root"]})
    ns.create_namespace(CreateNamespaceRequest(id=["db"]))
    return catalog, ns


def test_a_staged_create_shows_nothing_until_its_commit(staging_catalog):
    from lance_ns.spark import catalog as spark_catalog

    catalog, ns = staging_catalog
    reply = spark_catalog.stage_table(catalog, ["db", "new"], _STAGED_SCHEMA, {"team": "x"}, "create")
    assert reply["atomic"]
    job, message = _staged_job(reply, [1, 2])
    job.commit([message])  # the job's commit: handed over, nothing committed
    assert ns.list_tables({"id": ["db"]}).tables == []
    assert not Path(reply["stage"]["location"], "_versions").exists()
    spark_catalog.commit_staged(catalog, ["db", "new"], reply["stage"])
    described = ns.describe_table(DescribeTableRequest(id=["db", "new"]))
    assert described.location == reply["stage"]["location"] and described.properties == {"team": "x"}
    ds = lance.dataset(described.location)
    assert ds.version == 1 and ds.to_table().to_pylist() == [{"n": 1}, {"n": 2}]
    ns.drop_table({"id": ["db", "new"]})  # the namespace's own: the drop deletes the data
    assert not list(Path(described.location).glob("data/*"))


def test_an_aborted_staged_create_leaves_no_file(staging_catalog):
    from lance_ns.spark import catalog as spark_catalog

    catalog, ns = staging_catalog
    reply = spark_catalog.stage_table(catalog, ["db", "new"], _STAGED_SCHEMA, {}, "create")
    _staged_job(reply, [1, 2])
    location = Path(reply["stage"]["location"])
    assert list(location.glob("data/*"))
    spark_catalog.abort_staged(catalog, ["db", "new"], reply["stage"])
    assert not list(location.glob("data/*"))
    assert ns.list_tables({"id": ["db"]}).tables == []


def test_a_staged_replace_changes_the_table_in_its_commit_only(staging_catalog):
    from lance_ns.spark import catalog as spark_catalog

    catalog, ns = staging_catalog
    ns.create_table({"id": ["db", "t"]}, pa.table({"s": ["old"]}))
    reply = spark_catalog.stage_table(catalog, ["db", "t"], _STAGED_SCHEMA, {}, "create_or_replace")
    assert reply["atomic"] and reply["stage"]["replaces"]
    job, message = _staged_job(reply, [7])
    job.commit([message])
    location = ns.describe_table(DescribeTableRequest(id=["db", "t"])).location
    assert lance.dataset(location).to_table().to_pylist() == [{"s": "old"}]
    spark_catalog.commit_staged(catalog, ["db", "t"], reply["stage"])
    ds = lance.dataset(location)
    assert ds.version == 2 and ds.to_table().to_pylist() == [{"n": 7}]
    assert ds.checkout_version(1).to_table().to_pylist() == [{"s": "old"}]
    # new TBLPROPERTIES cannot come with the Lance commit: Spark's non-atomic path
    changed = spark_catalog.stage_table(catalog, ["db", "t"], _STAGED_SCHEMA, {"team": "y"}, "replace")
    assert changed == {"atomic": False, "replaces": True}


def test_staging_refusals_keep_their_codes(staging_catalog):
    from lance_ns.errors import NamespaceNotFoundError, TableAlreadyExistsError
    from lance_ns.spark import catalog as spark_catalog

    catalog, ns = staging_catalog
    ns.create_table({"id": ["db", "t"]}, pa.table({"n": pa.array([1], pa.int64())}))
    for table, mode, refused, code in ((["db", "t"], "create", TableAlreadyExistsError, 5),
                                       (["nope", "t"], "create", NamespaceNotFoundError, 1),
                                       (["db", "missing"], "replace", TableNotFoundError, 4)):
        with pytest.raises(refused) as caught:
            spark_catalog.stage_table(catalog, table, _STAGED_SCHEMA, {}, mode)
        assert caught.value.code == code


def test_a_download_whose_digest_differs_is_never_kept(tmp_path):
    """The Spark jars the package's jars compile against are fetched by lance_ns.spark.jar._download:
    kept only when the repository's (or the index's) digest matches."""
    import hashlib

    from lance_ns.spark import jar as bridge_jar

    source = tmp_path / "artifact.jar"
    source.write_bytes(b"jar bytes")
    url = source.as_uri()
    with pytest.raises(RuntimeError, match="SHA1 .* is not the repository's"):
        bridge_jar._download(url, tmp_path / "kept" / "a.jar", "sha1", "0" * 40, "the repository's", timeout=10)
    assert list((tmp_path / "kept").iterdir()) == []  # neither the file nor a partial one
    bridge_jar._download(url, tmp_path / "kept" / "a.jar", "sha256", hashlib.sha256(b"jar bytes").hexdigest(),
                         "the index's", timeout=10)
    assert (tmp_path / "kept" / "a.jar").read_bytes() == b"jar bytes"
