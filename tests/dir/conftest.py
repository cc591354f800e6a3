import io

import lance
import pyarrow as pa
import pytest

import lance_ns


@pytest.fixture
def ns(tmp_path):
    return lance_ns.connect("dir", {"root": str(tmp_path / "root")})


@pytest.fixture
def root(tmp_path):
    return tmp_path / "root"


def ipc(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    return sink.getvalue()


def sample(n=10, start=0) -> pa.Table:
    return pa.table({"id": pa.array(range(start, start + n), pa.int64()), "name": [f"n{i}" for i in range(start, start + n)]})


def code(fn, *args) -> int:
    with pytest.raises(lance_ns.errors.LanceNamespaceError) as info:
        fn(*args)
    return int(info.value.code)


def write(ns, tid, data=None, mode="create"):
    return lance.write_dataset(data if data is not None else sample(), namespace_client=ns, table_id=tid, mode=mode)
