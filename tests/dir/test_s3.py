"""The directory namespace on S3 (a real moto server): data, races, cleanup."""

from __future__ import annotations

import threading
import uuid

import pytest

import lance_ns
from lance_ns.impls.dir.manifest import Exists, Manifest
from lance_ns.impls.dir.view import NAMESPACE, TABLE, Entry
from tests.services.moto import moto_bucket

from .conftest import code, ipc, sample

BUCKET = "lance-dir-tests"


@pytest.fixture(scope="module")
def s3():
    with moto_bucket(BUCKET) as bucket:
        yield bucket


@pytest.fixture
def s3_root(s3):
    client, opts = s3
    prefix = f"t{uuid.uuid4().hex[:8]}"
    props = {"root": f"s3://{BUCKET}/{prefix}", **{f"storage.{k}": v for k, v in opts.items()}}
    return client, prefix, props, opts


def keys(client, prefix):
    out = client.list_objects_v2(Bucket=BUCKET, Prefix=prefix + "/").get("Contents", [])
    return {o["Key"][len(prefix) + 1:] for o in out}


def test_data_operations_and_cascade_drop(s3_root):
    client, prefix, props, _ = s3_root
    ns = lance_ns.connect("dir", props)
    ns.create_namespace({"id": ["a"]})
    out = ns.create_table({"id": ["a", "t"]}, ipc(sample(5)))
    assert out.location.startswith(f"s3://{BUCKET}/{prefix}/")
    ns.insert_into_table({"id": ["a", "t"]}, ipc(sample(3, 5)))
    assert ns.count_table_rows({"id": ["a", "t"]}).count == 8
    dirname = out.location.rsplit("/", 1)[1]
    assert any(k.startswith(dirname + "/") for k in keys(client, prefix))
    ns.drop_namespace({"id": ["a"], "behavior": "Cascade"})
    assert not any(k.startswith(dirname + "/") for k in keys(client, prefix))
    assert code(ns.namespace_exists, {"id": ["a"]}) == 1


def test_stale_writer_loses_on_s3(s3_root):
    """Lance's conditional commit on S3: a writer that checked an old version cannot overwrite."""
    _, prefix, _, opts = s3_root
    root = f"s3://{BUCKET}/{prefix}"
    a, b = Manifest(root, opts), Manifest(root, opts)
    a.insert(Entry("seed", NAMESPACE))
    b.refresh()
    b.refresh = lambda: None
    a.insert(Entry("x", TABLE, "x.lance"))
    with pytest.raises(Exists):
        b.insert(Entry("x", TABLE, "y.lance"))
    b.insert(Entry("z", TABLE, "z.lance"))  # b's next write lands after a's, losing nothing
    fresh = Manifest(root, opts)
    assert fresh.get("x").location == "x.lance"
    assert fresh.get("seed") is not None and fresh.get("z") is not None


def test_concurrent_declares_on_s3_have_one_winner(s3_root):
    _, _, props, _ = s3_root
    lance_ns.connect("dir", props).create_namespace({"id": ["n"]})
    clients = [lance_ns.connect("dir", props) for _ in range(3)]
    for c in clients:
        c.list_tables({"id": ["n"]})
    barrier, results = threading.Barrier(3), []

    def go(c):
        barrier.wait()
        try:
            c.declare_table({"id": ["n", "t"]})
            results.append("won")
        except lance_ns.errors.TableAlreadyExistsError:
            results.append("exists")

    threads = [threading.Thread(target=go, args=(c,)) for c in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(results) == ["exists", "exists", "won"]
    assert clients[0].list_tables({"id": ["n"]}).tables == ["t"]


def test_a_store_honouring_conditional_puts_serves_writes_and_the_probe_leaves_nothing(s3_root):
    client, prefix, props, _ = s3_root
    from lance_ns import storage

    storage._CONDITIONAL_PUT.clear()  # probed afresh, against moto's S3 (its conditional PUTs hold)
    ns = lance_ns.connect("dir", props)
    assert ns.write_refusal is None
    ns.create_namespace({"id": ["ok"]})
    assert not [k for k in keys(client, prefix) if "conditional-put-probe" in k]


def test_a_store_ignoring_conditional_puts_refuses_writes_and_serves_reads(s3_root, monkeypatch):
    """An object store where a second If-None-Match: * PUT of one key succeeds would let two
    racing commits both be acknowledged: the namespace says so at connect (an ERROR line)
    and refuses every write (code 0) rather than lose one; reads go on."""
    client, prefix, props, _ = s3_root
    from lance_ns import storage

    lance_ns.connect("dir", props).create_namespace({"id": ["before"]})  # written while the store held
    monkeypatch.setattr(storage, "_CONDITIONAL_PUT", {})
    monkeypatch.setattr(storage, "put_if_absent", lambda location, data, opts=None: True)  # every PUT lands
    ns = lance_ns.connect("dir", props)
    assert "ignores conditional PUTs" in ns.write_refusal
    assert code(ns.create_namespace, {"id": ["after"]}) == 0
    assert code(ns.declare_table, {"id": ["before", "t"]}) == 0
    assert ns.list_namespaces({"id": []}).namespaces == ["before"]
