"""Our REST server over real HTTP: routes, bodies, errors, modes, auth, limits."""

from __future__ import annotations

import json
import logging
import threading
import time

import httpx
import lance
import pyarrow as pa
import pytest
from lance_namespace import LanceNamespace, ListNamespacesResponse

from lance_ns.server import ROUTES, openapi_document, run_server_in_thread

from tests.conformance.backends.rest import data_backend
from tests.services.process import wait_healthy

from .conftest import arrow_stream, sample

ARROW = {"content-type": "application/vnd.apache.arrow.stream"}


def err(resp, status, code):
    """Every error: the expected status and a JSON ErrorResponse with that integer code."""
    assert resp.status_code == status, resp.text
    body = resp.json()
    assert body["code"] == code and isinstance(body["code"], int)
    assert body["error"] and body["detail"]
    return body


def make_table(http, tid="a$t", n=5):
    r = http.post(f"/v1/table/{tid}/create", content=arrow_stream(sample(n)), headers=ARROW)
    assert r.status_code == 200, r.text
    return r.json()


# -- the route table ---------------------------------------------------------------


def test_route_table_covers_every_operation_once():
    doc = openapi_document()
    ops = {op["operationId"] for item in doc["paths"].values() for m, op in item.items() if m != "parameters"}
    assert {r.op.op_id for r in ROUTES.values()} == ops
    assert len({(r.method, r.path) for r in ROUTES.values()}) == len(ROUTES) == 54
    assert ROUTES["create_table"].body == "arrow" and ROUTES["query_table"].response == "arrow"
    assert ROUTES["count_table_rows"].response == "count"
    assert ROUTES["list_namespaces"].method == "GET"
    merge = {p.name: p.kind for p in ROUTES["merge_insert_into_table"].query_params}
    assert merge["on"] == "list" and merge["when_matched_update_all"] == "bool"


# -- namespaces and tables over the current routes -----------------------------------------


def test_namespace_routes_and_root_id(http):
    assert http.post("/v1/namespace/a/create", json={"properties": {"k": "v"}}).status_code == 200
    assert http.post("/v1/namespace/a$b/create", json={}).status_code == 200
    assert http.get("/v1/namespace/$/list").json()["namespaces"] == ["a"]
    assert http.get("/v1/namespace/a/list").json()["namespaces"] == ["b"]
    assert http.post("/v1/namespace/a/describe", json={}).json()["properties"]["k"] == "v"
    assert http.post("/v1/namespace/a$b/exists", json={}).status_code == 200
    err(http.post("/v1/namespace/zz/exists", json={}), 404, 1)
    # another delimiter, and a percent-encoded one
    assert http.post("/v1/namespace/a.b/exists", params={"delimiter": "."}, json={}).status_code == 200
    assert http.post("/v1/namespace/a%24b/exists", json={}).status_code == 200


def test_paging_over_query_params(http):
    http.post("/v1/namespace/p/create", json={})
    for i in range(5):
        assert http.post(f"/v1/table/p$t{i}/declare", json={}).status_code == 200
    page = http.get("/v1/namespace/p/table/list", params={"limit": 2}).json()
    assert page["tables"] == ["t0", "t1"] and page["page_token"]
    rest = http.get("/v1/namespace/p/table/list", params={"limit": 10, "page_token": page["page_token"]}).json()
    assert rest["tables"] == ["t2", "t3", "t4"] and not rest.get("page_token")
    err(http.get("/v1/namespace/p/table/list", params={"limit": "many"}), 400, 13)
    err(http.get("/v1/namespace/p/table/list", params={"limit": -1}), 400, 13)


@pytest.fixture
def data_http(tmp_path):
    """Our server over a namespace that implements the data operations."""
    with run_server_in_thread(data_backend(str(tmp_path / "data-lake"))) as srv:
        with httpx.Client(base_url=srv.url, timeout=30) as h:
            yield h


def test_data_routes_arrow_in_arrow_out(data_http):
    http = data_http
    http.post("/v1/namespace/a/create", json={})
    created = make_table(http, n=5)
    assert created["location"]
    r = http.post("/v1/table/a$t/insert", content=arrow_stream(sample(3, 5)), headers=ARROW)
    assert r.status_code == 200, r.text
    assert http.post("/v1/table/a$t/count_rows", json={}).json() == 8
    q = http.post("/v1/table/a$t/query", json={"k": 100, "vector": {}, "columns": {"column_names": ["id"]}})
    assert q.status_code == 200, q.text
    assert q.headers["content-type"] == "application/vnd.apache.arrow.file"
    assert sorted(pa.ipc.open_file(q.content).read_all()["id"].to_pylist()) == list(range(8))
    r = http.post("/v1/table/a$t/insert", params={"mode": "overwrite"}, content=arrow_stream(sample(2)), headers=ARROW)
    assert r.status_code == 200, r.text
    assert http.post("/v1/table/a$t/count_rows", json={}).json() == 2
    d = http.post("/v1/table/a$t/describe", params={"load_detailed_metadata": "true"}, json={}).json()
    assert d["version"] == 3 and [f["name"] for f in d["schema"]["fields"]] == ["id", "name"]


def test_absent_version_is_code_11(http, backend):
    http.post("/v1/namespace/a/create", json={})
    lance.write_dataset(sample(3), namespace_client=backend, table_id=["a", "t"], mode="create")
    assert http.post("/v1/table/a$t/describe", params={"load_detailed_metadata": "true"}, json={"version": 1}).status_code == 200
    err(http.post("/v1/table/a$t/describe", params={"load_detailed_metadata": "true"}, json={"version": 42}), 404, 11)


def test_modes_are_honoured_over_the_wire(http):
    assert http.post("/v1/namespace/m/create", json={}).status_code == 200
    err(http.post("/v1/namespace/m/create", json={}), 409, 2)
    assert http.post("/v1/namespace/m/create", json={"mode": "ExistOk"}).status_code == 200
    assert http.post("/v1/namespace/m/create", json={"mode": "exist_ok"}).status_code == 200
    assert http.post("/v1/table/m$t/declare", json={}).status_code == 200
    err(http.post("/v1/namespace/m/drop", json={}), 409, 3)
    err(http.post("/v1/namespace/m/drop", json={"behavior": "Restrict"}), 409, 3)
    assert http.post("/v1/namespace/m/drop", json={"behavior": "Cascade"}).status_code == 200
    err(http.post("/v1/namespace/m/exists", json={}), 404, 1)
    err(http.post("/v1/namespace/m/drop", json={}), 404, 1)
    assert http.post("/v1/namespace/m/drop", json={"mode": "Skip"}).status_code == 200


# -- bad input: always 400/413 with code 13, never a 500 ----------------------------------


@pytest.mark.parametrize(
    "method,path,kwargs,status",
    [
        ("post", "/v1/namespace/a/create", {"content": b"{not json", "headers": {"content-type": "application/json"}}, 400),
        ("post", "/v1/namespace/a/create", {"content": b"[1, 2]", "headers": {"content-type": "application/json"}}, 400),
        ("post", "/v1/namespace/a/create", {"content": b"id=a", "headers": {"content-type": "text/plain"}}, 400),
        ("post", "/v1/namespace/a/create", {"json": {"mode": "Sometimes"}}, 400),
        ("post", "/v1/namespace/a/drop", {"json": {"behavior": "Explode"}}, 400),
        ("post", "/v1/namespace/a$$b/create", {"json": {}}, 400),
        ("post", "/v1/namespace/a$..$b/create", {"json": {}}, 400),
        ("post", "/v1/namespace/a/create", {"json": {"id": ["b"]}}, 400),
        ("post", "/v1/namespace/a/create", {"json": {"properties": "not-a-map"}}, 400),
        ("post", "/v1/table/a$t/create", {"content": b"definitely not arrow", "headers": ARROW}, 400),
        ("post", "/v1/table/a$t/create", {"content": arrow_stream(sample(1)), "headers": {"content-type": "text/csv"}}, 400),
        ("post", "/v1/table/a$t/insert", {"content": b"", "headers": ARROW}, 400),
        ("post", "/v1/table/a$t/insert", {"content": arrow_stream(sample(1)), "headers": ARROW, "params": {"mode": "exist_ok"}}, 400),
        ("post", "/v1/table/a$t/create", {"content": arrow_stream(sample(1)), "headers": ARROW, "params": {"mode": "Bogus"}}, 400),
        ("post", "/v1/table/a$t/create", {"content": arrow_stream(sample(1)), "headers": ARROW, "params": {"properties": "[1]"}}, 400),
        ("post", "/v1/table/a$t/describe", {"json": {}, "params": {"with_table_uri": "perhaps"}}, 400),
        ("post", "/v1/table/a$t/create", {"content": b"x" * ((1 << 20) + 1), "headers": ARROW}, 413),
        ("post", "/v1/namespace/a/create", {"content": b"{" + b" " * (1 << 20) + b"}", "headers": {"content-type": "application/json"}}, 413),
    ],
)
def test_bad_input_is_code_13(http, method, path, kwargs, status):
    http.post("/v1/namespace/a/create", json={"mode": "ExistOk"})
    err(getattr(http, method)(path, **kwargs), status, 13)
    # nothing was created by the refused request
    assert http.get("/v1/namespace/a/table/list").json()["tables"] == []
    assert http.get("/v1/namespace/a/list").json()["namespaces"] == []


def test_unknown_route_and_method_have_json_errors(http):
    body = err(http.get("/v1/nothing/here"), 404, 0)
    assert "/v1/nothing/here" in body["error"]
    err(http.get("/v1/namespace/a/create"), 405, 0)


# -- the seed's POST /<OperationId> routes ---------------------------------------------


def test_seed_operation_routes(data_http):
    http = data_http
    assert http.post("/CreateNamespace", json={"id": ["s"]}).status_code == 200
    assert http.post("/ListNamespaces", json={"id": []}).json()["namespaces"] == ["s"]
    assert http.post("/GetNamespace", json={"id": ["s"]}).status_code == 200
    r = http.post("/CreateTable", params={"id": "s$t"}, content=arrow_stream(sample(4)), headers=ARROW)
    assert r.status_code == 200, r.text
    assert http.post("/GetTable", json={"id": ["s", "t"]}).json()["location"] == r.json()["location"]
    assert http.post("/CountTableRows", json={"id": ["s", "t"]}).json() == 4
    err(http.post("/GetTable", json={"id": ["s", "ghost"]}), 404, 4)
    err(http.post("/GetTable", content=b"nope", headers={"content-type": "application/json"}), 400, 13)
    err(http.post("/GetTable", json={"id": ["s", "a/b"]}), 400, 13)
    err(http.post("/InsertIntoTable", json={"id": ["s", "t"]}), 400, 13)  # no Arrow body


# -- documents, health, logging ---------------------------------------------------------


def test_openapi_health_and_request_log(http, caplog):
    assert http.get("/health").json() == {"status": "ok"}
    assert http.get("/openapi.json").json()["paths"].keys() == openapi_document()["paths"].keys()
    assert "operationId: CreateTable" in http.get("/openapi.yaml").text
    with caplog.at_level(logging.INFO, logger="lance_ns.server"):
        http.get("/v1/namespace/$/list")
    line = next(r.getMessage() for r in caplog.records if "/v1/namespace/$/list" in r.getMessage())
    assert line.startswith("GET /v1/namespace/$/list 200 ") and line.endswith("ms")


# -- auth ---------------------------------------------------------------------------------


def test_bearer_token_and_api_key(backend, caplog):
    secret = "s3cr3t-token-value"
    with run_server_in_thread(backend, auth_token=secret, api_keys=["key-1", "key-2"]) as srv:
        with caplog.at_level(logging.DEBUG), httpx.Client(base_url=srv.url) as h:
            err(h.get("/v1/namespace/$/list"), 401, 16)
            err(h.get("/v1/namespace/$/list", headers={"Authorization": "Bearer wrong"}), 401, 16)
            err(h.get("/v1/namespace/$/list", headers={"Authorization": secret}), 401, 16)
            err(h.get("/v1/namespace/$/list", headers={"x-api-key": "key-3"}), 401, 16)
            assert h.get("/v1/namespace/$/list", headers={"Authorization": f"Bearer {secret}"}).status_code == 200
            assert h.get("/v1/namespace/$/list", headers={"x-api-key": "key-2"}).status_code == 200
            assert h.get("/health").status_code == 200  # probes need no credentials
        assert secret not in caplog.text and "key-2" not in caplog.text


# -- concurrency: blocking backends do not block the event loop ----------------------------


class _Slow(LanceNamespace):
    def __init__(self):
        self.active = 0
        self.peak = 0
        self.lock = threading.Lock()

    def namespace_id(self):
        return "slow"

    def list_namespaces(self, request):
        with self.lock:
            self.active += 1
            self.peak = max(self.peak, self.active)
        time.sleep(0.5)
        with self.lock:
            self.active -= 1
        return ListNamespacesResponse(namespaces=[])


def test_blocking_backend_runs_in_a_bounded_thread_pool():
    slow = _Slow()
    with run_server_in_thread(slow, threads=4) as srv, httpx.Client(base_url=srv.url, timeout=30) as h:
        results = []
        workers = [threading.Thread(target=lambda: results.append(h.get("/v1/namespace/$/list").status_code)) for _ in range(8)]
        start = time.perf_counter()
        for w in workers:
            w.start()
        time.sleep(0.1)
        t0 = time.perf_counter()  # the event loop still answers at once
        assert h.get("/health").status_code == 200
        assert time.perf_counter() - t0 < 0.3
        for w in workers:
            w.join()
        elapsed = time.perf_counter() - start
    assert results == [200] * 8
    assert slow.peak == 4  # bounded by the pool, and really concurrent
    assert elapsed < 3.5  # two waves of 0.5 s, not eight


def test_backend_bug_is_a_json_500_with_code_18():
    class Broken(_Slow):
        def list_namespaces(self, request):
            raise RuntimeError("boom: internal detail")

    with run_server_in_thread(Broken()) as srv, httpx.Client(base_url=srv.url) as h:
        body = err(h.get("/v1/namespace/$/list"), 500, 18)
        assert "boom" not in json.dumps(body)  # internals stay in the server log


# -- python -m lance_ns.server -----------------------------------------------------------


def test_module_entry_point_serves_with_token_from_env(tmp_path):
    import os
    import socket
    import subprocess
    import sys

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "LANCE_NS_TEST_TOKEN": "from-env"}
    cmd = [sys.executable, "-m", "lance_ns.server", "--impl", "dir", "--prop", f"root={tmp_path}",
           "--port", str(port), "--auth-token-env", "LANCE_NS_TEST_TOKEN"]  # fmt: skip
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_healthy(proc, url)
        assert httpx.get(f"{url}/v1/namespace/$/list").status_code == 401
        ok = httpx.get(f"{url}/v1/namespace/$/list", headers={"Authorization": "Bearer from-env"})
        assert ok.status_code == 200 and ok.json()["namespaces"] == []
    finally:
        proc.terminate()
        out = proc.communicate(timeout=20)[0]
    assert "from-env" not in out and "GET /v1/namespace/$/list 200" in out


def test_background_server_answers_without_delayed_ack_stalls(server):
    """Regression: a socket made with proto 0 lost TCP_NODELAY (~40 ms per request)."""
    import http.client
    import statistics

    conn = http.client.HTTPConnection("127.0.0.1", server.port)
    times = []
    for _ in range(15):
        t0 = time.perf_counter()
        conn.request("GET", "/health")
        conn.getresponse().read()
        times.append(time.perf_counter() - t0)
    conn.close()
    assert statistics.median(times) < 0.025
