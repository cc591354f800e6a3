"""Unity-specific behaviour of impl ``unity``, on every server of tests/unity/servers.py: the
contract-validated double and the REAL Unity Catalog OSS 0.6.0 and 0.4.1 (skipped where Maven
refuses them); the shared behaviour is the conformance suite's (backends ``unity``,
``unity-legacy``, ``unity-oss``, ``unity-oss-0.4``).

Some tests run on the double alone, each marked ``double_only`` or ``both_conventions`` with
the reason: the real server cannot be made to fail on cue (fault injection: 5xx, 429, 403,
timeouts, a conflict that is no duplicate), keeps no request log to count retries and pages
by, pages only when asked, checks no bearer token with authorization disabled (enabling it
needs an identity provider), and no release on Maven Central speaks Unity <= 0.3's errors.
"""

from __future__ import annotations

import socket
from urllib.parse import quote

import httpx
import lance
import pyarrow as pa
import pytest
from lance_namespace import LanceNamespaceError

import lance_ns
from lance_ns.impls.unity_columns import columns_from_arrow
from tests.services.unity import PREFIX, component_validator
from tests.unity.servers import DOUBLE, DOUBLE_LEGACY, EVERY_SERVER, REAL, unity_target

CAT = "main"
TOKEN = "s3cret"  # the double checks it; a real server with authorization disabled ignores it

#: injected faults: the double's error conventions (Unity >= 0.4 and <= 0.3, which no real
#: server from Maven Central speaks); the rest (and the conformance suite) cover the real ones
both_conventions = pytest.mark.parametrize("unity", [DOUBLE, DOUBLE_LEGACY], indirect=True)
#: needs what only the double does (each test says which)
double_only = pytest.mark.parametrize("unity", [DOUBLE], indirect=True)


@pytest.fixture(params=EVERY_SERVER)
def unity(request):
    with unity_target(request.param, catalogs=(CAT, "other"), page_size=2, auth_token=TOKEN) as target:
        yield target


@pytest.fixture
def connect(unity, tmp_path):
    made = []

    def make(**extra):
        props = {"endpoint": unity.endpoint, "auth_token": TOKEN, "root": str(tmp_path / "root"), "retry_backoff_ms": "1", **extra}
        ns = lance_ns.connect("unity", props)
        made.append(ns)
        return ns

    yield make
    for ns in made:
        ns.close()


@pytest.fixture
def ns(connect):
    return connect()


def code(fn, *args):
    with pytest.raises(LanceNamespaceError) as info:
        fn(*args)
    return int(info.value.code)


def calls(unity, method, fragment):
    """The double's request log (a real server keeps none)."""
    return [p for m, p in unity.double.requests if m == method and fragment in p]


# -- hierarchy -------------------------------------------------------------------


def test_root_lists_catalogs_and_catalogs_list_schemas_across_unity_pages(unity, ns):
    for name in ["c3", "c1", "c2"]:
        unity.post("/catalogs", {"name": name})
    listed = [c for c in ns.list_namespaces({"id": []}).namespaces if c not in unity.foreign]
    assert listed == ["c1", "c2", "c3", CAT, "other"]
    for name in ["s4", "s2", "s5", "s1", "s3"]:
        ns.create_namespace({"id": [CAT, name]})
    assert ns.list_namespaces({"id": [CAT]}).namespaces == ["s1", "s2", "s3", "s4", "s5"]
    if unity.double:  # a real server answers the client's page size (1000) in one page
        assert len(calls(unity, "GET", "/schemas?catalog_name=main")) == 3  # server pages of 2
    page = ns.list_namespaces({"id": [CAT], "limit": 2, "page_token": None})
    assert page.namespaces == ["s1", "s2"] and page.page_token
    assert ns.list_namespaces({"id": [CAT, "s1"]}).namespaces == []  # schemas hold no namespaces
    assert code(ns.list_namespaces, {"id": ["nope"]}) == 1


def test_catalogs_are_described_but_not_created_or_dropped(unity, ns):
    unity.post("/catalogs", {"name": "props", "properties": {"k": "v"}})
    assert ns.describe_namespace({"id": ["props"]}).properties == {"k": "v"}
    assert code(ns.create_namespace, {"id": ["brand_new"]}) == 0
    assert code(ns.drop_namespace, {"id": ["props"]}) == 0
    assert "brand_new" not in unity.catalogs() and "props" in unity.catalogs()
    assert code(ns.create_namespace, {"id": [CAT, "s", "deeper"]}) == 13
    assert ns.list_tables({"id": [CAT]}).tables == []  # catalogs hold no tables


def test_schema_properties_and_missing_catalog(ns):
    ns.create_namespace({"id": [CAT, "s"], "properties": {"owner_team": "ml"}})
    assert ns.describe_namespace({"id": [CAT, "s"]}).properties == {"owner_team": "ml"}
    assert code(ns.create_namespace, {"id": ["ghost", "s"]}) == 1
    assert code(ns.describe_namespace, {"id": ["ghost", "s"]}) == 1


def test_names_with_dots_are_invalid_and_nothing_is_created(unity, ns):
    assert code(ns.create_namespace, {"id": [CAT, "a.b"]}) == 13
    ns.create_namespace({"id": [CAT, "s"]})
    assert code(ns.declare_table, {"id": [CAT, "s", "t.x"]}) == 13
    assert unity.schemas(CAT) == ["s"] and unity.tables(CAT, "s") == []


# -- tables ----------------------------------------------------------------------


def test_declared_table_is_external_text_lance_with_no_columns(unity, ns, tmp_path):
    ns.create_namespace({"id": [CAT, "s"]})
    resp = ns.declare_table({"id": [CAT, "s", "t"], "properties": {"team": "ml"}})
    assert resp.location == str(tmp_path / "root" / CAT / "s" / "t.lance")
    info = unity.table(f"{CAT}.s.t")
    assert info["table_type"] == "EXTERNAL" and info["data_source_format"] == "TEXT"
    # Unity stores the path as a file:// URI (the double as the real server); the client reads it back as the path
    assert info["storage_location"] == f"file://{resp.location}"
    assert ns.describe_table({"id": [CAT, "s", "t"]}).location == resp.location
    # (lance_ns.owned: the namespace chose the location, so a drop deletes the data)
    assert info["properties"] == {"team": "ml", "table_type": "lance", "lance_ns.owned": "true"}
    assert info["columns"] == []


def test_a_local_location_is_read_back_as_written(unity, connect, tmp_path):
    """Unity stores a local path as a normalised, percent-encoded ``file://`` URI; the client
    reads it back as the path it wrote (CreateTable's own check compares the two), and pylance
    finds the data there."""
    ns = connect(root=str(tmp_path / "wurzel-é%20"))
    ns.create_namespace({"id": [CAT, "s"]})
    t = [CAT, "s", "t"]
    declared = ns.declare_table({"id": t}).location
    assert unity.table(f"{CAT}.s.t")["storage_location"] == "file://" + quote(declared)
    assert ns.describe_table({"id": t}).location == declared and unity.location(f"{CAT}.s.t") == declared
    ns.drop_table({"id": t})
    lance.write_dataset(pa.table({"x": [1, 2]}), namespace_client=ns, table_id=t, mode="create")
    assert ns.describe_table({"id": t}).location == declared
    assert lance.dataset(namespace_client=ns, table_id=t).count_rows() == 2


def test_schema_changes_refresh_the_columns(unity, ns):
    """Unity has no table update: after AlterTable*Columns the entry is replaced
    with the new schema's columns (its properties and location kept); a change on
    a branch leaves main's columns alone."""
    from lance_ns.conformance.scenario import arrow_stream

    ns.create_namespace({"id": [CAT, "s"]})
    t = [CAT, "s", "t"]
    ns.create_table({"id": t, "properties": {"team": "ml"}}, arrow_stream())
    before = unity.table(f"{CAT}.s.t")
    ns.alter_table_add_columns({"id": t, "new_columns": [{"name": "double", "expression": "id * 2"}]})
    ns.alter_table_alter_columns({"id": t, "alterations": [{"path": "name", "rename": "label"}]})
    ns.create_table_branch({"id": t, "name": "dev"})
    ns.alter_table_drop_columns({"id": t, "branch": "dev", "columns": ["double"]})
    after = unity.table(f"{CAT}.s.t")
    assert [c["name"] for c in after["columns"]] == ["id", "label", "double"]
    assert after["properties"] == before["properties"] and after["storage_location"] == before["storage_location"]
    ns.alter_table_drop_columns({"id": t, "columns": ["double"]})
    assert [c["name"] for c in unity.table(f"{CAT}.s.t")["columns"]] == ["id", "label"]


def test_registered_table_carries_its_arrow_schema_as_columns(unity, ns, tmp_path):
    ns.create_namespace({"id": [CAT, "s"]})
    data = pa.table(
        {
            "id": pa.array([1, 2], pa.int64()),
            "vec": pa.array([[0.1, 0.2], [0.3, 0.4]], pa.list_(pa.float32(), 2)),
            "at": pa.array([0, 1], pa.timestamp("us", tz="UTC")),
            "tags": pa.array([{"k": 1}, None], pa.map_(pa.string(), pa.int32())),
        }
    )
    location = str(tmp_path / "ext" / "t.lance")
    lance.write_dataset(data, location)
    ns.register_table({"id": [CAT, "s", "t"], "location": location})
    # a real server answers every ColumnInfo field, the unset ones null
    columns = [{k: v for k, v in c.items() if v is not None} for c in unity.table(f"{CAT}.s.t")["columns"]]
    assert columns == columns_from_arrow(lance.dataset(location).schema)
    assert [c["type_text"] for c in columns] == ["bigint", "array<float>", "timestamp", "map<string,int>"]
    for column in columns:
        assert list(component_validator("ColumnInfo").iter_errors(column)) == []
    assert lance.dataset(namespace_client=ns, table_id=[CAT, "s", "t"]).count_rows() == 2


def test_only_external_lance_tables_are_listed_and_described(unity, ns):
    ns.create_namespace({"id": [CAT, "s"]})
    base = {"catalog_name": CAT, "schema_name": "s", "table_type": "EXTERNAL", "columns": []}
    unity.post("/tables", {**base, "name": "delta", "data_source_format": "DELTA", "storage_location": "/tmp/d"})
    unity.post("/tables", {**base, "name": "upper", "data_source_format": "TEXT", "storage_location": "/tmp/u", "properties": {"TABLE_TYPE": "LANCE"}})
    ns.declare_table({"id": [CAT, "s", "mine"]})
    assert ns.list_tables({"id": [CAT, "s"]}).tables == ["mine", "upper"]
    assert code(ns.describe_table, {"id": [CAT, "s", "delta"]}) == 13
    assert code(ns.deregister_table, {"id": [CAT, "s", "delta"]}) == 13
    assert code(ns.drop_table, {"id": [CAT, "s", "delta"]}) == 13
    assert unity.table(f"{CAT}.s.delta") is not None
    ns.drop_table({"id": [CAT, "s", "mine"]})
    ns.drop_table({"id": [CAT, "s", "upper"]})
    assert code(ns.drop_namespace, {"id": [CAT, "s"]}) == 3  # the Delta table still lives there


def test_tables_at_other_levels_are_refused(ns):
    assert code(ns.declare_table, {"id": [CAT, "t"]}) == 13
    assert code(ns.describe_table, {"id": [CAT, "t"]}) == 4
    assert ns.list_tables({"id": []}).tables == []


# -- error conventions -------------------------------------------------------------


@both_conventions  # injected: the real server's own duplicates are the conformance suite's
def test_server_side_conflicts_map_to_already_exists(unity, ns):
    legacy = unity.double.legacy_errors
    ns.create_namespace({"id": [CAT, "s"]})
    status, what = (409, "") if legacy else (400, "TABLE_")
    unity.double.inject(status, f"{what}ALREADY_EXISTS", method="POST", path="/tables")
    assert code(ns.declare_table, {"id": [CAT, "s", "t"]}) == 5
    status, what = (409, "") if legacy else (400, "SCHEMA_")
    unity.double.inject(status, f"{what}ALREADY_EXISTS", method="POST", path="/schemas")
    assert code(ns.create_namespace, {"id": [CAT, "s2"]}) == 2


@both_conventions  # injected: no real server answers these on cue
def test_other_answers_keep_their_meaning(unity, ns):
    unity.double.inject(409, "ABORTED", method="POST", path="/schemas")
    assert code(ns.create_namespace, {"id": [CAT, "a"]}) == 14
    unity.double.inject(400, "INVALID_ARGUMENT", method="POST", path="/schemas")
    assert code(ns.create_namespace, {"id": [CAT, "b"]}) == 13
    unity.double.inject(429, "RESOURCE_EXHAUSTED", times=4, method="GET", path="/catalogs")
    assert code(ns.list_namespaces, {"id": []}) == 21
    unity.double.inject(501, "NOT_IMPLEMENTED", method="DELETE")
    ns.create_namespace({"id": [CAT, "c"]})
    assert code(ns.drop_namespace, {"id": [CAT, "c"]}) == 18


@both_conventions  # injected: a 404 from a write means a racing drop, which no real server gives on cue
def test_not_found_from_writes_is_resolved_by_context(unity, ns):
    legacy = unity.double.legacy_errors
    ns.create_namespace({"id": [CAT, "s"]})
    ns.declare_table({"id": [CAT, "s", "t"]})
    unity.double.inject(404, "NOT_FOUND" if legacy else "TABLE_NOT_FOUND", method="DELETE", path="/tables")
    assert code(ns.deregister_table, {"id": [CAT, "s", "t"]}) == 4
    unity.double.inject(404, "NOT_FOUND" if legacy else "SCHEMA_NOT_FOUND", method="POST", path="/tables")
    assert code(ns.declare_table, {"id": [CAT, "s", "u"]}) == 1
    ns.drop_table({"id": [CAT, "s", "t"]})
    unity.double.inject(404, "NOT_FOUND" if legacy else "SCHEMA_NOT_FOUND", method="DELETE", path="/schemas")
    assert code(ns.drop_namespace, {"id": [CAT, "s"]}) == 1


@pytest.mark.parametrize("unity", [DOUBLE, DOUBLE_LEGACY, *REAL], indirect=True)
def test_drop_schema_refused_by_server_is_not_empty(unity, ns, monkeypatch):
    ns.create_namespace({"id": [CAT, "s"]})
    ns.declare_table({"id": [CAT, "s", "t"]})
    # a table created by someone else after our emptiness check: the server's
    # own 400 FAILED_PRECONDITION must come back as NamespaceNotEmpty
    monkeypatch.setattr(ns, "list_table_entries", lambda _ns: [])
    assert code(ns.drop_namespace, {"id": [CAT, "s"]}) == 3
    assert unity.table(f"{CAT}.s.t") is not None


# -- auth, retries, transport --------------------------------------------------------------


@double_only  # the real server runs with authorization disabled (enabling it needs an identity provider)
def test_missing_or_wrong_token_is_unauthenticated(connect):
    assert code(connect(auth_token="").list_namespaces, {"id": []}) == 16
    assert code(connect(auth_token="wrong").describe_namespace, {"id": [CAT]}) == 16


@double_only  # injected 403
def test_forbidden_is_permission_denied(unity, ns):
    unity.double.inject(403, "PERMISSION_DENIED")
    assert code(ns.list_namespaces, {"id": []}) == 15


@double_only  # injected 5xx, counted in the request log
def test_reads_retry_5xx_then_succeed(unity, ns):
    unity.double.inject(500, times=2, method="GET", path="/catalogs")
    assert CAT in ns.list_namespaces({"id": []}).namespaces
    assert len(calls(unity, "GET", "/catalogs?")) == 3


@double_only  # injected 5xx, counted in the request log
def test_persistent_server_errors_after_retries(unity, connect):
    ns = connect(max_retries="2")
    unity.double.inject(500, times=3, method="GET")
    assert code(ns.describe_namespace, {"id": [CAT]}) == 18
    unity.double.inject(503, "TEMPORARILY_UNAVAILABLE", times=3, method="GET")
    assert code(ns.describe_namespace, {"id": [CAT]}) == 17
    assert len(calls(unity, "GET", f"/catalogs/{CAT}")) == 6


@double_only  # injected 503 and 500, counted in the request log
def test_writes_retry_refusals_but_never_repeat_a_500(unity, ns):
    unity.double.inject(503, "TEMPORARILY_UNAVAILABLE", times=1, method="POST", path="/schemas")
    ns.create_namespace({"id": [CAT, "a"]})
    assert len(calls(unity, "POST", "/schemas")) == 2
    unity.double.inject(500, times=1, method="POST", path="/schemas")
    assert code(ns.create_namespace, {"id": [CAT, "b"]}) == 18
    assert len(calls(unity, "POST", "/schemas")) == 3


@double_only  # injected stalls, counted in the request log
def test_read_timeout_retries_reads_but_not_writes(unity, connect):
    ns = connect(read_timeout="300")
    unity.double.inject(0, times=1, method="GET", path="/catalogs", delay=1.0)
    assert CAT in ns.list_namespaces({"id": []}).namespaces
    assert len(calls(unity, "GET", "/catalogs?")) == 2
    unity.double.inject(0, times=1, method="POST", path="/schemas", delay=1.0)
    assert code(ns.create_namespace, {"id": [CAT, "slow"]}) == 17
    assert len(calls(unity, "POST", "/schemas")) == 1  # the write may have happened: not repeated


def test_a_plain_text_success_answer_is_success():
    """The real server (0.4.1, 0.6.0) answers a DELETE with ``text/plain`` ``200 OK``, not JSON
    (every drop failed with code 18 before): any 2xx that is not JSON is a success with no body.
    Shown here without a server, so it is checked where Maven refuses the real one."""

    def answer(request: httpx.Request) -> httpx.Response:
        if request.method == "DELETE":
            return httpx.Response(200, text="200 OK", headers={"content-type": "text/plain; charset=utf-8"})
        return httpx.Response(200, json={"name": "s", "catalog_name": CAT, "properties": {"k": "v"}})

    ns = lance_ns.connect("unity", {"endpoint": "http://unity.invalid"})
    ns._http = httpx.Client(base_url=ns.endpoint, transport=httpx.MockTransport(answer))
    assert ns._call("DELETE", f"/schemas/{CAT}.s", "namespace") == {}
    assert ns._call("GET", f"/schemas/{CAT}.s", "namespace")["properties"] == {"k": "v"}
    ns.close()


def test_unreachable_server_is_service_unavailable(tmp_path):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ns = lance_ns.connect(
        "unity", {"endpoint": f"http://127.0.0.1:{port}", "max_retries": "2", "retry_backoff_ms": "1", "connect_timeout": "500"}
    )
    assert code(ns.list_namespaces, {"id": []}) == 17
    assert code(ns.declare_table, {"id": [CAT, "s", "t"]}) == 17


def test_properties(unity, tmp_path):
    assert code(lance_ns.connect, "unity", {}) == 13
    assert code(lance_ns.connect, "unity", {"endpoint": unity.endpoint, "max_retries": "many"}) == 13
    ns = lance_ns.connect("unity", {"endpoint": unity.endpoint + PREFIX + "/", "auth_token": TOKEN})
    assert ns.endpoint == unity.endpoint + PREFIX and ns.root == "/tmp/lance"
    assert ns._http.timeout.connect == 10.0 and ns._http.timeout.read == 300.0 and ns.retry.max_retries == 3
    assert "s3cret" not in repr(ns)
    assert CAT in ns.list_namespaces({"id": []}).namespaces
    ns.close()
