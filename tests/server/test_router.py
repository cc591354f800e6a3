"""The server's one router (lance_ns.server.router): every protocol route found by its
path, ids holding a raw '/' included, the seed spec's POST /<OperationId>, and the
protocol's paths no route answers refused with the error table's 404 and 405."""

from __future__ import annotations

import pytest

import lance_ns
from lance_ns.base import BY_OP_ID
from lance_ns.errors import MethodNotAllowedError, NoRouteError, http_status
from lance_ns.protocol import routes as R
from lance_ns.server.app import NamespaceApp
from lance_ns.server.router import Router


@pytest.fixture(scope="module")
def router() -> Router:
    return Router(R.ROUTES.values(), ((op_id, R.ROUTES[op.method]) for op_id, op in BY_OP_ID.items()))


def _path(route: R.Route, table_id: str) -> str:
    return route.path.replace("{id}", table_id).replace("{index_name}", "idx")


@pytest.mark.parametrize("raw_id", ["db$t", "a/b$t", "", "describe"])
def test_every_route_is_found_by_its_own_path(router, raw_id):
    for route in R.ROUTES.values():
        if not route.has_id and raw_id != "db$t":
            continue
        match = router.match(route.method, _path(route, raw_id))
        assert match is not None and match.route is route and not match.seed, route.path
        if route.has_id:
            assert match.path_params["id"] == raw_id, route.path
        if "{index_name}" in route.path:
            assert match.path_params["index_name"] == "idx"


def test_the_longest_tail_wins_as_the_protocol_orders_them(router):
    match = router.match("GET", "/v1/namespace/x/table/list")
    assert match.route.op.op_id == "ListTables" and match.path_params == {"id": "x"}
    match = router.match("GET", "/v1/namespace/x/table/more/list")  # an id "x/table/more"
    assert match.route.op.op_id == "ListNamespaces" and match.path_params == {"id": "x/table/more"}


def test_the_seed_spec_routes_take_post_only(router):
    match = router.match("POST", "/DescribeTable")
    assert match.seed and match.route.op.op_id == "DescribeTable"
    with pytest.raises(MethodNotAllowedError):
        router.match("GET", "/DescribeTable")


@pytest.mark.parametrize("method,path,error,status", [
    ("GET", "/v1/table/db$t/describe", MethodNotAllowedError, 405),
    ("POST", "/v1/table", MethodNotAllowedError, 405),
    ("POST", "/v1/table/db$t/no_such_operation", NoRouteError, 404),
    ("POST", "/v1/nothing/db/describe", NoRouteError, 404),
])
def test_a_protocol_path_no_route_answers_is_refused_with_code_0(router, method, path, error, status):
    with pytest.raises(error) as e:
        router.match(method, path)
    assert int(e.value.code) == 0 and http_status(e.value) == status


@pytest.mark.parametrize("path", ["/health", "/metrics", "/openapi.json", "/ui/ns/a", "/", "/v1"])
def test_other_paths_are_not_the_protocols(router, path):
    assert router.match("GET", path) is None


def test_starlette_holds_no_protocol_route(tmp_path):
    app = NamespaceApp(lance_ns.connect("memory", {"root": str(tmp_path)})).build()
    paths = [getattr(r, "path", "") for r in app.app.routes]
    assert "/health" in paths and not [p for p in paths if p.startswith("/v1") or p.lstrip("/") in BY_OP_ID]
