"""Unity-specific behaviour of impl ``unity`` against the contract-validated
in-process server (both error conventions); the shared behaviour is the
conformance suite's (backends ``unity`` and ``unity-legacy``)."""

from __future__ import annotations

import socket

import httpx
import lance
import pyarrow as pa
import pytest
from lance_namespace import LanceNamespaceError

import lance_ns
from lance_ns.impls.unity_columns import columns_from_arrow
from tests.servers.unity import PREFIX, component_validator, unity_server

CAT = "main"
TOKEN = "s3cret"
_HTTP = httpx.Client(headers={"Authorization": f"Bearer {TOKEN}"})  # one client: each new one loads CA certs


#: error-convention tests run against both; the rest (and the whole
#: conformance suite, backends unity/unity-legacy) cover the conventions already
both_conventions = pytest.mark.parametrize("unity", [False, True], ids=["unity>=0.4", "unity<=0.3"], indirect=True)


@pytest.fixture
def unity(request):
    with unity_server(legacy_errors=getattr(request, "param", False), page_size=2, auth_token=TOKEN, catalogs=(CAT, "other")) as u:
        yield u
        u.server.check()  # no request or response outside the contract


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


def post(unity, path, body):
    r = _HTTP.post(f"{unity.endpoint}{PREFIX}{path}", json=body)
    r.raise_for_status()
    return r.json()


def calls(unity, method, fragment):
    return [p for m, p in unity.server.requests if m == method and fragment in p]


# -- hierarchy -------------------------------------------------------------------


def test_root_lists_catalogs_and_catalogs_list_schemas_across_unity_pages(unity, ns):
    for name in ["c3", "c1", "c2"]:
        post(unity, "/catalogs", {"name": name})
    assert ns.list_namespaces({"id": []}).namespaces == ["c1", "c2", "c3", CAT, "other"]
    for name in ["s4", "s2", "s5", "s1", "s3"]:
        ns.create_namespace({"id": [CAT, name]})
    assert ns.list_namespaces({"id": [CAT]}).namespaces == ["s1", "s2", "s3", "s4", "s5"]
    assert len(calls(unity, "GET", "/schemas?catalog_name=main")) == 3  # server pages of 2
    page = ns.list_namespaces({"id": [CAT], "limit": 2, "page_token": None})
    assert page.namespaces == ["s1", "s2"] and page.page_token
    assert ns.list_namespaces({"id": [CAT, "s1"]}).namespaces == []  # schemas hold no namespaces
    assert code(ns.list_namespaces, {"id": ["nope"]}) == 1


def test_catalogs_are_described_but_not_created_or_dropped(unity, ns):
    post(unity, "/catalogs", {"name": "props", "properties": {"k": "v"}})
    assert ns.describe_namespace({"id": ["props"]}).properties == {"k": "v"}
    assert code(ns.create_namespace, {"id": ["brand_new"]}) == 0
    assert code(ns.drop_namespace, {"id": ["props"]}) == 0
    assert "brand_new" not in unity.server.catalogs and "props" in unity.server.catalogs
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
    assert list(unity.server.schemas) == [f"{CAT}.s"] and unity.server.tables == {}


# -- tables ----------------------------------------------------------------------


def test_declared_table_is_external_text_lance_with_no_columns(unity, ns, tmp_path):
    ns.create_namespace({"id": [CAT, "s"]})
    resp = ns.declare_table({"id": [CAT, "s", "t"], "properties": {"team": "ml"}})
    assert resp.location == str(tmp_path / "root" / CAT / "s" / "t.lance")
    info = unity.server.tables[f"{CAT}.s.t"]
    assert info["table_type"] == "EXTERNAL" and info["data_source_format"] == "TEXT"
    assert info["storage_location"] == resp.location
    assert info["properties"] == {"team": "ml", "table_type": "lance"}
    assert info["columns"] == []


def test_schema_changes_refresh_the_columns(unity, ns):
    """Unity has no table update: after AlterTable*Columns the entry is replaced
    with the new schema's columns (its properties and location kept); a change on
    a branch leaves main's columns alone."""
    from lance_ns.conformance.scenario import arrow_stream

    ns.create_namespace({"id": [CAT, "s"]})
    t = [CAT, "s", "t"]
    ns.create_table({"id": t, "properties": {"team": "ml"}}, arrow_stream())
    before = unity.server.tables[f"{CAT}.s.t"]
    ns.alter_table_add_columns({"id": t, "new_columns": [{"name": "double", "expression": "id * 2"}]})
    ns.alter_table_alter_columns({"id": t, "alterations": [{"path": "name", "rename": "label"}]})
    ns.create_table_branch({"id": t, "name": "dev"})
    ns.alter_table_drop_columns({"id": t, "branch": "dev", "columns": ["double"]})
    after = unity.server.tables[f"{CAT}.s.t"]
    assert [c["name"] for c in after["columns"]] == ["id", "label", "double"]
    assert after["properties"] == before["properties"] and after["storage_location"] == before["storage_location"]
    ns.alter_table_drop_columns({"id": t, "columns": ["double"]})
    assert [c["name"] for c in unity.server.tables[f"{CAT}.s.t"]["columns"]] == ["id", "label"]


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
    columns = unity.server.tables[f"{CAT}.s.t"]["columns"]
    assert columns == columns_from_arrow(lance.dataset(location).schema)
    assert [c["type_text"] for c in columns] == ["bigint", "array<float>", "timestamp", "map<string,int>"]
    for column in columns:
        assert list(component_validator("ColumnInfo").iter_errors(column)) == []
    assert lance.dataset(namespace_client=ns, table_id=[CAT, "s", "t"]).count_rows() == 2


def test_only_external_lance_tables_are_listed_and_described(unity, ns):
    ns.create_namespace({"id": [CAT, "s"]})
    base = {"catalog_name": CAT, "schema_name": "s", "table_type": "EXTERNAL", "columns": []}
    post(unity, "/tables", {**base, "name": "delta", "data_source_format": "DELTA", "storage_location": "/tmp/d"})
    post(unity, "/tables", {**base, "name": "upper", "data_source_format": "TEXT", "storage_location": "/tmp/u", "properties": {"TABLE_TYPE": "LANCE"}})
    ns.declare_table({"id": [CAT, "s", "mine"]})
    assert ns.list_tables({"id": [CAT, "s"]}).tables == ["mine", "upper"]
    assert code(ns.describe_table, {"id": [CAT, "s", "delta"]}) == 13
    assert code(ns.deregister_table, {"id": [CAT, "s", "delta"]}) == 13
    assert code(ns.drop_table, {"id": [CAT, "s", "delta"]}) == 13
    assert f"{CAT}.s.delta" in unity.server.tables
    ns.drop_table({"id": [CAT, "s", "mine"]})
    ns.drop_table({"id": [CAT, "s", "upper"]})
    assert code(ns.drop_namespace, {"id": [CAT, "s"]}) == 3  # the Delta table still lives there


def test_tables_at_other_levels_are_refused(ns):
    assert code(ns.declare_table, {"id": [CAT, "t"]}) == 13
    assert code(ns.describe_table, {"id": [CAT, "t"]}) == 4
    assert ns.list_tables({"id": []}).tables == []


# -- error conventions -------------------------------------------------------------


@both_conventions
def test_server_side_conflicts_map_to_already_exists(unity, ns):
    legacy = unity.server.legacy_errors
    ns.create_namespace({"id": [CAT, "s"]})
    status, what = (409, "") if legacy else (400, "TABLE_")
    unity.server.inject(status, f"{what}ALREADY_EXISTS", method="POST", path="/tables")
    assert code(ns.declare_table, {"id": [CAT, "s", "t"]}) == 5
    status, what = (409, "") if legacy else (400, "SCHEMA_")
    unity.server.inject(status, f"{what}ALREADY_EXISTS", method="POST", path="/schemas")
    assert code(ns.create_namespace, {"id": [CAT, "s2"]}) == 2


@both_conventions
def test_other_answers_keep_their_meaning(unity, ns):
    unity.server.inject(409, "ABORTED", method="POST", path="/schemas")
    assert code(ns.create_namespace, {"id": [CAT, "a"]}) == 14
    unity.server.inject(400, "INVALID_ARGUMENT", method="POST", path="/schemas")
    assert code(ns.create_namespace, {"id": [CAT, "b"]}) == 13
    unity.server.inject(429, "RESOURCE_EXHAUSTED", times=4, method="GET", path="/catalogs")
    assert code(ns.list_namespaces, {"id": []}) == 21
    unity.server.inject(501, "NOT_IMPLEMENTED", method="DELETE")
    ns.create_namespace({"id": [CAT, "c"]})
    assert code(ns.drop_namespace, {"id": [CAT, "c"]}) == 18


@both_conventions
def test_not_found_from_writes_is_resolved_by_context(unity, ns):
    legacy = unity.server.legacy_errors
    ns.create_namespace({"id": [CAT, "s"]})
    ns.declare_table({"id": [CAT, "s", "t"]})
    unity.server.inject(404, "NOT_FOUND" if legacy else "TABLE_NOT_FOUND", method="DELETE", path="/tables")
    assert code(ns.deregister_table, {"id": [CAT, "s", "t"]}) == 4
    unity.server.inject(404, "NOT_FOUND" if legacy else "SCHEMA_NOT_FOUND", method="POST", path="/tables")
    assert code(ns.declare_table, {"id": [CAT, "s", "u"]}) == 1
    ns.drop_table({"id": [CAT, "s", "t"]})
    unity.server.inject(404, "NOT_FOUND" if legacy else "SCHEMA_NOT_FOUND", method="DELETE", path="/schemas")
    assert code(ns.drop_namespace, {"id": [CAT, "s"]}) == 1


@both_conventions
def test_drop_schema_refused_by_server_is_not_empty(unity, ns, monkeypatch):
    ns.create_namespace({"id": [CAT, "s"]})
    ns.declare_table({"id": [CAT, "s", "t"]})
    # a table created by someone else after our emptiness check: the server's
    # own 400 FAILED_PRECONDITION must come back as NamespaceNotEmpty
    monkeypatch.setattr(ns, "_list_tables", lambda _ns: [])
    assert code(ns.drop_namespace, {"id": [CAT, "s"]}) == 3
    assert f"{CAT}.s.t" in unity.server.tables


# -- auth, retries, transport --------------------------------------------------------------


def test_missing_or_wrong_token_is_unauthenticated(connect):
    assert code(connect(auth_token="").list_namespaces, {"id": []}) == 16
    assert code(connect(auth_token="wrong").describe_namespace, {"id": [CAT]}) == 16


def test_forbidden_is_permission_denied(unity, ns):
    unity.server.inject(403, "PERMISSION_DENIED")
    assert code(ns.list_namespaces, {"id": []}) == 15


def test_reads_retry_5xx_then_succeed(unity, ns):
    unity.server.inject(500, times=2, method="GET", path="/catalogs")
    assert CAT in ns.list_namespaces({"id": []}).namespaces
    assert len(calls(unity, "GET", "/catalogs?")) == 3


def test_persistent_server_errors_after_retries(unity, connect):
    ns = connect(max_retries="2")
    unity.server.inject(500, times=3, method="GET")
    assert code(ns.describe_namespace, {"id": [CAT]}) == 18
    unity.server.inject(503, "TEMPORARILY_UNAVAILABLE", times=3, method="GET")
    assert code(ns.describe_namespace, {"id": [CAT]}) == 17
    assert len(calls(unity, "GET", f"/catalogs/{CAT}")) == 6


def test_writes_retry_refusals_but_never_repeat_a_500(unity, ns):
    unity.server.inject(503, "TEMPORARILY_UNAVAILABLE", times=1, method="POST", path="/schemas")
    ns.create_namespace({"id": [CAT, "a"]})
    assert len(calls(unity, "POST", "/schemas")) == 2
    unity.server.inject(500, times=1, method="POST", path="/schemas")
    assert code(ns.create_namespace, {"id": [CAT, "b"]}) == 18
    assert len(calls(unity, "POST", "/schemas")) == 3


def test_read_timeout_retries_reads_but_not_writes(unity, connect):
    ns = connect(read_timeout="300")
    unity.server.inject(0, times=1, method="GET", path="/catalogs", delay=1.0)
    assert CAT in ns.list_namespaces({"id": []}).namespaces
    assert len(calls(unity, "GET", "/catalogs?")) == 2
    unity.server.inject(0, times=1, method="POST", path="/schemas", delay=1.0)
    assert code(ns.create_namespace, {"id": [CAT, "slow"]}) == 17
    assert len(calls(unity, "POST", "/schemas")) == 1  # the write may have happened: not repeated


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
