"""A small lake for the catalog browser: nested namespaces, tables with history, a
tag, an index, nested types, a declared-only table and hostile names and values."""

from __future__ import annotations

import datetime as dt

import lance
import pyarrow as pa
import pytest

import lance_ns

#: user data that must reach the page escaped, never as markup
HOSTILE_NAME = "<img src=x onerror=alert(1)>&co\"q"
HOSTILE_VALUE = "<script>document.title='pwned'</script>"
SECRET = "hunter2-must-not-show"


def orders(start: int, n: int) -> pa.Table:
    point = pa.struct([("x", pa.float64()), ("y", pa.float64())])
    return pa.table({
        "id": pa.array(range(start, start + n), pa.int64()),
        "customer": pa.array([f"cust-{i}" for i in range(start, start + n)]),
        "placed": pa.array([dt.datetime(2026, 1, 1) + dt.timedelta(hours=i) for i in range(start, start + n)],
                           pa.timestamp("us", tz="UTC")),
        "where": pa.array([{"x": float(i), "y": -float(i)} for i in range(start, start + n)], point),
        "items": pa.array([[{"sku": f"s{i}", "qty": i}] for i in range(start, start + n)],
                          pa.list_(pa.struct([("sku", pa.string()), ("qty", pa.int32())]))),
        "embedding": pa.array([[float(i)] * 4 for i in range(start, start + n)], pa.list_(pa.float32(), 4)),
    })


def build_lake(root: str) -> lance_ns.DirectoryNamespace:
    ns = lance_ns.connect("dir", {"root": root})
    ns.create_namespace({"id": ["sales"], "properties": {"owner": "team-sales", "api_token": SECRET}})
    ns.create_namespace({"id": ["sales", "eu"]})
    ns.create_namespace({"id": ["sales", "us"]})
    ns.create_namespace({"id": ["ops"]})
    ds = lance.write_dataset(orders(0, 5), namespace_client=ns, table_id=["sales", "orders"], mode="create")
    ds = lance.write_dataset(orders(5, 3), namespace_client=ns, table_id=["sales", "orders"], mode="append")
    ds.tags.create("release-1", ds.version)
    ds.create_scalar_index("id", "BTREE", name="id_idx")
    lance.write_dataset(pa.table({"note": [HOSTILE_VALUE, "plain"]}), namespace_client=ns,
                        table_id=["sales", HOSTILE_NAME], mode="create")
    lance.write_dataset(pa.table({"name": ["anna", "bo"]}), namespace_client=ns,
                        table_id=["sales", "eu", "customers"], mode="create")
    lance.write_dataset(pa.table({"k": [1]}), namespace_client=ns, table_id=["top_level"], mode="create")
    ns.declare_table({"id": ["sales", "pending"]})
    return ns


@pytest.fixture
def lake(tmp_path):
    ns = build_lake(str(tmp_path / "lake"))
    yield ns
    ns.close()
