"""The server does transport only (issue 16 item 5): an HTTP request's
identifier is validated once, by the server's pipeline (with the backend's own
limits, for ours), never again by the backend's operation or the rules an
operation calls itself (InsertIntoTable describes its table, DropTable finds
it...); an Arrow body is decoded once, by the server, and our backends get the
table it decoded."""

from __future__ import annotations

import io
import warnings

import lance
import pyarrow as pa
import pytest
from lance_namespace import DescribeNamespaceResponse, LanceNamespace

import lance_ns
from lance_ns import identifiers
from lance_ns.server import create_app

warnings.filterwarnings("ignore", message=".*httpx.*")
from starlette.testclient import TestClient  # noqa: E402

ARROW = {"content-type": "application/vnd.apache.arrow.stream"}


def ipc(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue()


@pytest.fixture
def checked_names(monkeypatch) -> list:
    """Every identifier component checked: a whole id of plain names by validate_id's one
    match (identifiers._plain_id), any other name by name_problem."""
    seen: list = []
    real_name, real_id = identifiers.name_problem, identifiers._plain_id
    monkeypatch.setattr(identifiers, "name_problem", lambda name: seen.append(name) or real_name(name))

    def plain_id(parts):
        plain = real_id(parts)
        if plain:
            seen.extend(parts)
        return plain

    monkeypatch.setattr(identifiers, "_plain_id", plain_id)
    return seen


@pytest.mark.parametrize("impl", ["dir", "memory"])
def test_an_id_is_validated_once_per_http_request(impl, tmp_path, checked_names):
    ns = lance_ns.connect(impl, {"root": str(tmp_path / "lake")})
    http = TestClient(create_app(ns, log_requests=False, ui=False))
    requests = [
        ("post", "/v1/namespace/db/create", {"json": {}}),
        ("post", "/v1/table/db$t/create", {"content": ipc(pa.table({"x": [1]})), "headers": ARROW}),
        ("post", "/v1/table/db$t/describe", {"json": {}}),
        ("post", "/v1/table/db$t/exists", {"json": {"version": 1}}),
        ("post", "/v1/table/db$t/insert", {"content": ipc(pa.table({"x": [2]})), "headers": ARROW}),
        ("post", "/DescribeTable", {"json": {"id": ["db", "t"]}}),
        ("get", "/v1/namespace/db/table/list", {}),
        ("post", "/v1/table/db$t/drop", {"json": {}}),
    ]
    for method, path, kwargs in requests:
        checked_names.clear()
        r = getattr(http, method)(path, **kwargs)
        assert r.status_code == 200, (path, r.text)
        expected = ["db", "t"] if "db$t" in path or path == "/DescribeTable" else ["db"]
        assert checked_names == expected, path
    ns.close()


@pytest.mark.parametrize("impl", ["dir", "memory"])
def test_an_arrow_body_is_decoded_once_per_http_request(impl, tmp_path, monkeypatch):
    decoded = []
    real = pa.ipc.open_stream
    monkeypatch.setattr(pa.ipc, "open_stream", lambda *a, **k: decoded.append(1) or real(*a, **k))
    ns = lance_ns.connect(impl, {"root": str(tmp_path / "lake")})
    http = TestClient(create_app(ns, log_requests=False, ui=False))
    assert http.post("/v1/namespace/db/create", json={}).status_code == 200
    for path, rows in (("/v1/table/db$t/create", [1]), ("/v1/table/db$t/insert", [2, 3])):
        decoded.clear()
        r = http.post(path, content=ipc(pa.table({"x": rows})), headers=ARROW)
        assert r.status_code == 200, (path, r.text)
        assert len(decoded) == 1, path
    location = ns.describe_table({"id": ["db", "t"]}).location
    assert sorted(lance.dataset(location).to_table()["x"].to_pylist()) == [1, 2, 3]  # what was decoded, written
    ns.close()


def test_a_backend_that_is_not_ours_gets_checked_ids_once(checked_names):
    class Foreign(LanceNamespace):
        def namespace_id(self):
            return "foreign"

        def describe_namespace(self, request):
            return DescribeNamespaceResponse(properties={"seen": ".".join(request.id)})

    http = TestClient(create_app(Foreign(), log_requests=False, ui=False))
    r = http.post("/v1/namespace/a$b/describe", json={})
    assert r.status_code == 200 and r.json()["properties"] == {"seen": "a.b"}
    assert checked_names == ["a", "b"]
    bad = http.post("/v1/namespace/a$..$b/describe", json={})
    assert bad.status_code == 400 and bad.json()["code"] == 13
