"""Hostile and malformed input (issue 15): every class answers 4xx with an integer
``code`` (13 unless the spec names another), nothing is written, secrets are never
echoed, and the limits hold.  Each class is driven through our REST server over
real HTTP and, where it applies, through the Python API.
"""

from __future__ import annotations

import decimal
import io
import json
import logging
import os
import socket
import subprocess
import sys
import time

import httpx
import numpy as np
import pyarrow as pa
import pytest
from lance_namespace.errors import InvalidInputError, LanceNamespaceError
from lance_namespace import LanceNamespace, ListNamespacesResponse

import lance_ns
from lance_ns.server import run_server_in_thread
from tests.services.process import wait_healthy

ARROW = {"content-type": "application/vnd.apache.arrow.stream"}
BODY_LIMIT = 1 << 20


def ipc(table: pa.Table, compression: str | None = None) -> bytes:
    """IPC stream bytes, written without validation (as a hostile client would)."""
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema, options=pa.ipc.IpcWriteOptions(compression=compression)) as w:
        w.write_table(table)
    return sink.getvalue()


def err(resp: httpx.Response, status: int, code: int) -> dict:
    assert resp.status_code == status, resp.text
    assert resp.headers["content-type"].startswith("application/json"), resp.text
    body = resp.json()
    assert body["code"] == code and isinstance(body["code"], int), body
    return body


def expect_code(code: int, fn, *args):
    with pytest.raises(LanceNamespaceError) as info:
        fn(*args)
    assert info.value.code == code, info.value
    return info.value


@pytest.fixture
def ns(tmp_path):
    return lance_ns.connect("dir", {"root": str(tmp_path / "lake")})


@pytest.fixture
def http(ns):
    with run_server_in_thread(ns, max_body_bytes=BODY_LIMIT) as server, httpx.Client(base_url=server.url, timeout=30) as c:
        yield c


def tables_in(ns, parent=()) -> list[str]:
    return ns.list_tables({"id": list(parent)}).tables


def files_under(path) -> list[str]:
    return sorted(os.path.relpath(os.path.join(d, f), path) for d, _, fs in os.walk(path) for f in fs)


# -- invalid Arrow bodies: refused before anything is written ------------------------------


def _utf8():
    bad = pa.Array.from_buffers(pa.string(), 1, [None, pa.py_buffer(np.array([0, 2], np.int32).tobytes()), pa.py_buffer(b"\xff\xfe")])
    return pa.table({"s": bad})


def _dictionary():
    indices = pa.py_buffer(np.array([0, 7], np.int32).tobytes())  # the dictionary has one entry
    bad = pa.DictionaryArray.from_buffers(pa.dictionary(pa.int32(), pa.string()), 2, [None, indices], dictionary=pa.array(["a"]))
    return pa.table({"d": bad})


def _list_offsets():
    offsets = pa.py_buffer(np.array([0, 3, 1], np.int32).tobytes())  # decreasing: a Rust panic in Lance
    bad = pa.Array.from_buffers(pa.list_(pa.int32()), 2, [None, offsets], children=[pa.array([1, 2, 3], pa.int32())])
    return pa.table({"l": bad})


INVALID_ARROW = {
    "invalid-utf8": _utf8,
    "dictionary-index-out-of-range": _dictionary,
    "bad-list-offsets": _list_offsets,
    "empty-column-name": lambda: pa.table({"": [1, 2]}),
    "empty-nested-column-name": lambda: pa.table({"s": pa.StructArray.from_arrays([pa.array([1, 2])], names=[""])}),
    "empty-name-in-a-list-of-structs": lambda: pa.table(
        {"l": pa.array([[{"": 1}]], pa.list_(pa.struct([("", pa.int64())])))}
    ),
    "duplicate-column-names": lambda: pa.Table.from_arrays([pa.array([1]), pa.array([2])], names=["a", "a"]),
    "type-lance-cannot-store": lambda: pa.table({"i": pa.array([pa.MonthDayNano([1, 2, 3])], pa.month_day_nano_interval())}),
}


@pytest.mark.parametrize("case", sorted(INVALID_ARROW))
def test_invalid_arrow_body_is_refused_over_rest(http, ns, tmp_path, case):
    http.post("/v1/namespace/a/create", json={})
    body = ipc(INVALID_ARROW[case]())
    err(http.post("/v1/table/a$t/create", content=body, headers=ARROW), 400, 13)
    err(http.post("/CreateTable", params={"id": "a$t"}, content=body, headers=ARROW), 400, 13)
    assert tables_in(ns, ["a"]) == []
    # an existing table is not touched by a refused insert
    good = ipc(pa.table({"s": ["x"]}))
    assert http.post("/v1/table/a$ok/create", content=good, headers=ARROW).status_code == 200
    err(http.post("/v1/table/a$ok/insert", content=body, headers=ARROW), 400, 13)
    assert http.post("/v1/table/a$ok/count_rows", json={}).json() == 1


@pytest.mark.parametrize("case", sorted(INVALID_ARROW))
def test_invalid_arrow_body_is_refused_by_the_python_api(ns, case):
    ns.create_namespace({"id": ["a"]})
    expect_code(13, ns.create_table, {"id": ["a", "t"]}, ipc(INVALID_ARROW[case]()))
    assert tables_in(ns, ["a"]) == []


def _decimals() -> pa.Table:
    # IPC aligns buffers to 8 bytes; arrow-rs needs 16 for decimal128 and used to panic
    return pa.table({"x": pa.array([1, 2, 3, 4], pa.int8()),
                     "d": pa.array([decimal.Decimal("1.50"), None, decimal.Decimal("-2.25"), decimal.Decimal("3")],
                                   pa.decimal128(10, 2))})  # fmt: skip


def test_unaligned_decimal_body_is_stored_and_read_back_over_rest(http):
    http.post("/v1/namespace/a/create", json={})
    r = http.post("/v1/table/a$dec/create", content=ipc(_decimals()), headers=ARROW)
    assert r.status_code == 200, r.text
    r = http.post("/v1/table/a$dec/query", json={"k": 10, "vector": {}})
    assert r.status_code == 200, r.text
    got = pa.ipc.open_file(pa.py_buffer(r.content)).read_all()
    assert got.column("d").to_pylist() == _decimals().column("d").to_pylist()
    r = http.post("/v1/table/a$dec/insert", content=ipc(_decimals()), headers=ARROW)
    assert r.status_code == 200, r.text
    assert http.post("/v1/table/a$dec/count_rows", json={}).json() == 8


def test_unaligned_decimal_body_is_stored_by_the_python_api(ns):
    import lance

    ns.create_namespace({"id": ["a"]})
    resp = ns.create_table({"id": ["a", "dec"]}, ipc(_decimals()))
    assert lance.dataset(resp.location).to_table().column("d").to_pylist() == _decimals().column("d").to_pylist()


class _Panicking(LanceNamespace):
    """A backend whose call makes Lance panic for real (an unaligned decimal buffer)."""

    def __init__(self, root):
        self.root = root

    def namespace_id(self):
        return "panicking"

    def list_namespaces(self, request):
        import lance

        # read without the alignment copy: arrow-rs panics inside Lance
        table = pa.ipc.open_stream(pa.py_buffer(ipc(_decimals()))).read_all()
        lance.write_dataset(table, self.root)
        return ListNamespacesResponse(namespaces=[])


def test_a_rust_panic_is_a_json_error_with_an_integer_code(tmp_path):
    with run_server_in_thread(_Panicking(str(tmp_path / "t"))) as srv, httpx.Client(base_url=srv.url, timeout=30) as h:
        body = err(h.get("/v1/namespace/$/list"), 500, 18)
        assert "aligned" not in json.dumps(body)  # internals stay in the server log
        assert h.get("/health").status_code == 200  # and the server lives on


# -- secrets -------------------------------------------------------------------------------

SECRETS = {
    "storage.aws_access_key_id": "AKIAEXAMPLEKEYID0001",
    "storage.aws_secret_access_key": "wJalrXUtnFEMI-secret-0002",
    "storage.aws_session_token": "FwoGZXIvYXdzE-token-0003",
    "storage.azure_storage_connection_string": (
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=c2VjcmV0LWFjY291bnQta2V5LTAwMDQ=;"
        "EndpointSuffix=core.windows.net"
    ),
}
SECRET_VALUES = ["AKIAEXAMPLEKEYID0001", "wJalrXUtnFEMI-secret-0002", "FwoGZXIvYXdzE-token-0003",
                 "c2VjcmV0LWFjY291bnQta2V5LTAwMDQ="]  # fmt: skip


def test_responses_never_carry_the_servers_own_credentials(tmp_path):
    ns = lance_ns.connect("dir", {"root": str(tmp_path / "lake"), "storage.region": "eu-west-1", **SECRETS})
    with run_server_in_thread(ns) as srv, httpx.Client(base_url=srv.url, timeout=30) as h:
        h.post("/v1/namespace/a/create", json={})
        answers = [
            h.post("/v1/table/a$t/create", content=ipc(pa.table({"x": [1]})), headers=ARROW),
            h.post("/v1/table/a$t/describe", json={}),
            h.post("/v1/table/a$d/declare", json={}),
            h.post("/DescribeTable", json={"id": ["a", "t"]}),
        ]
        for r in answers:
            assert r.status_code == 200, r.text
            assert not any(s in r.text for s in SECRET_VALUES), r.text
        # what a client needs to reach the store and is no secret stays
        assert answers[1].json()["storage_options"] == {"region": "eu-west-1"}
    # in-process the caller configured those secrets itself: pylance gets them
    assert ns.describe_table({"id": ["a", "t"]}).storage_options["aws_secret_access_key"] == SECRETS["storage.aws_secret_access_key"]


def test_secrets_are_masked_in_repr_and_namespace_id(tmp_path):
    d = lance_ns.connect("dir", {"root": str(tmp_path), **SECRETS})
    rest = lance_ns.connect("rest", {"uri": "http://admin:hunter2-pw@127.0.0.1:9", "auth_token": "tok-0005"})
    shown = repr(d) + d.namespace_id() + repr(rest) + rest.namespace_id()
    assert not any(s in shown for s in SECRET_VALUES + ["hunter2-pw", "tok-0005"]), shown
    assert "AccountName=acct" not in shown or "AccountKey=***" in shown
    assert "admin:***@127.0.0.1" in repr(rest) and str(tmp_path) in repr(d)  # what is no secret still shows


def test_rest_client_errors_do_not_show_the_uri_password():
    rest = lance_ns.connect("rest", {"uri": "http://admin:hunter2-pw@127.0.0.1:9", "max_retries": 0,
                                     "connect_timeout": 500})  # fmt: skip
    with pytest.raises(LanceNamespaceError) as info:
        rest.list_namespaces({"id": []})
    assert "hunter2-pw" not in str(info.value)


class _Leaky(LanceNamespace):
    def namespace_id(self):
        return "leaky"

    def list_namespaces(self, request):
        raise RuntimeError("cannot reach https://svc:pw-0006@store.example/x?sig=sig-0007 with password=pw-0008")

    def describe_namespace(self, request):
        raise InvalidInputError("bad option aws_secret_access_key=pw-0009 for s3://user:pw-0010@bucket/")


def test_server_logs_and_error_bodies_mask_secrets(caplog):
    with run_server_in_thread(_Leaky()) as srv, httpx.Client(base_url=srv.url, timeout=30) as h:
        with caplog.at_level(logging.INFO, logger="lance_ns"):
            body = err(h.get("/v1/namespace/$/list"), 500, 18)
            detail = err(h.post("/v1/namespace/x/describe", json={}), 400, 13)
    # the records as a plain formatter writes them, traceback included (caplog.text is in whatever
    # format a handler installed earlier in this process chose: pyspark's JSON leaves tracebacks out)
    logged = "\n".join(logging.Formatter("%(message)s").format(r) for r in caplog.records)
    shown = json.dumps(body) + json.dumps(detail) + logged + caplog.text
    assert "cannot reach" in logged  # the log has the failure...
    assert not any(f"pw-00{n:02d}" in shown or f"sig-00{n:02d}" in shown for n in range(6, 11)), shown  # ...not its secrets


# -- limits --------------------------------------------------------------------------------


def _bomb() -> bytes:
    """A few KB of zstd that decode to 200 MB."""
    return ipc(pa.table({"z": np.zeros(25_000_000, np.int64)}), compression="zstd")


def test_decoded_size_is_bounded_over_rest(http, ns):
    body = _bomb()
    assert len(body) < 16 * 1024
    http.post("/v1/namespace/a/create", json={})
    err(http.post("/v1/table/a$t/create", content=body, headers=ARROW), 413, 13)
    assert tables_in(ns, ["a"]) == []
    # a compressed body within the limit is fine
    small = ipc(pa.table({"z": np.zeros(1000, np.int64)}), compression="zstd")
    assert http.post("/v1/table/a$t/create", content=small, headers=ARROW).status_code == 200


def test_decoded_size_is_bounded_in_the_python_api(tmp_path):
    ns = lance_ns.connect("dir", {"root": str(tmp_path), "limits.max_decoded_bytes": str(BODY_LIMIT)})
    ns.create_namespace({"id": ["a"]})
    expect_code(13, ns.create_table, {"id": ["a", "t"]}, _bomb())
    assert tables_in(ns, ["a"]) == []


def test_decoded_limit_is_separately_configurable(ns):
    body = ipc(pa.table({"z": np.zeros(1000, np.int64)}))  # 8000 bytes decoded
    with run_server_in_thread(ns, max_body_bytes=BODY_LIMIT, max_decoded_bytes=4000) as srv:
        r = httpx.post(f"{srv.url}/v1/table/t/create", content=body, headers=ARROW)
    err(r, 413, 13)


@pytest.mark.parametrize(
    "properties",
    [
        pytest.param({"big": "v" * (64 * 1024 + 1)}, id="value-over-64KiB"),
        pytest.param({"k" * (64 * 1024 + 1): "v"}, id="key-over-64KiB"),
        pytest.param({f"k{i}": "v" for i in range(1001)}, id="over-1000-properties"),
    ],
)
def test_property_limits(http, ns, properties):
    err(http.post("/v1/namespace/a/create", json={"properties": properties}), 400, 13)
    err(http.post("/v1/table/t/declare", json={"properties": properties}), 400, 13)
    assert ns.list_namespaces({"id": []}).namespaces == [] and tables_in(ns) == []
    expect_code(13, ns.create_namespace, {"id": ["a"], "properties": properties})
    assert ns.list_namespaces({"id": []}).namespaces == []


def test_limits_are_configurable(tmp_path):
    ns = lance_ns.connect("dir", {"root": str(tmp_path), "limits.max_properties": "2", "limits.max_name_bytes": "8"})
    expect_code(13, ns.create_namespace, {"id": ["a"], "properties": {"1": "", "2": "", "3": ""}})
    expect_code(13, ns.create_namespace, {"id": ["a" * 9]})
    ns.create_namespace({"id": ["a" * 8], "properties": {"1": "", "2": ""}})
    from lance_ns.limits import Limits

    with run_server_in_thread(ns, limits=Limits(max_property_bytes=4)) as srv:
        err(httpx.post(f"{srv.url}/v1/namespace/b/create", json={"properties": {"k": "12345"}}), 400, 13)


def test_a_stalled_body_is_answered_408(ns):
    with run_server_in_thread(ns, body_timeout=1.0) as srv:
        with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as s:
            s.sendall(b"POST /v1/namespace/a/create HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      b"Content-Length: 100\r\n\r\n{\"prop")  # fmt: skip
            start = time.monotonic()
            answer = b""
            while chunk := s.recv(65536):  # the server answers, then closes the connection
                answer += chunk
            elapsed = time.monotonic() - start
            answer = answer.decode()
    assert answer.startswith("HTTP/1.1 408"), answer
    assert '"code":13' in answer.replace(" ", "")
    assert elapsed < 5


# -- malformed input answered 500 before ----------------------------------------------------


def test_lone_surrogate_in_an_id_is_code_13(http, ns):
    raw = b'{"id": ["\\ud800"]}'  # valid JSON, but no UTF-8 can encode it
    err(http.post("/CreateNamespace", content=raw, headers={"content-type": "application/json"}), 400, 13)
    raw = b'{"properties": {"k": "\\udfff"}}'
    err(http.post("/v1/namespace/a/create", content=raw, headers={"content-type": "application/json"}), 400, 13)
    assert ns.list_namespaces({"id": []}).namespaces == []
    expect_code(13, ns.create_namespace, {"id": ["\ud800"]})
    expect_code(13, ns.create_namespace, {"id": ["a"], "properties": {"k": "\udfff"}})
    expect_code(13, ns.create_namespace, {"id": ["a"], "properties": {"\udfff": "v"}})
    assert ns.list_namespaces({"id": []}).namespaces == []


@pytest.mark.parametrize("body", [{"id": 5}, {"id": "a"}, {"id": [5]}, {"id": [["a"]]}, {"id": {"a": 1}}])
def test_ids_of_the_wrong_type_are_code_13(http, ns, body):
    err(http.post("/DescribeNamespace", json=body), 400, 13)
    err(http.post("/CreateNamespace", json=body), 400, 13)
    assert ns.list_namespaces({"id": []}).namespaces == []
    expect_code(13, ns.create_namespace, body)


@pytest.mark.parametrize("depth", [40, 100_000])
def test_deeply_nested_json_is_code_13(http, ns, depth):
    raw = b'{"properties": {"k": ' + b"[" * depth + b"]" * depth + b"}}"
    err(http.post("/v1/namespace/a/create", content=raw, headers={"content-type": "application/json"}), 400, 13)
    assert ns.list_namespaces({"id": []}).namespaces == []
    # a JSON query parameter too (the Arrow routes carry their request fields there)
    deep = "[" * min(depth, 3000)
    err(http.post("/v1/table/t/create", params={"properties": deep}, content=b"", headers=ARROW), 400, 13)
    assert tables_in(ns) == []


def test_names_over_the_file_system_limit_are_not_a_500(http, ns, tmp_path):
    """255 bytes is a valid name, but the directory namespace adds a suffix or prefix:
    the file system's ENAMETOOLONG must be invalid input, and nothing is left behind."""
    before = files_under(tmp_path)
    for r in (
        http.post(f"/v1/namespace/{'n' * 255}/create", json={}),
        http.post(f"/v1/namespace/{'n' * 255}$x/create", json={}),
        http.post(f"/v1/table/{'t' * 255}/create", content=ipc(pa.table({"x": [1]})), headers=ARROW),
        http.post(f"/v1/table/{'d' * 255}/declare", json={}),
    ):
        assert r.status_code in (200, 400), r.text  # a layout may fit the name; it must never be a 500
        if r.status_code == 400:
            err(r, 400, 13)
    if http.post(f"/v1/namespace/{'n' * 255}/exists", json={}).status_code != 200:
        assert not any("n" * 200 in f for f in files_under(tmp_path))  # nothing half-created
    try:
        ns.create_table({"id": ["p" * 255]}, ipc(pa.table({"x": [1]})))
    except LanceNamespaceError as e:
        assert e.code == 13, e
    else:
        assert ns.count_table_rows({"id": ["p" * 255]}).count == 1
    del before


@pytest.fixture
def table_http(http):
    http.post("/v1/namespace/a/create", json={})
    r = http.post("/v1/table/a$t/create", content=ipc(pa.table({"a": [1, 2], "b": ["x", "y"]})), headers=ARROW)
    assert r.status_code == 200, r.text
    return http


@pytest.mark.parametrize(
    "path, body",
    [
        pytest.param("count_rows", {"predicate": "a >>> 1"}, id="bad-filter-count"),
        pytest.param("query", {"k": 5, "vector": {}, "filter": "nonsense ((("}, id="bad-filter-query"),
        pytest.param("delete", {"predicate": "a >>> 1"}, id="bad-filter-delete"),
        pytest.param("update", {"updates": [["a", "a +* 1"]]}, id="bad-update-expression"),
        pytest.param("count_rows", {"predicate": "zzz > 1"}, id="missing-column-filter"),
        pytest.param("query", {"k": 5, "vector": {}, "columns": {"column_names": ["zzz"]}}, id="missing-column-projection"),
        pytest.param("update", {"updates": [["zzz", "1"]]}, id="missing-column-update"),
        pytest.param("delete", {"predicate": "zzz = 1"}, id="missing-column-delete"),
        pytest.param("tags/create", {"tag": "bad tag/..", "version": 1}, id="invalid-tag-name"),
        pytest.param("query", {"k": 2**70, "vector": {}}, id="k-beyond-int64"),
    ],
)
def test_lance_user_errors_are_code_13(table_http, ns, path, body):
    err(table_http.post(f"/v1/table/a$t/{path}", json=body), 400, 13)
    assert table_http.post("/v1/table/a$t/count_rows", json={}).json() == 2  # nothing changed
    assert ns.list_table_tags({"id": ["a", "t"]}).tags == {}


def test_lance_user_errors_are_code_13_in_the_python_api(ns):
    ns.create_namespace({"id": ["a"]})
    ns.create_table({"id": ["a", "t"]}, ipc(pa.table({"a": [1, 2]})))
    t = ["a", "t"]
    expect_code(13, ns.count_table_rows, {"id": t, "predicate": "a >>> 1"})
    expect_code(13, ns.count_table_rows, {"id": t, "predicate": "zzz > 1"})  # not 4 "table not found"
    expect_code(13, ns.update_table, {"id": t, "updates": [["zzz", "1"]]})
    expect_code(13, ns.create_table_tag, {"id": t, "tag": "bad tag", "version": 1})
    merge = {"id": t, "on": ["zzz"], "when_matched_update_all": True}
    expect_code(13, ns.merge_insert_into_table, merge, ipc(pa.table({"a": [1]})))
    assert ns.count_table_rows({"id": t}).count == 2


# -- operations: both entry points log each request -------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("entry", ["lance-ns serve", "python -m lance_ns.server"])
def test_both_entry_points_log_each_request(tmp_path, entry):
    port = _free_port()
    head = [os.path.join(os.path.dirname(sys.executable), "lance-ns"), "serve"] if entry.startswith("lance-ns") else [
        sys.executable, "-m", "lance_ns.server"]  # fmt: skip
    cmd = head + ["--impl", "dir", "--prop", f"root={tmp_path}", "--port", str(port), "--log-level", "info"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_healthy(proc, url)
        assert httpx.get(f"{url}/v1/namespace/$/list").status_code == 200
        assert httpx.post(f"{url}/v1/namespace/a/describe", json={}).status_code == 404
    finally:
        proc.terminate()
        out = proc.communicate(timeout=20)[0]
    assert "GET /v1/namespace/$/list 200 " in out, out
    assert "POST /v1/namespace/a/describe 404 " in out, out


def test_a_remote_pylance_client_brings_its_own_credentials(tmp_path):
    """Over S3 (moto): the server answers the endpoint and region but not its keys;
    pylance reads the table through the REST namespace with credentials of its own."""
    import uuid

    import lance

    from tests.services.moto import moto_bucket

    bucket = f"input-{uuid.uuid4().hex[:8]}"
    with moto_bucket(bucket) as (_, opts):
        served = lance_ns.connect("dir", {"root": f"s3://{bucket}/lake", **{f"storage.{k}": v for k, v in opts.items()}})
        with run_server_in_thread(served) as srv:
            client = lance_ns.connect("rest", {"uri": srv.url})
            client.create_namespace({"id": ["a"]})
            client.create_table({"id": ["a", "t"]}, ipc(pa.table({"x": [1, 2, 3]})))
            described = client.describe_table({"id": ["a", "t"]}).storage_options or {}
            assert "aws_secret_access_key" not in described and "aws_access_key_id" not in described
            assert described.get("endpoint") == opts["endpoint"]
            keys = {k: opts[k] for k in ("aws_access_key_id", "aws_secret_access_key")}
            ds = lance.dataset(namespace_client=client, table_id=["a", "t"], storage_options=keys)
            assert ds.to_table().column("x").to_pylist() == [1, 2, 3]
            client.close()
