"""Fixtures: our server over a real backend, on 127.0.0.1 and a free port."""

from __future__ import annotations

import io

import pyarrow as pa
import pytest

import lance_ns
from lance_ns.server import create_app, run_server_in_thread
from tests.conformance.backends.rest import serving_backend


def arrow_stream(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue()


def sample(n: int = 5, start: int = 0) -> pa.Table:
    return pa.table({"id": pa.array(range(start, start + n), pa.int64()), "name": [f"n{i}" for i in range(start, start + n)]})


@pytest.fixture
def backend(tmp_path):
    return serving_backend(str(tmp_path / "lake"))


@pytest.fixture
def server(backend):
    """A real HTTP server over ``backend``; yields its handle (``.url``)."""
    with run_server_in_thread(backend, max_body_bytes=1 << 20) as handle:
        yield handle


@pytest.fixture
def http(server):
    import httpx

    with httpx.Client(base_url=server.url, timeout=30) as c:
        yield c


@pytest.fixture
def client(server):
    ns = lance_ns.connect("rest", {"uri": server.url, "max_retries": 0})
    yield ns
    ns.close()


@pytest.fixture
def app(backend):
    return create_app(backend, max_body_bytes=1 << 20)
