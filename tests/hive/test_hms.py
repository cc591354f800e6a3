"""Hive backend behaviour against the REAL Hive Metastore 2.3.10 (tests/services/hms.py):
table objects as HMS stores them, non-Lance tables, database properties,
names, the connection pool, the hive3 degraded mode, and S3 locations."""

from __future__ import annotations

import os
import threading
import time

import lance
import pyarrow as pa
import pytest
from lance_namespace import LanceNamespaceError
from pymetastore.hive_metastore import ttypes as hms

import lance_ns


def code_of(fn, *args):
    with pytest.raises(LanceNamespaceError) as info:
        fn(*args)
    return int(info.value.code)


def sample(n=5, start=0):
    return pa.table({"id": pa.array(range(start, start + n), pa.int64())})


# -- table objects ----------------------------------------------------------------------


def test_table_is_external_and_metastore_never_deletes_its_data(hive2, raw, db):
    tid = [db, "events"]
    lance.write_dataset(sample(5), namespace_client=hive2, table_id=tid, mode="create")
    t = raw.get_table(db, "events")
    assert t.tableType == "EXTERNAL_TABLE"
    assert t.parameters["EXTERNAL"] == "TRUE" and t.parameters["table_type"] == "lance"
    location = hive2.describe_table({"id": tid}).location
    assert not location.startswith("file:")  # HMS's "file:/x" is handed back as the caller's "/x"
    assert t.sd.location.endswith(location)
    # Even a Hive client dropping it WITH deleteData keeps an external table's files.
    raw.drop_table(db, "events", True)
    assert lance.dataset(location).count_rows() == 5
    hive2.register_table({"id": tid, "location": location})
    assert lance.dataset(namespace_client=hive2, table_id=tid).count_rows() == 5


def _hive_managed_table(db, name, location):
    return hms.Table(
        tableName=name,
        dbName=db,
        tableType="MANAGED_TABLE",
        parameters={"comment": "made by Hive"},
        partitionKeys=[],
        sd=hms.StorageDescriptor(
            cols=[hms.FieldSchema(name="x", type="int")],
            location=location,
            inputFormat="org.apache.hadoop.mapred.TextInputFormat",
            outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
            serdeInfo=hms.SerDeInfo(serializationLib="org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe", parameters={}),
            bucketCols=[],
            sortCols=[],
            numBuckets=-1,
            compressed=False,
            parameters={},
        ),
    )


def test_non_lance_table_is_invalid_input_and_never_touched(hive2, raw, db, tmp_path):
    raw.create_table(_hive_managed_table(db, "plain", str(tmp_path / "plain")))
    try:
        tid = [db, "plain"]
        assert code_of(hive2.describe_table, {"id": tid}) == 13
        assert code_of(hive2.table_exists, {"id": tid}) == 13
        assert code_of(hive2.drop_table, {"id": tid}) == 13
        assert code_of(hive2.deregister_table, {"id": tid}) == 13
        assert code_of(hive2.rename_table, {"id": tid, "new_table_name": "other"}) == 13
        assert code_of(hive2.declare_table, {"id": tid}) == 5
        assert hive2.list_tables({"id": [db]}).tables == []
        assert hive2.list_all_tables({"id": [db]}).tables == []
        assert code_of(hive2.drop_namespace, {"id": [db]}) == 3
        assert code_of(hive2.drop_namespace, {"id": [db], "behavior": "Cascade"}) == 3
        assert raw.get_all_tables(db) == ["plain"]  # nothing lost
    finally:
        raw.drop_table(db, "plain", False)


def _upstream_lance_table(db, name, location):
    """A Lance table as lance-namespace-impls' Hive2Namespace creates it (Java,
    ``doCreateTable``): tableType EXTERNAL_TABLE but no EXTERNAL=TRUE parameter,
    ``table_type=lance`` and ``managed_by=storage``, no columns, Lance's
    input/output formats and serde.  HMS 2.3 stores it as a MANAGED_TABLE."""
    return hms.Table(
        tableName=name,
        dbName=db,
        tableType="EXTERNAL_TABLE",
        parameters={"table_type": "lance", "managed_by": "storage"},
        partitionKeys=[],
        sd=hms.StorageDescriptor(
            cols=[],
            location=location,
            inputFormat="com.lancedb.lance.mapred.LanceInputFormat",
            outputFormat="com.lancedb.lance.mapred.LanceOutputFormat",
            serdeInfo=hms.SerDeInfo(serializationLib="com.lancedb.lance.mapred.LanceSerDe"),
        ),
    )


def test_upstream_managed_lance_tables_are_visible_renamable_and_dropped_safely(metastore, hive2, raw, db, tmp_path):
    db_location = raw.get_database(db).locationUri.removeprefix("file:")
    tables = {}
    for name in ("up", "up_purge"):
        location = f"{db_location}/{name}.lance"  # the upstream default: <database location>/<name>.lance
        lance.write_dataset(sample(3), location)
        raw.create_table(_upstream_lance_table(db, name, location))
        assert raw.get_table(db, name).tableType == "MANAGED_TABLE"  # what HMS made of it
        tables[name] = location
    # listed and described (reads), by hive2 and by hive3 (the 2.3 metastore's default catalog)
    assert hive2.list_tables({"id": [db]}).tables == ["up", "up_purge"]
    assert hive2.list_all_tables({"id": [db]}).tables == [f"{db}$up", f"{db}$up_purge"]
    assert hive2.describe_table({"id": [db, "up"]}).location == tables["up"]
    assert lance.dataset(namespace_client=hive2, table_id=[db, "up"]).count_rows() == 3
    hive3 = lance_ns.connect("hive3", {"uri": metastore.uri, "root": str(tmp_path / "h3")})
    try:
        assert hive3.list_tables({"id": ["hive", db]}).tables == ["up", "up_purge"]
        assert hive3.describe_table({"id": ["hive", db, "up"]}).location == tables["up"]
    finally:
        hive3.close()
    # renamed by one alter_table: the data stays where it is, the table stays MANAGED
    hive2.rename_table({"id": [db, "up"], "new_table_name": "up2"})
    assert raw.get_table(db, "up2").tableType == "MANAGED_TABLE"
    assert hive2.describe_table({"id": [db, "up2"]}).location == tables["up"]
    assert lance.dataset(namespace_client=hive2, table_id=[db, "up2"]).count_rows() == 3
    # DropTable removes the entry (deleteData=false: not even HMS deletes the files); data stays ...
    hive2.drop_table({"id": [db, "up2"]})
    assert code_of(hive2.describe_table, {"id": [db, "up2"]}) == 4
    assert lance.dataset(tables["up"]).count_rows() == 3
    # ... unless purge is asked explicitly
    hive2.drop_table({"id": [db, "up_purge"], "context": {"purge": "true"}})
    assert not os.path.exists(os.path.join(tables["up_purge"], "_versions"))  # (a dropped-marker may stay)


def test_rename_refuses_a_managed_table_hive_would_move(hive2, raw, db, tmp_path):
    """HMS 2.3 moves a MANAGED_TABLE's directory on rename when it is
    ``<database location>/<name>``: lance-ns keeps data where it is, so it refuses."""
    location = raw.get_database(db).locationUri.removeprefix("file:") + "/inplace"
    lance.write_dataset(sample(2), location)
    raw.create_table(_upstream_lance_table(db, "inplace", location))
    assert code_of(hive2.rename_table, {"id": [db, "inplace"], "new_table_name": "moved"}) == 13
    assert raw.get_all_tables(db) == ["inplace"]
    assert lance.dataset(location).count_rows() == 2
    hive2.drop_table({"id": [db, "inplace"]})


def test_table_type_is_case_insensitive_on_read(hive2, raw, db, tmp_path):
    t = _hive_managed_table(db, "upper", str(tmp_path / "upper"))
    t.tableType = "EXTERNAL_TABLE"
    t.parameters = {"EXTERNAL": "TRUE", "TABLE_TYPE": "LANCE"}
    raw.create_table(t)
    assert hive2.list_tables({"id": [db]}).tables == ["upper"]
    assert hive2.describe_table({"id": [db, "upper"]}).location.endswith("upper")


# -- databases --------------------------------------------------------------------------


def test_database_special_properties(hive2, raw, db_name, tmp_path):
    loc = str(tmp_path / "dbloc")
    props = {
        "database.description": "team data",
        "database.location-uri": loc,
        "database.owner": "alice",
        "database.owner-type": "ROLE",
        "purpose": "tests",
    }
    hive2.create_namespace({"id": [db_name], "properties": props})
    try:
        got = hive2.describe_namespace({"id": [db_name]}).properties
        assert got == props
        d = raw.get_database(db_name)  # stored in the Database object's own fields
        assert (d.description, d.ownerName, d.ownerType) == ("team data", "alice", hms.PrincipalType.ROLE)
        assert d.locationUri.endswith(loc) and d.parameters == {"purpose": "tests"}
    finally:
        hive2.drop_namespace({"id": [db_name]})
    assert code_of(hive2.create_namespace, {"id": [db_name], "properties": {"database.owner-type": "BOSS"}}) == 13
    assert db_name not in raw.get_all_databases()


def test_default_database_location_comes_from_the_metastore(hive2, raw, db):
    props = hive2.describe_namespace({"id": [db]}).properties
    assert raw.get_database(db).locationUri.startswith("file:")
    assert props["database.location-uri"].startswith("/")  # "file:/x" handed back as "/x"
    assert props["database.location-uri"].endswith(f"/{db}.db")


def test_upper_case_names_are_refused_and_nothing_written(hive2, raw, db):
    # HMS itself lowercases: a raw create of "MixedCase" is listed as "mixedcase" ...
    assert code_of(hive2.create_namespace, {"id": [db.upper()]}) == 13
    assert code_of(hive2.declare_table, {"id": [db, "Events"]}) == 13
    assert code_of(hive2.describe_table, {"id": [db, "Events"]}) == 13
    assert raw.get_all_tables(db) == []
    assert db.upper() not in raw.get_all_databases()


def test_metastore_name_rules_are_invalid_input(hive2, raw):
    assert code_of(hive2.create_namespace, {"id": ["bad-name"]}) == 13  # HMS: InvalidObjectException
    assert "bad-name" not in raw.get_all_databases()


def test_default_database_cannot_be_dropped(hive2, raw):
    assert code_of(hive2.drop_namespace, {"id": ["default"]}) in (3, 13)
    assert "default" in raw.get_all_databases()


# -- connections ------------------------------------------------------------------------


def _sockets_to(port: int, pid: int) -> int:
    """Established TCP connections of process ``pid`` to ``port`` (from /proc)."""
    inodes = set()
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    except OSError:  # the process has ended
        return 0
    count = 0
    for table in ("/proc/self/net/tcp", "/proc/self/net/tcp6"):
        with open(table) as f:
            for line in f.readlines()[1:]:
                cols = line.split()
                remote_port = int(cols[2].rsplit(":", 1)[1], 16)
                if remote_port == port and cols[3] == "01" and cols[9] in inodes:  # 01 = ESTABLISHED
                    count += 1
    return count


#: 16 threads sharing one hive2 namespace with a pool of 3, in a process of its own so
#: that the sockets the test counts are that namespace's alone (in the test process,
#: other tests' clients could open connections to the metastore meanwhile)
_POOL_WORKLOAD = """
import json, sys, threading
import lance_ns
uri, root, db = sys.argv[1:4]
ns = lance_ns.connect("hive2", {"uri": uri, "root": root, "client.pool-size": "3"})
names = [f"t{i:02d}" for i in range(16)]
errors = []
def work(name):
    try:
        ns.declare_table({"id": [db, name]})
        for _ in range(5):
            assert ns.describe_table({"id": [db, name]}).location.endswith(name + ".lance")
            ns.namespace_exists({"id": [db]})
    except Exception as e:
        errors.append(repr(e))
threads = [threading.Thread(target=work, args=(n,)) for n in names]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(json.dumps({"errors": errors, "tables": ns.list_tables({"id": [db]}).tables,
                  "peak": ns.pool.peak_in_use, "opened": ns.pool.opened}), flush=True)
sys.stdin.read()  # connections stay open until the test has looked
ns.close()
"""


def test_pool_size_is_respected_under_16_threads(metastore, db, tmp_path):
    import json
    import subprocess
    import sys

    child = subprocess.Popen([sys.executable, "-c", _POOL_WORKLOAD, metastore.uri, str(tmp_path), db],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    seen, stop = [0], threading.Event()

    def sample_sockets():
        while not stop.is_set():
            seen[0] = max(seen[0], _sockets_to(metastore.port, child.pid))
            time.sleep(0.005)

    sampler = threading.Thread(target=sample_sockets)
    sampler.start()
    try:
        result = json.loads(child.stdout.readline())
    finally:
        stop.set()
        sampler.join()
        child.stdin.close()
        child.wait(60)
    assert result["errors"] == []
    assert result["tables"] == [f"t{i:02d}" for i in range(16)]
    assert result["peak"] == 3  # all three used, never more
    assert result["opened"] <= 3
    assert 1 <= seen[0] <= 3  # what the OS saw, independently of the pool's counters


def test_unreachable_metastore_is_service_unavailable(tmp_path):
    from tests.services.hms import free_port

    ns = lance_ns.connect("hive2", {"uri": f"thrift://127.0.0.1:{free_port()}", "client.connect-timeout-ms": "2000"})
    t0 = time.monotonic()
    assert code_of(ns.list_namespaces, {"id": []}) == 17
    assert code_of(ns.describe_table, {"id": ["db", "t"]}) == 17
    assert time.monotonic() - t0 < 4


def test_second_metastore_uri_is_used_when_the_first_is_down(metastore):
    from tests.services.hms import free_port

    ns = lance_ns.connect("hive2", {"uri": f"thrift://127.0.0.1:{free_port()},{metastore.uri}"})
    assert "default" in ns.list_namespaces({"id": []}).namespaces
    ns.close()


def test_silent_metastore_times_out_with_service_unavailable():
    """A server that accepts connections but never answers (a hung metastore)."""
    import socket

    with socket.socket() as srv:
        srv.bind(("127.0.0.1", 0))
        srv.listen(8)  # the kernel completes the handshake; nobody ever reads
        port = srv.getsockname()[1]
        ns = lance_ns.connect("hive2", {"uri": f"thrift://127.0.0.1:{port}", "client.socket-timeout-ms": "500"})
        t0 = time.monotonic()
        assert code_of(ns.describe_namespace, {"id": ["db"]}) == 17
        elapsed = time.monotonic() - t0
        assert 0.4 <= elapsed < 2.0
        ns.close()


def test_bad_uri_is_invalid_input():
    for uri in ("http://h:1", "thrift://nohostport", "thrift://h:notaport", ""):
        with pytest.raises(LanceNamespaceError) as info:
            lance_ns.connect("hive2", {"uri": uri})
        assert info.value.code == 13


# -- hive3 on a Hive 2 metastore --------------------------------------------------------


def test_hive3_degrades_to_the_single_default_catalog(metastore, raw, db, tmp_path):
    ns = lance_ns.connect("hive3", {"uri": metastore.uri, "root": str(tmp_path)})
    try:
        assert ns.list_namespaces({"id": []}).namespaces == ["hive"]
        assert not ns.has_catalogs
        assert db in ns.list_namespaces({"id": ["hive"]}).namespaces
        ns.declare_table({"id": ["hive", db, "t"]})
        assert ns.list_tables({"id": ["hive", db]}).tables == ["t"]
        with pytest.raises(LanceNamespaceError) as info:
            ns.create_namespace({"id": ["other"]})
        assert info.value.code == 0 and "catalog" in str(info.value)
        dbs_before = sorted(raw.get_all_databases())
        assert code_of(ns.drop_namespace, {"id": ["hive"], "behavior": "Cascade"}) == 0
        assert sorted(raw.get_all_databases()) == dbs_before  # a catalog drop never empties HMS
        for call, req in [
            (ns.describe_namespace, {"id": ["other"]}),
            (ns.list_namespaces, {"id": ["other"]}),
            (ns.create_namespace, {"id": ["other", "x"]}),
            (ns.list_tables, {"id": ["other", db]}),
            (ns.declare_table, {"id": ["other", db, "t"]}),
        ]:
            assert code_of(call, req) == 1, call.__name__
        assert code_of(ns.describe_table, {"id": ["other", db, "t"]}) == 4
        assert code_of(ns.declare_table, {"id": ["hive", "t"]}) == 13  # tables live at level 2
    finally:
        ns.close()


# -- s3:// locations (moto S3) ----------------------------------------------------------


def test_s3_locations_end_to_end(metastore, raw, db_name):
    import boto3

    from tests.services.hms import S3_BUCKETS
    from tests.services.moto import client_kwargs, s3_storage_options, shared_endpoint

    endpoint = shared_endpoint()
    bucket = S3_BUCKETS[0]
    s3 = boto3.client("s3", **client_kwargs(endpoint))
    try:
        s3.create_bucket(Bucket=bucket)
    except s3.exceptions.BucketAlreadyOwnedByYou:
        pass
    opts = s3_storage_options(endpoint)
    props = {"uri": metastore.uri, "root": f"s3://{bucket}/wh"} | {f"storage.{k}": v for k, v in opts.items()}
    ns = lance_ns.connect("hive2", props)
    ns.create_namespace({"id": [db_name]})
    try:
        tid = [db_name, "s3t"]
        lance.write_dataset(sample(7), namespace_client=ns, table_id=tid, mode="create")
        lance.write_dataset(sample(3, 7), namespace_client=ns, table_id=tid, mode="append")
        desc = ns.describe_table({"id": tid})
        assert desc.location == f"s3://{bucket}/wh/{db_name}/s3t.lance"
        assert raw.get_table(db_name, "s3t").sd.location == desc.location
        assert lance.dataset(namespace_client=ns, table_id=tid).count_rows() == 10
        keys = s3.list_objects_v2(Bucket=bucket, Prefix=f"wh/{db_name}/s3t.lance/").get("KeyCount", 0)
        assert keys > 0  # the data is in S3, not on the metastore's disk
        ns.drop_table({"id": tid})
        # the data is gone; only the marker that keeps the directory from being reused stays
        left = s3.list_objects_v2(Bucket=bucket, Prefix=f"wh/{db_name}/s3t.lance/").get("Contents", [])
        objects = [o["Key"] for o in left if not o["Key"].endswith("/")]  # pyarrow leaves S3 directory markers
        assert objects == [f"wh/{db_name}/s3t.lance/.lance-dropped"]
    finally:
        ns.drop_namespace({"id": [db_name], "mode": "Skip", "behavior": "Cascade"})
        ns.close()
