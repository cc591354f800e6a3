"""What our Iceberg client sends and how it maps answers, checked against the
labelled in-process stub (tests/iceberg/stub.py): warehouse config and prefix
resolution, 0x1F namespace encoding, OAuth2 token fetch/refresh, retries,
timeouts and the error-code table.  Behaviour against a real server is
tested with SeaweedFS (test_seaweedfs*.py and the conformance suite)."""

from __future__ import annotations

import socket
import time

import pytest
from lance_namespace import LanceNamespaceError

import lance_ns

from .stub import CLIENT_ID, CLIENT_SECRET, error, iceberg_stub, table_response


def code_of(fn, *args):
    with pytest.raises(LanceNamespaceError) as info:
        fn(*args)
    return int(info.value.code)


@pytest.fixture
def stub():
    with iceberg_stub() as s:
        yield s


def connect(stub, **props):
    base = {"endpoint": stub.url, "credential": f"{CLIENT_ID}:{CLIENT_SECRET}", "root": "s3://bucket/root"}
    return lance_ns.connect("iceberg", {**base, **props})


# -- warehouse config and prefix ------------------------------------------------


@pytest.mark.parametrize(
    "config,prefix",
    [
        ({"defaults": {"prefix": "from-defaults"}, "overrides": {}}, "from-defaults"),
        ({"defaults": {"prefix": "from-defaults"}, "overrides": {"prefix": "from-overrides"}}, "from-overrides"),
        ({"defaults": {}, "overrides": {}}, "wh"),  # no prefix: the warehouse name
    ],
    ids=["defaults", "overrides-win", "fallback-to-warehouse"],
)
def test_prefix_resolution(stub, config, prefix):
    stub.config = config
    stub.route("GET", f"/v1/{prefix}/namespaces/db", body={"namespace": ["db"], "properties": {"k": "v"}})
    assert connect(stub).describe_namespace({"id": ["wh", "db"]}).properties == {"k": "v"}
    assert [c.query for c in stub.calls("GET", "/v1/config")] == [{"warehouse": ["wh"]}]


def test_a_server_without_prefixed_routes_is_called_without_a_prefix(stub):
    """The Lance spec's fallback (the warehouse as prefix) is kept unless the server refuses
    it (400 "No route", as Iceberg's reference server does) and answers the unprefixed listing:
    then the paths have no prefix, as Iceberg's own clients send them."""
    stub.route("GET", "/v1/wh/namespaces", 400, error(400, "BadRequestException"))
    stub.route("GET", "/v1/namespaces", body={"namespaces": []})
    stub.route("GET", "/v1/namespaces/db", body={"namespace": ["db"], "properties": {"k": "v"}})
    assert connect(stub).describe_namespace({"id": ["wh", "db"]}).properties == {"k": "v"}
    assert not stub.calls("GET", "/v1/wh/namespaces/")


def test_config_is_fetched_once_per_warehouse(stub):
    for wh in ("wh1", "wh2"):
        stub.route("GET", f"/v1/{wh}/namespaces/db", body={"namespace": ["db"], "properties": {}})
    c = connect(stub)
    for wh in ("wh1", "wh1", "wh2", "wh1"):
        c.namespace_exists({"id": [wh, "db"]})
    assert sorted(c.query["warehouse"][0] for c in stub.calls("GET", "/v1/config")) == ["wh1", "wh2"]


def test_nested_levels_are_joined_with_0x1f(stub):
    stub.route("GET", "/v1/wh/namespaces/a%1Fb%1Fc", body={"namespace": ["a", "b", "c"], "properties": {}})
    connect(stub).namespace_exists({"id": ["wh", "a", "b", "c"]})
    assert stub.calls("GET", "/v1/wh/namespaces/")[-1].path == "/v1/wh/namespaces/a%1Fb%1Fc"


def test_list_namespaces_returns_child_names_only(stub):
    stub.route("GET", "/v1/wh/namespaces", body={"namespaces": [["a"], ["a", "b"], ["c"], ["a", "b", "x"]]})
    stub.route("GET", "/v1/wh/namespaces/a", body={"namespace": ["a"], "properties": {}})
    c = connect(stub)
    assert c.list_namespaces({"id": ["wh"]}).namespaces == ["a", "c"]
    assert c.list_namespaces({"id": ["wh", "a"]}).namespaces == ["b"]
    assert stub.calls("GET", "/v1/wh/namespaces")[-1].query == {"parent": ["a"]}


# -- OAuth2 ------------------------------------------------------------------------


def _ns_route(stub):
    stub.route("GET", "/v1/wh/namespaces/db", body={"namespace": ["db"], "properties": {}})


def test_oauth2_client_credentials_token_is_fetched_once_and_sent(stub):
    _ns_route(stub)
    c = connect(stub)
    for _ in range(3):
        c.namespace_exists({"id": ["wh", "db"]})
    assert stub.tokens_issued == 1
    assert {s.auth for s in stub.calls("GET", "/v1/wh/")} == {"Bearer tok-1"}
    form = stub.calls("POST", "/v1/oauth/tokens")[0].body.decode()
    assert "grant_type=client_credentials" in form and f"client_id={CLIENT_ID}" in form


def test_oauth2_token_is_renewed_before_expiry(stub):
    _ns_route(stub)
    stub.expires_in = 1  # renewed at 90% of its lifetime
    c = connect(stub)
    c.namespace_exists({"id": ["wh", "db"]})
    time.sleep(1.0)
    c.namespace_exists({"id": ["wh", "db"]})
    assert stub.tokens_issued == 2
    assert stub.calls("GET", "/v1/wh/")[-1].auth == "Bearer tok-2"
    assert [s.auth for s in stub.calls("GET", "/v1/wh/")].count("Bearer tok-2") == 1  # no 401 round trip


def test_oauth2_token_is_refreshed_on_401(stub):
    _ns_route(stub)
    c = connect(stub)
    c.namespace_exists({"id": ["wh", "db"]})
    stub.revoke_tokens()  # e.g. the server restarted or rotated its keys
    c.namespace_exists({"id": ["wh", "db"]})
    assert stub.tokens_issued == 2
    # the namespace loads (the config names no prefix: a listing before them tells the prefix)
    assert [s.auth for s in stub.calls("GET", "/v1/wh/namespaces/")] == ["Bearer tok-1", "Bearer tok-1", "Bearer tok-2"]


def test_bad_credential_is_unauthenticated(stub):
    _ns_route(stub)
    assert code_of(connect(stub, credential="stub-id:wrong").namespace_exists, {"id": ["wh", "db"]}) == 16


def test_static_auth_token_is_sent_and_a_401_is_unauthenticated(stub):
    _ns_route(stub)
    c = lance_ns.connect("iceberg", {"endpoint": stub.url, "auth_token": "static-token"})
    assert code_of(c.namespace_exists, {"id": ["wh", "db"]}) == 16
    assert {s.auth for s in stub.calls("GET", "/v1/wh/")} == {"Bearer static-token"}
    assert stub.tokens_issued == 0


# -- errors, retries, timeouts --------------------------------------------------------


@pytest.mark.parametrize(
    "status,kind,code",
    [
        (400, "BadRequestException", 13),
        (401, "NotAuthorizedException", 16),
        (403, "ForbiddenException", 15),
        (429, "TooManyRequestsException", 21),
        (500, "ServerErrorException", 18),
        (503, "ServiceUnavailableException", 17),
    ],
)
def test_status_codes_map_to_spec_codes(stub, status, kind, code):
    stub.route("GET", "/v1/wh/namespaces/db", status, error(status, kind))
    assert code_of(connect(stub, max_retries="2").describe_namespace, {"id": ["wh", "db"]}) == code


def test_503_is_retried_max_retries_times(stub):
    stub.route("GET", "/v1/wh/namespaces/db", 503, error(503, "ServiceUnavailableException"))
    assert code_of(connect(stub, max_retries="2").describe_namespace, {"id": ["wh", "db"]}) == 17
    assert len(stub.calls("GET", "/v1/wh/namespaces/db")) == 3


def test_create_is_never_resent_on_503(stub):
    stub.route("GET", "/v1/wh/namespaces/db", body={"namespace": ["db"], "properties": {}})
    stub.route("GET", "/v1/wh/namespaces/db/tables/t", 404, error(404, "NoSuchTableException"))
    stub.route("POST", "/v1/wh/namespaces/db/tables", 503, error(503, "ServiceUnavailableException"))
    assert code_of(connect(stub, max_retries="3").declare_table, {"id": ["wh", "db", "t"]}) == 17
    assert len(stub.calls("POST", "/v1/wh/namespaces/db/tables")) == 1


def test_a_namespace_dropped_by_a_racing_drop_during_the_emptiness_check_is_dropped(stub):
    """The namespace exists when checked, then its listings answer 404 (a racing drop came
    first): dropping a missing namespace succeeds (drop_missing_ok), not code 1."""
    stub.route("GET", "/v1/wh/namespaces/db", body={"namespace": ["db"], "properties": {}})
    connect(stub).drop_namespace({"id": ["wh", "db"]})  # listings: the stub's default 404 NoSuchNamespace
    assert not stub.calls("DELETE")  # nothing left to drop


def test_namespace_not_empty_409_is_code_3(stub):
    stub.route("GET", "/v1/wh/namespaces/db", body={"namespace": ["db"], "properties": {}})
    stub.route("GET", "/v1/wh/namespaces", body={"namespaces": []})
    stub.route("GET", "/v1/wh/namespaces/db/tables", body={"identifiers": []})
    stub.route("DELETE", "/v1/wh/namespaces/db", 409, error(409, "NamespaceNotEmptyException"))
    assert code_of(connect(stub).drop_namespace, {"id": ["wh", "db"]}) == 3


def test_connection_refused_after_retries_is_unavailable():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once the block ends: nothing listens
    c = lance_ns.connect("iceberg", {"endpoint": f"http://127.0.0.1:{port}", "max_retries": "1"})
    assert code_of(c.describe_namespace, {"id": ["wh", "db"]}) == 17


def test_read_timeout_is_unavailable(stub):
    stub.route("GET", "/v1/wh/namespaces/db", body={"namespace": ["db"], "properties": {}}, delay=1.0)
    c = connect(stub, read_timeout="200", max_retries="0")
    t0 = time.monotonic()
    assert code_of(c.describe_namespace, {"id": ["wh", "db"]}) == 17
    assert time.monotonic() - t0 < 0.9


@pytest.mark.parametrize("endpoint", ["", "ftp://host:21", "localhost:8181", "http://"])
def test_endpoint_must_be_an_http_url(endpoint):
    with pytest.raises(LanceNamespaceError) as info:
        lance_ns.connect("iceberg", {"endpoint": endpoint})
    assert info.value.code == 13


@pytest.mark.parametrize("key,value", [("connect_timeout", "soon"), ("max_retries", "-1"), ("read_timeout", "0")])
def test_bad_numeric_properties_are_invalid_input(stub, key, value):
    with pytest.raises(LanceNamespaceError) as info:
        connect(stub, **{key: value})
    assert info.value.code == 13


# -- tables on the wire ------------------------------------------------------------------


def test_declare_sends_the_companion_table(stub):
    stub.route("GET", "/v1/wh/namespaces/a%1Fb", body={"namespace": ["a", "b"], "properties": {}})
    stub.route("GET", "/v1/wh/namespaces/a%1Fb/tables/t", 404, error(404, "NoSuchTableException"))
    loc = "s3://bucket/root/wh/a/b/t"
    stub.route("POST", "/v1/wh/namespaces/a%1Fb/tables", body=table_response(loc, {"table_type": "lance"}))
    out = connect(stub).declare_table({"id": ["wh", "a", "b", "t"], "properties": {"team": "ml"}})
    assert out.location == loc  # {root}/{warehouse}/{namespace...}/{table}
    sent = stub.calls("POST", "/v1/wh/namespaces/a%1Fb/tables")[0].json()
    assert sent["name"] == "t" and sent["location"] == loc
    # (lance_ns.owned: the namespace chose the location, so a drop deletes the data)
    assert sent["properties"] == {"team": "ml", "table_type": "lance", "lance_ns.owned": "true"}
    assert [(f["name"], f["type"], f["required"]) for f in sent["schema"]["fields"]] == [("dummy", "string", False)]


def test_deregister_sends_purge_requested_false(stub):
    loc = "s3://bucket/root/wh/db/t"
    stub.route("GET", "/v1/wh/namespaces/db/tables/t", body=table_response(loc, {"table_type": "LANCE"}))
    stub.route("DELETE", "/v1/wh/namespaces/db/tables/t", 204)
    out = connect(stub).deregister_table({"id": ["wh", "db", "t"]})
    assert out.location == loc
    assert stub.calls("DELETE", "/v1/wh/namespaces/db/tables/t")[0].query == {"purgeRequested": ["false"]}


def test_describe_of_a_non_lance_table_is_invalid_input(stub):
    stub.route("GET", "/v1/wh/namespaces/db/tables/t", body=table_response("s3://b/t", {"owner": "spark"}))
    assert code_of(connect(stub).describe_table, {"id": ["wh", "db", "t"]}) == 13


def test_list_tables_loads_metadata_concurrently_and_filters(stub):
    stub.route("GET", "/v1/wh/namespaces/db", body={"namespace": ["db"], "properties": {}})
    names = ["d", "c", "b", "a"]
    stub.route("GET", "/v1/wh/namespaces/db/tables", body={"identifiers": [{"namespace": ["db"], "name": n} for n in names]})
    for n in names:
        props = {"table_type": "lance"} if n != "c" else {"format": "iceberg"}
        stub.route("GET", f"/v1/wh/namespaces/db/tables/{n}", body=table_response(f"s3://b/{n}", props), delay=0.4)
    t0 = time.monotonic()
    assert connect(stub).list_tables({"id": ["wh", "db"]}).tables == ["a", "b", "d"]
    assert time.monotonic() - t0 < 1.2  # one after another would take >= 1.6 s


def test_a_page_loads_only_the_tables_it_needs(stub):
    """A page of n loads n + 1 tables (the next one says whether the listing goes
    on), more only to skip non-Lance tables; the token resumes after the page."""
    stub.route("GET", "/v1/wh/namespaces/db", body={"namespace": ["db"], "properties": {}})
    names = [f"t{i:02d}" for i in range(20)]
    stub.route("GET", "/v1/wh/namespaces/db/tables", body={"identifiers": [{"namespace": ["db"], "name": n} for n in reversed(names)]})
    for n in names:
        props = {"format": "iceberg"} if n in ("t01", "t02") else {"table_type": "lance"}
        stub.route("GET", f"/v1/wh/namespaces/db/tables/{n}", body=table_response(f"s3://b/{n}", props))
    c = connect(stub)
    loads = lambda: sorted(s.path.rsplit("/", 1)[-1] for s in stub.calls("GET", "/v1/wh/namespaces/db/tables/"))  # noqa: E731
    first = c.list_tables({"id": ["wh", "db"], "limit": 3})
    assert (first.tables, first.page_token) == (["t00", "t03", "t04"], "t04")
    assert loads() == ["t00", "t01", "t02", "t03", "t04", "t05"]  # 3 + 1, and the 2 skipped
    stub.seen.clear()
    second = c.list_tables({"id": ["wh", "db"], "limit": 3, "page_token": first.page_token})
    assert (second.tables, second.page_token, loads()) == (["t05", "t06", "t07"], "t07", ["t05", "t06", "t07", "t08"])
    last = c.list_tables({"id": ["wh", "db"], "limit": 5, "page_token": "t14"})
    assert (last.tables, last.page_token) == (["t15", "t16", "t17", "t18", "t19"], None)


def test_verdicts_are_reused_only_while_the_server_says_the_metadata_is_unchanged(stub):
    """With ETags (Iceberg REST's freshness-aware loading), a listing asks
    If-None-Match and a 304 reuses the table as loaded before; a table dropped
    and recreated under the same name has new metadata, so it is loaded again
    and its new verdict counts.  Without ETags nothing is reused."""
    stub.route("GET", "/v1/wh/namespaces/db", body={"namespace": ["db"], "properties": {}})
    stub.route("GET", "/v1/wh/namespaces/db/tables", body={"identifiers": [{"namespace": ["db"], "name": n} for n in "abc"]})
    for n in "abc":
        stub.route("GET", f"/v1/wh/namespaces/db/tables/{n}", body=table_response(f"s3://b/{n}", {"table_type": "lance"}))
    c = connect(stub)
    assert c.list_tables({"id": ["wh", "db"]}).tables == ["a", "b", "c"]
    assert c.list_tables({"id": ["wh", "db"]}).tables == ["a", "b", "c"]
    assert stub.not_modified == 0 and all(s.if_none_match is None for s in stub.seen)  # no ETag: nothing reused
    stub.etags = True
    assert c.list_tables({"id": ["wh", "db"]}).tables == ["a", "b", "c"]
    assert c.list_tables({"id": ["wh", "db"]}).tables == ["a", "b", "c"]
    assert stub.not_modified == 3
    # "b" dropped and recreated as a plain Iceberg table: new metadata, new ETag
    stub.route("GET", "/v1/wh/namespaces/db/tables/b", body=table_response("s3://b/b2", {"format": "iceberg"}))
    assert c.list_tables({"id": ["wh", "db"]}).tables == ["a", "c"]
    assert stub.not_modified == 5
    assert code_of(c.describe_table, {"id": ["wh", "db", "b"]}) == 13  # not a Lance table (any more)
    stub.route("GET", "/v1/wh/namespaces/db/tables/a", status=404, body=error(404, "NoSuchTableException"))
    assert c.list_tables({"id": ["wh", "db"]}).tables == ["c"]  # a dropped table is not answered from memory


def test_a_foreign_table_pyiceberg_cannot_parse_does_not_break_the_listing(stub):
    stub.route("GET", "/v1/wh/namespaces/db", body={"namespace": ["db"], "properties": {}})
    stub.route("GET", "/v1/wh/namespaces/db/tables", body={"identifiers": [{"namespace": ["db"], "name": n} for n in "ab"]})
    stub.route("GET", "/v1/wh/namespaces/db/tables/a", body=table_response("s3://b/a", {"table_type": "lance"}))
    odd = table_response("s3://b/b", {})
    odd["metadata"]["format-version"] = 99  # no Iceberg format pyiceberg knows
    stub.route("GET", "/v1/wh/namespaces/db/tables/b", body=odd)
    c = connect(stub)
    assert c.list_tables({"id": ["wh", "db"]}).tables == ["a"]
    assert code_of(c.describe_table, {"id": ["wh", "db", "b"]}) == 18


def test_close_releases_connections_and_the_client_stays_usable(stub):
    _ns_route(stub)
    c = connect(stub)
    c.namespace_exists({"id": ["wh", "db"]})
    c.close()
    c.namespace_exists({"id": ["wh", "db"]})
    assert len(stub.calls("GET", "/v1/config")) == 2 and stub.tokens_issued == 1


def test_unknown_warehouse_in_config_is_namespace_not_found(stub):
    stub.config_status = 404
    c = connect(stub)
    assert code_of(c.namespace_exists, {"id": ["nowh"]}) == 1
    assert code_of(c.describe_namespace, {"id": ["nowh", "db"]}) == 1
    assert code_of(c.declare_table, {"id": ["nowh", "db", "t"]}) == 1
